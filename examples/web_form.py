"""A web version of the example form, for browsers driven through DevTools.

Serves one page on 127.0.0.1 (Name, City, Save) and appends each submitted form to a
JSON-lines file; with `--browser`, also starts a headless Chromium on the page with its
DevTools on a port of its own, and prints the `cdp://127.0.0.1:PORT` address to drive.

    python examples/web_form.py --out /tmp/web.jsonl --browser
    # cdp://127.0.0.1:40123   (then: mm record web --display cdp://127.0.0.1:40123 ...)

Perturbations: `--modal` shows a DOM dialog over the form ("Session expiring", with a
button that closes it); `--alert` opens the page's own `alert()` when the Name field first
gets the focus; `--alert-at-load` opens one as soon as the page is loaded; `--banner` a
notice at the top right, away from the form; `--error` a red "Service unavailable" line
under Save; `--disabled` Save disabled; `--prefill TEXT` City already holding TEXT.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Person (web)</title>
<style>
  body {{ margin: 0; font: 16px sans-serif; background: #eeeeee; }}
  form {{ position: absolute; left: 40px; top: 30px; }}
  label {{ display: inline-block; width: 60px; }}
  input {{ width: 260px; font: 16px sans-serif; padding: 3px; }}
  p {{ margin: 14px 0; }}
  button {{ font: 16px sans-serif; padding: 4px 18px; }}
  #modal {{ position: absolute; left: 120px; top: 70px; width: 300px; padding: 16px;
           background: white; border: 2px solid #333; box-shadow: 4px 4px 8px #888; }}
</style></head>
<body>
<form method="post" action="/submit">
  <p><label for="name">Name</label> <input id="name" name="name" autocomplete="off"></p>
  <p><label for="city">City</label> <input id="city" name="city" autocomplete="off"></p>
  <p><button id="save" type="submit">Save</button></p>
</form>
{modal}{extra}
<script>{script}</script>
</body></html>"""
MODAL = (
    '<div id="modal"><b>Session expiring</b><p>Your session ends in 2 minutes.</p>'
    "<button onclick=\"document.getElementById('modal').remove()\">Stay signed in</button></div>"
)
BANNER = (
    '<div style="position:absolute;right:20px;top:10px;padding:6px 12px;background:#fff7c0;'
    'border:1px solid #c9b600">New: dark mode is here</div>'
)
ERROR = (
    '<p style="position:absolute;left:40px;top:170px;color:#c00000;margin:0">'
    "Service unavailable: nothing will be saved</p>"
)
ALERT = (
    "document.getElementById('name').addEventListener('focus', () => "
    "setTimeout(() => alert('Session expiring'), 50), {once: true});"
)
ALERT_AT_LOAD = "window.addEventListener('load', () => setTimeout(() => alert('Hello'), 50));"
SAVED = """<!doctype html><html><head><meta charset="utf-8"><title>Saved</title></head>
<body style="margin:0;font:16px sans-serif;background:#eeeeee">
<p style="position:absolute;left:40px;top:30px">Saved.</p></body></html>"""

POINTS = {"name": (239, 58), "city": (239, 100), "save": (78, 143)}
"""The middle of each field and of the button, in CSS px from the viewport's top left
(the form is placed absolutely; tests/e2e/test_cdp.py checks them against the page)."""


class FormServer:
    """The page, served on a port of its own, each submission appended to `out`."""

    def __init__(
        self,
        out: Path,
        modal: bool = False,
        alert: bool = False,
        alert_at_load: bool = False,
        banner: bool = False,
        error: bool = False,
        disabled: bool = False,
        prefill: str = "",
    ) -> None:
        script = (ALERT if alert else "") + (ALERT_AT_LOAD if alert_at_load else "")
        if disabled:
            script += "document.getElementById('save').disabled = true;"
        if prefill:
            script += f"document.getElementById('city').value = {json.dumps(prefill)};"
        extra = (BANNER if banner else "") + (ERROR if error else "")
        page = PAGE.format(modal=MODAL if modal else "", extra=extra, script=script)
        self.out = out

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send(page)

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(size).decode())
                record = {k: v[0] for k, v in form.items()}
                with out.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
                self._send(SAVED)

            def _send(self, body: str) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("no chromium on PATH (Debian: apt install chromium)")
    return found


class Browser:
    """A headless Chromium on `url` with its DevTools on 127.0.0.1 (`address`); with an
    X `display`, a window of it there (headful)."""

    def __init__(
        self,
        url: str,
        size: tuple[int, int] = (800, 600),
        scale: float = 1,
        display: str | None = None,
    ) -> None:
        self.port = free_port()
        self.profile = Path(tempfile.mkdtemp(prefix="mm-chromium-"))
        env = {**os.environ, "DISPLAY": display} if display else None
        self.process = subprocess.Popen(
            [
                chromium(),
                *(["--headless"] if display is None else ["--window-position=0,0"]),
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                f"--force-device-scale-factor={scale:g}",  # device pixels per CSS pixel
                # At a scale other than 1, headless Chromium placed text at subpixel
                # offsets chosen anew at each start (4 of 8 starts drew the labels
                # otherwise): the same page, another screen. docs/cdp.md.
                *(["--disable-font-subpixel-positioning"] if scale != 1 else []),
                f"--window-size={size[0]},{size[1]}",
                f"--remote-debugging-port={self.port}",
                "--remote-debugging-address=127.0.0.1",
                f"--user-data-dir={self.profile}",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.address = f"cdp://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=2):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError("chromium did not open its DevTools") from None
                time.sleep(0.1)
        time.sleep(0.5)  # the page loaded and painted

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="JSON lines of submitted forms")
    p.add_argument("--modal", action="store_true", help="a DOM dialog over the form")
    p.add_argument("--alert", action="store_true", help="alert() when Name first has the focus")
    p.add_argument("--alert-at-load", action="store_true", help="alert() once the page loads")
    p.add_argument("--banner", action="store_true", help="a notice away from the form")
    p.add_argument("--error", action="store_true", help="an error line under Save")
    p.add_argument("--disabled", action="store_true", help="Save disabled")
    p.add_argument("--prefill", default="", metavar="TEXT", help="City already holding TEXT")
    p.add_argument("--browser", action="store_true", help="start a headless Chromium on it")
    a = p.parse_args(argv)
    server = FormServer(
        a.out, a.modal, a.alert, a.alert_at_load, a.banner, a.error, a.disabled, a.prefill
    )
    browser = Browser(server.url) if a.browser else None
    print(browser.address if browser else server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        if browser:
            browser.close()
        server.close()


if __name__ == "__main__":
    sys.exit(main())
