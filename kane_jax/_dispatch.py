"""How the public entry points are compiled: ``equinox.filter_jit``'s rule at ``jax.jit``'s dispatch cost.

The entry points take the chain as an argument, so a new parameter value (a mass, a stiffness)
does not recompile: the array leaves of the arguments are traced, everything else (the chain's
structure, a user's geometry function, Python numbers, ``None`` options) is static and selects the
compiled program. That is ``equinox.filter_jit``'s rule, which this module keeps; what it changes
is the price of a call. ``filter_jit`` partitions the argument pytrees with ``eqx.partition`` and
re-hashes their static parts on every call: ≈ 130 µs of Python per call on the 2-core CPU,
measured on the 7-DoF arm's inverse dynamics (161 µs per call, of which the compiled program is
≈ 30 µs). Here one ``jax.tree.flatten`` splits the leaves, the static ones and the tree definition
key a dictionary of ``jax.jit`` functions of the array leaves alone, and ``jax.jit``'s C++ fast
path does the rest; the chain (the first argument, an equinox module) is flattened once per object
(``_module_entry``), and an eager call passes its arrays packed into a few buffers of at most 512
bytes, made once per chain object (``_packing.pack``: JAX's dispatch costs ≈ 0.55 µs per array argument;
the 7-DoF arm's 11 arrays become 6 buffers).

Inside a user's ``jit`` the entry point stays a nested ``jit``, as ``filter_jit``'s would (repeated
calls are traced once); under ``jvp``, ``vmap`` or ``grad`` it runs inline
(:func:`_under_transformation`), since JAX would re-trace a nested ``jit`` at every level. Eager
calls of the entry points that opt in (``sequential=True``: the inverse dynamics and the mass
matrix) compile on the CPU with one per-program XLA option, the memory-optimized thunk schedule
(``_CPU_COMPILER_OPTIONS``); JAX's global configuration and users'
own programs are untouched.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import equinox as eqx
import jax
from jax._src import core as _jax_core
from jax._src.interpreters import partial_eval as _jax_pe

from ._packing import pack, unpack

F = TypeVar("F", bound=Callable[..., Any])


# XLA:CPU's default thunk schedule lets independent kernels run on the CPU client's worker threads;
# for the many small, mostly independent kernels of one call on one state (the chain's parameters
# turned into per-module terms) the hand-offs cost more than the kernels. The memory-optimized
# schedule orders them into a sequence. Measured on the iiwa-like arm, 2026-11-24, synchronous
# dispatch: one public ID call 85-104 -> 31-43 us, M 106 -> 26 us (AOT ID 70-76 -> 28-30 us); soft
# chains unchanged; FD's eager call slower (101 -> 130 us), so entry points opt in (`sequential`).
# A per-program compile option, not a global flag: programs of users' own `jit`s are untouched.
_CPU_COMPILER_OPTIONS = {"xla_cpu_scheduler_type": "CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"}


def _compiler_options(eager: bool) -> dict | None:
    """The per-program options of a top-level (eager) call on the CPU; none inside a user's trace,
    where JAX rejects options on a nested ``jit`` and the user's own program is compiled instead."""
    return _CPU_COMPILER_OPTIONS if eager and jax.default_backend() == "cpu" else None


def _eager() -> bool:
    """True when no transformation is tracing (JAX's trace state is clean). Where the private
    probe is missing (another JAX version), False: the calls then compile without options."""
    clean = getattr(_jax_core, "trace_state_clean", None)
    return bool(clean()) if clean is not None else False


def _under_transformation() -> bool:
    """True when the innermost trace is a transformation (``jvp``, ``vmap``, ``grad``'s linearization)
    rather than staging (``jit``) or eager evaluation.

    There a nested ``jit`` costs tracing time and buys nothing: JAX transforms a nested ``jit`` by
    re-tracing its whole program once per transformation level (``jvp_jaxpr``, ``batch_jaxpr``), each
    level building a full intermediate program, where inline code passes each operation through the
    stack of transformations once. Measured on the full Hessian of a soft segment's inverse dynamics
    (``jit(vmap(jacfwd(jacfwd(...))))``, 2026-11-24): 12.5 → 8.8 s of tracing, same program. Under
    ``jit`` alone the nested ``jit`` is kept: repeated calls in one program are traced once.
    """
    trace = getattr(getattr(_jax_core, "trace_ctx", None), "trace", None)
    if trace is None or len(_STAGING_TRACES) != 2 or isinstance(trace, _STAGING_TRACES):
        return False
    return not isinstance(_bottom_trace(trace), _STAGING_TRACES[0])


