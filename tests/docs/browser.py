"""A headless Chromium driven over the DevTools protocol, through a pipe (no extra package).

Why a real browser: a Mermaid diagram is text until Mermaid's JavaScript lays it out in a page,
and a table cell that breaks ``driver.enabled`` mid-word or a search box that cannot find
``nodeSelector`` only show in a rendered page. Chromium started with
``--remote-debugging-pipe`` reads protocol commands (JSON, NUL-terminated) from its fd 3 and
writes replies and events to its fd 4, so the standard library is enough to drive it.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

#: Flags for a browser that talks to nothing but the page it is given (no updates, no sync, no
#: first-run dialogs), in a throwaway profile.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)

#: Runs before any script of every page: Material renders each diagram into a *closed* shadow
#: root, which page scripts cannot read; this keeps a reference to every shadow root made.
KEEP_SHADOW_ROOTS = """
(() => {
  const attach = Element.prototype.attachShadow;
  window.__shadowRoots = [];
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    window.__shadowRoots.push(root);
    return root;
  };
})();
"""


def _onto_3_and_4(read: int, write: int) -> None:
    """In the child: the pipe ends at the fds Chromium's ``--remote-debugging-pipe`` uses
    (copied high first, so neither overwrites the other)."""
    high_read, high_write = os.dup(read), os.dup(write)
    os.dup2(high_read, 3)
    os.dup2(high_write, 4)


class BrowserError(RuntimeError):
    """The browser exited, timed out or answered a command with an error."""


class Page:
    """One tab, attached through a flat session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self._browser = browser
        self._session = session

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._browser.call(method, session=self._session, **params)

    def open(self, url: str, width: int = 1280, height: int = 900) -> None:
        """Load ``url`` in a ``width`` x ``height`` viewport and wait for its load event."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)  # fmt: skip
        self._browser.events.clear()
        self.call("Page.navigate", url=url)
        self._browser.wait_event("Page.loadEventFired", self._session)

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page (promises awaited)."""
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                          awaitPromise=True)  # fmt: skip
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}...: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; its last value when ``timeout`` runs out."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() > deadline:
                return value
            time.sleep(0.2)

    def screenshot(self) -> bytes:
        """The viewport as PNG."""
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])


class Browser:
    """A Chromium process and its protocol pipe."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._buffer = b""
        self._profile = tempfile.TemporaryDirectory(prefix="gpustack-chromium-")
        # its log goes to a file: a pipe nobody reads while the test runs could fill and block it
        self._log = open(os.path.join(self._profile.name, "stderr.log"), "w+b")  # noqa: SIM115
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=lambda: _onto_3_and_4(to_browser_r, from_browser_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited: {self._stderr()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _stderr(self) -> str:
        self._process.kill()
        self._process.wait(timeout=10)
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are kept."""
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") != ident:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error']}")
            result: dict[str, Any] = reply.get("result", {})
            return result

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event
            self.events.append(self._read_message(deadline))

    def new_page(self) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.call("Page.enable")
        page.call("Page.addScriptToEvaluateOnNewDocument", source=KEEP_SHADOW_ROOTS)
        return page

    def close(self) -> None:
        with suppress(BrowserError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._log.close()
        self._profile.cleanup()


@contextmanager
def chromium(executable: str) -> Iterator[Browser]:
    browser = Browser(executable)
    try:
        yield browser
    finally:
        browser.close()
