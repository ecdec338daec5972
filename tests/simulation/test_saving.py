"""SavingSolver, FixedStep and FirstStep against diffrax's own saving (the oracle): the same steps, and the
same saves to rounding (another program: XLA may order a sum differently, 1e-15 seen); the saved inputs
(``inputs=True``) against the law evaluated at the saved states."""

from __future__ import annotations

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

from kane_jax.simulation._saving import FirstStep, FixedStep, SavingSolver

TS = jnp.array([0.0, 0.05, 0.05, 0.3, 0.7, 1.0])  # a repeated time and both ends


def _field(t, y, args):
    x, v = y
    return v, -args * jnp.sin(x) - 0.3 * v + jnp.cos(3.0 * t)  # a driven, damped pendulum


def _same(ours, ref):
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def _both(solver, controller, dt0=None, y0=(1.0, 0.0), k=4.0, **kw):
    y0 = tuple(jnp.asarray(x) for x in y0)
    common = dict(args=k, max_steps=kw.pop("max_steps", 4096), throw=False,
                  adjoint=diffrax.RecursiveCheckpointAdjoint())
    ref = diffrax.diffeqsolve(diffrax.ODETerm(_field), solver, 0.0, 1.0, dt0, y0, saveat=diffrax.SaveAt(ts=TS),
                              stepsize_controller=controller, **common)
    ours_controller = controller
    if isinstance(controller, diffrax.ConstantStepSize):
        ours_controller, dt0 = FixedStep(jnp.asarray(dt0)), None
    elif dt0 is not None:
        ours_controller, dt0 = FirstStep(controller, jnp.asarray(dt0)), None
    saving = SavingSolver(solver, TS)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(_field), saving, 0.0, 1.0, dt0, y0,
                              saveat=diffrax.SaveAt(t1=True, solver_state=True),
                              stepsize_controller=ours_controller, **common)
    return ref, sol, saving.saved(sol)


@pytest.mark.parametrize("solver", [diffrax.Tsit5(), diffrax.Dopri8(), diffrax.Kvaerno5()], ids=type)
def test_adaptive_saves_are_diffrax_saves(solver):
    ref, sol, (ts, ys) = _both(solver, diffrax.PIDController(rtol=1e-7, atol=1e-9))
    assert int(sol.stats["num_rejected_steps"]) == int(ref.stats["num_rejected_steps"])
    assert int(sol.stats["num_steps"]) == int(ref.stats["num_steps"]) > 3
    np.testing.assert_array_equal(ts, ref.ts)
    _same(ys, ref.ys)


def test_rejected_steps_leave_no_saves():
    # a large first step is rejected several times; its saves must not survive
    ref, sol, (_, ys) = _both(diffrax.Tsit5(), diffrax.PIDController(rtol=1e-10, atol=1e-12), dt0=0.9, k=400.0)
    assert int(ref.stats["num_rejected_steps"]) > 0
    _same(ys, ref.ys)


def test_fixed_steps_are_constant_step_size():
    ref, sol, (ts, ys) = _both(diffrax.Heun(), diffrax.ConstantStepSize(), dt0=0.03)
    assert int(sol.stats["num_steps"]) == int(ref.stats["num_steps"]) == 34
    np.testing.assert_array_equal(ts, ref.ts)
    _same(ys, ref.ys)


def test_an_early_stop_leaves_inf_where_diffrax_does():
    ref, sol, (ts, ys) = _both(diffrax.Tsit5(), diffrax.PIDController(rtol=1e-9, atol=1e-11), max_steps=8)
    assert ref.result != diffrax.RESULTS.successful
    np.testing.assert_array_equal(ts, ref.ts)
    assert np.isinf(np.asarray(ts)).sum() == np.isinf(np.asarray(ys[0])).sum() > 0
    _same(ys, ref.ys)


