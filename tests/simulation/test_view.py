"""The interactive 3-D view (``kj.view``): the HTML it writes, read back; and in a real browser (slow).

The chain: revolute + rigid link (0.3 m, CoM off-axis) + revolute + planar constant-curvature
segment with elongation, so the rigid link's points and the soft segment's tip have closed forms
(``R_z(q1) p`` and ``L (1 + δ) (sin θ / θ, (1 − cos θ) / θ, 0)`` rotated by ``q1 + q2``) that the
drawn coordinates are checked against, besides ``kj.body_points`` itself.
"""

import base64
import json
import re
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.lie import make_pose
from kane_jax.simulation.view import _frame_indices

L_LINK, COM, L_SOFT = 0.3, (0.15, 0.02, 0.0), 0.25


def _chain():
    link = kj.RigidBody(0.5, COM, jnp.diag(jnp.array([1e-4, 4e-3, 4e-3])),
                        tip=make_pose(jnp.eye(3), jnp.array([L_LINK, 0.0, 0.0])))
    soft = kj.PlanarConstantCurvature(L_SOFT, 0.02, 1100.0, 1e6, 0.05, elongation=True, order=3, n_radial=1,
                                      n_angular=3)
    return kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Revolute((0, 0, 1)), soft)], gravity=(0.0, -9.81, 0.0))


def _motion(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ts, qs)``: the link swings from hanging (−90°) to +30° while the segment bends and stretches."""
    ts = np.linspace(0.0, 2.0, n)
    s = ts / 2.0
    qs = np.stack([-np.pi / 2 + (2 * np.pi / 3) * s, 0.4 * np.sin(3 * ts), 0.9 * np.sin(2 * ts) + 1e-3,
                   0.05 * s], axis=1)
    return ts, qs


def _rot_z(a: float) -> np.ndarray:
    return np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])


def _array(v) -> np.ndarray:
    """A coordinate array as plotly serialized it: a list, or base64 ``{"dtype", "bdata"}``."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def _xyz(trace) -> np.ndarray:
    return np.stack([_array(trace[c]) for c in "xyz"], axis=1)


def _parse(html: str):
    """``(div_id, data, layout, frames)`` of the ``Plotly.newPlot``/``Plotly.addFrames`` calls in the page."""
    dec = json.JSONDecoder()
    # the call after the figure's div (plotly.js's own code, embedded before it, mentions newPlot too)
    pos = html.index("Plotly.newPlot(", html.index('class="plotly-graph-div"')) + len("Plotly.newPlot(")
    values = []
    for _ in range(3):  # id, data, layout
        while html[pos] in " \n\t,":
            pos += 1
        value, pos = dec.raw_decode(html, pos)
        values.append(value)
    match = re.compile(r"Plotly\.addFrames\(\s*['\"]([^'\"]+)['\"]\s*,\s*").search(html, pos)
    frames, _ = dec.raw_decode(html, match.end())
    assert match.group(1) == values[0]
    return values[0], values[1], values[2], frames


