"""What ol says of a fault of its own: that it is ol's, never a verdict, and where the log is."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Sequence

from harness.errors import OlFault
from harness.grade.workspace import unrooted
from harness.run.cache import ol_version

# what a platform's student reads of a fault of ol (the grader's own code)
PLATFORM_FAULT = ("Not graded: the grader met a fault of its own ({what}), not of your work. "
                  "No score was recorded; the course staff will grade it again.")


def said(error: BaseException, argv: Sequence[str] | None) -> str:
    """The paragraph of a fault of ol: for a platform's student, what happened without a
    path of the grader's (a log file on the grader's machine helps no one there); else
    what happened and the log to send."""
    if on_platform(argv):
        return PLATFORM_FAULT.format(what=unrooted(described(error)))
    return fault_paragraph(error, argv)


def described(error: BaseException) -> str:
    """The fault in one line: an OlFault's own words, else the exception's type and text."""
    return str(error) if isinstance(error, OlFault) else \
        "".join(traceback.format_exception_only(type(error), error)).strip()


def on_platform(argv: Sequence[str] | None) -> bool:
    """Whether the command grades for a course platform, whose student reads what it says."""
    given = list(sys.argv[1:] if argv is None else argv)
    return "--platform" in given or given[:1] in (["prairielearn"], ["gradescope"])


def fault_paragraph(error: BaseException, argv: Sequence[str] | None) -> str:
    """What ol says of a fault of its own: that it is ol's, and the log to send."""
    what = described(error)
    log = write_fault_log(error, argv)
    where = f"the log {log}" if log else "the lines above"
    return (f"this is a fault of ol itself, not of your work: {what}. Nothing was graded. Run "
            f"the command again; if it fails again, send {where} to the course staff with a bug "
            f"report (it holds the command, ol's version and what failed).")


def write_fault_log(error: BaseException, argv: Sequence[str] | None) -> str:
    """A log of a fault of ol, in the temporary folder; its path, or "" when none was written."""
    text = (f"command: ol {' '.join(sys.argv[1:] if argv is None else argv)}\n"
            f"ol: {ol_version()}\npython: {sys.version.split()[0]}\n\n"
            + "".join(traceback.format_exception(error)))
    try:
        handle, path = tempfile.mkstemp(prefix="ol-fault-", suffix=".log")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError:
        return ""
    return path
