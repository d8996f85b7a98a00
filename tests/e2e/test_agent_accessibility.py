"""The apps an agent starts expose their accessibility tree, so typed values are read from
it (`readback.expose`), on a real X display with openbox, a session bus and the AT-SPI
bus (`tests/accessibility.py`).

A shell agent starts a Java Swing form (OpenJDK and its ATK bridge from Debian) and
types a name into it with `xdotool`. No JVM loads the bridge by default, so the name was
read by OCR when recorded. `mm` now gives the agent what its apps need where the display
has a bus: the name is read from Swing's tree, and read so again at replay.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.desktop.display import ensure_xauthority
from mmcli.readback.expose import ATK_WRAPPER_JARS
from tests.accessibility import AccessibilityBus, missing
from tests.desktop import Desktop, need
from tests.e2e.conftest import mm

pytestmark = pytest.mark.e2e

FORM = Path(__file__).parents[2] / "benchmarks" / "desktop" / "assets" / "SwingForm.java"
TITLE = "Person (Java)"


@pytest.fixture
def a11y(monkeypatch: pytest.MonkeyPatch) -> Iterator[AccessibilityBus]:
    with Desktop() as desktop, AccessibilityBus(desktop.display) as bus:
        monkeypatch.setenv("DISPLAY", desktop.display)
        monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
        ensure_xauthority()
        yield bus


def test_a_swing_form_the_agent_starts_is_read_from_its_tree(
    a11y: AccessibilityBus, tmp_path: Path, isolated_store: Path
) -> None:
    need("java", "javac")
    if not any(jar.is_file() for jar in ATK_WRAPPER_JARS):
        missing("the Java ATK bridge (libatk-wrapper-java)")
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(FORM)], check=True, timeout=120)
    out = tmp_path / "out.txt"
    agent = tmp_path / "agent.sh"
    agent.write_text(
        f"java -cp {classes} SwingForm --out {out} >/dev/null 2>&1 &\n"
        f'xdotool search --sync --name "^Person \\(Java\\)$" >/dev/null\n'
        "sleep 2\n"  # the Name field focused, the tree registered
        'xdotool type --delay 20 "$1"\n'
        "sleep 0.5\n"
        "xdotool key Tab\n"
    )
    try:
        recorded = mm("record", "swing", "--observe", "0", "--param", "name=Ada Lovelace",
                      "--", "sh", str(agent), "Ada Lovelace")  # fmt: skip
        assert recorded.returncode == 0, recorded.stderr
    finally:
        subprocess.run(["pkill", "-f", "SwingForm"])
    doc = tomllib.loads((isolated_store / "swing.toml").read_text())
    landed = [s["landed"] for s in doc["steps"] if "landed" in s]
    assert landed and landed[0]["source"] == "accessibility", landed
    assert landed[0]["text"] == "{{name}}"

    # Replayed on a form started without the bridge (as a user's script might): its
    # field is read by OCR where the tree recorded it, and the value still verified.
    form = subprocess.Popen(["java", "-cp", str(classes), "SwingForm", "--out", str(out)],
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        subprocess.run(["xdotool", "search", "--sync", "--name", "^Person \\(Java\\)$"],
                       timeout=60, capture_output=True, check=True)  # fmt: skip
        replayed = mm("replay", "swing", "--no-agent", "--param", "name=Grace Hopper",
                      "--json", "--timeout", "10")  # fmt: skip
    finally:
        form.kill()
    assert replayed.returncode == 0, replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["verified"] is True, report["unverified"]