def test_html_holds_the_frames_slider_and_the_chains_coordinates(tmp_path):
    chain = _chain()
    ts, qs = _motion(23)
    path = tmp_path / "view.html"
    kj.view(chain, qs, ts=ts, every=5, title="test").write_html(path, auto_play=False)
    html = path.read_text()
    # offline: plotly.js is embedded and no script is loaded from elsewhere
    assert re.search(r"plotly\.js v\d+\.\d+", html) and len(html) > 3_000_000
    assert not re.search(r"<script[^>]*\bsrc=", html)
    div_id, data, layout, frames = _parse(html)
    assert f'<div id="{div_id}" class="plotly-graph-div"' in html
    idx = [0, 5, 10, 15, 20, 22]  # every 5th configuration and the last
    assert len(frames) == len(idx)
    steps = layout["sliders"][0]["steps"]
    assert [s["args"][0] for s in steps] == [[f["name"]] for f in frames]
    assert [s["label"] for s in steps] == [f"{ts[j]:.3g}" for j in idx]
    assert [b["label"] for b in layout["updatemenus"][0]["buttons"]] == ["▶ play", "❚❚ pause"]
    # traces: rigid link, soft segment, its material points (animated); tip path and base (static)
    assert [t["name"] for t in data] == ["1: RigidBody", "2: PlanarConstantCurvature", "2: material points",
                                         "tip path", "base"]
    body = chain.module(1)[1]
    n_slices = np.unique(np.asarray(body.points)[:, 0]).size
    for k, j in enumerate(idx):
        q = qs[j]
        link, soft, cloud = (_xyz(t) for t in frames[k]["data"])
        pts = [np.asarray(p) for p in kj.body_points(chain, jnp.asarray(q))]
        # rigid link: base, then joint origin, centre of mass, distal origin (closed form and body_points)
        expected = np.stack([np.zeros(3), np.zeros(3), _rot_z(q[0]) @ COM, _rot_z(q[0]) @ [L_LINK, 0, 0]])
        np.testing.assert_allclose(link, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(link[1:], pts[0], rtol=0, atol=1e-12)
        # soft segment: its material points exactly, the line through their slice centroids, the tip in closed form
        np.testing.assert_allclose(cloud, pts[1], rtol=0, atol=1e-12)
        s = np.asarray(body.points)[:, 0]
        centroids = np.stack([pts[1][s == v].mean(axis=0) for v in np.unique(s)])
        assert soft.shape == (n_slices + 2, 3)
        np.testing.assert_allclose(soft[1:-1], centroids, rtol=0, atol=1e-12)
        theta, stretch = q[2], L_SOFT * (1 + q[3])
        local_tip = stretch * np.array([np.sin(theta) / theta, (1 - np.cos(theta)) / theta, 0.0])
        np.testing.assert_allclose(soft[0], expected[-1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(soft[-1], expected[-1] + _rot_z(q[0] + q[1]) @ local_tip, rtol=0, atol=1e-12)
    # the tip path holds every frame's tip; the camera's "up" points against gravity (+y)
    np.testing.assert_allclose(_xyz(data[3]), [_xyz(f["data"][1])[-1] for f in frames], rtol=0, atol=1e-12)
    assert layout["scene"]["camera"]["up"] == {"x": 0.0, "y": 1.0, "z": 0.0}
    # one scale on every axis (a planar motion gets a thinner box, not a squashed robot), all of it inside
    spans = np.array([np.diff(layout["scene"][f"{a}axis"]["range"])[0] for a in "xyz"])
    ratio = np.array([layout["scene"]["aspectratio"][a] for a in "xyz"])
    np.testing.assert_allclose(spans / ratio, spans[0] / ratio[0], rtol=1e-12)
    assert spans[2] < 0.5 * spans[0]  # the motion is in the x-y plane
    drawn = np.concatenate([_xyz(t) for f in frames for t in f["data"]])
    for k, a in enumerate("xyz"):
        lo, hi = layout["scene"][f"{a}axis"]["range"]
        assert lo < drawn[:, k].min() and drawn[:, k].max() < hi


def test_trajectory_input_and_frame_budget():
    chain = _chain()
    ts, qs = _motion(45)
    z = jnp.zeros_like(jnp.asarray(qs))
    traj = kj.Trajectory(jnp.asarray(ts), jnp.asarray(qs), z, z[:, :0], 0, {})
    fig = kj.view(chain, traj, max_frames=10, points=False)
    assert len(fig.frames) == 10 and len(fig.data) == 4  # no material-points trace
    slider = fig.layout.sliders[0]
    assert slider.currentvalue.prefix == "t = " and slider.steps[-1].label == f"{ts[-1]:.3g}"
    np.testing.assert_allclose(_xyz(fig.frames[-1].data[0].to_plotly_json())[-1],
                               _rot_z(qs[-1, 0]) @ [L_LINK, 0, 0], rtol=0, atol=1e-12)
    # the default budget: at most 200 evenly spaced frames, first and last included
    idx = _frame_indices(1001, None, 200)
    assert idx.size == 200 and idx[0] == 0 and idx[-1] == 1000 and np.all(np.diff(idx) >= 4)
    assert _frame_indices(7, 3, 200).tolist() == [0, 3, 6] and _frame_indices(8, 3, 200).tolist() == [0, 3, 6, 7]
    # a single configuration is one frame
    assert len(kj.view(chain, qs[0]).frames) == 1


def test_view_rejects_bad_input(monkeypatch):
    chain = _chain()
    ts, qs = _motion(5)
    with pytest.raises(ValueError, match=r"`traj` must hold configurations of shape \(T, nq\).*nq = 4.*\(5, 3\)"):
        kj.view(chain, qs[:, :3])
    with pytest.raises(ValueError, match="`traj` holds a batch of 2 trajectories"):
        z = jnp.zeros((2, 5, 4))
        kj.view(chain, kj.Trajectory(jnp.zeros((2, 5)), z, z, z[..., :0], 0, {}))
    with pytest.raises(ValueError, match="`ts` must have shape"):
        kj.view(chain, qs, ts=ts[:-1])
    with pytest.raises(ValueError, match="non-finite configurations \\(first at index 2\\)"):
        kj.view(chain, np.where(np.arange(5)[:, None] >= 2, np.nan, qs))
    for kwargs in ({"every": 0}, {"max_frames": 1.5}, {"every": True}, {"fps": 0.0}):
        with pytest.raises(ValueError, match=f"`{next(iter(kwargs))}`"):
            kj.view(chain, qs, **kwargs)
    with pytest.raises(TypeError, match="`chain` must be a kane_jax Chain"):
        kj.view(qs, qs)
    with pytest.raises(TypeError, match="`traj` must be a Trajectory or an array"):
        kj.view(chain, {"q": qs})
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)  # as if plotly were not installed
    with pytest.raises(ImportError, match="kane_jax.view needs plotly: `pip install plotly`"):
        kj.view(chain, qs)


# --- in a real browser (headless Chromium, WebGL on SwiftShader) ----------------------------------

READY = ("(() => { const d = document.querySelector('.plotly-graph-div'); return !!(d && d._fullLayout && "
         "d._transitionData && d._transitionData._frames.length && d.querySelector('.gl-container canvas')); })()")
SOFT_RGB = np.array([0x1F, 0x5F, 0xA8])


def _blue(img: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pixels of the soft bodies' colour (within 40 per channel) inside ``mask``."""
    return mask & np.all(np.abs(img.astype(int) - SOFT_RGB) <= 40, axis=2)


@pytest.mark.slow
def test_page_renders_the_robot_in_chromium_without_console_errors(tmp_path):
    from helpers.browser import Browser, chromium_path

    if chromium_path() is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    pytest.importorskip("websockets", reason="the DevTools client needs `websockets` (test extra)")
    chain = _chain()
    ts, qs = _motion(40)
    fig = kj.view(chain, qs, ts=ts, height=600)
    fig.write_html(tmp_path / "view.html", auto_play=False)
    with Browser(1000, 640) as b:
        b.load(tmp_path / "view.html", READY)
        assert b.evaluate("document.querySelector('.plotly-graph-div')._transitionData._frames.length") == 40
        start = b.screenshot(tmp_path / "start.png")
        mask = np.ones(start.shape[:2], bool)  # the 3-D scene: all but legend, slider, buttons and mode bar
        for sel in ("g.legend", "g.slider-container", "g.updatemenu-container", ".modebar-container"):
            r = b.evaluate(f"(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); "
                           "return [r.left, r.top, r.right, r.bottom]; })()")
            mask[max(int(r[1]) - 2, 0):int(r[3]) + 2, max(int(r[0]) - 2, 0):int(r[2]) + 2] = False
        js = "(() => { const d = document.querySelector('.plotly-graph-div'); return %s.then(() => true); })()"
        b.evaluate(js % "Plotly.restyle(d, {visible: false}, [0, 1, 2])")  # the robot hidden, scene kept
        empty = b.screenshot(tmp_path / "empty.png")
        b.evaluate(js % ("Plotly.restyle(d, {visible: true}, [0, 1, 2]).then(() => Plotly.animate(d, ['39'], "
                         "{mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}}))"))
        end = b.screenshot(tmp_path / "end.png")
        errors = list(b.errors)
    assert errors == []
    robot = mask & np.any(np.abs(start.astype(int) - empty.astype(int)) > 40, axis=2)
    blue_start, blue_empty, blue_end = _blue(start, mask), _blue(empty, mask), _blue(end, mask)
    print(f"robot pixels {robot.sum()}, soft-blue pixels: start {blue_start.sum()}, empty scene "
          f"{blue_empty.sum()}, last frame {blue_end.sum()}")
    # the robot is drawn (measured: 1275 changed pixels, 576 of the soft bodies' blue), and no blue without it
    assert robot.sum() > 600 and blue_start.sum() > 250 and blue_empty.sum() == 0
    # the last frame is drawn too, with the arm swung up: the blue pixels' centroid rises on screen
    # ("up" is against gravity, +y; the link turns from -90° to +30°)
    rows_start, rows_end = np.nonzero(blue_start)[0].mean(), np.nonzero(blue_end)[0].mean()
    print(f"blue centroid row: start {rows_start:.0f}, end {rows_end:.0f}")
    assert blue_end.sum() > 250 and rows_end < rows_start - 60  # measured: 810 pixels, 396 -> 147
