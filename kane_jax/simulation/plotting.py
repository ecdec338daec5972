"""Plots of simulated chains (matplotlib, safe with the non-interactive Agg backend).

- :func:`plot_configuration`: configuration (and input) trajectories against time;
- :func:`plot_stroboscopic`: the robot's shape at several instants in 2-D or 3-D, like the
  figures of papers ``000_…``/``003_…`` (initial and final shapes in blue, transient in light gray);
- :func:`animate`: the motion written to a GIF (Pillow) or MP4 (ffmpeg).

Bodies are drawn from their material points (:func:`kane_jax.body_points`): a soft body as its
point cloud and the backbone through the centroids of its material slices along the first
material coordinate (the backbone coordinate by the library's convention), a rigid link as the
segment from its joint to its distal frame.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import equinox as eqx
import jax
import numpy as np

from ..algorithms.kinematics import body_points
from ..bodies._base import AbstractSoftBody
from ..chain import Chain

BLUE = "#1f5fa8"
GRAY = "#b8b8b8"
_AXES = {"x": 0, "y": 1, "z": 2}


def _pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo") and not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _slices(chain: Chain, n_bins: int = 16) -> list[list[np.ndarray] | None]:
    """Per module: index groups of material points forming backbone slices (None for rigid links)."""
    out: list[list[np.ndarray] | None] = []
    for _, body in chain.modules:
        if not isinstance(body, AbstractSoftBody):
            out.append(None)
            continue
        s = np.asarray(body.points)[:, 0]
        values = np.unique(s)
        if values.size <= n_bins:
            groups = [np.flatnonzero(s == v) for v in values]
        else:
            edges = np.quantile(s, np.linspace(0.0, 1.0, n_bins + 1))
            idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, n_bins - 1)
            groups = [np.flatnonzero(idx == b) for b in range(n_bins) if np.any(idx == b)]
        out.append(groups)
    return out


_points_one = eqx.filter_jit(body_points)  # one compile per chain structure, whatever the number of frames


def chain_shapes(chain: Chain, qs) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """World geometry of the chain at each configuration of ``qs`` ``(T, nq)``.

    Returns:
        per frame, per module, ``(backbone (B, 3), cloud (K, 3))``: the polyline to draw and the
        material points (for a rigid link: joint origin → centre of mass → distal frame, and the
        same three points).
    """
    qs = np.atleast_2d(np.asarray(qs))
    per_frame = [_points_one(chain, jax.numpy.asarray(q)) for q in qs]
    pts = [np.stack([np.asarray(f[i]) for f in per_frame]) for i in range(chain.n_modules)]
    slices = _slices(chain)
    frames = []
    for t in range(qs.shape[0]):
        mods = []
        for i, groups in enumerate(slices):
            cloud = pts[i][t]
            if groups is None:
                backbone = cloud
            else:
                backbone = np.stack([cloud[g].mean(axis=0) for g in groups])
            mods.append((backbone, cloud))
        frames.append(mods)
    return frames


def _choose_plane(frames, plane: str | None) -> tuple[int, int]:
    if plane is not None:
        if len(plane) != 2 or any(c not in _AXES for c in plane) or plane[0] == plane[1]:
            raise ValueError(f"`plane` must be two distinct letters of 'xyz' such as 'xz', got {plane!r}.")
        return _AXES[plane[0]], _AXES[plane[1]]
    allpts = np.concatenate([c for f in frames for _, c in f])
    spread = np.ptp(allpts, axis=0)
    a, b = sorted(np.argsort(spread)[-2:])
    return int(a), int(b)


def _draw_frame(ax, frame, axes, color, lw, alpha, cloud: bool, dims: int, base: bool = True):
    prev_end = np.zeros(3)
    for backbone, pts in frame:
        line = np.vstack([prev_end[None], backbone]) if base else backbone
        coords = [line[:, k] for k in (axes if dims == 2 else (0, 1, 2))]
        ax.plot(*coords, color=color, lw=lw, alpha=alpha, solid_capstyle="round")
        if cloud and pts.shape[0] > 3:
            c = [pts[:, k] for k in (axes if dims == 2 else (0, 1, 2))]
            ax.scatter(*c, s=2, color=color, alpha=0.25 * alpha, linewidths=0)
        prev_end = backbone[-1]


def _finish(fig, ax, frames, axes, dims, title, path):
    allpts = np.concatenate([c for f in frames for _, c in f] + [np.zeros((1, 3))])
    names = "xyz"
    if dims == 2:
        ax.set_xlabel(f"{names[axes[0]]} [m]")
        ax.set_ylabel(f"{names[axes[1]]} [m]")
        ax.set_aspect("equal", adjustable="box")
    else:
        lo, hi = allpts.min(axis=0), allpts.max(axis=0)
        mid, half = (lo + hi) / 2, max(float(np.max(hi - lo)) / 2, 1e-3)
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_zlim(mid[2] - half, mid[2] + half)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")


def plot_stroboscopic(chain: Chain, qs, *, n_frames: int = 10, plane: str | None = None, dims: int = 2,
                      title: str | None = None, path: str | os.PathLike | None = None, ax=None):
    """Stroboscopic plot: the chain's shape at ``n_frames`` evenly spaced samples of ``qs``.

    Initial and final shapes in blue, the transient in light gray (papers' figures).

    Arguments:
        chain: the chain. qs: ``(T, nq)`` configurations (e.g. ``traj.q``).
        n_frames: number of shapes drawn. plane: ``"xz"``-style projection for ``dims=2``
            (default: the two directions of largest extent). dims: 2 or 3.
        title: axes title. path: file to save (png/pdf/svg), or None. ax: existing axes.

    Returns:
        the matplotlib figure.

    Raises:
        ValueError: bad ``dims``/``plane``/``n_frames``.
    """
    if dims not in (2, 3):
        raise ValueError(f"`dims` must be 2 or 3, got {dims!r}.")
    if n_frames < 1:
        raise ValueError(f"`n_frames` must be >= 1, got {n_frames}.")
    qs = np.atleast_2d(np.asarray(qs))
    idx = np.unique(np.linspace(0, qs.shape[0] - 1, n_frames).round().astype(int))
    frames = chain_shapes(chain, qs[idx])
    axes = _choose_plane(frames, plane)
    plt = _pyplot()
    if ax is None:
        fig = plt.figure(figsize=(5.5, 5.5))
        ax = fig.add_subplot(111, projection="3d" if dims == 3 else None)
    else:
        fig = ax.figure
    for k, frame in enumerate(frames):
        edge = k in (0, len(frames) - 1)
        _draw_frame(ax, frame, axes, BLUE if edge else GRAY, 2.4 if edge else 1.2, 1.0 if edge else 0.8,
                    cloud=edge, dims=dims)
    _finish(fig, ax, frames, axes, dims, title, path)
    return fig


def plot_configuration(ts, qs, *, labels: Sequence[str] | None = None, u=None, u_labels: Sequence[str] | None = None,
                       title: str | None = None, path: str | os.PathLike | None = None, ylabel: str = "q"):
    """Configuration trajectories against time (and the input ``u`` in a second panel if given).

    Arguments:
        ts: ``(T,)`` times. qs: ``(T, n)`` coordinates. labels: one per coordinate.
        u: optional ``(T, m)`` inputs. title, path: as in :func:`plot_stroboscopic`.

    Returns:
        the matplotlib figure.
    """
    ts = np.asarray(ts)
    qs = np.asarray(qs).reshape(ts.shape[0], -1)
    plt = _pyplot()
    has_u = u is not None and np.asarray(u).size > 0
    fig, axs = plt.subplots(2 if has_u else 1, 1, figsize=(7, 6 if has_u else 3.6), sharex=True, squeeze=False)
    ax = axs[0, 0]
    for j in range(qs.shape[1]):
        ax.plot(ts, qs[:, j], lw=1.4, label=labels[j] if labels is not None else f"{ylabel}{j + 1}")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if qs.shape[1] <= 12:
        ax.legend(fontsize=7, ncol=min(4, qs.shape[1]), loc="best")
    if title:
        ax.set_title(title)
    if has_u:
        uu = np.asarray(u).reshape(ts.shape[0], -1)
        bx = axs[1, 0]
        for j in range(uu.shape[1]):
            bx.plot(ts, uu[:, j], lw=1.4, label=u_labels[j] if u_labels is not None else f"u{j + 1}")
        bx.set_ylabel("u")
        bx.grid(True, alpha=0.3)
        if uu.shape[1] <= 12:
            bx.legend(fontsize=7, ncol=min(4, uu.shape[1]), loc="best")
    axs[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def animate(chain: Chain, ts, qs, path: str | os.PathLike, *, fps: int = 20, max_frames: int = 80,
            plane: str | None = None, dims: int = 2, title: str | None = None) -> str:
    """Write an animation of the motion: ``.gif`` (Pillow) or ``.mp4`` (ffmpeg, if installed).

    Arguments:
        chain: the chain. ts: ``(T,)`` times. qs: ``(T, nq)`` configurations.
        path: output file; its suffix picks the writer. fps: frames per second.
        max_frames: the trajectory is subsampled to at most this many frames.
        plane, dims, title: as in :func:`plot_stroboscopic`.

    Returns:
        the path written.

    Raises:
        ValueError: an unsupported suffix, or ``.mp4`` without ffmpeg.
    """
    from matplotlib import animation

    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".gif":
        writer = animation.PillowWriter(fps=fps)
    elif suffix == ".mp4":
        if not animation.writers.is_available("ffmpeg"):
            raise ValueError("`path` ends in .mp4 but ffmpeg is not installed; use a .gif path.")
        writer = animation.FFMpegWriter(fps=fps)
    else:
        raise ValueError(f"`path` must end in .gif or .mp4, got {path!r}.")
    ts = np.asarray(ts)
    qs = np.atleast_2d(np.asarray(qs))
    idx = np.unique(np.linspace(0, qs.shape[0] - 1, min(max_frames, qs.shape[0])).round().astype(int))
    frames = chain_shapes(chain, qs[idx])
    axes = _choose_plane(frames, plane)
    plt = _pyplot()
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(111, projection="3d" if dims == 3 else None)
    _draw_frame(ax, frames[0], axes, GRAY, 1.0, 0.6, cloud=False, dims=dims)
    _finish(fig, ax, frames, axes, dims, title, None)
    limits = (ax.get_xlim(), ax.get_ylim()) + ((ax.get_zlim(),) if dims == 3 else ())
    label = f"{title} — " if title else ""

    def update(k):
        ax.cla()
        _draw_frame(ax, frames[0], axes, GRAY, 1.0, 0.6, cloud=False, dims=dims)
        _draw_frame(ax, frames[k], axes, BLUE, 2.4, 1.0, cloud=True, dims=dims)
        _finish(fig, ax, frames, axes, dims, f"{label}t = {ts[idx[k]]:.2f} s", None)
        ax.set_xlim(*limits[0])
        ax.set_ylim(*limits[1])
        if dims == 3:
            ax.set_zlim(*limits[2])
        return ()

    anim = animation.FuncAnimation(fig, update, frames=len(frames), blit=False)
    anim.save(path, writer=writer)
    plt.close(fig)
    return path
