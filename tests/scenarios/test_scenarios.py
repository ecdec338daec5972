"""Every scenario runs in a shortened form, gives finite results and writes its plot files."""

import importlib.util
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax import scenarios


def _files_ok(summary):
    assert summary["files"]
    for f in summary["files"]:
        with open(f, "rb") as fh:
            head = fh.read(8)
        assert head.startswith(b"\x89PNG") or head.startswith(b"GIF8"), f


def test_scaling_scenario_recursive_matches_euler_lagrange(tmp_path):
    s = scenarios.load("003-sim3").run(out_dir=tmp_path, n_max=2, n_el_max=2, n_samples=5, repeats=3)
    # the recursion and the independent EL reference agree to round-off (1e-12 relative)
    assert s["max_rel_diff"] < 1e-12
    assert all(math.isfinite(x) and x > 0 for x in s["rec_eval_s"] + s["el_eval_s"] + s["rec_build_s"])
    _files_ok(s)


def test_godage_scenario_short(tmp_path):
    s = scenarios.load("004-godage").run(t1=0.05, out_dir=tmp_path, experiments=(1,))
    assert s["real_time_factor"] > 0 and math.isfinite(s["real_time_factor"])
    tip = np.array(s["exp1_final_tip_m"])
    # the arm hangs below its base (z < 0) and the tip's chord cannot exceed the arc length:
    # 3 × 0.15 m plus at most 600 kPa · 2.2e-4 m² / 4000 N/m = 3.3 cm of actuator extension
    assert np.all(np.isfinite(tip)) and tip[2] < -0.2
    assert 0.3 < np.linalg.norm(tip) < 0.45 + 0.033
    _files_ok(s)


def test_hybrid_scenario_pfbl_tracks_cubic(tmp_path):
    """Paper 003 Sim. 2, sub-task (i): PFBL cancels the collocated dynamics of the UR10e exactly."""
    from kane_jax.scenarios import sim003_2_hybrid as sim2

    s = scenarios.load("003-sim2").run(t1=0.2, out_dir=tmp_path, n_save=11, keep_trajectory=True)
    traj = s["trajectory"]
    ts, q = np.asarray(traj.ts), np.asarray(traj.q)
    # independent reference: the rest-to-rest cubic x0 + (x1 - x0)(3 tau^2 - 2 tau^3), tau = t / T1
    tau = ts / sim2.WINDOWS[0]
    ref = np.asarray(sim2.Q_UR_START) + np.outer(3 * tau**2 - 2 * tau**3, np.subtract(sim2.Q_UR_END, sim2.Q_UR_START))
    # the arm moved (joint 1 by pi/4 * 0.028 = 0.022 rad at t = 0.2 s) and followed the cubic to the
    # integration tolerance (rtol 1e-7): the closed loop is e'' + Kd e' + Kp e = 0 with e(0) = 0
    assert abs(q[-1, 0] - q[0, 0]) > 0.02
    assert np.max(np.abs(q[:, :6] - ref)) < 1e-6
    assert s["max_joint_tracking_error_rad"] < 1e-6
    # soft bodies passive during (i): no tendon tension, no pressure; they deflect but stay bounded
    assert np.all(np.asarray(traj.u)[:, 6:] == 0.0)
    assert np.all(np.isfinite(q)) and np.max(np.abs(q[:, 6:])) < 1.0
    assert math.isfinite(s["real_time_factor"]) and s["real_time_factor"] > 0
    _files_ok(s)


