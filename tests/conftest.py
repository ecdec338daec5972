"""Test configuration: float64 and strict rank promotion for every test (never in the library)."""

import os

# the suite runs in parallel processes (pytest-xdist): on a GPU, none may take most of its memory
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def _pin_worker_to_its_cores() -> None:
    """Give each xdist worker its own share of the CPUs (inherited by the processes it starts).

    Unpinned, the workers' processes migrate between the cores they share, and a process whose
    XLA runtime hands work between threads pays for it: the trajectory-optimization notebook took
    91-94 s beside one busy core instead of 30 s (kernel CPU time 88-92 s instead of 30 s), and
    31.8 s when it and the busy process each had a core of their own (2026-11-26, 2-core VM; the
    whole suite 713 s -> 621 s in consecutive runs). Set before JAX creates its CPU client (the
    first computation)."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not (worker.startswith("gw") and count.isdigit() and hasattr(os, "sched_setaffinity")):
        return
    cpus, n = sorted(os.sched_getaffinity(0)), int(count)
    if n < 2 or len(cpus) < n:
        return
    os.sched_setaffinity(0, set(cpus[int(worker[2:]) % n::n]))


_pin_worker_to_its_cores()
# the flags users are told to run with (kj.recommended_xla_flags; a flag the caller set wins): XLA:CPU's
# classic fusion compiles this 3-vector code ≈ 40 % faster than the fusion emitters (measured: ID
# Jacobian of a 2-module CC chain 60 s vs 95 s under load; tests are compile-bound), and small whole
# loops as one kernel (tests/simulation + control + optimize 246 -> 231 s, the PCS and GVS derivative
# matrix workers 57 / 107 s -> 56 / 110 s, pinned, 2026-11-26)
from kane_jax.xla_flags import recommended_xla_flags  # noqa: E402  (imports JAX; its backend starts later)

os.environ["XLA_FLAGS"] = recommended_xla_flags(os.environ.get("XLA_FLAGS", ""))
# the tests are trace- as much as compile-bound: Python's collector runs less often while they trace
# (kane_jax._gc: trace + lowering of the derivative matrix's programs 10-25 % shorter, 2026-12-02)
from kane_jax._gc import collect_less_often  # noqa: E402

collect_less_often()
# and without LLVM's expensive optimizations: 13 % less time for the heaviest algorithm tests
# (217 s vs 251 s for test_mass_matrix + energy conservation + the rigid-joint ID tests, idle, 2026-11-22);
# the programs compute the same IEEE operations, only less optimized machine code
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] += " --xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
# and without XLA's HLO verifier between passes: it checks the program's invariants and changes nothing
# (the optimized HLO of a PCS chain's FD and its jacfwd/jacrev is identical, text hash for text hash),
# but took 2.5 s of the 22.6 s compile of a soft chain's ID/M/FD Hessians (17.1 s without it; pinned,
# 2026-11-26)
# and without the first of XLA:CPU's two identical simplification pipelines ("simplification", run to
# a fixed point before the scatter expander; "post_scatter_expansion_simplification" runs the same
# passes to a fixed point right after it): the programs come out the same (the ID/M/FD Hessians of
# two planar CC segments and of an LVP body equal bit for bit) and compile 11-15 % faster (15.9 →
# 13.4 s and 27.4 → 24.5 s, pinned, 2026-11-29); only scatters with constant operands lose their
# folding before expansion, which the tests' programs do not rely on. And without the reshape mover
# (it sinks reshapes and transposes below elementwise operations so that later passes can merge them):
# the same operations in other kernels, a Hessian 13.1-14.9 → 11.2-12.3 s to compile and equal to it
# within 2.5e-14 of its largest entry; five of the heaviest tests 170.7 → 157.8 s (pinned, 2026-11-29)
if "xla_disable_hlo_passes" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] += " --xla_disable_hlo_passes=hlo-verifier,simplification,reshape-mover"
# and the LLVM module of each program not split for parallel code generation: the xdist workers run on a core
# each (above), where XLA:CPU's split into parts compiled on its thread pool only adds work (a run with `-n 0`
# compiles on one thread as well) — the same
# machine code (the derivative matrix's programs bit for bit), XLA's compile of a PCS and of an LVP chain's
# reverse-mode derivatives 4.20 / 4.25 → 3.67 / 3.79 s and 12.1 → 11.1 s (pinned, 2026-12-06)
if "xla_cpu_parallel_codegen_split_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] += " --xla_cpu_parallel_codegen_split_count=1"
# Not XLA:CPU's FAST_COMPILE preset (--xla_cpu_opt_preset): it cut the whole default run 701 -> 509 s
# (2026-11-26), but its shorter HLO simplification (4 rounds of the fixed-point pipeline instead of 11)
# miscompiles the Euler-Lagrange reference's third time derivative in
# test_time_derivatives.py::test_derivatives_match_finite_differences_and_el[mixed] (tau_dd off by 3.5e-4
# relative; the same program without the preset agrees with the recursion to 1.8e-16): an oracle that
# the compiler gets wrong is not one to test against (docs/architecture.md, "The test suite").

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402


def pytest_configure(config):
    """One persistent compilation cache per test session, shared by the xdist workers and every
    subprocess the tests start (CLI, notebooks, benchmark scripts): a program compiled by one
    worker or test module is loaded, not compiled again, by the others (the modules drop their
    in-memory executables, see below). Set before the workers start, so they inherit it; a
    ``JAX_COMPILATION_CACHE_DIR`` set by the caller is kept. Every program is cached, however quick its
    compile: the small ones (eager operations, recompiled after each module's cache clearing and in
    every subprocess) are most of the ~9,000 compiles; pinned, interleaved, one process, five test
    modules: 129.5 / 140.3 s with the 0.2 s threshold, 124.8 / 131.0 s without (2026-11-26)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or "JAX_COMPILATION_CACHE_DIR" in os.environ:
        return
    import tempfile

    folder = tempfile.mkdtemp(prefix="kane_jax_test_cache_")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    os.environ["KANE_JAX_CACHE_DIR"] = folder  # the CLI's and the notebooks' kj.enable_compilation_cache()
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    config._kane_jax_test_cache = folder  # removed when the session ends (≈ 120 MB per run)


