"""The display: one `mm` drives it at a time, and a virtual one can be started on demand."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import stat
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mmcli.errors import DisplayError, LockBusy, MMError, UsageError
from mmcli.store.locking import acquire, runtime_dir

LOCK_WAIT = 60.0


def _dummy_xauthority() -> bytes:
    """One well-formed entry for a display that does not exist.

    python-xlib refuses to connect without an Xauthority file and prints a warning *on
    stdout* when the file has no entries; one unrelated entry silences both, and a server
    started without -auth (Xvfb here) accepts the connection.
    """

    def field(value: bytes) -> bytes:
        return len(value).to_bytes(2, "big") + value

    return (
        b"\x01\x00"
        + field(b"mm-none")
        + field(b"65535")
        + field(b"MIT-MAGIC-COOKIE-1")
        + field(bytes(16))
    )


def ensure_xauthority() -> None:
    """Point XAUTHORITY at a usable file when the user's is missing or empty."""
    current = Path(os.environ.get("XAUTHORITY") or Path.home() / ".Xauthority")
    with contextlib.suppress(OSError):
        if current.stat().st_size > 0:
            return
    try:
        path = runtime_dir() / "xauthority"  # the user's own folder: nothing planted there
    except MMError as e:
        raise DisplayError(str(e)) from None
    if not path.exists() or path.stat().st_size == 0:
        from mmcli.store.storefs import atomic_write

        atomic_write(path, _dummy_xauthority())
    os.environ["XAUTHORITY"] = str(path)


LOCAL_HOSTS = {"", "unix", "localhost", "127.0.0.1", "::1", "[::1]"}
"""Host parts of a DISPLAY that name this machine's X server (`localhost:3` goes over TCP
to the same server that `:3` reaches through its socket)."""
DISPLAY_PATTERN = re.compile(r"(?P<host>.*?)(?P<unix>/unix)?:(?P<number>[0-9]+)(?:\.[0-9]+)?")


VNC_SCHEME = "vnc://"
VNC_PORT = 5900


@dataclass(frozen=True)
class VncAddress:
    """A remote desktop reached over VNC: `--display vnc://HOST[:PORT]`."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{VNC_SCHEME}{host}:{self.port}"


def vnc_address(display: str) -> VncAddress | None:
    """The VNC server `display` names (`vnc://HOST[:PORT]`, port 5900 by default), None
    for an X display name; `UsageError` for a malformed one, or one with a password in it
    (it would show in `ps`)."""
    if not display.lower().startswith(VNC_SCHEME):
        return None
    parts = urlsplit(display)
    if parts.username is not None or parts.password is not None:
        raise UsageError(
            "no password in the display address: it would be visible in `ps`; set "
            "MM_VNC_PASSWORD or MM_VNC_PASSWORD_FILE"
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.hostname or port == -1 or parts.path not in ("", "/") or parts.query:
        raise UsageError(
            f"--display {display!r}: expected vnc://HOST[:PORT], e.g. vnc://10.0.0.5:5900"
        )
    return VncAddress(parts.hostname, VNC_PORT if port is None else port)


CDP_SCHEME = "cdp://"
CDP_SOCKETS = ("ws://", "wss://")
CDP_PORT = 9222


@dataclass(frozen=True)
class CdpAddress:
    """A browser's page reached through its DevTools: `--display cdp://HOST[:PORT]` (a
    browser started with `--remote-debugging-port`; its first page is driven), or a
    page's own `ws://` / `wss://` socket URL (a remote browser service)."""

    host: str
    port: int
    socket: str | None = None
    """The page's socket URL as given (None: found from the browser's target list)."""

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return self.socket or f"{CDP_SCHEME}{self.netloc}"


def cdp_address(display: str) -> CdpAddress | None:
    """The browser `display` names (`cdp://HOST[:PORT]`, port 9222 by default; or a
    `ws://` / `wss://` socket URL), None for any other display; `UsageError` for a
    malformed one, or one with a password in it (it would show in `ps`)."""
    lowered = display.lower()
    is_socket = lowered.startswith(CDP_SOCKETS)
    if not lowered.startswith(CDP_SCHEME) and not is_socket:
        return None
    parts = urlsplit(display)
    if parts.username is not None or parts.password is not None:
        raise UsageError("no password in the display address: it would be visible in `ps`")
    try:
        port = parts.port
    except ValueError:
        port = -1
    path_ok = bool(parts.path) if is_socket else parts.path in ("", "/")
    if not parts.hostname or port == -1 or not path_ok or (parts.query and not is_socket):
        raise UsageError(
            f"--display {display!r}: expected cdp://HOST[:PORT] (a browser started with "
            "--remote-debugging-port), e.g. cdp://127.0.0.1:9222, or a page's ws:// URL"
        )
    default = 443 if lowered.startswith("wss://") else 80 if is_socket else CDP_PORT
    return CdpAddress(
        parts.hostname, default if port is None else port, display if is_socket else None
    )


def chosen(display: str | None) -> str:
    """The display a run acts on, read once: `display` (`--display`), else $MM_DISPLAY,
    else $DISPLAY; "" for none. The backend and the display's lock are given the same."""
    return display or os.environ.get("MM_DISPLAY") or os.environ.get("DISPLAY") or ""


