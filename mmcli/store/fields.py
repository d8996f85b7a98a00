"""A TOML document's fields, each read with its type checked: a `ValueError` naming where
the field is (`steps[3].effect`) for anything else. `codec` reads a recording's document
with them; nothing here knows a recording."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported only where a rectangle is read
    from mmcli.screen.fingerprint import Rect

HEX = re.compile(r"[0-9a-fA-F]*")
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
COORDINATE = 1 << 15
"""Screen coordinates are 16-bit signed on X11; anything beyond is not a real position."""


def as_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be an array")
    return value


def as_pair(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{where} must be a pair of numbers")
    return value


def as_rect(value: Any, where: str) -> Rect:
    from mmcli.screen.fingerprint import Rect

    if not isinstance(value, list) or len(value) != 4:
        raise ValueError(f"{where} must be [x, y, width, height]")
    x, y, w, h = (as_int(v, where) for v in value)
    return Rect(x, y, w, h)


def as_int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{where} must be an integer")
    return value


def as_coordinate(value: Any, where: str) -> int:
    number = as_int(value, where)
    if not -COORDINATE < number < COORDINATE:
        raise ValueError(f"{where} is off any screen ({number})")
    return number


def as_hex(value: Any, where: str) -> str:
    text = as_str(value, where)
    if not HEX.fullmatch(text):
        raise ValueError(f"{where} must be hexadecimal digits")
    return text


def is_plain_file_name(text: object) -> bool:
    """A file name in a recording's folder, never a path out of it (no '/', no leading
    '.'): what any file name read from the store (a recording, the history) must be."""
    return isinstance(text, str) and len(text) <= 255 and FILE_NAME.fullmatch(text) is not None


def as_file_name(value: Any, where: str) -> str:
    """A thumbnail's file name: in the recording's folder, never a path out of it."""
    text = as_str(value, where)
    if not is_plain_file_name(text):
        raise ValueError(f"{where} must be a plain file name")
    return text


def as_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string")
    return value


def as_datetime(value: Any, where: str) -> datetime:
    if not isinstance(value, datetime):
        raise ValueError(f"{where} must be a date-time")
    return value if value.tzinfo else value.replace(tzinfo=UTC)