def _bottom_trace(trace: Any) -> Any:
    """The trace below ``trace``'s stack of transformations (their ``parent_trace``s): the first staging
    or evaluating one.

    ``EvalTrace`` there means the transformation runs eagerly (``jax.jacfwd(f)(q)`` outside any
    ``jit``): inline code would then execute operation by operation, each a dispatch of its own (the
    ``jacfwd`` of two PCS rods' ID: 3.0 s per call, 29 s for the first), while a nested ``jit`` is
    transformed as one program and compiled once. ``DynamicJaxprTrace`` means it is being staged
    into a ``jit``, where inline code is cheaper to trace.
    """
    for _ in range(64):  # a stack of transformations is a few levels deep
        parent = getattr(trace, "parent_trace", None)
        if parent is None or isinstance(trace, _STAGING_TRACES):
            break
        trace = parent
    return trace


# where JAX's private names move (another version), nothing counts as a transformation: nested jit
_STAGING_TRACES = tuple(t for t in (getattr(_jax_core, "EvalTrace", None), getattr(_jax_pe, "DynamicJaxprTrace", None))
                        if t is not None)


class _Flat(NamedTuple):
    """A pytree split as ``jax.jit`` needs it: its array leaves, and a token naming the rest."""

    token: Any  # equal for pytrees of the same tree definition and static leaves
    treedef: Any  # None: positional arguments that are arrays or None (``mask``: None where None)
    mask: tuple  # which leaves are arrays
    static: tuple  # the non-array leaves (None where an array is)
    dynamic: list  # the array leaves


_structures: dict[tuple, int] = {}  # (treedef, mask, static) -> token


