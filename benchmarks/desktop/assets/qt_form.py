"""A small Qt 5 form (PyQt5 from Debian: run it with /usr/bin/python3): Name, City, Save.

Save appends the record "NAME|CITY" to --out. Perturbations: --prefill TEXT (Name holds
TEXT at start), --error (a red error line), --variant delete (same layout, another page),
--autofill (City filled by the app 50 ms after the name is first typed), --dialog-after MS
(a dialog over Save, MS ms after the last key typed into City; its button writes
"DISCARDED"), --title, --own-window KIND (a small window of the form's own, open at
start: a modal "dialog" transient for the form, a second "normal" window, an
"override"-redirect window, a "tooltip"; titled "KIND (Qt)").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtWidgets import QApplication, QDialog, QLabel, QLineEdit, QPushButton, QWidget


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--title", default="Person (Qt)")
    p.add_argument("--prefill", default="")
    p.add_argument("--error", action="store_true")
    p.add_argument("--variant", default="new")
    p.add_argument("--autofill", action="store_true")
    p.add_argument("--dialog-after", type=int, default=0)
    p.add_argument("--own-window", choices=("dialog", "normal", "override", "tooltip"))
    args = p.parse_args()

    app = QApplication(sys.argv[:1])
    win = QWidget()
    win.setWindowTitle(args.title)
    win.setFixedSize(400, 230)
    heading = "Delete a person" if args.variant == "delete" else "New person"
    QLabel(heading, win).setGeometry(20, 12, 360, 24)
    QLabel("Name", win).setGeometry(20, 50, 60, 28)
    name = QLineEdit(args.prefill, win)
    name.setGeometry(90, 50, 280, 28)
    QLabel("City", win).setGeometry(20, 95, 60, 28)
    city = QLineEdit(win)
    city.setGeometry(90, 95, 280, 28)
    if args.error:
        err = QLabel("Error: server unreachable, nothing will be saved", win)
        err.setStyleSheet("color: #c01010; font-weight: bold")
        err.setGeometry(20, 140, 360, 24)
    save = QPushButton("Delete" if args.variant == "delete" else "Save", win)
    save.setGeometry(270, 180, 100, 32)

    def write(record: str) -> None:
        with args.out.open("a") as f:
            f.write(record + "\n")

    def submit() -> None:
        prefix = "DELETE " if args.variant == "delete" else ""
        write(prefix + f"{name.text()}|{city.text()}")
        save.setEnabled(False)

    save.clicked.connect(submit)

    if args.autofill:
        done = []

        def fill() -> None:
            if not done:
                done.append(1)
                QTimer.singleShot(50, lambda: city.setText("Berlin"))

        name.textEdited.connect(fill)

    if args.dialog_after:
        timer = QTimer(win)
        timer.setSingleShot(True)
        timer.setInterval(args.dialog_after)
        city.textEdited.connect(lambda _t: timer.start())

        def dialog() -> None:
            box = QDialog(win)
            box.setWindowTitle("Unsaved changes")
            box.setModal(True)
            box.setFixedSize(220, 90)
            QLabel("Discard this form?", box).setGeometry(12, 10, 200, 24)
            discard = QPushButton("Discard", box)
            discard.setGeometry(110, 48, 100, 32)
            discard.clicked.connect(lambda: (write("DISCARDED"), box.accept()))
            center = save.mapToGlobal(save.rect().center())
            # the Discard button under the pointer about to click Save
            box.move(center.x() - 160, center.y() - 64 - 22)
            box.show()

        timer.timeout.connect(dialog)

    if args.own_window:
        kept: list[QWidget] = []
        QTimer.singleShot(200, lambda: kept.append(own_window(args.own_window, win)))

    win.show()
    return app.exec_()


def own_window(kind: str, form: QWidget) -> QWidget:
    """A small window of the form's own app (`--own-window`), shown at 900,500."""
    if kind == "dialog":
        window: QWidget = QDialog(form)
        window.setModal(True)
        QPushButton("OK", window).setGeometry(90, 34, 60, 26)
    elif kind == "normal":
        window = QWidget()
    elif kind == "override":
        flags = Qt.Window | Qt.X11BypassWindowManagerHint | Qt.FramelessWindowHint
        window = QWidget(None, flags)
        window.setStyleSheet("background: #d0e8d8")
    else:
        window = QLabel("Name as on your ID", None, Qt.ToolTip)
    window.setWindowTitle(f"{kind} (Qt)")
    window.setFixedSize(160, 64)
    if kind != "tooltip":
        QLabel("Draft saved.", window).setGeometry(10, 6, 140, 24)
    window.move(900, 500)
    window.show()
    return window


if __name__ == "__main__":
    raise SystemExit(main())
