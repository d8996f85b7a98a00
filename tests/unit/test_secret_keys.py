"""A secret check looks at text a recording keeps that typing filled in, not at the names
of keys: a secret "Hunter2Secret" and a `press enter` step ("enter" holds "nter", a piece
of it) was "step 3 still holds (part of) the secret", exit 1, nothing saved."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mmcli.capture.secrets import find_leak
from mmcli.errors import SecretLeak
from mmcli.model import Action, ActionKind, Landed
from tests.unit.test_replayer import form_recording

SECRETS = {"pw": "Hunter2Secret"}


def with_step(action: Action, landed: Landed | None = None):  # type: ignore[no-untyped-def]
    rec = form_recording()
    rec.steps[2] = replace(rec.steps[2], action=action, landed=landed)
    return rec


@pytest.mark.parametrize(
    "action",
    [
        Action(ActionKind.PRESS, keys=("enter",)),
        Action(ActionKind.HOTKEY, keys=("ctrl", "enter")),
        Action(ActionKind.PRESS, keys=("backspace",), clicks=3),
    ],
    ids=["press-enter", "hotkey", "backspace"],
)
def test_a_keys_name_is_not_typed_text(action: Action) -> None:
    find_leak(with_step(action), SECRETS)  # no SecretLeak


def test_typed_text_keys_and_a_field_read_back_are_checked() -> None:
    with pytest.raises(SecretLeak, match="step 3"):
        find_leak(with_step(Action(ActionKind.TYPE, text="nter2")), SECRETS)
    landed = Landed("accessibility", "was Hunter2Secret")
    with pytest.raises(SecretLeak, match="field as read back"):
        find_leak(with_step(Action(ActionKind.TYPE, text="{{pw}}"), landed), SECRETS)
