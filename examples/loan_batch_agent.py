"""Files several loan applications in a row in loan_form.py, each as loan_agent.py does.

Each application is one run of the loan agent's observe-decide-act loop: fields, Urgent,
product, Submit, then OK on the confirmation (which clears the form for the next one).
With Urgent set, two applications are 20 pyautogui actions.

    python examples/loan_batch_agent.py --layout /tmp/layout.json \\
        --applicant "John Smith" john@example.com 1200 Auto urgent \\
        --applicant "Jane Doe" jane@example.com 800 Home urgent

Exit codes as loan_agent.py: 0 all filed, 3 a task cannot be done on this screen, 1 other.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from loan_agent import EXIT_DONE, EXIT_ERROR, Agent, Goal, Stop, log, parse_bool


def goal_of(items: list[str]) -> Goal:
    if len(items) not in (4, 5):
        raise Stop(EXIT_ERROR, f"--applicant takes NAME EMAIL AMOUNT PRODUCT [urgent]: {items}")
    urgent = len(items) == 5 and (items[4] == "urgent" or parse_bool(items[4]))
    return Goal(name=items[0], email=items[1], amount=items[2], product=items[3], urgent=urgent)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="File several loan applications in a row.")
    p.add_argument("--layout", type=Path, required=True, help="layout JSON the app publishes")
    p.add_argument(
        "--applicant",
        nargs="+",
        action="append",
        required=True,
        metavar="FIELD",
        help="NAME EMAIL AMOUNT PRODUCT [urgent]; repeat for each application",
    )
    p.add_argument("--think", type=float, default=0.3, help="pause before each action (s)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        goals = [goal_of(items) for items in args.applicant]
        for number, goal in enumerate(goals, 1):
            log(f"application {number} of {len(goals)}")
            try:
                Agent(args.layout, goal, max(0.0, args.think)).run()
            except Stop as stop:
                if stop.code != EXIT_DONE:
                    raise
                log(str(stop))
    except (Stop, ValueError) as e:
        log(str(e))
        return e.code if isinstance(e, Stop) else EXIT_ERROR
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
