"""The X DAMAGE extension, enough to learn when and where the screen changes.

Not every python-xlib release has `Xlib.ext.damage`; these are the three requests this
needs, in its request language. A `ScreenWatch` holds its own X connection with a damage
object on the root window: the server then sends an event for every drawing to the
screen, as it happens, with the rectangle drawn (which `ChangeLog.note` weighs against the
quiet zones: a change wholly inside what changes alone is not one).
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import threading
from typing import Any

from Xlib import display as xdisplay
from Xlib.protocol import rq

from mmcli.backends.base import ChangeLog
from mmcli.screen.fingerprint import Rect

EXTENSION = "DAMAGE"
REPORT_RAW_RECTANGLES = 0
"""A report for every drawing operation, with no need to acknowledge it (DamageSubtract)."""
READ_TIMEOUT = 0.1
"""How often the reader thread looks whether it should stop."""


class _QueryVersion(rq.ReplyRequest):
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(0),
        rq.RequestLength(),
        rq.Card32("major_version"),
        rq.Card32("minor_version"),
    )
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card32("major_version"),
        rq.Card32("minor_version"),
        rq.Pad(16),
    )


class _Create(rq.Request):
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(1),
        rq.RequestLength(),
        rq.Card32("damage"),
        rq.Drawable("drawable"),
        rq.Card8("level"),
        rq.Pad(3),
    )


class _Destroy(rq.Request):
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(2),
        rq.RequestLength(),
        rq.Card32("damage"),
    )


def notify_area(wire: bytes) -> Rect | None:
    """The area of a DamageNotify event as sent (32 bytes: type, level, sequence
    number, drawable, damage, timestamp, then the area: x, y as INT16, width, height as
    CARD16); None for fewer bytes."""
    if len(wire) < 24:
        return None
    x, y, w, h = struct.unpack("=hhHH", bytes(wire[16:24]))
    return Rect(x, y, w, h)


class ScreenWatch:
    """Notes every change to the screen in a `ChangeLog`, from the X server's reports
    (DAMAGE on the root window, on a connection of its own read by a daemon thread).

    Raises `RuntimeError` (or an Xlib error) when the display has no DAMAGE extension.
    """

    def __init__(self, log: ChangeLog, name: str | None = None) -> None:
        self.log = log
        self._display: Any = xdisplay.Display(name)
        try:
            info = self._display.query_extension(EXTENSION)
            if info is None or not info.present:
                raise RuntimeError("the display has no DAMAGE extension")
            self._opcode = info.major_opcode
            self._notify = info.first_event  # DamageNotify
            _QueryVersion(
                display=self._display.display,
                opcode=self._opcode,
                major_version=1,
                minor_version=1,
            )
            self._damage = self._display.display.allocate_resource_id()
            _Create(
                display=self._display.display,
                opcode=self._opcode,
                damage=self._damage,
                drawable=self._display.screen().root,
                level=REPORT_RAW_RECTANGLES,
            )
            self._display.sync()
        except Exception:
            self._display.close()
            raise
        self._closing = False
        self._wake_r, self._wake_w = os.pipe()
        """`close` writes here to end the reader's wait at once."""
        self.broken = False
        """The connection failed: changes are no longer reported."""
        self._thread = threading.Thread(target=self._read, name="mm-damage", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        d = self._display
        try:
            while not self._closing:
                select.select([d.fileno(), self._wake_r], [], [], READ_TIMEOUT)
                areas: list[Rect] | None = []
                reports = 0
                while d.pending_events():
                    area = self._area(d.next_event())
                    reports += 1
                    if areas is not None and area is not None:
                        areas.append(area)
                    else:
                        areas = None  # a report that says not where: the change counts
                if reports:
                    self.log.note(reports, areas)
        except Exception:  # the display went away: say so, settle falls back to sampling
            self.broken = True

    def _area(self, event: Any) -> Rect | None:
        """Where a DamageNotify says the screen changed. A python-xlib with
        `Xlib.ext.damage` parses it; from any other the area is read from the event's 32
        bytes as sent (`_binary`, kept by every parsed event). 0.15 (python3-xlib) has no
        `Xlib.ext.damage`, and its RANDR module takes RANDR's first event code + 2 for
        its own, DAMAGE's on Xvfb: the event comes parsed as a RANDR one, no area in it."""
        if event.type & 0x7F != self._notify:
            return None
        area = getattr(event, "area", None)
        if area is not None:
            return Rect(area.x, area.y, area.width, area.height)
        return notify_area(getattr(event, "_binary", b""))

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self._thread.join(READ_TIMEOUT * 5)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(Exception):  # the display is gone already
            _Destroy(display=self._display.display, opcode=self._opcode, damage=self._damage)
            self._display.close()
