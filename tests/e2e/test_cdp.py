"""A browser's page as the display, through its DevTools (`--display cdp://HOST:PORT`), with
the real `mm` and a headless Chromium from Debian on the example web form
(`examples/web_form.py`): an agent acting through `mm act` is recorded with a param, the
recording replays `--no-agent` with another value (the server receives it), refuses a
DOM dialog over the form and the page's own `alert()` (nothing submitted), and a heal on
the DOM dialog is learned and then replayed from memory with no agent run. No X display
is used: DISPLAY is unset for every `mm` run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.web_form import MODAL, POINTS, Browser, FormServer
from mmcli.backends import open_backend

pytestmark = pytest.mark.e2e

MM = [sys.executable, "-m", "mmcli"]
STAY = (208, 180)
"""The middle of the DOM dialog's "Stay signed in" button."""


class Web:
    """The example web form and a headless Chromium on it, restarted per scenario."""

    def __init__(self, workdir: Path) -> None:
        self.out = workdir / "submitted.jsonl"
        self.server: FormServer | None = None
        self.browser: Browser | None = None
        self.scale = 1.0
        """Device pixels per CSS pixel of the browsers started."""
        self.display: str | None = None
        """The X display the browsers are started on (headful); None: headless."""

    def start(self, modal: bool = False, alert: bool = False, at_load: bool = False) -> str:
        self.stop()
        self.server = FormServer(self.out, modal=modal, alert=alert, alert_at_load=at_load)
        self.browser = Browser(self.server.url, scale=self.scale, display=self.display)
        return self.browser.address

    def records(self) -> list[dict[str, str]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines()]

    def stop(self) -> None:
        if self.browser is not None:
            self.browser.close()
        if self.server is not None:
            self.server.close()
        self.browser = self.server = None


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Web]:
    w = Web(tmp_path)
    yield w
    w.stop()


def mm(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MM_DISPLAY")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [*MM, "--store", str(store), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def fill(close_modal: bool = False) -> str:
    """An agent acting through `mm act`: the name from its param, the city, Save."""
    (nx, ny), (cx, cy), (sx, sy) = POINTS["name"], POINTS["city"], POINTS["save"]
    first = f"mm act click {STAY[0]} {STAY[1]} && " if close_modal else ""
    return (
        f'{first}mm act click {nx} {ny} && mm act type "$MM_PARAM_NAME" && '
        f"mm act click {cx} {cy} && mm act type Paris && mm act click {sx} {sy}"
    )


def record(store: Path, address: str, agent: str) -> subprocess.CompletedProcess[str]:
    return mm(
        store, "record", "web", "--display", address, "--param", "name=Ada", "--",
        "sh", "-c", agent,
    )  # fmt: skip


def test_the_points_are_the_page_s_own(web: Web) -> None:
    with open_backend(web.start(modal=True)) as backend:
        for name, (x, y) in [*POINTS.items(), ("modal", STAY)]:
            where = "#modal button" if name == "modal" else f"#{name}"
            box = backend._evaluate(  # type: ignore[attr-defined]
                f"(() => {{ const r = document.querySelector({where!r})"
                ".getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()"
            )
            assert box[0] < x < box[2] and box[1] < y < box[3], (name, box)
    assert "Stay signed in" in MODAL


def test_recorded_through_devtools_replayed_with_another_value_and_refused_on_dialogs(
    web: Web, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    result = record(store, web.start(), fill())
    assert result.returncode == 0, result.stderr
    assert "recorded 'web': 5 steps" in result.stderr
    assert web.records() == [{"name": "Ada", "city": "Paris"}]

    address = web.start()
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Grace",
                "--no-agent", "--timeout", "3", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verified"] is True  # read back from the page
    assert web.records()[-1] == {"name": "Grace", "city": "Paris"}

    address = web.start(modal=True)  # a DOM dialog over the form
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Lin",
                "--no-agent", "--timeout", "2")  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "diverged at step 1" in result.stderr and "covers the click target" in result.stderr

    address = web.start(alert=True)  # the page's own alert() once the click focused Name
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Lin",
                "--no-agent", "--timeout", "2")  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "diverged at step 2" in result.stderr

    address = web.start(at_load=True)  # an alert() that holds the page before mm connects
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Lin",
                "--no-agent", "--timeout", "2")  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "a dialog of its own (alert, confirm) opened before mm connected" in result.stderr
    assert len(web.records()) == 2  # nothing more submitted


