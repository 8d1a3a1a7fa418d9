"""Parsing Python source on the host, from any of ol's threads.

CPython 3.11's ``ast`` module keeps its recursion counter per interpreter, not per thread:
two threads building syntax trees at once can fail with "SystemError: AST constructor
recursion depth mismatch" (CPython issue 106905). `ol grade` checks submissions on
threads, and the scan and the test-name check both parse, so every parse goes through
one lock. Parsing is quick; the lock costs nothing a person could notice.
"""

from __future__ import annotations

import ast
import threading

LOCK = threading.Lock()  # a guard against the interpreter's bug, not state of ol's


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, one thread at a time."""
    with LOCK:
        return ast.parse(source, filename)
