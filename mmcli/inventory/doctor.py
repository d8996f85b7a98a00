"""`mm doctor`: check that this machine can record and replay, and say how to fix what
cannot. Each check is a small function returning a `Finding`; later checks that need the
display are skipped when there is none."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from mmcli.backends.base import Backend, in_failsafe_corner
from mmcli.errors import ExitCode, MMError
from mmcli.store.recordings import Store


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    detail: str
    fix: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": str(self.status),
            "detail": self.detail,
            "fix": self.fix,
        }


NO_DISPLAY_FIX = (
    "start a virtual display and point DISPLAY at it: "
    "`Xvfb :99 -screen 0 1920x1080x24 & export DISPLAY=:99` (apt-get install xvfb)"
)


def diagnose(
    store: Store, open_backend: Callable[[], Backend], display: str | None = None
) -> list[Finding]:
    """Run every check on `display` (`--display`; None: $DISPLAY); never raises for a
    failed check."""
    from mmcli.desktop.display import cdp_address, vnc_address

    vnc = display is not None and vnc_address(display) is not None
    if vnc:
        return _diagnose_vnc(store, open_backend, display or "")
    if display is not None and cdp_address(display) is not None:
        return _diagnose_cdp(store, open_backend, display)
    x = display or os.environ.get("DISPLAY", "")
    findings = [check_store(store), check_sandbox(), check_display(x)]
    if findings[-1].status is Status.FAIL:
        for name in ("screenshot", "input", "fail-safe", WINDOWS, READBACK):
            findings.append(Finding(name, Status.SKIP, "needs a display"))
        return findings
    try:
        backend = open_backend()
    except MMError as e:
        findings.append(Finding("screenshot", Status.FAIL, str(e), NO_DISPLAY_FIX))
        return findings
    with backend:
        findings.append(check_screenshot(backend))
        findings.append(_unless_busy(lambda: check_input(backend)))
        findings.append(check_failsafe(backend))
    findings.extend(check_window_system(x))
    findings.append(check_readback(accessibility=True, display=x))
    return findings


def _opened(
    store: Store, open_backend: Callable[[], Backend], fix: str
) -> tuple[list[Finding], Backend | None]:
    """The store's and the sandbox's findings, and a remote display opened; when it cannot
    be, the display's failure (with `fix`) and every display check skipped."""
    findings = [check_store(store), check_sandbox()]
    try:
        return findings, open_backend()
    except MMError as e:
        findings.append(Finding("display", Status.FAIL, str(e), fix))
        for name in ("screenshot", "input", "fail-safe", WINDOWS, READBACK):
            findings.append(Finding(name, Status.SKIP, "needs a display"))
        return findings, None


def _diagnose_vnc(store: Store, open_backend: Callable[[], Backend], display: str) -> list[Finding]:
    """A VNC display: reachable (and the password taken) is the display check; RFB does
    not report the pointer back, so input is checked as far as the server taking it."""
    findings, backend = _opened(store, open_backend, VNC_FIX)
    if backend is None:
        return findings
    with backend:
        w, h = backend.size()
        findings.append(Finding("display", Status.OK, f"{display} reachable, {w}x{h}"))
        findings.append(check_screenshot(backend))
        findings.append(_unless_busy(lambda: _check_vnc_input(backend), display))
        findings.append(
            Finding(
                "fail-safe",
                Status.SKIP,
                "over VNC only where the server reports the pointer (PointerPos); "
                "Ctrl-C stops a replay",
            )
        )
        told = "over VNC a remote desktop tells nothing of its windows"
        findings.append(Finding(WINDOWS, Status.SKIP, f"{told}: {WINDOWS_OFF}"))
    findings.append(check_readback(accessibility=False))
    return findings


CDP_FIX = (
    "start the browser with --remote-debugging-port=PORT (and pip install 'mmcli[cdp]'); "
    "see docs/cdp.md"
)


def _diagnose_cdp(store: Store, open_backend: Callable[[], Backend], display: str) -> list[Finding]:
    """A browser's page through its DevTools: reachable is the display check; input goes
    as DevTools events (no fail-safe corner, no windows); typed text is read from the
    page itself."""
    findings, backend = _opened(store, open_backend, CDP_FIX)
    if backend is None:
        return findings
    with backend:
        w, h = backend.size()
        findings.append(Finding("display", Status.OK, f"{display} reachable, a {w}x{h} page"))
        findings.append(check_screenshot(backend))
        findings.append(Finding("input", Status.OK, "DevTools input events"))
        findings.append(
            Finding(
                "fail-safe",
                Status.SKIP,
                "a browser's page has no screen corner; Ctrl-C stops a replay",
            )
        )
        findings.append(
            Finding(WINDOWS, Status.SKIP, f"a browser tells nothing of windows: {WINDOWS_OFF}")
        )
    findings.append(
        Finding(READBACK, Status.OK, "typed text is read from the page's focused field")
    )
    return findings


