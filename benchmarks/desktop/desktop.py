"""A desktop that looks like a user's, on a private Xvfb: a window manager with title bars
and click-to-focus (openbox), a panel with a taskbar and a clock showing seconds (tint2),
desktop notifications (dunst on a private session bus), and a coloured wallpaper. Or, at
their distribution's default configurations, IceWM (its own taskbar) or Xfce (xfwm4,
xfce4-panel, xfconfd, xfsettingsd) instead of openbox and tint2.

Every process is started here and stopped here by its PID. Usable by the benchmark and
the end-to-end tests alike:

    with Desktop(work_dir) as desktop:
        desktop.notify("New mail", "3 unread messages")
        wid = desktop.wait_window("Person")
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from mmcli.desktop.display import ensure_xauthority, start_xvfb, stop_xvfb

PROGRAMS = (
    "Xvfb", "openbox", "tint2", "dunst", "dunstctl", "dbus-launch", "dbus-send", "notify-send",
    "xdotool", "xwininfo", "xprop", "feh", "xmessage", "xterm", "xclip",
)  # fmt: skip
PANEL_HEIGHT = 30
WMS = ("openbox", "icewm", "xfce")
WM_PROGRAMS = {
    "openbox": (),
    "icewm": ("icewm",),
    "xfce": ("xfwm4", "xfce4-panel", "xfsettingsd"),
}
"""What each window manager needs beyond `PROGRAMS` (icewm: scripts/setup; xfce:
benchmarks/desktop/setup)."""

XFCE_PANEL_DEFAULT = Path("/etc/xdg/xfce4/panel/default.xml")
"""xfce4-panel's configuration as the distribution ships it. On a first start with no
configuration of its own, the panel asks in a dialog whether to use it or one empty panel;
a user who takes the default gets this file, unchanged, as the panel's xfconf channel."""

DEFAULT_TINT2RC = Path("/etc/xdg/tint2/tint2rc")
"""tint2's configuration as the distribution ships it: what a user who never opened its
settings has."""
TINT2RC = """\
panel_items = TSC
panel_size = 100% {height}
panel_margin = 0 0
panel_padding = 4 2 4
panel_position = bottom center horizontal
panel_layer = top
panel_monitor = all
strut_policy = follow_size
panel_background_id = 1
wm_menu = 0
rounded = 0
border_width = 0
background_color = #2b303b 100
border_color = #000000 0
rounded = 2
border_width = 1
background_color = #4f5b66 100
border_color = #a3be8c 100
taskbar_mode = single_desktop
taskbar_padding = 2 2 4
taskbar_background_id = 0
taskbar_active_background_id = 0
task_text = 1
task_icon = 0
task_centered = 0
task_maximum_size = 180 24
task_padding = 4 2 4
task_font = sans 9
task_font_color = #eeeeee 100
task_background_id = 0
task_active_background_id = 2
task_active_font_color = #ffffff 100
systray_padding = 0 0 2
time1_format = %H:%M:%S
time1_font = sans bold 10
clock_font_color = #ffffff 100
clock_padding = 6 0
clock_background_id = 0
tooltip = 0
"""

DUNSTRC = """\
[global]
    monitor = 0
    follow = none
    width = 300
    height = 100
    origin = top-right
    offset = 12x12
    font = Sans 10
    frame_width = 2
    frame_color = "#88c0d0"
    format = "<b>%s</b>\\n%b"
    show_indicators = no
    idle_threshold = 0
    sticky_history = no
[urgency_low]
    background = "#3b4252"
    foreground = "#eceff4"
    timeout = 60
[urgency_normal]
    background = "#3b4252"
    foreground = "#eceff4"
    timeout = 60
[urgency_critical]
    background = "#bf616a"
    foreground = "#eceff4"
    timeout = 60
"""


def missing_programs(*extra: str) -> list[str]:
    """What the desktop (and the `extra` programs asked for) needs that is not installed."""
    missing = [p for p in (*PROGRAMS, *extra) if shutil.which(p) is None]
    if "xfsettingsd" in extra and xfconfd() is None:
        missing.append("xfconfd")
    return missing


def xfconfd() -> Path | None:
    """Xfce's settings daemon (not on PATH: Debian keeps it under /usr/lib)."""
    return next(iter(sorted(Path("/usr/lib").glob("*/xfce4/xfconf/xfconfd"))), None)


