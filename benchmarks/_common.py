"""Shared helpers of the benchmark scripts: argument parsing, timing, conditions and tables.

Method (STYLE.md "Benchmarks", issue 7): compile time is measured apart from the steady state
(``jax.jit(f).lower(*args).compile()``), calls through ``jax.jit(f)`` (which reuses that executable);
every function is warmed up; each call blocks on its *outputs* (``jax.block_until_ready``); a
measurement is the median over ``repeats`` repeats of the mean time of ``number`` back-to-back
calls, reported with the min and max of the repeats; a peer (Pinocchio, MuJoCo, SoRoMoX, the
Euler–Lagrange reference) is timed the same way in the same run.

XLA flags cannot be changed after JAX starts its backend, so ``--no-fusion-emitters`` and
``--recommended-flags`` have to be handled before the first computation: every script calls
:func:`parse_args` first and imports JAX afterwards.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
FUSION_FLAG = "--xla_cpu_use_fusion_emitters=false"


def parse_args(name: str, argv: Sequence[str] | None = None, extra: Callable | None = None) -> argparse.Namespace:
    """Common command line; sets ``XLA_FLAGS`` (before JAX is imported) when asked to."""
    p = argparse.ArgumentParser(prog=name, description=f"kane_jax benchmark: {name}")
    p.add_argument("--quick", action="store_true", help="short form used by the test suite (seconds)")
    p.add_argument("--out", default=None, help="output markdown file (default benchmarks/results/<name>.md; "
                   "the quick form writes nothing unless given)")
    p.add_argument("--no-fusion-emitters", action="store_true",
                   help=f"run with XLA_FLAGS={FUSION_FLAG} (must be set before JAX starts)")
    p.add_argument("--recommended-flags", action="store_true",
                   help="run with kj.recommended_xla_flags() added to XLA_FLAGS (the fusion flag and the "
                   "whole-loop flag; the flags the README's recommended-flags tables were measured with)")
    p.add_argument("--repeats", type=int, default=None, help="timing repeats (median, min, max)")
    if extra is not None:
        extra(p)
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.no_fusion_emitters:
        if "jax" in sys.modules and FUSION_FLAG not in os.environ.get("XLA_FLAGS", ""):
            print(f"warning: JAX already imported; {FUSION_FLAG} may not take effect", file=sys.stderr)
        flags = os.environ.get("XLA_FLAGS", "")
        if FUSION_FLAG not in flags:
            os.environ["XLA_FLAGS"] = (flags + " " + FUSION_FLAG).strip()
    if args.recommended_flags:
        # imports JAX, which reads XLA_FLAGS only when its backend starts (the first computation)
        from kane_jax.xla_flags import recommended_xla_flags

        os.environ["XLA_FLAGS"] = recommended_xla_flags(os.environ.get("XLA_FLAGS", ""))
    if args.repeats is None:
        args.repeats = 3 if args.quick else 7
    return args


def results_name(name: str, args: argparse.Namespace) -> str:
    """The results file's name: ``name`` with the XLA-flag options the run was given (``--no-fusion-emitters``,
    ``--recommended-flags``), so runs under different flags do not overwrite each other."""
    return (name + ("_no_fusion_emitters" if args.no_fusion_emitters else "")
            + ("_recommended_flags" if args.recommended_flags else ""))


def setup_jax(x64: bool = True):
    """Import JAX and enable float64 (benchmarks set it themselves; the library never does)."""
    import jax

    jax.config.update("jax_enable_x64", x64)
    return jax


# --------------------------------------------------------------------------------------------
# timing


@dataclass
class Timing:
    """Per-call seconds: median, min and max over repeats; compile time if measured."""

    median: float
    min: float
    max: float
    number: int
    compile: float | None = None
    fn: Callable | None = field(default=None, repr=False)  # the compiled function (time_jit)
    compiles: Any = field(default=None, repr=False)  # _compile_time.CompileTiming: spread and phases

    def fmt(self, per: int = 1) -> str:
        return f"{fmt_time(self.median / per)} [{fmt_time(self.min / per)}–{fmt_time(self.max / per)}]"


def fmt_time(t: float) -> str:
    if t != t:  # NaN
        return "n/a"
    if t < 1e-6:
        return f"{t * 1e9:.0f} ns"
    if t < 1e-3:
        return f"{t * 1e6:.3g} µs"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def _block(out: Any) -> Any:
    import jax

    return jax.block_until_ready(out)


def time_call(fn: Callable[[], Any], *, repeats: int = 7, min_time: float = 0.05, max_number: int = 100_000,
              block: bool = True) -> Timing:
    """Time ``fn()`` (already compiled/warm): median/min/max over repeats of the per-call mean.

    ``number`` calls per repeat are chosen so that a repeat lasts about ``min_time`` seconds; with
    ``block`` every call blocks on its outputs (so async dispatch cannot hide work).
    """
    return time_calls_interleaved([fn], repeats=repeats, min_time=min_time, max_number=max_number, block=block)[0]


def time_calls_interleaved(fns: Sequence[Callable[[], Any]], *, repeats: int = 7, min_time: float = 0.05,
                           max_number: int = 100_000, block: bool = True) -> list[Timing]:
    """Time several warm functions as :func:`time_call` does, their repeats interleaved (a, b, a, b, …).

    On a shared machine whose speed drifts between seconds, a peer timed after the other sees another
    machine; interleaved, each repeat of one is next to a repeat of the other, so their ratio holds.
    """
    calls = [(lambda f=f: _block(f())) if block else f for f in fns]
    numbers = []
    for call in calls:
        call()  # warm-up
        if min_time > 0:
            t0 = time.perf_counter()
            call()
            numbers.append(int(min(max_number, max(1, min_time / max(time.perf_counter() - t0, 1e-7)))))
        else:
            numbers.append(1)
    per: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, number, out in zip(calls, numbers, per):
            t0 = time.perf_counter()
            for _ in range(number):
                call()
            out.append((time.perf_counter() - t0) / number)
    return [Timing(statistics.median(p), min(p), max(p), n) for p, n in zip(per, numbers)]


def time_jit_interleaved(pairs: Sequence[tuple[Callable, tuple]], *, repeats: int = 7,
                         min_time: float = 0.05, compile_repeats: int = 1, **kw) -> list[Timing]:
    """Compile ``jax.jit(fn)`` for each ``(fn, args)`` (timed apart: trace + lower + XLA compile; with
    ``compile_repeats`` > 1 that many times each, interleaved, from cleared caches:
    :func:`_compile_time.compile_interleaved`), then time the calls of ``jax.jit(fn)`` interleaved
    (:func:`time_calls_interleaved`).

    The calls go through the ``jax.jit`` wrapper, as users call it; it finds the executable compiled
    above in JAX's caches (its first call is checked not to compile). Not through the ``Compiled``
    object of ``lower().compile()``: JAX calls a program with a host callback (the forward dynamics'
    finiteness check, ``equinox.error_if``) through that object on its Python path, ≈ 100 µs more per
    call than through ``jax.jit`` (the 7-DoF arm's FD 137–144 against 30–34 µs, 2026-11-30).
    """
    import jax
    from _compile_time import compile_interleaved

    jitted, recompiles = [], []

    def on_duration(event, duration, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            recompiles.append(duration)

    compiles = compile_interleaved(pairs, repeats=compile_repeats)
    for fn, args in pairs:
        if compile_repeats > 1:  # the caches were cleared before the others' compiles: this one again, untimed
            jax.jit(fn).lower(*args).compile()
        jitted.append(jax.jit(fn))
        jax.monitoring.register_event_duration_secs_listener(on_duration)
        try:
            _block(jitted[-1](*args))
        finally:
            jax.monitoring.unregister_event_duration_listener(on_duration)
        if recompiles:
            raise RuntimeError(f"time_jit_interleaved: jax.jit({getattr(fn, '__name__', fn)}) compiled again "
                               "instead of reusing the compiled executable; its compile time would be wrong")
    res = time_calls_interleaved([lambda f=f, a=a: f(*a) for f, (_, a) in zip(jitted, pairs)],
                                 repeats=repeats, min_time=min_time, **kw)
    for r, f, c in zip(res, jitted, compiles):
        r.compile, r.fn, r.compiles = c.median, f, c
    return res


def time_jit(fn: Callable, *args, repeats: int = 7, min_time: float = 0.05, **kw) -> Timing:
    """Compile ``jax.jit(fn)`` for ``args`` (timed: trace + lower + XLA compile), then time calls."""
    return time_jit_interleaved([(fn, args)], repeats=repeats, min_time=min_time, **kw)[0]


def jit_model(fn: Callable, model: Any) -> tuple[Callable, Any]:
    """Split an equinox model into array leaves (jit arguments) and static structure.

    Returns ``(f, params)`` with ``f(params, *args) == fn(model, *args)``, so a kane_jax chain is
    passed to ``jax.jit`` as data (a new parameter value does not recompile), as users do.
    """
    import equinox as eqx

    params, static = eqx.partition(model, eqx.is_array)

    def f(p, *args):
        return fn(eqx.combine(p, static), *args)

    return f, params


# --------------------------------------------------------------------------------------------
# conditions and tables


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(mod: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(mod)
    except Exception:  # noqa: BLE001
        return None


def conditions(dtype: str | Sequence[str], peers: Sequence[str] = ()) -> dict[str, str]:
    """The machine, software and settings a table was measured under."""
    import jax

    devs = jax.devices()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    cond = {
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "CPU": f"{_cpu_model()}, {os.cpu_count()} logical cores",
        "load average (1/5/15 min)": " / ".join(f"{x:.2f}" for x in load),
        "device": f"{devs[0].platform}: {devs[0].device_kind} (x{len(devs)})",
        "python": platform.python_version(),
        "jax / jaxlib": f"{jax.__version__} / {_version('jaxlib')}",
        "equinox / diffrax": f"{_version('equinox')} / {_version('diffrax')}",
        "dtype": dtype if isinstance(dtype, str) else ", ".join(dtype),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", "") or "(none)",
    }
    for p in peers:
        cond[p] = _version(p) or "not installed"
    return cond


@dataclass
class Table:
    """A markdown table with a title and notes."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *row: Any) -> None:
        self.rows.append([str(x) for x in row])

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.notes:
            out.append("")
            out += [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


class Report:
    """Collects tables, prints them as they are finished, and writes one markdown file."""

    def __init__(self, name: str, args: argparse.Namespace, cond: dict[str, str], intro: str = ""):
        self.name, self.args, self.cond, self.intro = name, args, cond, intro
        self.tables: list[Table] = []
        self.t0 = time.perf_counter()
        print(self.header(), flush=True)

    def header(self) -> str:
        lines = [f"## {self.name}" + (" (quick form)" if self.args.quick else ""), ""]
        if self.intro:
            lines += [self.intro, ""]
        lines += ["| condition | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in self.cond.items()]
        lines += ["", "Times: median [min–max] over repeats of the per-call mean; compile = trace + lower "
                  "+ XLA compile; every call blocks on its outputs.", ""]
        return "\n".join(lines)

    def add(self, table: Table) -> Table:
        self.tables.append(table)
        print(table.markdown(), flush=True)
        return table

    def write(self) -> Path | None:
        out = self.args.out
        if out is None and self.args.quick:
            return None
        path = Path(out) if out else RESULTS / f"{self.name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
        footer = (f"\nTotal run time {time.perf_counter() - self.t0:.0f} s; load average at the end "
                  f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.\n")
        path.write_text(self.header() + "\n" + "\n".join(t.markdown() for t in self.tables) + footer)
        print(f"wrote {path}", flush=True)
        return path


def ratio(a: float, b: float) -> str:
    """``a / b`` formatted (e.g. kane_jax throughput / peer throughput)."""
    if not (b and a == a and b == b):
        return "n/a"
    r = a / b
    return f"{r:.3g}×"


def max_abs_rel(a, b) -> tuple[float, float]:
    """Largest absolute difference and the same relative to the largest |b| entry."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 1.0
    return err, err / (scale if scale > 0 else 1.0)


def fmt_err(a, b) -> str:
    err, rel = max_abs_rel(a, b)
    return f"{err:.1e} (rel {rel:.1e})"