def _by_type(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``test`` remembered per type of its argument (for tests that depend on the type only)."""
    cache: dict[type, bool] = {}

    def cached(x: Any) -> bool:
        t = type(x)
        r = cache.get(t)
        if r is None:
            r = cache[t] = test(x)
        return r

    return cached


_is_array = _by_type(eqx.is_array)  # an isinstance per leaf costs ~0.2 us
_is_module = _by_type(lambda x: isinstance(x, eqx.Module))  # through ABCMeta and Module.__getattribute__


def _flatten(tree: Any) -> _Flat:
    """Split ``tree``; ``TypeError`` if a static leaf cannot be hashed."""
    leaves, treedef = jax.tree.flatten(tree)
    mask = tuple(map(_is_array, leaves))
    static = tuple(None if m else x for m, x in zip(mask, leaves))
    token = _structures.setdefault((treedef, mask, static), len(_structures))
    return _Flat(token, treedef, mask, static, [x for m, x in zip(mask, leaves) if m])


# The chain of a call, flattened once per chain object. Equinox modules are immutable and their
# array leaves are immutable JAX arrays (or arrays whose identity the call passes on), so a chain's
# flattened form never changes; flattening it is most of a call's Python cost (7-DoF arm: 5 us of
# the 15 us of Python around a 15 us program). Entries leave with their chain (weak reference);
# at most _MODULE_CACHE_SIZE are kept. An entry is [weak reference, flattened form, packed form
# (see _packing.pack; filled on the first eager call)].
_modules: dict[int, list] = {}
_MODULE_CACHE_SIZE = 64


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _modules.get(key)
    if entry is not None and entry[0] is ref:
        del _modules[key]


def _module_entry(module: eqx.Module) -> tuple[_Flat, list | None]:
    """The flattened chain and its cache entry (``None``: not cached, e.g. a chain built in a trace)."""
    key = id(module)
    entry = _modules.get(key)
    if entry is not None and entry[0]() is module:
        return entry[1], entry
    flat = _flatten(module)
    if any(isinstance(x, jax.core.Tracer) for x in flat.dynamic):  # a chain built inside a trace
        return flat, None
    try:
        ref = weakref.ref(module, functools.partial(_forget, key))
    except TypeError:  # not weakly referenceable: not cached
        return flat, None
    if len(_modules) >= _MODULE_CACHE_SIZE:
        del _modules[next(iter(_modules))]
    entry = _modules[key] = [ref, flat, None]
    return flat, entry


def _unflatten(flat: _Flat, dynamic: list) -> Any:
    it = iter(dynamic)
    return jax.tree.unflatten(flat.treedef, [next(it) if m else s for m, s in zip(flat.mask, flat.static)])


def entry_jit(fn: F | None = None, *, sequential: bool = False) -> F:
    """Compile ``fn`` once per argument structure, tracing only array leaves (``filter_jit``'s rule).

    Arguments:
        fn: a function of pytrees (the chain first) whose outputs are arrays (``None``: return the
            decorator, for ``@entry_jit(sequential=True)``).
        sequential: compile eager CPU calls with the memory-optimized thunk schedule
            (``_CPU_COMPILER_OPTIONS``). Measured to help ID and M; it made FD's one eager call
            slower (sync dispatch, 2026-11-24: 101 -> 130 us), so it is per entry point.

    Returns:
        The compiled function, same signature and docstring. Arguments whose static leaves cannot be
        hashed (unusual user data) fall back to ``equinox.filter_jit``.
    """
    if fn is None:
        return functools.partial(entry_jit, sequential=sequential)  # type: ignore[return-value]
    compiled: dict[Any, Callable] = {}
    fallback = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        eager = _eager()
        if eager and args and not kwargs:  # the common call, a chain seen before: straight to its program
            entry = _modules.get(id(args[0]))
            if entry is not None and entry[2] is not None and entry[0]() is args[0]:
                kinds = tuple([None if x is None else _is_array(x) for x in args[1:]])
                if False not in kinds:
                    jitted = compiled.get((entry[1].token, entry[2].token, kinds, sequential))
                    if jitted is not None:
                        return jitted(entry[2].buffers, [x for x in args[1:] if x is not None])
        try:
            entry = None
            if args and _is_module(args[0]):  # the chain: flattened once per object
                head, entry = _module_entry(args[0])
                kinds = None if kwargs else tuple(None if x is None else _is_array(x) for x in args[1:])
                if kinds is not None and False not in kinds:  # (chain, q, qd, None, ...): nothing to flatten
                    rest = _Flat(kinds, None, kinds, (), [x for x in args[1:] if x is not None])
                else:
                    rest = _flatten((args[1:], kwargs))
            else:
                head, rest = None, _flatten((args, kwargs))
        except TypeError:  # an unhashable static leaf
            return fallback(*args, **kwargs)
        if not eager and _under_transformation():  # traced inline (see _under_transformation)
            return fn(*args, **kwargs)
        packed = None
        if entry is not None and eager and head.dynamic:  # a top-level call: the chain's arrays packed
            packed = entry[2]
            if packed is None:
                packed = entry[2] = pack(head.dynamic)
        # (the fast path above rebuilds this key: keep them alike)
        key = (None if head is None else head.token, None if packed is None else packed.token, rest.token,
               sequential and eager)  # only the opted-in entry points keep two programs apart
        jitted = compiled.get(key)
        if jitted is None:
            # the program keeps the structure only, not this call's arrays (or tracers)
            head_spec = None if head is None else head._replace(dynamic=[])
            rest_spec = rest._replace(dynamic=[])
            plan = None if packed is None else packed.plan

            def run(dyn_head, dyn_rest, head=head_spec, rest=rest_spec, plan=plan):
                if rest.treedef is None:  # positional arrays and Nones (see above)
                    it = iter(dyn_rest)
                    a, k = tuple(None if m is None else next(it) for m in rest.mask), {}
                else:
                    a, k = _unflatten(rest, dyn_rest)
                if head is not None:
                    a = (_unflatten(head, dyn_head if plan is None else unpack(plan, dyn_head)), *a)
                return fn(*a, **k)

            jitted = compiled[key] = jax.jit(run, compiler_options=_compiler_options(sequential and eager))
        return jitted([] if head is None else head.dynamic if packed is None else packed.buffers, rest.dynamic)

    return call  # type: ignore[return-value]
