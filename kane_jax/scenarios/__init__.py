"""The papers' simulations re-run as scenarios, each a module with ``run(t1=None, out_dir=None) -> dict``.

``SCENARIOS`` maps a name to ``(module path, one-line description)``; modules are imported on demand
(:func:`load`) so that listing them is instant and a scenario whose body model is missing does not
break the others. Run one with ``kane-jax run NAME [--t1 T] [--out DIR]``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SCENARIOS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "hybrid arm: PD-driven rigid link + two soft CC segments swinging up (3 s)"),
    "000-sim1": ("sim000_1_variable_radius",
                 "paper 000 Sim. 1: 3-body variable-radius PCC arm, six pneumatic chambers, u = (2,0,0,2,1,0.4) MPa"),
    "000-sim2": ("sim000_2_pgc", "paper 000 Sim. 2: two conical PGC bodies settling tip-up under gravity"),
    "003-sim1": ("sim003_1_helicoid",
                 "paper 003 Sim. 1: trimmed-helicoid LVP arm, nine tendons, Newton statics + PFBL"),
    "003-sim2": ("sim003_2_hybrid", "paper 003 Sim. 2: UR10e + tendon Cosserat segment + LVP gripper"),
    "003-sim3": ("sim003_3_scaling", "paper 003 Sim. 3: recursive ID vs Euler-Lagrange, PCC chains of 1..20 bodies"),
    "004-godage": ("sim004_godage", "paper 004: Godage three-section arm, step-pressure experiments, real-time factor"),
    "vsa-3dof": ("vsa_3dof", "paper 001: 3-DoF VSA robot, degree-7 rest-to-rest trajectory, feedback linearization"),
}


def names() -> list[str]:
    """Registered scenario names, in registry order."""
    return list(SCENARIOS)


def load(name: str) -> ModuleType:
    """Import the module of scenario ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        ImportError: the scenario's module (or a model it needs) is not available.
    """
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    return importlib.import_module(f"{__name__}.{SCENARIOS[name][0]}")


def run(name: str, t1: float | None = None, out_dir=None) -> dict:
    """Run scenario ``name`` and return its summary dict."""
    return load(name).run(t1=t1, out_dir=out_dir)


__all__ = ["SCENARIOS", "load", "names", "run"]
