"""A headless Chromium driven over the DevTools protocol, for tests of HTML pages (not collected).

Starts Debian's ``chromium`` with WebGL on SwiftShader (software, no GPU), on a DevTools port
that listens on 127.0.0.1 only, and talks to its page over a websocket: load a file, evaluate
JavaScript, take screenshots, and collect console errors and uncaught exceptions. Every wait is
bounded; the browser is killed on exit.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np


def chromium_path() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """``with Browser(width, height) as b: b.load(path); b.screenshot()``; ``b.errors`` lists console errors."""

    def __init__(self, width: int = 1000, height: int = 700, timeout_s: float = 60.0):
        from websockets.sync.client import connect

        self.timeout_s = timeout_s
        self.errors: list[str] = []
        self._profile = tempfile.TemporaryDirectory(prefix="kj-chromium-")
        self._proc = subprocess.Popen(
            [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--no-first-run", "--no-default-browser-check",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self._profile.name}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port = self._port()
            pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
            url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
            self._stack = contextlib.ExitStack()
            self._ws = self._stack.enter_context(connect(url, max_size=None, open_timeout=10))
        except BaseException:
            self.close()
            raise
        self._id = 0
        self._events: list[dict] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _port(self) -> int:
        marker = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self._proc.returncode} before opening DevTools")
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port in time")

    def _record(self, msg: dict) -> None:
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", "")))
                                                      for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + params["entry"].get("text", ""))
        self._events.append(msg)

    def call(self, method: str, **params):
        """Send one DevTools command and return its result (events meanwhile are recorded)."""
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout_s
        while True:
            msg = json.loads(self._ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._record(msg)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises awaited)."""
        res = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"JavaScript failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def load(self, path: str | Path, ready: str = "true") -> None:
        """Open a local file and wait for its load event, then until ``ready`` (JavaScript) is true."""
        self._events.clear()
        self.call("Page.navigate", url=Path(path).resolve().as_uri())
        deadline = time.monotonic() + self.timeout_s
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} did not finish loading in {self.timeout_s} s")
            self.evaluate("1")  # reads (and records) the events that arrive meanwhile
            time.sleep(0.05)
        while not self.evaluate(ready):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: `{ready}` did not become true in {self.timeout_s} s")
            time.sleep(0.1)

    def screenshot(self, path: str | Path | None = None) -> np.ndarray:
        """The viewport as an ``(H, W, 3)`` uint8 array (also written to ``path`` as PNG if given)."""
        from PIL import Image

        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        if path is not None:
            Path(path).write_bytes(png)
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        stack = getattr(self, "_stack", None)
        if stack is not None:
            stack.close()  # closes the websocket
        try:  # the browser and the helper processes it started (its own process group)
            os.killpg(self._proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._proc.wait(timeout=30)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
