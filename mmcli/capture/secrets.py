"""Keeping secret values out of everything `mm` writes or prints.

Typed text is redacted where the steps are made: consecutive keyboard actions are joined
into one `type` action first (`join_keystrokes`), so that a secret typed in pieces or
key by key becomes one string the placeholder replaces. What is left is checked before a
recording is saved (`find_leak`): a secret value, or any piece of one of at least
`params.FRAGMENT` characters, in typed text or keys stops the save (so does a whole value in the
command). Progress lines hide typed text and keys that are pieces of a secret
(`describe`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from mmcli.errors import SecretLeak
from mmcli.model import PLACEHOLDER, Action, ActionKind, Recording
from mmcli.params import leaked_in, parametrize

KEYBOARD_TEXT = {ActionKind.TYPE, ActionKind.PRESS}


def typed_text(action: Action) -> str | None:
    """The text a keyboard action types, when it only types printable characters: `type`,
    or `press` of single-character keys (pyautogui's `press('4')`, `press(['4', '7'])`).
    None for anything else (enter, a hotkey, a click)."""
    if action.kind is ActionKind.TYPE:
        return action.text
    printable = all(len(k) == 1 and k.isprintable() for k in action.keys)
    if action.kind is ActionKind.PRESS and action.keys and printable:
        return "".join(action.keys) * max(action.clicks, 1)
    return None


def join_keystrokes(actions: Sequence[Action]) -> list[list[int]]:
    """Indices of `actions` grouped: each run of consecutive text-typing keyboard actions
    (no pointer or other key between them) is one group; every other action is alone."""
    groups: list[list[int]] = []
    for i, action in enumerate(actions):
        if typed_text(action) is not None and groups and _typing(actions[groups[-1][-1]]):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _typing(action: Action) -> bool:
    return typed_text(action) is not None


def joined(actions: Sequence[Action]) -> Action:
    """One `type` action typing what `actions` (one group) typed, in order."""
    if len(actions) == 1 and actions[0].kind is ActionKind.TYPE:
        return actions[0]
    text = "".join(typed_text(a) or "" for a in actions)
    return Action(ActionKind.TYPE, text=text)


def _typed(recording: Recording) -> Iterable[tuple[str, str]]:
    """(where, text) for every text the recording keeps that typing filled in: a piece
    of a secret there was typed (the command's own text is checked for whole values
    only: a path like `examples/` shares pieces with many a secret by chance)."""
    run = ""
    for n, step in enumerate(recording.steps, 1):
        action = step.action
        typed = typed_text(action)
        if typed is not None:
            run += typed
            yield f"step {n}", typed
            yield f"step {n} and the keys typed before it", run
        else:
            run = ""
        # A key's name ("enter", "tab") is not text it typed: only keys that type one
        # character (a hotkey's "c") could spell a piece of a secret.
        keyed = "".join(k for k in action.keys if len(k) == 1)
        if keyed:
            yield f"step {n}", keyed
        if step.landed is not None and step.landed.text:
            yield f"step {n}'s field as read back", step.landed.text


def find_leak(recording: Recording, secrets: Mapping[str, str]) -> None:
    """Raise `SecretLeak` (naming the secret's key, never its value) when the recording
    still holds a secret value or a piece of one."""
    if not secrets:
        return
    for where, text in _typed(recording):
        key = leaked_in(text, secrets)
        if key is not None:
            raise SecretLeak(
                f"{where} of {recording.name!r} still holds (part of) the secret {key!r}, "
                "typed in a way mm could not replace with a placeholder; nothing was saved "
                "(type the secret in one go, or key by key with no other action between)"
            )
    for arg in recording.command:
        for key, value in secrets.items():
            if value and value in arg:
                raise SecretLeak(f"the agent command still holds the secret {key!r}")


def describe(action: Action, values: Mapping[str, str], secrets: Mapping[str, str]) -> str:
    """`action.describe()` with param and secret values as placeholders, and typed text
    or keys that are a piece of a secret hidden."""
    if action.kind is ActionKind.TYPE:
        action = replace(action, text=parametrize(action.text, values))
    typed = typed_text(action)
    if typed is None and all(len(k) == 1 for k in action.keys):
        typed = "".join(action.keys)  # a hotkey of characters
    if typed is not None and secrets:
        bare = PLACEHOLDER.sub("", typed)
        if bare and (leaked_in(bare, secrets) or any(bare in v for v in secrets.values() if v)):
            return f"{action.kind} (hidden: part of a secret)"
    return action.describe()
