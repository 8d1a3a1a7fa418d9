"""The exceptions that stop a command, and whose each is: the user's (exit 2), ol's own
(exit 3), or a stop asked for (Ctrl-C, SIGTERM)."""

from __future__ import annotations

import contextlib
import enum
import signal
import threading
from collections.abc import Iterator


class OlError(Exception):
    """Bad usage or input: the message says what went wrong and what to do.

    ``platform`` is the same news for a student on a course platform (Gradescope,
    PrairieLearn), who can only submit again: files named as in the submission, no command
    to run. It is empty when the problem is not the submission's (the grader's setup)."""

    def __init__(self, message: str, platform: str = "") -> None:
        super().__init__(message)
        self.platform = platform


class OlFault(Exception):
    """A fault of ol itself (its runs' worker died twice, an exception of its own code): never
    the student's doing, never a verdict. The message says what failed."""


class Terminated(BaseException):
    """SIGTERM arrived: the command stops as after Ctrl-C, every run stopped and removed."""


@contextlib.contextmanager
def terminated_by_sigterm() -> Iterator[None]:
    """Inside, SIGTERM (a platform's time limit) raises Terminated, as Ctrl-C raises
    KeyboardInterrupt; the handler before is back afterwards. Off the main thread, which
    may not set one, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame) -> None:
        raise Terminated

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)


class Blame(enum.Enum):
    """Whose an exception that stopped a command is: what every caller maps to its outcome
    (an exit code in `ol`, a verdict in `ol grade`)."""

    INPUT = "input"      # the user's or the submission's (OlError): exit 2, verdict error
    OL = "ol"            # ol's own (OlFault, or any other exception): exit 3, internal error
    STOPPED = "stopped"  # Ctrl-C or a termination: the command stops, after cleaning up


def blame(error: BaseException) -> Blame:
    """Whose ``error`` is: the one rule `ol` and `ol grade` both follow."""
    if isinstance(error, OlError):
        return Blame.INPUT
    if isinstance(error, Exception):
        return Blame.OL
    return Blame.STOPPED
