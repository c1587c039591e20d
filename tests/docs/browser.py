"""A real headless Chromium driven over the DevTools protocol, for the docs tests.

``--dump-dom`` shows a page but cannot *use* it; the time stepper has to be
moved. :class:`Browser` starts Chromium with ``--remote-debugging-port``,
opens a page and sends protocol commands over its websocket: evaluate
JavaScript, press keys and click at coordinates as a user would (the events go
through the browser's input pipeline, not ``element.value = ...``).

``browser_or_skip()`` returns ``None`` with a reason when Chromium or the
``websocket-client`` package is missing, so tests skip instead of failing.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def missing_reason():
    if find_chromium() is None:
        return "no Chromium installed (apt-get install chromium)"
    try:
        import websocket  # noqa: F401
    except ImportError:
        return "the websocket-client package is not installed (pip install websocket-client)"
    return None


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width=1280, height=900, offline=False):
        self.size = (width, height)
        #: no network at all (DevTools' offline emulation): a page must work
        #: from its own files, as the site read from a disk or a laptop on a train
        self.offline = offline

    def __enter__(self):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="c2r-chromium-")
        self.process = subprocess.Popen(
            [
                find_chromium(),
                "--headless",
                "--disable-gpu",
                "--no-sandbox",  # CI containers run as root
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=%d,%d" % self.size,
                "--user-data-dir=" + self.profile,
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                port = int(found.group(1))
            elif not line and self.process.poll() is not None:
                break
        if port is None:
            self.__exit__()
            raise RuntimeError("Chromium did not start its DevTools endpoint")
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=30) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60)
        self._next = 0
        if self.offline:
            self.send("Network.enable")
            self.send(
                "Network.emulateNetworkConditions",
                offline=True,
                latency=0,
                downloadThroughput=-1,
                uploadThroughput=-1,
            )
        return self

    def __exit__(self, *exc):
        socket = getattr(self, "socket", None)
        if socket is not None:
            socket.close()
        self.process.kill()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method, **params):
        self._next += 1
        ident = self._next
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})

    def open(self, path):
        self.send("Page.enable")
        self.send("Page.navigate", url="file://" + os.path.abspath(path))
        deadline = time.monotonic() + 60
        while self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise RuntimeError("page did not load: %s" % path)
            time.sleep(0.1)

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError("JavaScript failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def center_of(self, selector):
        """Page coordinates of the centre of the first element matching ``selector``."""
        box = self.evaluate(
            "(function(){var e=document.querySelector(%s); e.scrollIntoView({block:'center'});"
            "var r=e.getBoundingClientRect(); return [r.left+r.width/2, r.top+r.height/2];})()"
            % json.dumps(selector)
        )
        return box

    def click(self, selector):
        x, y = self.center_of(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def press(self, key, code, key_code):
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=code,
                windowsVirtualKeyCode=key_code,
            )
