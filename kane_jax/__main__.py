"""The ``kane-jax`` command (also ``python -m kane_jax``).

``kane-jax demo`` runs a representative soft/hybrid simulation on the CPU and writes its plots and
animation; ``kane-jax list`` lists the papers' scenarios; ``kane-jax run NAME [--t1 T] [--out DIR]``
runs one. With ``--html`` both also write an interactive 3-D view of the simulated motion
(:func:`kane_jax.view`) to ``OUT/view.html``, a standalone page that works offline. The command
is an application, so it (not the library) enables float64 and adds kane_jax's recommended XLA:CPU
flags to ``XLA_FLAGS`` (:func:`kane_jax.recommended_xla_flags`: classic fusion, DESIGN §3.5, and
whole small loops compiled as one kernel; a flag the user set keeps the user's value). It also
turns on JAX's persistent compilation cache in ``$KANE_JAX_CACHE_DIR`` (default a per-user cache
folder; ``--no-cache`` turns it off), so a second run loads its programs instead of compiling them,
and runs Python's garbage collector less often while it traces (``kane_jax._gc``).
"""

from __future__ import annotations

import argparse
import html
import os
import sys
import time

DEFAULT_OUT = "kane_jax_out"
PAGE = ('<!doctype html>\n<html>\n<head><meta charset="utf-8"><title>kane-jax: {title}</title>\n'
        "<style>html, body {{margin: 0; height: 100%;}}</style></head>\n<body>{div}</body>\n</html>\n")
CACHE_HELP = ("do not use the persistent compilation cache nor the stored lowered programs ($KANE_JAX_CACHE_DIR, "
              "default a per-user cache folder)")
HTML_HELP = ("also write an interactive 3-D view of the motion (rotate, scrub, play; works offline) to "
             "OUT/view.html (view_2.html, ... when the scenario simulates several motions)")


def _parser() -> argparse.ArgumentParser:
    from .scenarios import SCENARIOS

    p = argparse.ArgumentParser(prog="kane-jax", description="Differentiable recursive dynamics of soft/rigid chains: "
                                "run the demo and the papers' scenarios.")
    sub = p.add_subparsers(dest="command", metavar="{demo,list,run}")
    sub.required = True
    d = sub.add_parser("demo", help="simulate a hybrid rigid-soft arm and write plots + animation")
    d.add_argument("--t1", type=float, default=None, help="simulated time [s] (default 3)")
    d.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    d.add_argument("--html", action="store_true", help=HTML_HELP)
    d.add_argument("--no-cache", action="store_true", help=CACHE_HELP)
    sub.add_parser("list", help="list the scenarios")
    r = sub.add_parser("run", help="run one scenario by name")
    r.add_argument("name", help="scenario name: " + ", ".join(SCENARIOS))
    r.add_argument("--t1", type=float, default=None, help="final time [s] (default: the paper's)")
    r.add_argument("--out", default=None, help=f"output folder (default ./{DEFAULT_OUT}/NAME)")
    r.add_argument("--html", action="store_true", help=HTML_HELP)
    r.add_argument("--no-cache", action="store_true", help=CACHE_HELP)
    return p


def _setup_jax(cache: bool = True) -> None:
    from ._gc import collect_less_often
    from .xla_flags import recommended_xla_flags

    collect_less_often()  # tracing allocates millions of short-lived objects (``_gc``)

    os.environ["XLA_FLAGS"] = recommended_xla_flags()  # before the first computation starts XLA
    import jax

    jax.config.update("jax_enable_x64", True)
    if cache:
        from .compilation_cache import enable_compilation_cache, enable_lowered_store

        try:
            folder = enable_compilation_cache()
            enable_lowered_store(folder / "kane_jax_lowered")  # the solves' traces too (simulation/_stored.py)
            print(f"kane-jax: compilation cache: {folder}", flush=True)
        except (OSError, ValueError) as err:  # an unwritable cache folder must not stop the run
            print(f"kane-jax: warning: compilation cache off: {err}", file=sys.stderr)


def _write_views(name: str, recorded: list, out_dir: str) -> int:
    """One HTML view per simulated motion (``view.html``, ``view_2.html``, …); 1 when there is none."""
    from .simulation.view import view

    if not recorded:
        print(f"kane-jax: error: --html: scenario {name!r} simulates no chain trajectory, so there is no motion "
              "to view (its other outputs were written)", file=sys.stderr)
        return 1
    for k, (chain, traj) in enumerate(recorded):
        path = os.path.join(out_dir, "view.html" if k == 0 else f"view_{k + 1}.html")
        title = name if len(recorded) == 1 else f"{name} ({k + 1}/{len(recorded)})"
        # the figure fills the window: its div in a page without margins, plotly.js inside (offline)
        div = view(chain, traj, title=title).update_layout(height=None).to_html(
            full_html=False, include_plotlyjs=True, auto_play=False, default_height="100vh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(PAGE.format(title=html.escape(title), div=div))
        print(f"kane-jax: 3-D view: {os.path.abspath(path)}")
    return 0


def _run(name: str, t1, out, parser, html: bool = False, cache: bool = True) -> int:
    from . import scenarios
    from .scenarios._common import recording, report

    if name not in scenarios.SCENARIOS:
        parser.error(f"unknown scenario {name!r}; choose one of: {', '.join(scenarios.SCENARIOS)}")
    if t1 is not None and not t1 > 0:
        parser.error(f"--t1 must be positive, got {t1}")
    # XLA reads its flags when JAX starts its backend, which a scenario module may do on import (its
    # constants are arrays): set them first (000-sim1 ran without them, 20.7 s instead of ≈ 14 s compile)
    _setup_jax(cache)
    try:
        module = scenarios.load(name)
    except ImportError as err:
        print(f"kane-jax: error: scenario {name!r} is not available: {err}", file=sys.stderr)
        return 2
    out_dir = out if out is not None else os.path.join(DEFAULT_OUT, name)
    print(f"kane-jax: running {name}: {scenarios.SCENARIOS[name][1]}", flush=True)
    start = time.perf_counter()
    with recording() as recorded:
        summary = module.run(t1=t1, out_dir=out_dir)
    print(report(summary))
    status = _write_views(name, recorded, out_dir) if html else 0
    print(f"kane-jax: done in {time.perf_counter() - start:.1f} s; output folder: {os.path.abspath(out_dir)}")
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``kane-jax``; returns the exit status (argparse exits with 2 on bad arguments)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        import importlib.util

        from .scenarios import SCENARIOS

        width = max(len(n) for n in SCENARIOS)
        for name, (module, desc) in SCENARIOS.items():
            missing = importlib.util.find_spec(f"kane_jax.scenarios.{module}") is None
            print(f"{name:<{width}}  {desc}" + ("  [not available yet]" if missing else ""))
        return 0
    if args.command == "demo":
        return _run("demo", args.t1, args.out, parser, args.html, not args.no_cache)
    return _run(args.name, args.t1, args.out, parser, args.html, not args.no_cache)


if __name__ == "__main__":
    sys.exit(main())