def pytest_unconfigure(config):
    """Remove the session's compilation cache (only the one this process created: never a caller's)."""
    folder = getattr(config, "_kane_jax_test_cache", None)
    if folder is not None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
# the source locations of the programs' operations as one frame each, not whole Python tracebacks (set
# in the environment too, so that the subprocess tests inherit it): the same programs and numbers, less
# metadata for XLA to carry through its passes — the ID/M/FD q-Hessians of two planar CC segments and of
# an LVP body bit for bit equal, compiled in 11.2 / 10.9 s instead of 11.5 / 12.6 s and 14.6 / 14.5 s
# instead of 15.5 / 14.8 s (pinned, alternating, 2026-11-30); only HLO dumps lose the callers' frames
os.environ.setdefault("JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS", "false")
jax.config.update("jax_include_full_tracebacks_in_locations",
                  os.environ["JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS"].lower() in ("1", "true"))


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_executables():
    """Drop JAX's compiled executables after each test module.

    Each XLA:CPU executable keeps ≈ 3 memory mappings alive; the whole suite compiles tens of
    thousands of them (eager autodiff compiles one per primitive and shape), which exceeded Linux's
    ``vm.max_map_count`` (65530) and made XLA segfault inside a compile. Clearing per module keeps
    the count bounded at the price of recompiling what a later module needs again.
    """
    yield
    jax.clear_caches()


@pytest.fixture
def rng():
    """A seeded NumPy generator, so every failure is reproducible."""
    return np.random.default_rng(1234)


# Tests excluded from the default (CI) run, each with its reason. They still run with `-m slow`.
# "heavy": passes but too slow for a 2-core CI run; "fails": seen failing, with the measured gap.
# Empty since 2026-12-05 (stop 89): the last three came back once they got faster — the ID transcription
# (96.6 -> 16.9 s pinned, per-knot Jacobian blocks), the simulation-error fit (41.3 -> 31.9 s, every step
# stored for the adjoint) and the LVP body functions' smoothness at rest (7.5 s).
_NOT_DEFAULT: dict[str, str] = {}


def pytest_collection_modifyitems(config, items):
    for item in items:
        nodeid = item.nodeid.split("[")[0]
        for key, why in _NOT_DEFAULT.items():
            if item.nodeid == key or nodeid == key or nodeid.startswith(key + "::"):
                item.add_marker(pytest.mark.slow(reason=why))