def is_remote(display: str | None) -> bool:
    """Whether `display` is reached over the network by mm's own connection (VNC, a
    browser's DevTools): input given on the local X display never reaches it."""
    return display is not None and (
        vnc_address(display) is not None or cdp_address(display) is not None
    )


def display_key(display: str) -> str:
    """What identifies the X server `display` names, however it is spelled: `:3`, `:3.0`,
    `unix:3`, `localhost:3` and `<this host>:3` are all `local-3`; another host's display
    is `host-N`. The screen number is dropped: one server, one pointer and keyboard. A VNC
    server is `vnc-HOST-PORT`, `local` for this machine's; a browser's DevTools
    `cdp-HOST-PORT`."""
    cdp = cdp_address(display)
    if cdp is not None:
        host = cdp.host.lower()
        host = "local" if host in LOCAL_HOSTS or host == socket.gethostname().lower() else host
        return f"cdp-{re.sub(r'[^a-z0-9_.-]', '_', host)}-{cdp.port}"
    vnc = vnc_address(display)
    if vnc is not None:
        host = vnc.host.lower()
        host = "local" if host in LOCAL_HOSTS or host == socket.gethostname().lower() else host
        return f"vnc-{re.sub(r'[^a-z0-9_.-]', '_', host)}-{vnc.port}"
    found = DISPLAY_PATTERN.fullmatch(display.strip())
    if found is None:
        return "other-" + (re.sub(r"[^A-Za-z0-9_.-]", "_", display) or "none")
    host = found["host"].lower()
    number = int(found["number"])
    if host in LOCAL_HOSTS or host == socket.gethostname().lower() or host.startswith("/"):
        return f"local-{number}"
    return f"host-{re.sub(r'[^a-z0-9_.-]', '_', host)}-{number}"


def _lock_path(display: str) -> Path:
    """The display's lock, in the user's own runtime folder (see `runtime_dir`)."""
    return runtime_dir() / f"display-{display_key(display)}.lock"


def _open_lock(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise DisplayError(f"{path}: cannot open the display lock ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DisplayError(f"{path}: the display lock is not a plain file")
    return fd


@contextlib.contextmanager
def display_lock(
    wait: float = LOCK_WAIT,
    display: str | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive right to drive `display` (default: `chosen`).

    A second `mm record`/`mm replay` on the same display (however it is spelled, see
    `display_key`) waits up to `wait` seconds, then fails naming the process that holds
    it. The lock is an flock: it dies with its process, so a killed `mm` never leaves a
    stale lock behind. It lives in the user's own runtime folder, opened without following
    links, so no other user can plant a link there or block the display.
    """
    display = display if display is not None else chosen(None)
    path = _lock_path(display)
    fd = _open_lock(path)
    try:
        if not acquire(fd, 0) and on_wait is not None and wait > 0:
            on_wait(f"display {display} is in use by another mm{_read_holder(path)}; "
                    f"waiting up to {wait:.0f}s")  # fmt: skip
        if not acquire(fd, wait, poll=0.1):
            raise LockBusy(
                f"display {display} is in use by another mm{_read_holder(path)}; waited {wait:.0f}s"
            )
        pid = f"{os.getpid()}\n".encode()
        os.pwrite(fd, pid, 0)  # never empty for a waiter reading it: write, then trim
        os.ftruncate(fd, len(pid))
        yield
    finally:
        os.close(fd)


def _read_holder(path: Path) -> str:
    """The holder as ' (pid N)', or empty while it has not written its pid yet."""
    with contextlib.suppress(OSError, ValueError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            text = f.read(32).decode("ascii").strip()
        if text.isdigit():
            return f" (pid {int(text)})"
    return ""


def start_xvfb(
    width: int = 1920, height: int = 1080, extra: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    """Start an Xvfb on a free display number; return it and its display name (":N") once
    it accepts clients (-displayfd: Xvfb picks the number and writes it when ready).
    `extra`: more of Xvfb's arguments (`-extension Composite`: a server without it)."""
    if shutil.which("Xvfb") is None:
        raise DisplayError("Xvfb is not installed (apt-get install xvfb)")
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            "-noreset",
            *extra,
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number:
        process.kill()
        raise DisplayError("Xvfb did not start")
    return process, f":{number}"


def stop_xvfb(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()


class VirtualDisplay:
    """An Xvfb server started for the lifetime of a `with` block; `display` is its name,
    to give to what runs on it (`--display`, a child's `DISPLAY`: `env()`). The
    environment of this process is left as it is."""

    def __init__(self, width: int = 1920, height: int = 1080) -> None:
        self.size = (width, height)
        self.process: subprocess.Popen[bytes] | None = None
        self.display = ""

    def __enter__(self) -> VirtualDisplay:
        self.process, self.display = start_xvfb(*self.size)
        ensure_xauthority()
        return self

    def env(self) -> dict[str, str]:
        """The environment a program run on this display is given (its `DISPLAY`)."""
        return {"DISPLAY": self.display}

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            stop_xvfb(self.process)
