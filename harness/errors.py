"""The two exception types ol turns into a message: the user's (exit 2) and ol's own (exit 3)."""

from __future__ import annotations


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
