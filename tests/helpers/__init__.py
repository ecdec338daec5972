"""What the tests share, defined once (``tests/`` is on ``sys.path``; import ``helpers.X``).

- :mod:`helpers.robots`: the test robots (random rigid, generic-soft and mixed chains; the
  workflow arms and the identification robot);
- :mod:`helpers.checks`: the reference checks (ID vs the Euler–Lagrange reference, smoothness
  of values and derivatives at the straight configuration);
- :mod:`helpers.hand_built_arms`: the DH/MDH tables the shipped URDF arms are checked against;
- workers run as subprocesses: :mod:`helpers.derivative_matrix` (q-derivatives of the dynamics,
  one body type per process), :mod:`helpers.multihost_worker` (one ``jax.distributed``
  process), and :mod:`helpers.browser` (headless Chromium over DevTools for ``kj.view``).
"""
