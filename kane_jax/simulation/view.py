"""Interactive 3-D view of a chain's motion (plotly): turn the robot around and scrub through time.

:func:`view` returns a :class:`plotly.graph_objects.Figure` with one animation frame per sampled
configuration, a time slider and play/pause buttons. It shows itself in a notebook (``.show()``)
and writes a self-contained HTML file that works offline, plotly.js included
(``.write_html(path)``; the ``kane-jax`` command's ``--html`` writes one).

Bodies are drawn as in :mod:`kane_jax.simulation.plotting`, from their material points
(:func:`kane_jax.body_points`): a rigid link as the polyline joint origin → centre of mass →
distal frame; a soft body as a thick tube-like line from the previous distal frame through the
centroids of its material slices to its own distal frame, with its material points as dots.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import numpy as np

from ..algorithms.kinematics import body_points, forward_kinematics
from ..chain import Chain
from .plotting import _slices
from .trajectory import Trajectory

RIGID = "#3a3a3a"
SOFT = "#1f5fa8"
CLOUD = "#6fa0d8"
PATH = "#b8b8b8"


@eqx.filter_jit
def _geometry(chain: Chain, qs):
    """Material points of every module and distal-frame origins ``(T, N, 3)``, for all frames at once."""
    return jax.vmap(lambda q: (body_points(chain, q), forward_kinematics(chain, q)[:, :3, 3]))(qs)


def _configurations(chain: Chain, traj, ts) -> tuple[np.ndarray, np.ndarray]:
    """``(qs (T, nq), ts (T,))`` from a Trajectory or an array of configurations, validated."""
    if isinstance(traj, Trajectory):
        qs, times = np.asarray(traj.q), np.asarray(traj.ts)
        if qs.ndim == 3:
            raise ValueError(f"`traj` holds a batch of {qs.shape[0]} trajectories (q of shape {qs.shape}); view "
                             "one of them, e.g. `jax.tree.map(lambda x: x[0], traj)`.")
    else:
        try:
            qs = np.asarray(traj, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"`traj` must be a Trajectory or an array of configurations, got "
                            f"{type(traj).__name__}.") from None
        qs = qs[None] if qs.ndim == 1 else qs
        times = None
    if qs.ndim != 2 or qs.shape[1] != chain.nq or qs.shape[0] == 0:
        raise ValueError(f"`traj` must hold configurations of shape (T, nq) or (nq,) with nq = {chain.nq} and "
                         f"T >= 1, got shape {qs.shape}.")
    if ts is not None:
        times = np.asarray(ts, dtype=float)
        if times.shape != (qs.shape[0],):
            raise ValueError(f"`ts` must have shape (T,) = ({qs.shape[0]},), one time per configuration, got "
                             f"shape {times.shape}.")
    if not np.all(np.isfinite(qs)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(qs), axis=1))[0])
        raise ValueError(f"`traj` holds non-finite configurations (first at index {bad}); a failed solve? "
                         "View the part before it.")
    return qs, (np.arange(qs.shape[0], dtype=float) if times is None else times)


def _frame_indices(n: int, every: int | None, max_frames: int) -> np.ndarray:
    if every is None:
        return np.unique(np.linspace(0, n - 1, min(max_frames, n)).round().astype(int))
    idx = np.arange(0, n, every)
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def shapes(chain: Chain, qs) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """The polylines and point clouds that :func:`view` draws, for configurations ``qs (T, nq)``.

    Returns:
        ``(lines, clouds)``: per module, ``lines[i]`` of shape ``(T, L_i, 3)`` (the previous
        module's distal origin, or the base origin, first) and ``clouds[i]`` of shape ``(T, K_i, 3)``
        (the material points of a soft body; None for a rigid link).
    """
    points, distal = _geometry(chain, jax.numpy.asarray(qs))
    points, distal = [np.asarray(p) for p in points], np.asarray(distal)
    start = np.concatenate([np.zeros_like(distal[:, :1]), distal[:, :-1]], axis=1)
    lines, clouds = [], []
    for i, groups in enumerate(_slices(chain)):
        if groups is None:  # rigid link: joint origin, centre of mass, distal frame
            lines.append(np.concatenate([start[:, i, None], points[i]], axis=1))
            clouds.append(None)
        else:  # soft body: through its slice centroids to its distal frame
            centroids = np.stack([points[i][:, g].mean(axis=1) for g in groups], axis=1)
            lines.append(np.concatenate([start[:, i, None], centroids, distal[:, i, None]], axis=1))
            clouds.append(points[i])
    return lines, clouds


def _xyz(p: np.ndarray) -> dict[str, np.ndarray]:
    return {"x": p[:, 0], "y": p[:, 1], "z": p[:, 2]}


def view(chain: Chain, traj: Any, *, every: int | None = None, max_frames: int = 200, ts=None,
         points: bool = True, fps: float = 20.0, title: str | None = None, height: int = 640):
    """An interactive 3-D view of the chain along a trajectory: rotate, zoom, scrub, play.

    Rigid links are dark polylines, soft bodies blue tube-like lines with their material points
    as dots, the tip's path a light gray line; the camera's "up" points against gravity. The
    figure holds one animation frame per sampled configuration, a time slider and play/pause
    buttons; ``fig.show()`` displays it in a notebook and ``fig.write_html("view.html")`` writes a
    standalone page that works offline (plotly.js embedded, ≈ 5 MB plus the frames).

    Arguments:
        chain: the chain. traj: a :class:`~kane_jax.simulation.Trajectory` (one rollout) or
            configurations of shape ``(T, nq)`` (or ``(nq,)`` for a single pose).
        every: show every ``every``-th configuration (and the last). Default: at most
            ``max_frames`` evenly spaced ones.
        max_frames: the frame budget when ``every`` is None (keeps the HTML file small).
        ts: ``(T,)`` times for the slider (default: the trajectory's, or the frame index).
        points: draw the soft bodies' material points. fps: playback frames per second.
        title: figure title. height: figure height in pixels.

    Returns:
        a :class:`plotly.graph_objects.Figure`.

    Raises:
        TypeError: ``chain`` is not a Chain, or ``traj`` is neither a Trajectory nor an array.
        ValueError: configurations of the wrong shape or not finite, a batched Trajectory, ``ts`` of
            the wrong shape, ``every``/``max_frames``/``fps`` not positive.
        ImportError: plotly is missing.
    """
    try:
        import plotly.graph_objects as go
    except ImportError as err:  # a core dependency; missing only in a partial install
        raise ImportError("kane_jax.view needs plotly: `pip install plotly` (or reinstall kane_jax, "
                          "which depends on it).") from err
    if not isinstance(chain, Chain):
        raise TypeError(f"`chain` must be a kane_jax Chain, got {type(chain).__name__}.")
    for name, value in (("every", every), ("max_frames", max_frames)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"`{name}` must be a positive integer, got {value!r}.")
    if not fps > 0:
        raise ValueError(f"`fps` must be positive, got {fps!r}.")
    qs, times = _configurations(chain, traj, ts)
    idx = _frame_indices(qs.shape[0], every, max_frames)
    lines, clouds = shapes(chain, qs[idx])
    soft = [i for i, c in enumerate(clouds) if c is not None and points]
    names = [f"{i + 1}: {type(body).__name__}" for i, (_, body) in enumerate(chain.modules)]

    def dynamic(k: int) -> list:
        traces = []
        for i, line in enumerate(lines):
            is_soft = clouds[i] is not None
            traces.append(go.Scatter3d(**_xyz(line[k]), mode="lines", name=names[i],
                                       line={"color": SOFT if is_soft else RIGID, "width": 14 if is_soft else 7}))
        for i in soft:
            traces.append(go.Scatter3d(**_xyz(clouds[i][k]), mode="markers", name=f"{i + 1}: material points",
                                       marker={"size": 2.5, "color": CLOUD, "opacity": 0.6}))
        return traces

    n_dyn = len(lines) + len(soft)
    tip = lines[-1][:, -1]
    static = [go.Scatter3d(**_xyz(tip), mode="lines", name="tip path", line={"color": PATH, "width": 3}),
              go.Scatter3d(x=[0.0], y=[0.0], z=[0.0], mode="markers", name="base",
                           marker={"size": 6, "color": "black", "symbol": "square"})]
    timed = ts is not None or isinstance(traj, Trajectory)
    frames = [go.Frame(data=dynamic(k), traces=list(range(n_dyn)), name=str(k)) for k in range(len(idx))]
    fig = go.Figure(data=dynamic(0) + static, frames=frames)
    step_ms = 1000.0 / fps
    play = {"frame": {"duration": step_ms, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate", "transition": {"duration": 0}}
    fig.update_layout(
        title=title, height=height, margin={"l": 0, "r": 0, "t": 40 if title else 10, "b": 0},
        uirevision="kane_jax", scene=_scene(lines, clouds, np.asarray(chain.gravity)),
        legend={"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.7)"},
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0.01, "y": 0.02, "xanchor": "left",
                      "yanchor": "bottom", "pad": {"r": 8, "t": 0},
                      "buttons": [{"label": "▶ play", "method": "animate", "args": [None, play]},
                                  {"label": "❚❚ pause", "method": "animate", "args": [[None], pause]}]}],
        # the slider's tick labels are transparent (one per frame would overlap); the current one is shown above it
        sliders=[{"active": 0, "x": 0.18, "len": 0.8, "y": 0.0, "yanchor": "bottom", "pad": {"t": 0, "b": 10},
                  "font": {"color": "rgba(0,0,0,0)"}, "ticklen": 3, "minorticklen": 0,
                  "currentvalue": {"prefix": "t = " if timed else "index ", "suffix": " s" if timed else "",
                                   "font": {"color": "#333333"}},
                  "steps": [{"label": f"{times[j]:.3g}" if timed else str(j), "method": "animate",
                             "args": [[str(k)], {**pause, "frame": {"duration": 0, "redraw": True}}]}
                            for k, j in enumerate(idx)]}])
    return fig


def _scene(lines, clouds, gravity: np.ndarray) -> dict:
    """Equal axis ranges around everything drawn (so frames do not rescale), "up" against gravity,
    and a motion in a coordinate plane seen nearly face-on (otherwise from the diagonal)."""
    every_point = np.concatenate([x.reshape(-1, 3) for x in lines + [c for c in clouds if c is not None]])
    lo, hi = every_point.min(axis=0), every_point.max(axis=0)
    mid, half = (lo + hi) / 2, max(float(np.max(hi - lo)) / 2 * 1.1, 1e-3)
    norm = float(np.linalg.norm(gravity))
    up = -gravity / norm if norm > 0 else np.array([0.0, 0.0, 1.0])
    eye, halves = np.ones(3), np.full(3, half)
    flat = int(np.argmin(hi - lo))
    if (hi - lo)[flat] < 0.1 * np.max(hi - lo):  # planar motion: a thinner box (same scale on every axis)
        halves[flat] = 0.25 * half
        if abs(up[flat]) < 0.9:  # and seen nearly along the plane's normal
            eye = 0.35 * np.ones(3) + 0.65 * np.eye(3)[flat]
    eye = 1.9 * eye / np.linalg.norm(eye)
    axes = {f"{a}axis": {"range": [mid[k] - halves[k], mid[k] + halves[k]], "title": {"text": f"{a} [m]"}}
            for k, a in enumerate("xyz")}
    ratio = halves / halves.max()
    return {**axes, "aspectmode": "manual", "aspectratio": dict(zip("xyz", ratio.tolist(), strict=True)),
            "uirevision": "kane_jax",
            "camera": {"up": dict(zip("xyz", up.tolist(), strict=True)),
                       "eye": dict(zip("xyz", eye.tolist(), strict=True))}}