def test_gradients_are_diffrax_gradients():
    def loss(k, which):
        ref, _, (_, ys) = _both(diffrax.Tsit5(), diffrax.PIDController(rtol=1e-8, atol=1e-10), k=k)
        return jnp.sum((ref.ys if which == "ref" else ys)[0] ** 2)

    g_ref, g = (jax.grad(loss)(4.0, w) for w in ("ref", "ours"))
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=0)
    eps = 1e-6  # and both against central differences of the solve itself
    fd = (loss(4.0 + eps, "ours") - loss(4.0 - eps, "ours")) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


# --- inputs=True: the input is the derivative of the state's last component, saved from the steps' own stages


def _law(t, x, v, k):
    return jnp.stack([-k * jnp.sin(x) + jnp.cos(3.0 * t) - 0.1 * v])  # a feedback law of (t, x, v)


def _field_with_input(t, y, args):
    x, v, _ = y
    u = _law(t, x, v, args)
    return v, u[0] - 0.3 * v, u


def _with_inputs(k=4.0, step_ts=TS, solver=None):
    solver = diffrax.Tsit5() if solver is None else solver
    y0 = (jnp.asarray(1.0), jnp.asarray(0.0), jnp.zeros(1))
    controller = diffrax.PIDController(rtol=1e-8, atol=1e-10, step_ts=step_ts,
                                       norm=lambda y: optx.rms_norm(y[:2]))
    saving = SavingSolver(solver, TS, inputs=True)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(_field_with_input), saving, 0.0, 1.0, None, y0, args=k,
                              saveat=diffrax.SaveAt(t1=True, solver_state=True), stepsize_controller=controller,
                              max_steps=4096, adjoint=diffrax.RecursiveCheckpointAdjoint())
    ref = diffrax.diffeqsolve(diffrax.ODETerm(_field_with_input), solver, 0.0, 1.0, None, y0, args=k,
                              saveat=diffrax.SaveAt(ts=TS), stepsize_controller=controller, max_steps=4096)
    return sol, ref, saving.saved(sol), saving.saved_inputs(sol)


@pytest.mark.parametrize("solver", [diffrax.Tsit5(), diffrax.Dopri5()], ids=type)
def test_saved_inputs_are_the_law_at_the_saved_states(solver):
    sol, ref, (ts, ys), us = _with_inputs(solver=solver)
    assert int(sol.stats["num_steps"]) == int(ref.stats["num_steps"]) > len(TS)
    np.testing.assert_array_equal(ts, ref.ts)
    _same(ys, ref.ys)  # the states are diffrax's saves (at a step's end: y1 itself, to rounding)
    want = jax.vmap(lambda t, x, v: _law(t, x, v, 4.0))(ts, ys[0], ys[1])
    np.testing.assert_allclose(us, want, rtol=0, atol=1e-14)  # t0 (first stage) and every step's end (FSAL)
    assert float(np.ptp(np.asarray(want))) > 0.5


def test_saved_inputs_between_step_ends_are_the_interpolants_slope():
    # not met in simulate (its steps end on the saves), and still a close value: the slope of ż = u's interpolant
    _, _, (ts, ys), us = _with_inputs(step_ts=None)
    want = jax.vmap(lambda t, x, v: _law(t, x, v, 4.0))(ts, ys[0], ys[1])
    np.testing.assert_allclose(us, want, rtol=0, atol=1e-5)


def test_saved_inputs_have_central_difference_gradients():
    loss = lambda k: jnp.sum(_with_inputs(k=k)[3] ** 2)  # noqa: E731
    eps = 1e-6
    fd = (loss(4.0 + eps) - loss(4.0 - eps)) / (2 * eps)
    np.testing.assert_allclose(jax.grad(loss)(4.0), fd, rtol=1e-6)


@pytest.mark.parametrize("solver", [diffrax.Heun(), diffrax.Kvaerno5()], ids=type)
def test_inputs_need_an_explicit_fsal_solver(solver):
    with pytest.raises(ValueError, match="inputs=True.*FSAL"):
        SavingSolver(solver, TS, inputs=True)
