"""Recording names: what a store accepts as one (a file name of its own, never hidden,
never an option, never the store's bookkeeping)."""

from __future__ import annotations

import re

from mmcli.errors import InvalidName

NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
MAX_NAME = 100
SUFFIX = ".toml"


def validate_name(name: str) -> str:
    """Return `name` if it is a valid recording name, else raise `InvalidName`."""
    shown = name if len(name) <= 40 else name[:40] + "..."
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidName(
            f"invalid recording name {shown!r}: use letters, digits, '.', '_' and '-' only"
        )
    if len(name) > MAX_NAME:
        raise InvalidName(f"recording name too long ({len(name)} > {MAX_NAME} characters)")
    if name.startswith("."):
        raise InvalidName(
            f"invalid recording name {shown!r}: it must not start with '.' (the file would be "
            "hidden); start with a letter or digit"
        )
    if name.startswith("-"):
        raise InvalidName(
            f"invalid recording name {shown!r}: it must not start with '-' (a command line "
            "would read it as an option); start with a letter or digit"
        )
    # NAME/ holds a recording's thumbnails: a name ending in .toml would share its folder
    # with another recording's file, and .mm/ is the store's own bookkeeping.
    if name.endswith(SUFFIX) or name == ".mm":
        raise InvalidName(
            f"invalid recording name {name!r}: '.mm' and names ending in '{SUFFIX}' are reserved"
        )
    return name


def is_valid_name(name: str) -> bool:
    """Whether `name` is a recording name `validate_name` accepts (for listings)."""
    try:
        validate_name(name)
    except InvalidName:
        return False
    return True