@dataclass(frozen=True)
class Geometry:
    """A top-level window's client area in screen coordinates."""

    x: int
    y: int
    w: int
    h: int

    @property
    def center(self) -> tuple[int, int]:
        return (self.x + self.w // 2, self.y + self.h // 2)


def wallpaper(path: Path, size: tuple[int, int]) -> Path:
    """A coloured diagonal gradient with a few shapes: never a flat background."""
    w, h = size
    img = Image.new("RGB", (w, h))
    px = img.load()
    assert px is not None
    for y in range(0, h):
        for x in range(0, w, 4):
            t = (x + y) / (w + h)
            c = (int(40 + 60 * t), int(90 + 80 * (1 - t)), int(140 + 90 * t))
            for dx in range(4):
                if x + dx < w:
                    px[x + dx, y] = c
    draw = ImageDraw.Draw(img)
    draw.ellipse((w - 420, h - 420, w + 180, h + 120), fill=(214, 150, 80))
    draw.rectangle((w // 2, 40, w // 2 + 120, 160), fill=(120, 60, 140))
    img.save(path)
    return path


class Desktop:
    """Xvfb + dbus + openbox + tint2 + dunst + wallpaper (or IceWM, or Xfce, instead of
    openbox and tint2); DISPLAY and the session bus are set in os.environ while it runs
    (restored on stop)."""

    def __init__(
        self,
        work: Path,
        size: tuple[int, int] = (1280, 800),
        panel: bool = True,
        panel_config: str = "ours",
        wm: str = "openbox",
        xvfb_args: Sequence[str] = (),
    ):
        """`panel_config`: "ours" (a bottom taskbar and a clock with seconds, `TINT2RC`)
        or "default" (tint2 as Debian ships it, /etc/xdg/tint2/tint2rc). `wm`: openbox
        (with tint2 as the panel); icewm with its own taskbar, clock and menus, at the
        configuration Debian ships (/usr/share/icewm; a private, empty user folder); or
        xfce: xfwm4 and xfce4-panel with the settings daemons a session runs (xfconfd,
        xfsettingsd), at the configuration Debian ships (private, empty XDG config and
        cache folders; the panel's channel is Debian's default.xml, as the panel's
        first-start dialog writes it when the default is taken). `xvfb_args`: more of
        Xvfb's arguments (`-extension Composite`: a server that keeps no window's pixels)."""
        if wm not in WMS:
            raise ValueError(f"unknown window manager {wm!r} (one of {', '.join(WMS)})")
        self.work = work
        self.size = size
        self.panel = panel
        self.panel_config = panel_config
        self.wm = wm
        self.xvfb_args = tuple(xvfb_args)
        self.theme = ""
        """The window manager's theme; "" for the distribution's."""
        self.display = ""
        self.xvfb: subprocess.Popen[bytes] | None = None
        self.procs: list[subprocess.Popen[bytes]] = []
        self.dbus_pid: int | None = None
        self._saved: dict[str, str | None] = {}

    # ----- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> Desktop:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        self.xvfb, self.display = start_xvfb(*self.size, extra=self.xvfb_args)
        for key in ("DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "ICEWM_PRIVCFG"):
            self._saved[key] = os.environ.get(key)
        os.environ["DISPLAY"] = self.display
        ensure_xauthority()
        self._start_bus()
        self._set_wallpaper()
        if self.wm == "icewm":
            os.environ["ICEWM_PRIVCFG"] = str(self.work / "icewm")
            self._spawn(["icewm"] if self.panel else ["icewm", "--notray"])
            self._wait(lambda: self._run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK"), "icewm")
            if self.panel:
                self._wait(lambda: self.find_windows("^TaskBar$", by="class"), "icewm's taskbar")
        elif self.wm == "xfce":
            self._start_xfce()
        else:
            self._spawn(["openbox", "--config-file", str(self._openbox_rc())])
            self._wait(lambda: self._run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK"), "openbox")
        if self.panel and self.wm == "openbox":
            rc = self.work / "tint2rc"
            if self.panel_config == "default":
                rc = DEFAULT_TINT2RC
            else:
                rc.write_text(TINT2RC.format(height=PANEL_HEIGHT))
            self._spawn(["tint2", "-c", str(rc)])
            self._wait(lambda: self.find_windows("tint2", by="class"), "tint2")
        rc = self.work / "dunstrc"
        rc.write_text(DUNSTRC)
        self._spawn(["dunst", "-conf", str(rc)])
        self._wait(self._dunst_ready, "dunst")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            terminate(proc)
        self.procs.clear()
        if self.dbus_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.dbus_pid, signal.SIGTERM)
            self.dbus_pid = None
        if self.xvfb is not None:
            stop_xvfb(self.xvfb)
            self.xvfb = None
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def _spawn(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = open(self.work / f"{Path(argv[0]).name}.log", "ab")  # noqa: SIM115
        proc = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True, env=env)
        log.close()
        self.procs.append(proc)
        return proc

    def _start_bus(self) -> None:
        out = subprocess.run(
            ["dbus-launch", "--sh-syntax"], capture_output=True, text=True, check=True
        ).stdout
        address = re.search(r"DBUS_SESSION_BUS_ADDRESS='([^']*)'", out)
        pid = re.search(r"DBUS_SESSION_BUS_PID=(\d+)", out)
        if not address or not pid:
            raise RuntimeError(f"dbus-launch gave no bus: {out!r}")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = address.group(1)
        self.dbus_pid = int(pid.group(1))

    def _set_wallpaper(self) -> None:
        image = wallpaper(self.work / "wallpaper.png", self.size)
        subprocess.run(["feh", "--no-fehbg", "--bg-fill", str(image)], check=True)

    def _start_xfce(self) -> None:
        """xfconfd, xfsettingsd, xfwm4 and xfce4-panel, in the order a session starts them,
        each with private XDG config and cache folders (the apps keep the user's)."""
        daemon = xfconfd()
        if daemon is None:
            raise RuntimeError("xfconfd is not installed (benchmarks/desktop/setup)")
        config, cache = self.work / "xfce-config", self.work / "xfce-cache"
        shutil.rmtree(config, ignore_errors=True)  # every start at the defaults
        shutil.rmtree(cache, ignore_errors=True)
        channels = config / "xfce4" / "xfconf" / "xfce-perchannel-xml"
        channels.mkdir(parents=True)
        cache.mkdir()
        if self.panel:
            shutil.copyfile(XFCE_PANEL_DEFAULT, channels / "xfce4-panel.xml")
        env = {**os.environ, "XDG_CONFIG_HOME": str(config), "XDG_CACHE_HOME": str(cache)}
        # Started here, not by the bus on first use, so that it is stopped by its PID.
        self._spawn([str(daemon)], env)
        self._wait(lambda: self._bus_has("org.xfce.Xfconf"), "xfconfd")
        self._spawn(["xfwm4"], env)
        self._wait(lambda: self._run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK"), "xfwm4")
        self._spawn(["xfsettingsd"], env)
        self._wait(lambda: self._selection_owned("_XSETTINGS_S0"), "xfsettingsd")
        if self.panel:
            self._spawn(["xfce4-panel"], env)
            self._wait(lambda: self.find_windows("^Xfce4-panel$", by="class"), "xfce4-panel")

    def _openbox_rc(self, theme: str = "") -> Path:
        source = Path("/etc/xdg/openbox/rc.xml").read_text()
        if theme:
            source = re.sub(r"(<theme>\s*<name>)[^<]*(</name>)", rf"\g<1>{theme}\g<2>", source)
        rc = self.work / "openbox-rc.xml"
        rc.write_text(source)
        return rc

    def set_theme(self, theme: str) -> None:
        """The window manager's theme ("" for the one the distribution configures), applied
        to the running window manager; returns once the screen is still."""
        if theme == self.theme:
            return
        if self.wm == "openbox":
            self._openbox_rc(theme)
            subprocess.run(["openbox", "--reconfigure"], check=True, timeout=10)
        elif self.wm == "icewm":
            line = f'Theme="{theme}/default.theme"\n' if theme else ""
            (self.work / "icewm").mkdir(exist_ok=True)
            (self.work / "icewm" / "theme").write_text(line)
            subprocess.run(["icewm", "--restart"], check=True, timeout=10)
            if self.panel:
                self._wait(lambda: self.find_windows("^TaskBar$", by="class"), "icewm's taskbar")
        self.theme = theme
        self.settle(quiet=0.5)

    def _dunst_ready(self) -> bool:
        return self._bus_has("org.freedesktop.Notifications")

    @staticmethod
    def _selection_owned(name: str) -> bool:
        from Xlib import X
        from Xlib.display import Display

        display = Display()
        try:
            return display.get_selection_owner(display.intern_atom(name)) != X.NONE
        finally:
            display.close()

    def _bus_has(self, name: str) -> bool:
        return self._run(
            "dbus-send",
            "--session",
            "--dest=org.freedesktop.DBus",
            "--type=method_call",
            "--print-reply",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        ).endswith("true")

    @staticmethod
    def _wait(ready: object, what: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():  # type: ignore[operator]
                return
            time.sleep(0.05)
        raise RuntimeError(f"{what} did not start within {timeout:.0f}s")

    @staticmethod
    def _run(*argv: str) -> str:
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:  # xdotool search can hang on a dying window
            return ""
        return result.stdout.strip() if result.returncode == 0 else ""

    # ----- what is on the desktop ------------------------------------------------------

    def notify(self, summary: str, body: str = "") -> None:
        """A desktop notification (top-right corner); returns once it is on screen."""
        before = set(self.find_windows("Dunst", by="class"))
        subprocess.run(["notify-send", "-t", "60000", summary, body], check=True, timeout=10)
        with contextlib.suppress(RuntimeError):
            self._wait(
                lambda: (
                    set(self.find_windows("Dunst", by="class")) - before
                    or self.find_windows("Dunst", by="class", visible=True)
                ),
                "notification",
                5,
            )
        time.sleep(0.3)

    def clear_notifications(self) -> None:
        if self._run("dunstctl", "count", "displayed") not in ("", "0"):
            self._run("dunstctl", "close-all")
            self._wait(
                lambda: self._run("dunstctl", "count", "displayed") == "0", "no notification"
            )

    def find_windows(self, pattern: str, by: str = "name", visible: bool = True) -> list[int]:
        argv = ["xdotool", "search"]
        if visible:
            argv.append("--onlyvisible")
        argv += [f"--{by}", pattern]
        return [int(w) for w in self._run(*argv).split()]

    def wait_window(self, pattern: str, by: str = "name", timeout: float = 30.0) -> int:
        found: list[int] = []

        def ready() -> bool:
            found[:] = self.find_windows(pattern, by=by)
            return bool(found)

        self._wait(ready, f"a window named {pattern!r}", timeout)
        return found[-1]

    def geometry(self, wid: int) -> Geometry:
        # xwininfo, not `xdotool getwindowgeometry`: under a reparenting window manager
        # the latter reports the client's position inside its frame.
        out = self._run("xwininfo", "-id", str(wid))
        values = dict(re.findall(r"^\s*([A-Za-z -]+):\s+(-?\d+)$", out, re.M))
        return Geometry(
            int(values["Absolute upper-left X"]),
            int(values["Absolute upper-left Y"]),
            int(values["Width"]),
            int(values["Height"]),
        )

    def move(self, wid: int, x: int, y: int, timeout: float = 10.0) -> Geometry:
        """Put a window's client area at (x, y) and wait until it is there."""
        deadline = time.monotonic() + timeout
        target = (x, y)  # where the frame goes: the WM places the frame, not the client
        geometry = self.geometry(wid)
        while (geometry.x, geometry.y) != (x, y) and time.monotonic() < deadline:
            # No --sync: it waits for a move that never comes when nothing has to move.
            self._run("xdotool", "windowmove", str(wid), str(target[0]), str(target[1]))
            before, settle_by = geometry, time.monotonic() + 1.0
            while geometry == before and time.monotonic() < settle_by:
                time.sleep(0.03)
                geometry = self.geometry(wid)
            target = (target[0] + x - geometry.x, target[1] + y - geometry.y)
        return geometry

    def activate(self, wid: int) -> None:
        self._run("xdotool", "windowactivate", str(wid))
        deadline = time.monotonic() + 5
        while self.active_window() != wid and time.monotonic() < deadline:
            time.sleep(0.05)

    def active_window(self) -> int | None:
        out = self._run("xdotool", "getactivewindow")
        return int(out) if out.isdigit() else None

    def pointer(self, x: int, y: int) -> None:
        self._run("xdotool", "mousemove", str(x), str(y))

    def settle(self, quiet: float = 0.4, timeout: float = 10.0) -> None:
        """Wait until the screen outside the panel stops changing for `quiet` seconds."""
        import mss

        w, h = self.size
        region = {"left": 0, "top": 0, "width": w, "height": h - PANEL_HEIGHT}
        with mss.MSS() as grabber:
            last = bytes(grabber.grab(region).raw)
            still_since = time.monotonic()
            deadline = still_since + timeout
            while time.monotonic() < deadline:
                time.sleep(0.05)
                now = bytes(grabber.grab(region).raw)
                if now != last:
                    last, still_since = now, time.monotonic()
                elif time.monotonic() - still_since >= quiet:
                    return


def terminate(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
