"""Where a command's progress shows while it runs: on standard error, never in its output.

On a terminal, one status line is rewritten in place: every stage still running with its
count and total ("course tests 7 of 11"), the time so far, and what ended last; each
course test's line is printed above it as the test ends. Anywhere else (a pipe, a file, a
CI log) each step is a plain line of its own, with no control characters. A carriage
return and one ANSI erase-line code are all a status line needs, so no terminal library
is used.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from harness.grade.grading import CONTROL_STAGE, CORRECT_STAGE, COURSE_STAGE, MUTANT_STAGE, Event

ERASE = "\r\033[K"
SHORT = {CORRECT_STAGE: "correct trees", MUTANT_STAGE: "mutants",
         CONTROL_STAGE: "placebo and reruns"}  # how the status line names a stage


class Display:
    """Takes a check's Events (or a line of text, for the other commands) as they come, from
    any thread."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.started = clock()
        self.lock = threading.Lock()
        self.stages: dict[str, tuple[int, int]] = {}
        self.last = ""
        self.shown = False  # a status line is on the screen

    def __call__(self, event: Event | str) -> None:
        with self.lock:
            seconds = self.clock() - self.started
            if isinstance(event, str):
                self.last = event
                line = event
            else:
                self.stages[event.stage] = (event.done, event.total)
                self.last = event.what
                line = f"{event.stage} {event.done} of {event.total}: {event.what}"
            if not self.live:
                self.stream.write(f"[{seconds:4.0f} s] {line}\n")
            else:
                if isinstance(event, Event) and event.stage == COURSE_STAGE:
                    self.stream.write(f"{ERASE}  {event.outcome:<4}  {event.subject}\n")
                self.stream.write(ERASE + self.status(seconds))
                self.shown = True
            self.stream.flush()

    def status(self, seconds: float) -> str:
        parts = [f"{SHORT.get(stage, stage)} {done} of {total}"
                 for stage, (done, total) in self.stages.items()
                 if done < total]  # a stage that is over leaves the line
        line = "  " + " · ".join([f"{seconds:.0f} s", *parts, self.last])
        width = shutil.get_terminal_size((100, 24)).columns - 1
        return line if len(line) <= width else line[:max(0, width - 1)] + "…"

    def close(self) -> None:
        """Take the status line away (the command's output follows)."""
        with self.lock:
            if self.live and self.shown:
                self.stream.write(ERASE)
                self.stream.flush()
                self.shown = False


def per_submission(display: Callable[[Event | str], None], name: str, quiet: float = 5.0,
                   clock: Callable[[], float] = time.monotonic) -> Callable[[Event], None]:
    """One submission's Events in `ol grade`, as lines of ``display``: its name, the stage
    and how far it is, whenever the stage changes and at most ``quiet`` seconds after its
    last line (each test of every submission would drown the log)."""
    lock = threading.Lock()
    last: dict = {"stage": None, "at": clock()}
    display(f"{name}: started")

    def said(event: Event) -> None:
        with lock:
            now = clock()
            if event.stage == last["stage"] and now - last["at"] < quiet:
                return
            last.update(stage=event.stage, at=now)
        display(f"{name}: {event.stage} {event.done} of {event.total}")

    return said
