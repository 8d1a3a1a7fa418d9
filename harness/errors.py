"""The one exception type ol turns into a message and exit code 2."""

from __future__ import annotations


class OlError(Exception):
    """Bad usage or input: the message says what went wrong and what to do."""