READBACK = "readback"
READBACK_FIX = "apt-get install at-spi2-core tesseract-ocr tesseract-ocr-eng"
UNVERIFIED = "typed values are reported not verified and heals that type are pending until approved"


def check_readback(accessibility: bool, display: str | None = None) -> Finding:
    """How typed text can be read back where it landed (docs/validation.md): through the
    accessibility tree (an AT-SPI bus up before the apps start) and by OCR (tesseract);
    over VNC by OCR alone."""
    from mmcli.readback.atspi import Unavailable, find_bus
    from mmcli.readback.expose import java_bridge

    ocr = shutil.which("tesseract") is not None
    bus, why = "", ""
    if accessibility:
        try:
            bus = find_bus(display)
        except Unavailable as e:
            bus, why = "", str(e)
    java = (
        "Java's ATK bridge loaded into the Java apps an agent starts"
        if java_bridge()
        else "no Java ATK bridge (libatk-wrapper-java-jni): Swing apps read by OCR"
    )
    tree = (
        f"the accessibility bus is up (apps started after it expose their fields; {java})"
        if bus
        else f"no accessibility tree ({why})"
        if accessibility
        else "over VNC no accessibility tree"
    )
    if ocr:
        return Finding(READBACK, Status.OK, f"{tree}; other fields read by OCR (tesseract)")
    if bus:
        return Finding(
            READBACK,
            Status.WARN,
            f"{tree}; no OCR (tesseract): fields of apps without one cannot be read back, "
            f"{UNVERIFIED}",
            READBACK_FIX,
        )
    return Finding(
        READBACK,
        Status.WARN,
        f"{tree} and no OCR (tesseract): typed text cannot be read back; {UNVERIFIED}",
        READBACK_FIX,
    )


