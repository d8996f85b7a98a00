"""The example world on a real Xvfb: loan_form.py driven by loan_agent.py through pyautogui."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.examples.conftest import AGENT, APP, LoanForm, run_agent

JOHN = {
    "name": "John",
    "email": "john@example.com",
    "amount": 1200,
    "urgent": False,
    "product": "Auto",
}


def without_ts(record: dict[str, Any]) -> dict[str, Any]:
    assert record.pop("ts")
    return record


def window(layout: dict[str, Any], title: str) -> dict[str, Any]:
    return next(w for w in layout["windows"] if w["title"] == title)


def widget(win: dict[str, Any], ident: str) -> dict[str, Any]:
    return next(w for w in win["widgets"] if w["id"] == ident)


def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


# ----- on Xvfb -------------------------------------------------------------------


def test_agent_fills_clean_form(loan_form: LoanForm) -> None:
    loan_form.start()
    result = run_agent(loan_form, "--urgent")
    assert result.returncode == 0
    assert [without_ts(r) for r in loan_form.records()] == [{**JOHN, "urgent": True}]
    assert "agent: typing Name" in result.stderr
    # OK cleared the form for a next record; no dialog is left open.
    wait_for(lambda: len(loan_form.layout()["windows"]) == 1)
    form = window(loan_form.layout(), "Acme Loan Intake")
    assert widget(form, "name")["text"] == ""
    assert widget(form, "urgent")["checked"] is False
    # SIGTERM ends the app cleanly and withdraws its accessibility tree.
    assert loan_form.stop() == 0
    assert not loan_form.layout_path.exists()


def test_agent_dismisses_notice_then_submits_once(loan_form: LoanForm) -> None:
    loan_form.start("--popup-at-start", "--clock", "--error-label")
    layout = loan_form.layout()
    form, notice = window(layout, "Acme Loan Intake"), window(layout, "Notice")
    assert notice["modal"] and not form["modal"]
    # Without a window manager the app centers the dialog over the form itself.
    assert abs((notice["x"] + notice["w"] / 2) - (form["x"] + form["w"] / 2)) <= 2
    assert abs((notice["y"] + notice["h"] / 2) - (form["y"] + form["h"] / 2)) <= 2
    assert widget(form, "error")["text"] == "Warning: server unreachable"
    result = run_agent(loan_form)
    assert result.returncode == 0
    assert "dismissing dialog 'Notice'" in result.stderr
    assert [without_ts(r) for r in loan_form.records()] == [JOHN]


def test_agent_follows_moved_window(loan_form: LoanForm) -> None:
    loan_form.start("--position", "400,300", "--submit-offset", "120,10")
    form = window(loan_form.layout(), "Acme Loan Intake")
    assert (form["x"], form["y"]) == (400, 300)
    assert run_agent(loan_form).returncode == 0
    assert [without_ts(r) for r in loan_form.records()] == [JOHN]


def test_agent_replaces_prefilled_text(loan_form: LoanForm) -> None:
    loan_form.start("--prefill", "name=Bob", "--prefill", "amount=99", "--focus", "email")
    result = run_agent(loan_form)
    assert result.returncode == 0
    assert [without_ts(r) for r in loan_form.records()] == [JOHN]


def test_agent_on_open_confirmation_only_clicks_ok(loan_form: LoanForm) -> None:
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool not installed: needed to submit once behind the agent's back")
    loan_form.start("--prefill", "name=Ann", "--prefill", "amount=5")
    form = window(loan_form.layout(), "Acme Loan Intake")
    for ident in ("product_home", "submit"):
        w = widget(form, ident)
        x, y = w["x"] + w["w"] // 2, w["y"] + w["h"] // 2
        subprocess.run(
            ["xdotool", "mousemove", str(x), str(y), "click", "1"], env=loan_form.env, check=True
        )
        time.sleep(0.2)
    wait_for(lambda: any(w["modal"] for w in loan_form.layout()["windows"]))
    assert len(loan_form.records()) == 1
    result = run_agent(loan_form)
    assert result.returncode == 0
    assert "closing the confirmation" in result.stderr
    assert "typing" not in result.stderr
    assert [r["name"] for r in loan_form.records()] == ["Ann"]
    assert len(loan_form.layout()["windows"]) == 1


def test_agent_refuses_other_form(loan_form: LoanForm) -> None:
    loan_form.start("--variant", "other")
    form = window(loan_form.layout(), "Acme Loan Intake")
    assert widget(form, "heading")["text"] == "Acme Account Closure"
    result = run_agent(loan_form)
    assert result.returncode == 3
    assert "not the loan form" in result.stderr
    assert loan_form.records() == []


def test_agent_refuses_disabled_submit(loan_form: LoanForm) -> None:
    loan_form.start("--disable-submit")
    result = run_agent(loan_form)
    assert result.returncode == 3
    assert "Submit button is disabled" in result.stderr
    assert loan_form.records() == []


def test_env_parameters_override_arguments(loan_form: LoanForm) -> None:
    loan_form.start("--notice-elsewhere")
    env = {"MM_PARAM_NAME": "Alice", "MM_PARAM_PRODUCT": "Personal", "MM_PARAM_URGENT": "true"}
    assert run_agent(loan_form, env=env).returncode == 0
    assert [without_ts(r) for r in loan_form.records()] == [
        {**JOHN, "name": "Alice", "product": "Personal", "urgent": True}
    ]


def test_agent_without_layout_fails(loan_form: LoanForm) -> None:
    # No app started: after its 10 s wait the agent gives up with exit 1.
    start = time.monotonic()
    assert run_agent(loan_form).returncode == 1
    assert time.monotonic() - start >= 9


PUBLISH_AT_ONCE = """
import sys, tkinter as tk
sys.path.insert(0, sys.argv[1])
import loan_form
root = tk.Tk()
opts = loan_form.parse_args(["--out", sys.argv[2], "--layout", sys.argv[3]])
app = loan_form.LoanFormApp(root, opts)
root.update()
app.open_dialog("Notice", "Hello", on_ok=lambda: None)
app.publish()  # a timer firing before the idle work that maps the dialog's children
"""


def test_a_dialog_is_published_with_its_buttons_at_once(
    x_env: dict[str, str], tmp_path: Path
) -> None:
    layout = tmp_path / "layout.json"
    script = [
        sys.executable,
        "-c",
        PUBLISH_AT_ONCE,
        str(APP.parent),
        str(tmp_path / "out"),
        str(layout),
    ]
    subprocess.run(script, env=x_env, check=True, timeout=30)
    notice = window(json.loads(layout.read_text()), "Notice")
    assert notice["modal"]
    assert [w["id"] for w in notice["widgets"]] == ["message", "ok"]


# ----- offline: the agent's decisions ---------------------------------------------


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("loan_agent", AGENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve postponed annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def entry(label: str, text: str = "", x: int = 0) -> dict[str, Any]:
    return {
        "role": "entry",
        "label": label,
        "text": text,
        "state": "normal",
        "id": label.lower(),
        "x": x,
        "y": 10,
        "w": 100,
        "h": 20,
    }


def fake_form(**texts: str) -> dict[str, Any]:
    widgets = [
        entry(f, texts.get(f.lower(), ""), 100 * i)
        for i, f in enumerate(("Name", "Email", "Amount"))
    ]
    box = {"x": 0, "w": 10, "h": 10}
    widgets += [
        {"role": "checkbox", "label": "Urgent", "checked": False, "y": 50, **box},
        {"role": "radio", "label": "Auto", "checked": False, "y": 70, **box},
        {"role": "button", "label": "Submit", "state": "normal", "y": 90, **box},
    ]
    return {"windows": [{"title": "Acme Loan Intake", "modal": False, "widgets": widgets}]}


def test_decide_triple_clicks_fields_with_other_text(agent: ModuleType) -> None:
    goal = agent.Goal("John", "j@x.org", "1200", "Auto", False)
    act = agent.decide(fake_form(name="John", email="bob@x.org"), goal)
    assert (act.kind, act.target, act.text, act.x) == ("triple_click", "Email", "j@x.org", 150)
    act = agent.decide(fake_form(name="John", email="j@x.org"), goal)
    assert (act.kind, act.target) == ("click", "Amount")


def test_decide_handles_modal_dialogs_first(agent: ModuleType) -> None:
    goal = agent.Goal("John", "", "1", "Auto", False)
    layout = fake_form()
    ok = {"role": "button", "label": "OK", "x": 10, "y": 10, "w": 20, "h": 10}
    message = {"role": "label", "label": "Application saved", "text": "Application saved"}
    layout["windows"].append({"title": "Confirmation", "modal": True, "widgets": [message, ok]})
    assert agent.decide(layout, goal).target == "confirm_ok"
    message["text"] = message["label"] = "Scheduled maintenance tonight"
    assert agent.decide(layout, goal).target == "dialog_ok"


def test_env_wins_over_arguments(agent: ModuleType) -> None:
    args = agent.parse_args(
        ["--layout", "x", "--name", "John", "--amount", "5", "--product", "Home", "--urgent"]
    )
    goal = agent.resolve_goal(args, {"MM_PARAM_NAME": "Eve", "MM_PARAM_URGENT": "0"})
    assert (goal.name, goal.amount, goal.product, goal.urgent) == ("Eve", "5", "Home", False)
    with pytest.raises(agent.Stop):
        agent.resolve_goal(agent.parse_args(["--layout", "x"]), {})