def test_a_heal_on_a_dom_dialog_is_learned_and_replayed_from_memory(
    web: Web, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    assert record(store, web.start(), fill()).returncode == 0

    address = web.start(modal=True)
    healer = f"sh -c {shlex.quote(fill(close_modal=True))}"
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Grace",
                "--agent", healer, "--timeout", "2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert web.records()[-1] == {"name": "Grace", "city": "Paris"}

    address = web.start(modal=True)
    result = mm(store, "replay", "web", "--display", address, "--param", "name=Lin",
                "--no-agent", "--trust-new", "--timeout", "3")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert web.records()[-1] == {"name": "Lin", "city": "Paris"}


def test_input_on_the_local_x_display_fails_the_recording_loudly(web: Web, tmp_path: Path) -> None:
    """The xdotool shim reports its click; on a browser's DevTools it would reach the
    local X display, never the page: the recording fails and nothing is saved."""
    store = tmp_path / "store"
    x, y = POINTS["name"]
    result = record(store, web.start(), f"xdotool mousemove {x} {y} click 1")
    assert result.returncode != 0
    assert "input on the local X display" in result.stderr and "mm act" in result.stderr
    assert not (store / "web.toml").exists()


def test_doctor_checks_a_browser_s_devtools(web: Web, tmp_path: Path) -> None:
    address = web.start()
    result = mm(tmp_path / "store", "doctor", "--display", address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{address} reachable, a 800x" in result.stdout
    gone = f"cdp://127.0.0.1:{web.browser.port if web.browser else 0}"
    web.stop()
    result = mm(tmp_path / "store", "doctor", "--display", gone)
    assert result.returncode != 0
    assert "no DevTools endpoint answers there" in result.stdout + result.stderr
    assert "--remote-debugging-port" in result.stdout + result.stderr


WEB_AGENT = [sys.executable, str(Path(__file__).parents[2] / "examples" / "web_agent.py")]


def recorded_and_replayed(
    web: Web, store: Path, *agent_args: str
) -> subprocess.CompletedProcess[str]:
    """The web agent recorded with name=Ada through MM_CDP_URL, then replayed --no-agent
    with Grace: the server gets each, and the replay's typed values are read back."""
    recorded = mm(store, "record", "web", "--display", web.start(), "--param", "name=Ada",
                  "--", *WEB_AGENT, *agent_args)  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert "recorded 'web': 5 steps" in recorded.stderr
    assert web.records() == [{"name": "Ada", "city": "Paris"}]
    result = mm(store, "replay", "web", "--display", web.start(), "--param", "name=Grace",
                "--no-agent", "--timeout", "3", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verified"] is True
    assert web.records()[-1] == {"name": "Grace", "city": "Paris"}
    return recorded


def test_a_page_at_two_device_pixels_a_css_pixel_is_judged_and_clicked_in_css_pixels(
    web: Web, tmp_path: Path
) -> None:
    """A high-density screen (devicePixelRatio 2), recorded with Playwright: an agent's
    DevTools input is in CSS pixels, and mm keeps the page's screen at one pixel a CSS
    pixel, so a recorded click is the page's own point on the screen mm judges; replay's
    clicks land on the fields (the server gets the new value) and a DOM dialog over the
    first target is refused. (The browser is started with
    `--disable-font-subpixel-positioning`: docs/cdp.md.)"""
    web.scale = 2.0
    store = tmp_path / "store"
    recorded_and_replayed(web, store)
    with open_backend(web.start()) as backend:
        evaluate = backend._evaluate  # type: ignore[attr-defined]
        assert evaluate("window.devicePixelRatio") == 2
        frame = backend.grab()
        css = (evaluate("window.innerWidth"), evaluate("window.innerHeight"))
        assert backend.size() == (frame.width, frame.height) == css

    result = mm(store, "replay", "web", "--display", web.start(modal=True), "--param",
                "name=Lin", "--no-agent", "--timeout", "2")  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "covers the click target" in result.stderr
    assert len(web.records()) == 2


def test_a_headful_browser_on_a_desktop_is_driven_through_its_devtools_alone(
    web: Web, tmp_path: Path
) -> None:
    """Chromium with a window on an X desktop (openbox), not headless: the page is the
    display all the same, recorded with an agent acting through `mm act` and replayed
    with another value; nothing is given to the X display (the pointer stays where it
    was, the window is never clicked)."""
    from tests.desktop import Desktop
    from tests.desktop import x as run_x

    with Desktop() as desktop:
        web.display = desktop.display
        pointer = run_x("xdotool", "getmouselocation", display=desktop.display).stdout
        store = tmp_path / "store"
        recorded = record(store, web.start(), fill())
        assert recorded.returncode == 0, recorded.stderr
        assert web.records() == [{"name": "Ada", "city": "Paris"}]
        result = mm(store, "replay", "web", "--display", web.start(), "--param",
                    "name=Grace", "--no-agent", "--timeout", "3")  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert web.records()[-1] == {"name": "Grace", "city": "Paris"}
        windows = run_x("xdotool", "search", "--onlyvisible", "--class", "chromium",
                        display=desktop.display)  # fmt: skip
        assert windows.stdout.split(), "no Chromium window on the desktop: not headful"
        assert run_x("xdotool", "getmouselocation", display=desktop.display).stdout == pointer
        web.stop()


def test_a_playwright_agent_is_recorded_through_its_endpoint_and_heals_a_dialog(
    web: Web, tmp_path: Path
) -> None:
    """Playwright's connect_over_cdp on MM_CDP_URL, unmodified: recorded with a param,
    replayed --no-agent with another value (read back from the page), refused on the DOM
    dialog, healed by the same agent (it closes the dialog), then replayed from memory on
    the dialog with no agent run."""
    store = tmp_path / "store"
    recorded = recorded_and_replayed(web, store)
    assert "the agent's DevTools endpoint: http://127.0.0.1:" in recorded.stderr
    refused_healed_and_remembered(web, store)


def refused_healed_and_remembered(web: Web, store: Path) -> None:
    """After `recorded_and_replayed`: refused --no-agent on the DOM dialog (nothing
    submitted), healed by the recorded agent (it closes the dialog), then replayed from
    memory on the dialog with no agent run."""
    result = mm(store, "replay", "web", "--display", web.start(modal=True), "--param",
                "name=Lin", "--no-agent", "--timeout", "2")  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "covers the click target" in result.stderr
    assert len(web.records()) == 2

    result = mm(store, "replay", "web", "--display", web.start(modal=True), "--param",
                "name=Lin", "--timeout", "2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert web.records()[-1] == {"name": "Lin", "city": "Paris"}

    result = mm(store, "replay", "web", "--display", web.start(modal=True), "--param",
                "name=Kay", "--no-agent", "--trust-new", "--timeout", "3")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert web.records()[-1] == {"name": "Kay", "city": "Paris"}


def test_the_endpoint_refuses_another_user_s_connection(web: Web, tmp_path: Path) -> None:
    """DevTools has no authentication: the agent's endpoint serves its own user only.
    A process of another user (nobody) asking it for the browser's discovery gets 403;
    the agent itself is recorded as usual, with a warning naming the refusal."""
    if os.getuid() != 0:
        pytest.skip("needs root to run a client as another user")
    code = tmp_path / "code.txt"
    probe = (
        'runuser -u nobody -- python3 -c "import os, urllib.request, urllib.error\n'
        "try:\n urllib.request.urlopen(os.environ['MM_CDP_URL'] + '/json/version'); print(200)\n"
        'except urllib.error.HTTPError as e: print(e.code)" > ' + shlex.quote(str(code))
    )
    agent = f"{probe}; {shlex.join(WEB_AGENT)}"
    result = mm(tmp_path / "store", "record", "web", "--display", web.start(), "--param",
                "name=Ada", "--", "sh", "-c", agent)  # fmt: skip
    assert code.read_text().strip() == "403"
    assert result.returncode == 0, result.stderr
    assert "a connection from uid 65534, not this user's: refused" in result.stderr
    assert web.records() == [{"name": "Ada", "city": "Paris"}]


def test_a_selenium_agent_is_recorded_through_its_endpoint_and_heals_a_dialog(
    web: Web, tmp_path: Path
) -> None:
    """selenium attached with `debuggerAddress` (MM_CDP_URL without its scheme), through
    Debian's chromedriver: recorded with a param, replayed --no-agent with another value,
    refused on the DOM dialog, healed by the same agent, then replayed from memory."""
    store = tmp_path / "store"
    recorded_and_replayed(web, store, "--driver", "selenium")
    refused_healed_and_remembered(web, store)


SECRET = "zq7vw4-kx9p"


def test_a_secret_typed_through_devtools_leaks_nowhere(
    web: Web, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Playwright agent types a secret into City, a plain text field that shows it:
    the thumbnails kept have no text left in that field (checked in pixels), and no piece
    of it is in the store or any output; the recording replays it from memory."""
    import numpy as np
    from PIL import Image

    from mmcli.screen.fingerprint import SCALE
    from mmcli.screen.paint import PAINT
    from mmcli.store.recordings import Store

    monkeypatch.setenv("MM_SECRET_CITY", SECRET)
    store = tmp_path / "store"
    recorded = mm(store, "record", "web", "--display", web.start(), "--param", "name=Ada",
                  "--secret", "city", "--", *WEB_AGENT)  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert web.records() == [{"name": "Ada", "city": SECRET}]

    rec = Store(store).load("web")
    assert [s.action.text for s in rec.steps if s.action.text] == ["{{name}}", "{{city}}"]

    def ink(step: int, field: str) -> int:
        """Pixels of the field's text in the step's thumbnail: neither the field's white
        nor the paint over a secret."""
        x, y = POINTS[field]
        x0, y0, x1, y1 = (x - 120) // SCALE, (y - 9) // SCALE, (x + 120) // SCALE, (y + 9) // SCALE
        image = Image.open(Store(store).thumbs.folder("web") / str(rec.steps[step].thumbnail))
        pixels = np.asarray(image.convert("RGB"))[y0:y1, x0:x1].astype(int)
        white = np.abs(pixels - 255).max(axis=-1) > 40
        paint = np.abs(pixels - np.array(PAINT)).max(axis=-1) > 40
        return int((white & paint).sum())

    assert ink(4, "city") == 0, "the secret is visible in the thumbnail of the click on Save"
    assert ink(4, "name") > 0  # "Ada" is drawn there: the check sees a field's text
    replayed = mm(store, "replay", "web", "--display", web.start(), "--param", "name=Kay",
                  "--secret", "city", "--no-agent", "--json")  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    assert web.records()[-1] == {"name": "Kay", "city": SECRET}
    assert "type '{{city}}'" in replayed.stderr

    outputs = [recorded.stdout, recorded.stderr, replayed.stdout, replayed.stderr]
    pieces = {SECRET[i : i + 4] for i in range(len(SECRET) - 3)}
    assert [p for p in pieces if any(p in o for o in outputs)] == []
    files = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert [p for p in pieces if p.encode() in files] == []


def test_a_form_submitted_by_script_fails_the_recording(web: Web, tmp_path: Path) -> None:
    """The agent types, then submits the form with script (no input): replay would not
    submit it, so the recording fails saying so, and nothing is saved."""
    store = tmp_path / "store"
    result = mm(store, "record", "web", "--display", web.start(), "--param", "name=Ada",
                "--", *WEB_AGENT, "--script-submit")  # fmt: skip
    assert result.returncode != 0, result.stderr
    assert "the page went to another document with no input from the agent" in result.stderr
    assert web.records() == [{"name": "Ada", "city": "Paris"}]  # the agent did submit
    assert not (store / "web.toml").exists()


def test_input_to_another_tab_fails_the_recording(web: Web, tmp_path: Path) -> None:
    """The agent fills the form in a tab it opened: mm drives (and keeps the screens of)
    the first page only, so the recording fails saying so, and nothing is saved."""
    store = tmp_path / "store"
    result = mm(store, "record", "web", "--display", web.start(), "--param", "name=Ada",
                "--", *WEB_AGENT, "--new-tab")  # fmt: skip
    assert result.returncode != 0, result.stderr
    assert "input to another tab or window of the browser" in result.stderr
    assert not (store / "web.toml").exists()
