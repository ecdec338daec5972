"""The lowered-program store (kj.enable_lowered_store): stored, read back and used, the same numbers bit
for bit as the usual path; a key that follows every value that shapes the program, the same in every
process, and none where a value cannot be hashed by what it means."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._static_key import program_key
from kane_jax.simulation import _stored
from kane_jax.simulation.simulate import STEP_CONTROLS


def arm():
    soft = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 2e5, 0.05, order=3, n_radial=1, n_angular=3)
    return kj.Chain([(kj.Revolute((0.0, 0.0, 1.0), stiffness=0.5), kj.RigidBody(0.3, com=(0.1, 0.0, 0.0),
                     inertia=jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])), tip=jnp.eye(4).at[0, 3].set(0.2))),
                     (kj.Fixed(), soft)], gravity=(0.0, -9.81, 0.0))


class Pd(eqx.Module):
    """A feedback law defined in the package's tests: a user's class, so the store leaves it alone."""

    kp: jax.Array

    def __call__(self, t, q, qd):
        return -self.kp * q


Q0, ZERO = jnp.array([-1.2, 0.6]), jnp.zeros(2)


@pytest.fixture
def store(tmp_path):
    folder = kj.enable_lowered_store(tmp_path / "lowered")
    yield folder
    _stored.disable()


def _same(a, b):
    for name in ("ts", "q", "qd", "u", "nonfinite_at"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert {k: int(v) for k, v in a.stats.items()} == {k: int(v) for k, v in b.stats.items()}
    assert bool(a.result == b.result) and a.success and b.success


def test_stored_program_gives_the_usual_numbers_and_is_read_back(store):
    kw = dict(control=jnp.array([0.2, -0.01]), n_save=11)
    usual_chain = arm()
    _stored.disable()
    usual = kj.simulate(usual_chain, Q0, ZERO, 0.5, **kw)
    _stored.enable(store)
    first = kj.simulate(arm(), Q0, ZERO, 0.5, **kw)  # exports and stores it
    files = sorted(store.iterdir())
    assert len(files) == 1 and files[0].suffix == ".jaxexport", files
    _same(first, usual)
    _stored._CALLERS.clear()  # as in a new process: read from the file
    again = kj.simulate(arm(), Q0, ZERO, 0.5, **kw)
    assert sorted(store.iterdir()) == files
    _same(again, usual)
    # another number of saves is another program; a failure is still reported from the stored one
    kj.simulate(arm(), Q0, ZERO, 0.5, **{**kw, "n_save": 5})
    assert len(list(store.iterdir())) == 2
    failed = kj.simulate(arm(), Q0, ZERO, 0.5, max_steps=2, throw=False, **kw)
    assert not failed.success and "max_steps" in failed.message


def test_a_users_law_takes_the_usual_path(store):
    traj = kj.simulate(arm(), Q0, ZERO, 0.2, control=Pd(jnp.array(2.0)), n_save=3)
    assert list(store.iterdir()) == [] and traj.success
    traj = kj.simulate(arm(), Q0, ZERO, 0.2, control=lambda t: jnp.zeros(2), n_save=3)
    assert list(store.iterdir()) == [] and traj.success


def test_a_law_holding_the_chain_is_stored_with_its_compile_options(store):
    # a model-based law holds the chain's own arrays: its solve compiles without loop hoisting
    # (`_shared_jit`), and so does its stored program, read back under a key that holds the options
    chain = arm()
    law = kj.control.PDCompensation(chain, jnp.array([0.3, 0.1]), kp=4.0, kd=0.8)
    _stored.disable()
    usual = kj.simulate(chain, Q0, ZERO, 0.3, control=law, n_save=5)
    _stored.enable(store)
    first = kj.simulate(chain, Q0, ZERO, 0.3, control=law, n_save=5)
    assert len(list(store.iterdir())) == 1
    _same(first, usual)
    _stored._CALLERS.clear()
    _same(kj.simulate(chain, Q0, ZERO, 0.3, control=law, n_save=5), usual)
    # the options reach XLA's compile of the read-back program: one it does not know is refused there
    args = (jnp.arange(3.0),)
    with pytest.raises(Exception, match="xla_no_such_option"):
        _stored.call_arrays("t", lambda x: (x + 1,), args, compiler_options={"xla_no_such_option": "1"})


def test_stored_jit_gives_filter_jits_numbers_and_is_read_back(store):
    def moments(x, *, power):
        return jnp.sum(x**power), (jnp.cumsum(x), {"max": jnp.max(x)})

    stored = _stored.stored_jit(moments)
    x = jnp.linspace(0.1, 2.0, 7)
    usual = eqx.filter_jit(moments)(x, power=3)
    for _ in range(2):  # stored, then read back from its file as in a new process
        got = stored(x, power=3)
        assert jax.tree.structure(got) == jax.tree.structure(usual)
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(usual), strict=True):
            np.testing.assert_array_equal(a, b)
        assert len(list(store.iterdir())) == 1
        _stored._CALLERS.clear()
    stored(x, power=2)  # another static value: another program
    assert len(list(store.iterdir())) == 2
    # under a transformation it is filter_jit itself: differentiable, nothing stored
    np.testing.assert_allclose(jax.grad(lambda v: stored(v, power=3)[0])(x), 3 * x**2, rtol=1e-14)
    assert len(list(store.iterdir())) == 2


def test_stored_jit_keeps_lapack_custom_calls(store):
    # lineax's QR least squares calls LAPACK's ormqr, which `jax.export` refuses by default (no
    # compatibility guarantee); the key holds jaxlib's version, so the store exports it anyway
    def least_squares(a, b):
        return lx.linear_solve(lx.MatrixLinearOperator(a), b, lx.QR(), throw=False).value  # no host callback

    a = jnp.asarray(np.random.default_rng(0).normal(size=(6, 3)))
    b = jnp.arange(6.0)
    usual = eqx.filter_jit(least_squares)(a, b)
    stored = _stored.stored_jit(least_squares)
    np.testing.assert_array_equal(stored(a, b), usual)
    assert len(list(store.iterdir())) == 1
    _stored._CALLERS.clear()
    np.testing.assert_array_equal(stored(a, b), usual)
    np.testing.assert_allclose(usual, np.linalg.lstsq(np.asarray(a), np.asarray(b), rcond=None)[0], rtol=1e-12)


def test_a_program_that_cannot_be_exported_is_tried_once(store, monkeypatch):
    # progress=True puts a host callback in the solve: not exportable, so the usual path, and the
    # export is not traced again for the same key in this process
    tries = []
    export = _stored._load_or_export
    monkeypatch.setattr(_stored, "_load_or_export", lambda *a: tries.append(a[0]) or export(*a))
    for _ in range(2):
        traj = kj.simulate(arm(), Q0, ZERO, 0.2, control=jnp.array([0.1, 0.0]), n_save=3, progress=True)
        assert traj.success
    assert len(tries) == 1 and list(store.iterdir()) == [] and _stored._FAILED == {tries[0]}


def test_prune_removes_the_programs_used_longest_ago(tmp_path):
    for i, size in enumerate([300, 200, 100, 400]):  # used at times 1000, 1001, 1002, 1003 s
        file = tmp_path / f"p{i}.jaxexport"
        file.write_bytes(b"x" * size)
        os.utime(file, (1000.0 + i, 1000.0 + i))
    (tmp_path / "other.txt").write_bytes(b"x" * 10_000)  # not a program: left alone
    removed = _stored.prune(tmp_path, 700)
    # newest first: p3 (400) + p2 (100) = 500 <= 700; + p1 (200) = 700 <= 700; + p0 (300) > 700
    assert sorted(f.name for f in removed) == ["p0.jaxexport"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["other.txt", "p1.jaxexport", "p2.jaxexport", "p3.jaxexport"]
    assert [f.name for f in _stored.prune(tmp_path, 450)] == ["p2.jaxexport", "p1.jaxexport"]


def _key(*args):
    found = program_key("t", args, eqx.is_array)
    return None if found is None else found[0]


def test_key_follows_every_value_that_shapes_the_program():
    y = (Q0, ZERO)
    base = _key(arm(), y, STEP_CONTROLS["pi"], "tsit5")
    assert base is not None and base == _key(arm(), y, STEP_CONTROLS["pi"], "tsit5")  # rebuilt: the same
    assert _key(arm(), y, STEP_CONTROLS["integral"], "tsit5") != base  # a static number
    assert _key(arm(), y, STEP_CONTROLS["pi"], "dopri5") != base  # a static string
    assert _key(arm(), (Q0.astype(jnp.float32), ZERO), STEP_CONTROLS["pi"], "tsit5") != base  # a dtype
    assert _key(arm(), (Q0, jnp.zeros(3)), STEP_CONTROLS["pi"], "tsit5") != base  # a shape
    assert _key(arm(), (Q0, Q0), STEP_CONTROLS["pi"], "tsit5") != _key(arm(), (Q0, Q0 + 0), STEP_CONTROLS["pi"],
                                                                       "tsit5")  # one array passed twice or two
    # a NumPy array held as a static value (not a traced leaf): by its bytes
    static = [_key(functools.partial(np.add, np.arange(3.0) + e)) for e in (0.0, 0.0, 1e-12)]
    assert static[0] is not None and static[0] == static[1] != static[2]
    assert _key(arm(), Pd(jnp.array(1.0))) is None  # a user's class
    assert _key(lambda x: x) is None  # a user's function


KEY_PROGRAM = """
import jax
jax.config.update("jax_enable_x64", True)
import equinox as eqx, jax.numpy as jnp
import kane_jax as kj
from kane_jax._static_key import program_key
from kane_jax.simulation.simulate import STEP_CONTROLS
soft = kj.CosseratPCS(0.2, 0.01, strains=("bend_y", "stretch"))
chain = kj.Chain([(kj.Fixed(), soft)], gravity=(0.0, 0.0, -9.81),
                 actuators=[kj.Tendon([0], [(0.005, 0.0)], order=4)])
print("KEY", program_key("t", (chain, jnp.zeros(chain.nq), STEP_CONTROLS["pi"]), eqx.is_array)[0])
"""


def test_key_is_the_same_in_every_process():
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}
    keys = [subprocess.run([sys.executable, "-c", KEY_PROGRAM], capture_output=True, text=True, timeout=300,
                           env=env).stdout for _ in range(2)]
    assert keys[0].startswith("KEY ") and keys[0] == keys[1], keys
