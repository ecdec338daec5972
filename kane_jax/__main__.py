"""The ``kane-jax`` command (also ``python -m kane_jax``).

``kane-jax demo`` runs a representative soft/hybrid simulation on the CPU and writes its plots and
animation; ``kane-jax list`` lists the papers' scenarios; ``kane-jax run NAME [--t1 T] [--out DIR]``
runs one. The command is an application, so it (not the library) enables float64 and, unless the
user set ``XLA_FLAGS``, XLA:CPU's classic fusion (``--xla_cpu_use_fusion_emitters=false``), which
compiles and runs this kind of small 3-vector code faster (DESIGN §3.5).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

DEFAULT_OUT = "kane_jax_out"


def _parser() -> argparse.ArgumentParser:
    from .scenarios import SCENARIOS

    p = argparse.ArgumentParser(prog="kane-jax", description="Differentiable recursive dynamics of soft/rigid chains: "
                                "run the demo and the papers' scenarios.")
    sub = p.add_subparsers(dest="command", metavar="{demo,list,run}")
    sub.required = True
    d = sub.add_parser("demo", help="simulate a hybrid rigid-soft arm and write plots + animation")
    d.add_argument("--t1", type=float, default=None, help="simulated time [s] (default 3)")
    d.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    sub.add_parser("list", help="list the scenarios")
    r = sub.add_parser("run", help="run one scenario by name")
    r.add_argument("name", help="scenario name: " + ", ".join(SCENARIOS))
    r.add_argument("--t1", type=float, default=None, help="final time [s] (default: the paper's)")
    r.add_argument("--out", default=None, help=f"output folder (default ./{DEFAULT_OUT}/NAME)")
    return p


def _setup_jax() -> None:
    if "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = "--xla_cpu_use_fusion_emitters=false"
    import jax

    jax.config.update("jax_enable_x64", True)


def _run(name: str, t1, out, parser) -> int:
    from . import scenarios
    from .scenarios._common import report

    if name not in scenarios.SCENARIOS:
        parser.error(f"unknown scenario {name!r}; choose one of: {', '.join(scenarios.SCENARIOS)}")
    if t1 is not None and not t1 > 0:
        parser.error(f"--t1 must be positive, got {t1}")
    try:
        module = scenarios.load(name)
    except ImportError as err:
        print(f"kane-jax: error: scenario {name!r} is not available: {err}", file=sys.stderr)
        return 2
    _setup_jax()
    out_dir = out if out is not None else os.path.join(DEFAULT_OUT, name)
    print(f"kane-jax: running {name}: {scenarios.SCENARIOS[name][1]}", flush=True)
    start = time.perf_counter()
    summary = module.run(t1=t1, out_dir=out_dir)
    print(report(summary))
    print(f"kane-jax: done in {time.perf_counter() - start:.1f} s; output folder: {os.path.abspath(out_dir)}")
    return 0


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
        return _run("demo", args.t1, args.out, parser)
    return _run(args.name, args.t1, args.out, parser)


if __name__ == "__main__":
    sys.exit(main())