def _check_vnc_input(backend: Backend) -> Finding:
    w, h = backend.size()
    try:
        backend.move(w // 2 + 17, h // 2 + 11)
    except MMError as e:
        return Finding("input", Status.FAIL, f"cannot send input: {e}", VNC_FIX)
    return Finding(
        "input", Status.OK, "pointer events sent (a VNC server does not report the pointer back)"
    )


VNC_FIX = (
    "is the VNC server running and listening there? a password goes in MM_VNC_PASSWORD or "
    "a file named by MM_VNC_PASSWORD_FILE"
)


def _unless_busy(check: Callable[[], Finding], display: str | None = None) -> Finding:
    """Moving the pointer under a running replay would spoil it: only with the display
    lock, which another `mm record`/`mm replay` holds while it runs."""
    from mmcli.desktop.display import display_lock
    from mmcli.errors import LockBusy, MMError

    try:
        with display_lock(wait=0, display=display):
            return check()
    except LockBusy as e:
        return Finding("input", Status.SKIP, f"not tried: {e}")
    except MMError as e:  # the lock's folder or file is not safe to use
        return Finding("input", Status.FAIL, f"not tried: {e}", "remove what is named")


def check_sandbox() -> Finding:
    """Whether a healing agent can be run with the store read-only (docs/safety.md)."""
    from mmcli.desktop.sandbox import INSTALL, Sandbox

    why = Sandbox().unavailable
    if why is None:
        return Finding(
            "sandbox",
            Status.OK,
            "bubblewrap runs: a healing agent gets the store read-only and cannot approve "
            "its own heal",
        )
    return Finding(
        "sandbox",
        Status.WARN,
        f"{why}: a healing agent, or what it starts, could approve its own heal",
        INSTALL,
    )


def check_store(store: Store) -> Finding:
    if store.folder is None:
        return check_shared_store(store)
    root = store.folder.resolve()
    existing = next((p for p in (root, *root.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        return Finding("store", Status.FAIL, f"{root}: no such directory", "create it")
    probe_dir = root if root.is_dir() else existing
    try:
        with tempfile.NamedTemporaryFile(dir=probe_dir, prefix=".mm-doctor-") as f:
            f.write(b"x")
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        return Finding(
            "store",
            Status.FAIL,
            f"{root}: not writable ({e.strerror})",
            "use a writable directory: --store DIR or MM_HOME=DIR",
        )
    state = "" if root.is_dir() else " (will be created on the first recording)"
    return Finding("store", Status.OK, f"{root} is writable{state}")


def check_shared_store(store: Store) -> Finding:
    """A store in a bucket is trusted only when its server honours conditional writes:
    racing create-only puts must have exactly one winner, a stale replace must fail."""
    from mmcli.errors import StoreError
    from mmcli.store.conditions import check

    try:
        verdict = check(store.objects)
    except (StoreError, OSError) as e:
        return Finding(
            "store",
            Status.FAIL,
            f"{store.where}: {e}",
            "check AWS_ENDPOINT_URL, the credentials (AWS_ACCESS_KEY_ID, "
            "AWS_SECRET_ACCESS_KEY) and that the bucket exists",
        )
    if not verdict.ok:
        return Finding(
            "store",
            Status.FAIL,
            f"{store.where}: {verdict.detail}",
            "do not share this store between workers: use a server that honours conditional writes",
        )
    return Finding("store", Status.OK, f"{store.where}: writable, {verdict.detail}")


def check_display(display: str) -> Finding:
    """The X display `display` (`--display`, else $DISPLAY): reachable, with XTEST."""
    if not display:
        return Finding("display", Status.FAIL, "DISPLAY is not set", NO_DISPLAY_FIX)
    from mmcli.desktop.display import ensure_xauthority

    ensure_xauthority()
    try:
        from Xlib import display as xdisplay

        conn = xdisplay.Display(display)
    except Exception as e:  # python-xlib raises several types for an unreachable server
        xvfb = " (Xvfb is installed)" if shutil.which("Xvfb") else ""
        return Finding(
            "display",
            Status.FAIL,
            f"cannot connect to {display}: {e}",
            f"is the X server for {display} running{xvfb}? check DISPLAY and XAUTHORITY",
        )
    with contextlib.closing(conn):
        screen = conn.screen()
        size = f"{screen.width_in_pixels}x{screen.height_in_pixels}"
        has_xtest = conn.has_extension("XTEST")
    if not has_xtest:
        return Finding(
            "display",
            Status.FAIL,
            f"{display} ({size}) has no XTEST extension: input cannot be sent",
            "start the X server with XTEST enabled (Xvfb has it by default)",
        )
    return Finding("display", Status.OK, f"{display} reachable, {size}")


def check_screenshot(backend: Backend) -> Finding:
    try:
        frame = backend.grab()
    except Exception as e:
        return Finding("screenshot", Status.FAIL, f"screen grab failed: {e}", NO_DISPLAY_FIX)
    pixels = np.frombuffer(frame.raw, dtype=np.uint8)
    w, h = frame.width, frame.height
    if int(pixels.max(initial=0)) < 8:
        return Finding(
            "screenshot",
            Status.WARN,
            f"{w}x{h} grabbed, but it is all black: nothing is drawn on this display",
            "start the app to automate on it; a locked screen or screensaver also looks black",
        )
    return Finding("screenshot", Status.OK, f"{w}x{h} grabbed, not blank")


def check_input(backend: Backend) -> Finding:
    w, h = backend.size()
    before = backend.pointer()
    target = (w // 2 + 17, h // 2 + 11)
    try:
        backend.move(*target)
        after = backend.pointer()
    finally:
        with contextlib.suppress(Exception):
            backend.move(*before)
    if after != target:
        return Finding(
            "input",
            Status.FAIL,
            f"moved the pointer to {target} but it is at {after}",
            "input does not reach this display: check the XTEST extension and that no "
            "other program grabs the pointer",
        )
    return Finding("input", Status.OK, "pointer moves where it is sent")


def check_failsafe(backend: Backend) -> Finding:
    point, size = backend.pointer(), backend.size()
    if in_failsafe_corner(point, size):
        return Finding(
            "fail-safe",
            Status.FAIL,
            f"the pointer is in a screen corner {point}: replay would stop at once",
            "move the pointer away from the corners (the corner stops replay on purpose)",
        )
    return Finding(
        "fail-safe", Status.OK, "on: push the pointer into a screen corner to stop a replay"
    )


WINDOWS = "windows"
WINDOWS_OFF = (
    "no window is kept per step, so a notification over the task is not left out of the "
    "check, keys are not held back from a window that took the keyboard, and --relocate "
    "searches the pixels instead of finding the moved window"
)
"""What is off where the window structure cannot be read (the pixels judge alone)."""
XLIB_MIN = (0, 33)
XLIB_FIX = (
    "pip install --force-reinstall --no-deps 'python-xlib>=0.33' (in mm's environment: "
    "pyautogui's python3-xlib installs the same Xlib package over it)"
)
WINDOW_TRIES = 3
"""A query raises when a window vanishes under it: tried again before it counts."""


def check_window_system(display: str) -> list[Finding]:
    """The window structure (`check_window_structure`) and, where it can be read, whose
    pixels are kept (`check_composite`), asked on one connection of mm's own."""
    from Xlib import display as xdisplay

    try:
        conn = xdisplay.Display(display)
    except Exception as e:  # python-xlib raises several types for an unreachable server
        return [Finding(WINDOWS, Status.FAIL, f"cannot connect to {display}: {e}")]
    with contextlib.closing(conn):
        found = [check_window_structure(conn, display)]
        if found[0].status is Status.OK:
            found.append(check_composite(conn))
    return found


def check_window_structure(conn: Any, display: str) -> Finding:
    """The window structure read as replay reads it (`x11windows`). At run time
    `X11Backend` answers "not known" when a query raises, which turns the rules that need
    it off silently; here a window manager whose windows cannot be read, or a python-xlib
    older than mm needs, is said, with what is off."""
    import Xlib

    from mmcli.backends import x11windows

    version = tuple(getattr(Xlib, "__version__", (0, 0)))
    xlib = "python-xlib " + ".".join(map(str, version))
    stack = None
    error: Exception | None = None
    for _ in range(WINDOW_TRIES):
        try:
            stack = x11windows.stacked_windows(conn)
            error = None
            break
        except Exception as e:  # a window vanished under the query, or it cannot work
            error = e
    if stack is None and error is None:
        return Finding(
            WINDOWS,
            Status.SKIP,
            f"no window manager on {display} lists its windows (EWMH): {WINDOWS_OFF}",
        )
    old = version < XLIB_MIN
    if stack is None:
        return Finding(
            WINDOWS,
            Status.FAIL,
            f"the window manager's windows cannot be read ({type(error).__name__}: {error}; "
            f"{xlib}): {WINDOWS_OFF}",
            XLIB_FIX if old else "a bug of mm: report this line",
        )
    named = sum(1 for w in stack if w.ref.wm_class)
    read = f"{len(stack)} top-level windows read, {named} of them an app's with its class"
    if old:
        return Finding(
            WINDOWS,
            Status.WARN,
            f"{read}, but {xlib} is active: mm needs python-xlib >= "
            + ".".join(map(str, XLIB_MIN)),
            XLIB_FIX,
        )
    return Finding(WINDOWS, Status.OK, f"{read} ({xlib})")


COMPOSITE = "under"
UNDER_OFF = (
    "the X server has no Composite extension, so no window's pixels are kept where another "
    "window covers them: a notification over what the last action changed is waited out "
    "(up to 10 s past --timeout), never seen under"
)


def check_composite(conn: Any) -> Finding:
    """Whether each window's own pixels can be kept (`x11under`: by a compositing
    manager, else by the server at mm's asking), so that the outcome is judged under
    another app's notification instead of waited out."""
    from mmcli.backends import x11under

    try:
        extension = conn.has_extension("Composite")
        manager = x11under.compositing(conn) if extension else None
    except Exception as e:  # the server went, or answers oddly: say so, never raise
        return Finding(COMPOSITE, Status.WARN, f"cannot tell ({type(e).__name__}: {e})")
    if not extension:
        return Finding(COMPOSITE, Status.SKIP, UNDER_OFF)
    seen = "the outcome is seen under another app's notification"
    if manager is None:
        return Finding(
            COMPOSITE,
            Status.OK,
            f"no compositing manager: the server keeps each window's pixels at mm's asking "
            f"once a notification covers the outcome; {seen} (a typed field under one is "
            "not read there: not verified)",
        )
    named = f" ({manager})" if manager else ""
    return Finding(
        COMPOSITE,
        Status.OK,
        f"a compositing manager{named} keeps each window's pixels; {seen}, and a typed "
        "field under one is read there",
    )


def exit_code(findings: list[Finding]) -> ExitCode:
    failed = any(f.status is Status.FAIL for f in findings)
    return ExitCode.ERROR if failed else ExitCode.OK
