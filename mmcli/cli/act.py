"""`mm act`: one input action from the command line, reported to the recorder first when
run under `mm record` (the fast path for that case is `cli/fastact.py`)."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from mmcli.cli.options import is_remote, state
from mmcli.cli.parser import MMCommand, MMGroup
from mmcli.errors import MMError, UsageError

act_app = typer.Typer(
    cls=MMGroup,
    help="Perform one input action (recorded when run under mm record).\n\n"
    "Example: mm act click 240 130 && mm act type 'John Smith' && mm act press enter",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _act(action: Any) -> None:
    from mmcli.backends import open_backend
    from mmcli.capture.channel import action_to_json
    from mmcli.hook._mm_record_hook import SOCKET_ENV, RecorderLink

    socket_path = os.environ.get(SOCKET_ENV)
    with open_backend(state["display"]) as backend:
        unknown = [k for k in action.keys if not backend.valid_key(k)]
        if unknown:
            raise UsageError(
                f"unknown key {unknown[0]!r}: use a key name such as enter, tab, esc, "
                "backspace, up, f5, ctrl, a (to type text: mm act type TEXT)"
            )
        # On a remote display (VNC, DevTools) the recorder acts through its own
        # connection, as `mm act`'s fast path has it do on any display; here the keys
        # were checked first.
        op = "perform" if is_remote(state["display"]) else "act"
        if socket_path:
            try:
                RecorderLink(socket_path).send({"op": op, "action": action_to_json(action)})
            except (OSError, RuntimeError) as e:
                raise MMError(f"cannot reach the recorder: {e}") from None
        if not socket_path or op == "act":
            backend.perform(action)


@act_app.command("click", cls=MMCommand)
def act_click(
    x: int,
    y: int,
    button: Annotated[str, typer.Option(help="left, right or middle.")] = "left",
    double: Annotated[bool, typer.Option("--double", help="Double-click.")] = False,
) -> None:
    """Click at X Y.  Example: mm act click 240 130"""
    from mmcli.model import Action, ActionKind

    if button not in ("left", "right", "middle"):
        raise UsageError("--button must be left, right or middle")
    _act(Action(ActionKind.CLICK, x=x, y=y, button=button, clicks=2 if double else 1))


@act_app.command("type", cls=MMCommand)
def act_type(text: str) -> None:
    """Type TEXT.  Example: mm act type 'John Smith'"""
    from mmcli.model import Action, ActionKind

    _act(Action(ActionKind.TYPE, text=text))


@act_app.command("press", cls=MMCommand)
def act_press(key: str) -> None:
    """Press one KEY.  Example: mm act press enter"""
    from mmcli.model import Action, ActionKind

    _act(Action(ActionKind.PRESS, keys=(key,)))


@act_app.command("hotkey", cls=MMCommand)
def act_hotkey(keys: list[str]) -> None:
    """Press KEYS together.  Example: mm act hotkey ctrl s"""
    from mmcli.model import Action, ActionKind

    _act(Action(ActionKind.HOTKEY, keys=tuple(keys)))


@act_app.command("scroll", cls=MMCommand)
def act_scroll(
    amount: int,
    at: Annotated[tuple[int, int] | None, typer.Option(metavar="X Y", help="Where.")] = None,
) -> None:
    """Scroll N clicks (positive: up).  Example: mm act scroll -3 --at 400 300"""
    from mmcli.backends import open_backend
    from mmcli.model import Action, ActionKind

    if at is None:
        with open_backend(state["display"]) as backend:
            at = backend.pointer()
    _act(Action(ActionKind.SCROLL, x=at[0], y=at[1], amount=amount))


@act_app.command("move", cls=MMCommand)
def act_move(x: int, y: int) -> None:
    """Move the pointer to X Y.  Example: mm act move 10 10"""
    from mmcli.model import Action, ActionKind

    _act(Action(ActionKind.MOVE, x=x, y=y))


@act_app.command("drag", cls=MMCommand)
def act_drag(x1: int, y1: int, x2: int, y2: int) -> None:
    """Drag from X1 Y1 to X2 Y2.  Example: mm act drag 100 100 300 100"""
    from mmcli.model import Action, ActionKind

    _act(Action(ActionKind.DRAG, x=x1, y=y1, x2=x2, y2=y2))