def test_hybrid_task_switches_laws_at_the_windows():
    """003-sim2's law: the PFBL (tendons zero) before T₁, the PD after, the pressure's cubic ramp from
    T₂ — a ``where`` of both laws, per call and under ``vmap``. Oracle: the two laws (stand-ins of
    the right sizes) and the ramp ``p s² (3 − 2 s)`` evaluated apart, exactly."""
    from kane_jax.scenarios.sim003_2_hybrid import HybridTask

    pfbl = lambda t, q, qd: jnp.sin(t) * q[:6] + qd[:6]  # noqa: E731
    pd = lambda t, q, qd: jnp.cos(t) * q[:9] - 2.0 * qd[:9]  # noqa: E731
    task = HybridTask(pfbl, pd, jnp.asarray(2.0), jnp.asarray(4.0), jnp.asarray(-3e4), jnp.asarray(0.2))
    rng = np.random.default_rng(2)
    q, qd = jnp.asarray(rng.normal(size=11)), jnp.asarray(rng.normal(size=11))
    ts = jnp.asarray([0.5, 1.999, 2.0, 3.0, 4.05, 4.1, 5.0])

    def expected(t):
        law = np.concatenate([pfbl(t, q, qd), np.zeros(3)]) if t < 2.0 else np.asarray(pd(t, q, qd))
        s = min(max((t - 4.0) / 0.2, 0.0), 1.0)
        return np.concatenate([law, [-3e4 * s**2 * (3 - 2 * s)]])

    want = np.stack([expected(float(t)) for t in ts])
    one = jax.jit(lambda t, q, qd: task(t, q, qd))
    got = np.stack([np.asarray(one(t, q, qd)) for t in ts])
    batched = np.asarray(jax.jit(jax.vmap(lambda t, q, qd: task(t, q, qd), in_axes=(0, None, None)))(ts, q, qd))
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-9)
    np.testing.assert_allclose(batched, want, rtol=1e-15, atol=1e-9)
    # the switch is simulate's jump (steps end before it and restart after it); the ramp is C¹: none
    np.testing.assert_array_equal(task.jump_times, [2.0])
    inside_first = HybridTask(pfbl, None, jnp.asarray(2.0), jnp.asarray(4.0), jnp.asarray(-3e4), jnp.asarray(0.2))
    assert inside_first.jump_times is None  # a horizon inside sub-task (i): the PFBL throughout
    # one solve per phase: each phase's law is the whole law on its window, and switches nothing
    first, second = task.phases()
    assert first.jump_times is None and second.jump_times is None
    for t, row in zip(ts, want):
        law = first if float(t) < 2.0 else second
        np.testing.assert_allclose(np.asarray(law(t, q, qd)), row, rtol=1e-15, atol=1e-9)


def test_pgc_scenario_energy_balance(tmp_path):
    """000-sim2, 0.1 s: E(0) − E(t) equals the Kelvin–Voigt dissipation ∫ q̇ᵀ D q̇ dt."""
    s = scenarios.load("000-sim2").run(t1=0.1, out_dir=tmp_path, n_save=401, return_trajectory=True)
    chain, traj = s.pop("chain"), s.pop("trajectory")
    _files_ok(s)
    q, qd = traj.q, traj.qd
    assert np.all(np.isfinite(np.asarray(q))) and math.isfinite(s["final_tip_speed_m_s"])
    # independent energy functions (kinetic by one ID call, potential from CoMs + elastic energy)
    def total(c, x, v):
        return jax.vmap(lambda a, b: kj.kinetic_energy(c, a, b) + kj.potential_energy(c, a))(x, v)

    energy = np.asarray(eqx.filter_jit(total)(chain, q, qd))
    damping = jax.scipy.linalg.block_diag(*(body.damping for _, body in chain.modules))
    power = np.asarray(jnp.einsum("ti,ij,tj->t", qd, damping, qd))
    ts = np.asarray(traj.ts)
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(ts))])
    lost = energy[0] - energy
    assert lost[-1] > 1e-4  # the bent arm swings back: ≈ 0.33 mJ of E(0) ≈ 55 mJ dissipated in 0.1 s
    # energy never increases (rounding allowance 1e-10 J) and its loss matches the dissipation to
    # 1e-3 of the total loss (measured 2e-5: trapezoidal rule on 401 samples, solver rtol 1e-6)
    assert np.all(np.diff(energy) < 1e-10), np.max(np.diff(energy))
    assert np.max(np.abs(lost - dissipated)) < 1e-3 * lost[-1], (lost[-1], dissipated[-1])


@pytest.mark.slow  # 6 s of simulated time: 22 000 explicit steps, ≈ 4 min on 2 loaded cores
def test_pgc_scenario_settles_to_static_equilibrium(tmp_path):
    """000-sim2, full horizon: the arm settles within ≈ 5 s onto the equilibrium found by Newton on the ID."""
    s = scenarios.load("000-sim2").run(out_dir=tmp_path, return_trajectory=True)
    chain = s.pop("chain")
    s.pop("trajectory")
    _files_ok(s)
    eq = kj.equilibrium(chain, jnp.zeros(chain.nq), jnp.asarray(s["final_q"]))  # ID(q, 0, 0) = 0 (003 eq. 55)
    tip_eq = np.asarray(kj.forward_kinematics(chain, eq.q)[-1, :3, 3])
    # the equilibrium is the straight arm shortened by its weight: tip on the axis just below 0.4 m
    assert abs(tip_eq[2] - 0.4) < 1e-3 and np.linalg.norm(tip_eq[:2]) < 1e-9
    # measured after 6 s: tip 0.3 mm from the equilibrium's, moving at 6 mm/s (swing amplitude
    # e^(-0.84 t) of ≈ 8 cm), last 1-mm excursion at ≈ 5.9 s; the axial compressions q5 (which the
    # swing hardly excites) agree to 1e-5 relative
    assert np.linalg.norm(np.array(s["final_tip_m"]) - tip_eq) < 1e-3
    assert s["final_tip_speed_m_s"] < 0.02 and s["settling_time_1mm_s"] < 6.0
    q_end, q_eq = np.array(s["final_q"]), np.asarray(eq.q)
    np.testing.assert_allclose(q_end[[4, 9]], q_eq[[4, 9]], rtol=1e-3)


