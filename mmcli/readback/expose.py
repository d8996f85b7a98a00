"""What the apps an agent launches are told so that they expose their accessibility tree.

A field is read through the tree only where its app registered one on the accessibility
bus when it started (`atspi`); otherwise by OCR, which is slower and cannot tell every
value. GTK registers by itself, and so does Debian 12's Qt 5. A Java Swing app registers
only with the ATK bridge (`java-atk-wrapper`) loaded, which no JVM does by default
(Debian leaves it commented out in `accessibility.properties`): loaded through
`JAVA_TOOL_OPTIONS`, a Swing form's typed "Ada Lovelace" is read from its tree in
10-70 ms, where OCR read it before. Qt 5 builds that wait for the session to say an
assistive technology runs are told `QT_LINUX_ACCESSIBILITY_ALWAYS_ON`. `mm` gives an
agent these settings when the display has a live accessibility bus (a desktop session
runs one), so the apps the agent starts are read from their tree; apps started before
keep what they had. (Chromium needs `--force-renderer-accessibility` on its command
line: no variable gives it, measured.)

Nothing a user set is overridden: a variable already in the agent's environment stays,
`NO_AT_BRIDGE=1` (accessibility off on purpose) turns all of it off, and Java options
that name their own assistive technology are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mmcli.readback.atspi import Unavailable, find_bus
from mmcli.readback.bus import Bus, BusError

ATK_WRAPPER_JARS = (
    Path("/usr/share/java/java-atk-wrapper.jar"),  # Debian, Ubuntu (libatk-wrapper-java)
    Path("/usr/lib/java-atk-wrapper/java-atk-wrapper.jar"),  # Fedora
)
"""Where distributions install the Java ATK bridge's classes."""
ATK_WRAPPER = "org.GNOME.Accessibility.AtkWrapper"
BUS_TIMEOUT = 0.3
"""Seconds to reach the accessibility bus before the agent starts without these."""
SWITCHES = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"}
"""Qt 5: register the tree whatever the session says."""


def exposing_env(
    display: str,
    environ: Mapping[str, str],
    jars: tuple[Path, ...] | None = None,
) -> dict[str, str]:
    """The variables to add to an agent's environment (`environ`: what it gets already)
    so that apps it starts on X display `display` expose their tree; none where the
    display has no accessibility bus or the user turned accessibility off."""
    if environ.get("NO_AT_BRIDGE", "") not in ("", "0"):
        return {}
    try:
        with Bus(find_bus(display), timeout=BUS_TIMEOUT):
            pass  # a bus named on the display by a session that ended is none
    except (Unavailable, BusError):
        return {}
    env = {k: v for k, v in SWITCHES.items() if k not in environ}
    java = java_options(environ.get("JAVA_TOOL_OPTIONS", ""), jars)
    if java is not None:
        env["JAVA_TOOL_OPTIONS"] = java
    return env


def java_options(current: str, jars: tuple[Path, ...] | None = None) -> str | None:
    """`JAVA_TOOL_OPTIONS` with the ATK bridge loaded (its jar on the boot class path,
    named as the assistive technology), after the user's own options; None where no
    bridge is installed or the options already name an assistive technology."""
    jar = java_bridge(jars)
    if jar is None or "assistive_technologies" in current:
        return None
    ours = f"-Djavax.accessibility.assistive_technologies={ATK_WRAPPER} -Xbootclasspath/a:{jar}"
    return f"{current} {ours}".strip()


def java_bridge(jars: tuple[Path, ...] | None = None) -> Path | None:
    """The Java ATK bridge's jar, where one is installed (`ATK_WRAPPER_JARS`)."""
    return next((j for j in (ATK_WRAPPER_JARS if jars is None else jars) if j.is_file()), None)
