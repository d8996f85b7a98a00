"""Driving the example world from tests, benchmarks and the demo: start the loan form app
with perturbation flags, read what it submitted, build the agent's command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
APP = HERE / "loan_form.py"
AGENT = HERE / "loan_agent.py"

WANTED = {"name": "John Smith", "email": "john@example.com", "amount": "1200", "product": "Auto"}


class LoanApp:
    """The example form app as a subprocess: start it, read what it submitted, stop it."""

    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.out = workdir / "submitted.jsonl"
        self.layout = workdir / "layout.json"
        self.process: subprocess.Popen[bytes] | None = None
        self.extra: list[subprocess.Popen[bytes]] = []

    def start(self, *flags: str) -> LoanApp:
        self.stop()
        ready = self.workdir / "ready"
        ready.unlink(missing_ok=True)
        self.layout.unlink(missing_ok=True)
        log = (self.workdir / "app.log").open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(APP),
                "--out",
                str(self.out),
                "--layout",
                str(self.layout),
                "--ready-file",
                str(ready),
                *flags,
            ],
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + 60
        while not (ready.exists() and self.layout.exists()):
            code = self.process.poll()
            if code is not None or time.monotonic() > deadline:
                said = (self.workdir / "app.log").read_text(errors="replace").strip()
                how = f"exited {code}" if code is not None else "not ready in 60 s"
                tail = " | ".join(said.splitlines()[-5:]) or "nothing on stderr"
                raise RuntimeError(f"example app did not start (flags {flags}): {how}: {tail}")
            time.sleep(0.05)
        time.sleep(0.3)  # first paint done; let Tk run its idle tasks
        return self

    def widgets(self) -> dict[str, dict[str, Any]]:
        """The main window's widgets by label, from the published layout."""
        layout = json.loads(self.layout.read_text())
        return {w["label"]: w for w in layout["windows"][0]["widgets"]}

    def center(self, label: str) -> tuple[int, int]:
        w = self.widgets()[label]
        return (w["x"] + w["w"] // 2, w["y"] + w["h"] // 2)

    def records(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines() if line.strip()]

    def open_window_in_front(self, x: int = 160, y: int = 140) -> None:
        """Another program's window over the form (a terminal, say)."""
        code = (
            f"import tkinter as tk; r = tk.Tk(); r.geometry('360x220+{x}+{y}'); "
            "r.configure(bg='#202020'); "
            "tk.Label(r, text='$ tail -f /var/log/syslog', fg='#e0e0e0', bg='#202020', "
            "font=('Courier', 11)).place(x=10, y=10); r.mainloop()"
        )
        self.extra.append(subprocess.Popen([sys.executable, "-c", code]))
        time.sleep(1.0)

    def stop(self) -> None:
        for proc in [self.process, *self.extra]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.process = None
        self.extra = []


def agent_command(
    app: LoanApp,
    counter: Path | None = None,
    think: float = 0.05,
    args_only: bool = False,
    via: str = "pyautogui",
    **fields: str,
) -> list[str]:
    """The example agent's command line; with `counter`, each start appends a line to it;
    `args_only`: the agent ignores MM_PARAM_* (its values are its arguments alone); `via`:
    how it acts (pyautogui, or vnc: a VNC client on $MM_VNC_ADDRESS)."""
    values = {**WANTED, **fields}
    args = [sys.executable, str(AGENT), "--layout", str(app.layout), "--think", str(think)]
    args += ["--args-only"] if args_only else []
    args += ["--input", via] if via != "pyautogui" else []
    for key, value in values.items():
        args += [f"--{key}", value]
    if counter is None:
        return args
    quoted = " ".join(_sh_quote(a) for a in args)
    return ["sh", "-c", f"echo started >> {_sh_quote(str(counter))}; exec {quoted}"]


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _pid_file(workdir: Path) -> Path:
    return workdir / "app.pid"


def stop_detached(workdir: Path) -> None:
    """Stop an app started by `restart_detached` in `workdir`, if it still runs."""
    import contextlib
    import os
    import signal

    pid_file = _pid_file(workdir)
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(pid, 0)  # raises ProcessLookupError once it is gone
            time.sleep(0.05)
    pid_file.unlink(missing_ok=True)


def restart_detached(workdir: Path, *flags: str) -> None:
    """(Re)start the app in its own session, so it outlives the calling process (a
    `mm replay --before-each` hook, say); its pid is kept in WORKDIR/app.pid."""
    stop_detached(workdir)
    app = LoanApp(workdir)
    ready = workdir / "ready"
    ready.unlink(missing_ok=True)
    app.layout.unlink(missing_ok=True)
    log = open(workdir / "app.log", "ab")  # noqa: SIM115 - handed to the child
    process = subprocess.Popen(
        [
            sys.executable,
            str(APP),
            "--out",
            str(app.out),
            "--layout",
            str(app.layout),
            "--ready-file",
            str(ready),
            *flags,
        ],
        start_new_session=True,
        # Not the caller's pipes: a detached app must not keep them open after it returns.
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    log.close()
    _pid_file(workdir).write_text(str(process.pid))
    deadline = time.monotonic() + 20
    while not (ready.exists() and app.layout.exists()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("example app did not start")
        time.sleep(0.05)
    time.sleep(0.3)


def main(argv: list[str] | None = None) -> int:
    """`python examples/world.py restart WORKDIR [APP FLAGS...]` or `stop WORKDIR`."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[0] == "restart":
        restart_detached(Path(args[1]), *args[2:])
        return 0
    if len(args) == 2 and args[0] == "stop":
        stop_detached(Path(args[1]))
        return 0
    print("usage: world.py restart WORKDIR [APP FLAGS...] | stop WORKDIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
