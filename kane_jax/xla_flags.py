"""The XLA:CPU flags that kane_jax's programs run fastest under, for applications to set.

The library never changes JAX's configuration (flags included); an application (the ``kane-jax``
command, the notebooks, a user's script) sets them once, before JAX starts its CPU backend, with
:func:`use_recommended_xla_flags` — or writes :func:`recommended_xla_flags` into ``XLA_FLAGS``
itself. Two flags (``docs/architecture.md``, "Whole loops as one kernel"; DESIGN §3.5):

- ``--xla_cpu_use_fusion_emitters=false``: XLA:CPU's classic fusion, which compiles and runs
  small 3-vector code like the recursion's faster than the newer fusion emitters.
- ``--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1048576``: XLA:CPU compiles
  a ``while`` loop that touches at most this many bytes, and holds no dot, scatter, convolution
  or custom call, into a single kernel (1 kB by default). A simulation's integration loop (a
  diffrax solve) or a controller's ``fori_loop`` over one state then runs with no per-kernel
  dispatch: the demo runs 2.9× faster (20 → 57× real time), ``004-godage`` 2.6×, one forward
  dynamics in a jitted loop 2.6–3.7× (PCS rods, the 7-DoF arm; measured 2026-11-26, ``README.md``).
  The kernels of the rods, joints and the recursion are written without dot products for this.
  Batched work over many states touches more bytes and keeps XLA's usual multi-kernel execution.
  The solves inside an optimizer's loop (a loss and its gradient) then compile markedly longer: a solve
  compiled with ``simulate(one_kernel=False)`` (``identification.simulation_loss``'s default) holds a
  custom call that keeps it out of the single kernel (README, *Set-up*); a lower threshold of the
  caller's own (kept by :func:`recommended_xla_flags`) trades it back for every loop.
"""

from __future__ import annotations

import os

SMALL_LOOP_OPTION = "xla_cpu_small_while_loop_byte_threshold"
SMALL_LOOP_BYTES = 1 << 20
RECOMMENDED_CPU_FLAGS = (
    "--xla_cpu_use_fusion_emitters=false",
    f"--xla_backend_extra_options={SMALL_LOOP_OPTION}={SMALL_LOOP_BYTES}",
)
_EXTRA = "--xla_backend_extra_options="


def recommended_xla_flags(current: str | None = None) -> str:
    """``current`` (an ``XLA_FLAGS`` string) with kane_jax's recommended CPU flags added.

    A flag (or backend option) that ``current`` already sets is kept as it is, so a user's own
    choice wins; the others are appended. Backend options go into the one
    ``--xla_backend_extra_options`` list that XLA reads.

    Arguments:
        current: the flags to extend (default ``$XLA_FLAGS``, empty when unset).

    Returns:
        The merged flags, for ``XLA_FLAGS``.

    Raises:
        TypeError: ``current`` is not a string.
    """
    if current is None:
        current = os.environ.get("XLA_FLAGS", "")
    if not isinstance(current, str):
        raise TypeError(f"current: expected an XLA_FLAGS string, got {type(current).__name__}")
    parts = current.split()
    for flag in RECOMMENDED_CPU_FLAGS:
        if flag.startswith(_EXTRA):
            option = flag[len(_EXTRA):]
            idx = [i for i, p in enumerate(parts) if p.startswith(_EXTRA)]
            if not idx:
                parts.append(flag)
                continue
            i = idx[-1]  # XLA reads the last occurrence
            options = [o for o in parts[i][len(_EXTRA):].split(",") if o]
            if not any(o.split("=", 1)[0] == option.split("=", 1)[0] for o in options):
                parts[i] = _EXTRA + ",".join(options + [option])
        elif not any(p.split("=", 1)[0] == flag.split("=", 1)[0] for p in parts):
            parts.append(flag)
    return " ".join(parts)


def use_recommended_xla_flags() -> str:
    """Set ``$XLA_FLAGS`` to :func:`recommended_xla_flags` (changes the process's configuration).

    Call it before the first JAX computation (importing ``kane_jax`` or ``jax`` is fine): XLA reads
    its flags once, when the CPU backend starts.

    Returns:
        The flags now in ``$XLA_FLAGS``.

    Raises:
        RuntimeError: JAX's backends are already running, so new flags would be silently ignored.
    """
    try:
        from jax._src import xla_bridge

        started = xla_bridge.backends_are_initialized()
    except (ImportError, AttributeError):  # another JAX version: nothing to check against
        started = False
    flags = recommended_xla_flags()
    if started and flags != os.environ.get("XLA_FLAGS", ""):
        raise RuntimeError("use_recommended_xla_flags: JAX's backends have already started, so XLA would ignore "
                           f"new flags; call it before the first JAX computation (or set XLA_FLAGS={flags!r} "
                           "before starting Python).")
    os.environ["XLA_FLAGS"] = flags
    return flags


_DISABLED = "--xla_disable_hlo_passes="
# XLA's loop-invariant code motion: see :func:`without_loop_hoisting`
LOOP_HOISTING_PASS = "while-loop-invariant-code-motion"


def without_loop_hoisting(current: str | None = None) -> dict[str, str]:
    """Compile options for one program (``jax.jit(..., compiler_options=...)``) that turn off XLA's
    loop-invariant code motion, keeping the passes that ``current`` already turns off.

    Why: XLA hoists the loop-invariant part of each computation in a ``while`` body out of the loop
    *before* its common-subexpression elimination merges identical computations, so two copies of
    the same work in a loop body (a feedback law's model terms and the forward dynamics' own, in a
    simulation's vector field) are hoisted apart, read the loop state at different places, and are
    never merged: both run at every evaluation. Without the hoisting they merge (measured:
    ``docs/architecture.md``, *Identical work in a loop body*). Only for programs where that
    duplication is expected: elsewhere the hoisting pays.

    Arguments:
        current: the ``XLA_FLAGS`` string whose ``--xla_disable_hlo_passes`` list is extended
            (default ``$XLA_FLAGS``); compile options replace that list rather than extend it.

    Returns:
        ``{"xla_disable_hlo_passes": "<passes>,while-loop-invariant-code-motion"}``.
    """
    return without_passes((LOOP_HOISTING_PASS,), current)


def without_passes(names: tuple[str, ...], current: str | None = None) -> dict[str, str]:
    """Compile options for one program that turn off the HLO passes ``names`` as well as those that
    ``current`` (default ``$XLA_FLAGS``) turns off: ``{"xla_disable_hlo_passes": "<passes>"}``."""
    if current is None:
        current = os.environ.get("XLA_FLAGS", "")
    lists = [p[len(_DISABLED):] for p in current.split() if p.startswith(_DISABLED)]
    passes = [p for p in (lists[-1].split(",") if lists else []) if p]  # XLA reads the last occurrence
    return {"xla_disable_hlo_passes": ",".join(passes + [n for n in names if n not in passes])}
