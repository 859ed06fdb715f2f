"""A small client of the Chrome DevTools protocol: headless Chromium driven over a websocket.

`Browser.start()` launches Debian's Chromium headless with a throwaway profile and no network
services, finds its DevTools port in the profile folder, and opens one page. `Page` navigates,
runs script, clicks and types through the Input domain (real mouse and key events at an
element's position, as a person's would be), and takes screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)
START_SECONDS = 30.0


def binary() -> str | None:
    """Chromium's path, or None where it is not installed."""
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


class ProtocolError(RuntimeError):
    """The browser answered a command with an error."""


class Browser:
    """One headless Chromium process and the websocket to it."""

    def __init__(self, process: subprocess.Popen[bytes], ws: ClientConnection, profile: Path):
        self.process = process
        self.ws = ws
        self.profile = profile
        self._ids = itertools.count(1)
        self._events: list[dict[str, Any]] = []

    @classmethod
    @contextlib.contextmanager
    def start(cls, width: int = 1280, height: int = 900) -> Iterator[Page]:
        """A page in a fresh headless browser, closed (and its profile removed) after."""
        path = binary()
        if path is None:
            raise FileNotFoundError("chromium is not installed")
        profile = Path(tempfile.mkdtemp(prefix="tiermem-chromium-"))
        args = [path, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        process = subprocess.Popen(
            [*args, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            endpoint = _endpoint(profile, process)
            with connect(endpoint, max_size=None, open_timeout=START_SECONDS) as ws:
                browser = cls(process, ws, profile)
                try:
                    yield browser.page(width, height)
                finally:
                    with contextlib.suppress(Exception):
                        browser.send("Browser.close")
        finally:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            shutil.rmtree(profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        """Run one command and return its result (events seen meanwhile are kept)."""
        message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise ProtocolError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def wait_for(self, method: str, session: str, timeout: float = 30.0) -> dict[str, Any]:
        """The next event of a kind (one already received counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for n, event in enumerate(self._events):
                if event["method"] == method and event.get("sessionId") == session:
                    return self._events.pop(n)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {method} within {timeout} s")
            reply = json.loads(self.ws.recv(timeout=left))
            if "method" in reply:
                self._events.append(reply)

    def page(self, width: int, height: int) -> Page:
        """A new page (tab) with its own session."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        page.call("Page.enable")
        page.call("Runtime.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        return page


def _endpoint(profile: Path, process: subprocess.Popen[bytes]) -> str:
    """The browser's websocket address, from the DevToolsActivePort file it writes."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with status {process.returncode}")
        with contextlib.suppress(FileNotFoundError):
            lines = marker.read_text().splitlines()
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


class Page:
    """One tab: navigate, evaluate, click, type, screenshot."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A command in this page's session."""
        return self.browser.send(method, params, self.session)

    def open(self, url: str) -> float:
        """Load a URL; the seconds from asking to the load event."""
        start = time.perf_counter()
        self.call("Page.navigate", {"url": url})
        self.browser.wait_for("Page.loadEventFired", self.session, timeout=60)
        return time.perf_counter() - start

    def js(self, expression: str) -> Any:
        """The value of a script expression in the page."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def center(self, selector: str) -> tuple[float, float]:
        """Where an element is on screen, after scrolling it into view."""
        found = self.js(
            f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: "center"}});
            const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];
            }})()"""
        )
        if found is None:
            raise LookupError(f"nothing on the page matches {selector!r}")
        return float(found[0]), float(found[1])

    def click(self, selector: str) -> None:
        """Press and release the mouse on an element, as a person clicks it."""
        x, y = self.center(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def type(self, selector: str, text: str) -> None:
        """Click into a field and type text into it."""
        self.click(selector)
        self.call("Input.insertText", {"text": text})

    def text(self, selector: str) -> str:
        """The visible text of an element (empty when there is none)."""
        return str(
            self.js(
                f"(document.querySelector({json.dumps(selector)}) || {{innerText: ''}}).innerText"
            )
        )

    def events(self, method: str) -> list[dict[str, Any]]:
        """The params of every event of a kind this page has sent so far (and not waited for)."""
        self.js("0")  # a round trip: events sent before it have arrived
        return [
            e["params"]
            for e in self.browser._events
            if e["method"] == method and e.get("sessionId") == self.session
        ]

    def screenshot(self, path: Path, full: bool = False) -> None:
        """A PNG of the viewport, or of the whole page."""
        params: dict[str, Any] = {"format": "png"}
        if full:
            size = self.js("[document.documentElement.scrollWidth, document.body.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