# in the default run again: 21.4 s pinned to one core (2026-11-27, the Newton check with the residual from its
# own loop and a forward-mode Jacobian; it was ≈ 45 s that morning and ≈ 90 s the day before)
def test_variable_radius_scenario_settles_on_the_newton_equilibrium(tmp_path):
    """Paper 000 Sim. 1 under constant pressures: the damped arm approaches the Newton equilibrium."""
    s = scenarios.load("000-sim1").run(out_dir=tmp_path)
    assert s["equilibrium_converged"] and s["equilibrium_residual"] < 1e-9
    # measured at 2 s: 0.0103 rad from the equilibrium (bending angles −0.95 / 1.21 / −0.39 rad),
    # moving at 0.004 rad/s, the last swing decaying
    assert s["distance_to_equilibrium"] < 0.03 and s["final_speed"] < 0.02
    _files_ok(s)


SLOW: set[str] = set()  # scenarios whose 0.05 s run is too heavy for the default run


# covered by the dedicated tests above / test_cli
OWN_TESTS = ("demo", "000-sim1", "000-sim2", "003-sim1", "003-sim2", "003-sim3", "004-godage")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in scenarios.names() if n not in OWN_TESTS])
def test_other_scenarios_short(name, tmp_path):
    module = scenarios.SCENARIOS[name][0]
    if importlib.util.find_spec(f"kane_jax.scenarios.{module}") is None:
        pytest.skip(f"scenario {name} not implemented yet")
    s = scenarios.load(name).run(t1=0.05, out_dir=tmp_path)
    assert math.isfinite(s["wall_s"])
    _files_ok(s)


@pytest.mark.slow  # the whole 4 s period: ≈ 2 min on one core (statics, compile, ≈ 9,300 steps)
def test_helicoid_scenario_runs_its_period_with_pull_only_tendons(tmp_path):
    """The default run of ``kane-jax run 003-sim1``: pull-only tendons over the whole period. At the
    gains 400/40 this loop diverged at t = 2.05 s (docs/architecture.md); the run raises if it fails."""
    s = scenarios.load("003-sim1").run(out_dir=tmp_path, plots=False, keep_trajectory=True)
    assert float(s["trajectory"].ts[-1]) == pytest.approx(4.0, abs=1e-12)
    assert s["min_tendon_tension_N"] >= 0.0  # the allocation's constraint
    e = np.abs(np.asarray(s["actuation_error_m"]))  # (n_save, nu) tendon-coordinate error y* − y
    # measured 2026-12-03 on the tilted circles: at most 1.45 mm over the period (0.025 s samples), 0.19 mm at
    # its end (8.7 / 0.77 mm on the horizontal circles, which ask the arm to lengthen: pushes)
    assert e.max() < 0.003 and e[-1].max() < 0.001
    # the tips: within 13.7 mm of their circles (the paper's law too: only the tendon coordinates are tracked)
    assert s["tip_error_max_m"] < 0.02 and s["final_tip_error_m"] < 0.001


@pytest.mark.slow  # statics (Newton/LM along 24 samples) and the 24-DoF PFBL loop compile for minutes
def test_helicoid_scenario_statics_and_pfbl(tmp_path):
    """Paper 003 Sim. 1: equilibria on the circle references, then the PFBL's closed-form error decay."""
    # the paper's law (tensions of either sign): only it obeys the closed-form decay
    s = scenarios.load("003-sim1").run(t1=0.3, out_dir=tmp_path, n_save=31, keep_trajectory=True, pull_only=False,
                                       kp=400.0, kd=40.0)
    # statics: eq. 55 with the regulator holds to solver precision at every sample
    assert s["statics_residual_max"] < 1e-8
    ts = np.asarray(s["trajectory"].ts)
    e = np.asarray(s["actuation_error_m"])  # y* - y at the saved times
    # the collocated loop is e'' + 40 e' + 400 e = 0 (double pole at -20): closed-form solution
    lam = 20.0
    e0, ed0 = e[0], np.asarray(s["actuation_error_rate0_m_s"])
    closed = (e0[None] + (ed0 + lam * e0)[None] * ts[:, None]) * np.exp(-lam * ts)[:, None]
    assert np.max(np.abs(ed0)) > 1e-3  # the reference starts moving: a real transient
    np.testing.assert_allclose(e, closed, atol=2e-6)
    _files_ok(s)
