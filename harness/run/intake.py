"""Every byte a run hands back enters ol here, and leaves as a checked record or a reason.

What submission code can write and ol reads in its own process: the lines the recorder
writes to a run's records socket (a student's test can write there too), the import
probe's answer (the tree under import can write there too), the coverage file a tree side
writes (the tree can write it whole), the worker's messages, and the entries of the
result cache. Each is read here:

- with a size cap: nothing is read past it, and more is a refusal, not a larger read;
- with a nesting cap, checked before any JSON is decoded (Python's decoder recurses, and
  a line of 200,000 ``[`` would raise RecursionError in ol);
- decoded into frozen records whose every field has its type and range checked (no
  ``NaN`` or ``Infinity``, no integer that is not an int);
- *totally*: a decoder here returns a record or a ``Refused`` with a one-line reason,
  and never raises. The caller turns a refusal into the run's crash or the tree's
  failure, which is the submission's verdict, never a fault of ol.

The proxy's answers cross inside a run (test side and tree side are both sandboxed), so
they are read there, by the payload's tree_proxy.py, with bounds of its own.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from harness.run.measure import Coverage

DEPTH = 16                 # nesting a record may have (the deepest, coverage arcs, needs 3)
COVERAGE_LIMIT = 8 << 20   # bytes of a tree's coverage file read (a 1 MB tree's is < 1 MiB)
NAME_LIMIT = 10_000        # characters of a test's id
TEXT_LIMIT = 20_000        # characters of a failure's text (the recorder keeps 6,000)
WORD_LIMIT = 1_000         # characters of an exception's type name or a plugin's name
COUNT_LIMIT = 1_000_000    # items in one list of a record
LINE_NUMBERS = 10_000_000  # a line number, or an arc's end (negative: the exit), is below this

T = TypeVar("T")


@dataclass(frozen=True)
class Refused:
    """What was read is not what it must be: why, in one line, for a person."""

    reason: str


class Malformed(ValueError):
    """A field that is not what it must be: raised by the field decoders (test_record,
    coverage_record) for a caller that decodes inside a try of its own (the cache); every
    other decoder here turns it into a Refused."""


# --- bounded JSON ------------------------------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting(text: str) -> int:
    """How deep ``[`` and ``{`` nest in ``text`` outside its strings (an upper bound when the
    text is not JSON)."""
    if text.count("[") + text.count("{") <= DEPTH:  # the usual case, counted in C
        return text.count("[") + text.count("{")
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise Malformed("a number too large for a float")
    return number


def _constant(name: str):
    raise Malformed(f"{name} is not a JSON value ol accepts")


def value(text: str, limit: int, what: str = "it") -> object | Refused:
    """The JSON value of ``text``, at most ``limit`` characters long and DEPTH deep, with
    finite numbers only; a Refused saying why otherwise."""
    if len(text) > limit:
        return Refused(f"{what} is longer than {limit:,} characters")
    try:
        if nesting(text) > DEPTH:
            return Refused(f"{what} nests deeper than {DEPTH} levels")
        return json.loads(text, parse_float=_finite, parse_constant=_constant)
    except Malformed as bad:
        return Refused(f"{what} holds {bad}")
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return Refused(f"{what} is not JSON")


# --- fields ------------------------------------------------------------------------------

def _dict(data) -> dict:
    if type(data) is not dict:
        raise Malformed("not an object")
    return data


def _field(record: dict, name: str):
    if name not in record:
        raise Malformed(f"no {name}")
    return record[name]


def _text(data, limit: int) -> str:
    if type(data) is not str:
        raise Malformed("a string that is not a string")
    if len(data) > limit:
        raise Malformed(f"a string longer than {limit:,} characters")
    return data


def _int(data, low: int, high: int) -> int:
    if type(data) is not int or not low <= data <= high:
        raise Malformed(f"a number that is not an integer from {low:,} to {high:,}")
    return data


def _seconds(data) -> float:
    if type(data) not in (int, float) or not 0 <= data < 1e9:
        raise Malformed("a duration that is not one")
    return float(data)


def _items(data, item: Callable[[object], T]) -> tuple[T, ...]:
    if type(data) is not list or len(data) > COUNT_LIMIT:
        raise Malformed("a list that is not one")
    return tuple(map(item, data))


def _words(data) -> tuple[str, ...]:
    return _items(data, lambda item: _text(item, WORD_LIMIT))


def _line(data) -> int:
    return _int(data, -LINE_NUMBERS, LINE_NUMBERS)


def _arc(data) -> tuple[int, int]:
    if type(data) is not list or len(data) != 2:
        raise Malformed("a branch that is not a pair of lines")
    return _line(data[0]), _line(data[1])


def _decoded(decode: Callable[[object], T], data, what: str) -> T | Refused:
    try:
        return decode(data)
    except Malformed as bad:
        return Refused(f"{what} holds {bad}")


# --- what the recorder writes ----------------------------------------------------------

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


@dataclass(frozen=True)
class TestRecord:
    nodeid: str
    outcome: str                  # passed, failed, error, skipped, xfailed, xpassed
    exception: str | None = None  # the exception type of a failure or error
    text: str = ""                # the failure text, cut to a sane length
    seconds: float = 0.0          # setup, call and teardown together

    @property
    def name(self) -> str:
        """The test's function name (with its parameters), without the file."""
        return self.nodeid.rsplit("::", 1)[-1]

    @property
    def broke(self) -> bool:
        return self.outcome in ("failed", "error")


@dataclass(frozen=True)
class Collected:
    ids: tuple[str, ...]          # the collected tests, in order
    plugins: tuple[str, ...]      # plugins registered that are neither pytest's nor ours


@dataclass(frozen=True)
class CollectError:
    nodeid: str
    text: str


@dataclass(frozen=True)
class Finished:
    exitstatus: int
    plugins: tuple[str, ...]


Record = Collected | CollectError | TestRecord | Coverage | Finished


def test_record(data) -> TestRecord:
    """A test's outcome as the recorder (or the cache) writes it; Malformed otherwise."""
    record = _dict(data)
    outcome = _field(record, "outcome")
    if outcome not in OUTCOMES:
        raise Malformed("an outcome that is not one")
    exception = _field(record, "exception")
    return TestRecord(_text(_field(record, "nodeid"), NAME_LIMIT), outcome,
                      None if exception is None else _text(exception, WORD_LIMIT),
                      _text(_field(record, "text"), TEXT_LIMIT),
                      _seconds(_field(record, "seconds")))


def coverage_record(data) -> Coverage:
    """Line and branch coverage as a run (or the cache) reports it; Malformed otherwise."""
    record = _dict(data)
    if record.get("error"):
        return Coverage((), (), (), (), _text(record["error"], TEXT_LIMIT))
    lines = [tuple(sorted(_items(_field(record, key), _line)))
             for key in ("executed_lines", "missing_lines")]
    arcs = [tuple(sorted(_items(_field(record, key), _arc)))
            for key in ("executed_branches", "missing_branches")]
    return Coverage(*lines, *arcs)


def _record(data) -> Record:
    record = _dict(data)
    kind = _field(record, "kind")
    if kind == "collected":
        return Collected(_items(_field(record, "ids"), lambda item: _text(item, NAME_LIMIT)),
                         _words(_field(record, "plugins")))
    if kind == "collect_error":
        return CollectError(_text(_field(record, "nodeid"), NAME_LIMIT),
                            _text(_field(record, "text"), TEXT_LIMIT))
    if kind == "test":
        return test_record(record)
    if kind == "coverage":
        return coverage_record(record)
    if kind == "finish":
        return Finished(_int(_field(record, "exitstatus"), -1024, 1024),
                        _words(_field(record, "plugins")))
    raise Malformed("a record of no kind the recorder writes")


def records(lines: Iterable[str]) -> tuple[Record, ...] | Refused:
    """The records of a run's lines, in order; Refused at the first that is not one."""
    found = []
    for number, line in enumerate(lines, 1):
        what = f"its record {number}"
        data = value(line, len(line), what)  # the stream as a whole is capped as it is read
        if isinstance(data, Refused):
            return data
        record = _decoded(_record, data, what)
        if isinstance(record, Refused):
            return record
        found.append(record)
    return tuple(found)


def test_event(line: str) -> tuple[str, str] | None:
    """(test id, outcome) of a ``test`` record, for a display as the run goes; None for any
    other line, malformed or not (the records are judged whole at the run's end)."""
    data = value(line, TEXT_LIMIT * 4)
    if not isinstance(data, dict) or data.get("kind") != "test":
        return None
    record = _decoded(test_record, data, "")
    return None if isinstance(record, Refused) else (record.nodeid[:200], record.outcome)


# --- what an import probe answers ------------------------------------------------------

def probe_answer(lines: list[str], returncode: int | None) -> str | None:
    """What a probe side said of importing a tree: None when it imported and holds what the
    contract needs, else why not, for the student (a tree that writes into the probe's
    channel itself, or ends the probe, gets no other answer)."""
    if returncode != 0 or len(lines) != 1:
        return f"importing it ends the interpreter (exit code {returncode})" \
            if not lines else "importing it writes into the grader's channel"
    data = value(lines[0], TEXT_LIMIT * 2, "the import's answer")
    answer = _decoded(lambda data: (_field(_dict(data), "ok"),
                                    _text(_field(data, "error"), TEXT_LIMIT)),
                      data, "the import's answer") if not isinstance(data, Refused) else data
    if isinstance(answer, Refused) or type(answer[0]) is not bool:
        return "importing it writes into the grader's channel"
    ok, error = answer
    return None if ok else (error or "it fails")


# --- the coverage file a tree side writes -------------------------------------------------

def coverage_file(path: Path) -> Coverage:
    """The coverage a tree side wrote to ``path``, read at most COVERAGE_LIMIT bytes: a
    regular file only (never a link, a pipe or a device), decoded like the recorder's."""
    def damaged(why: str) -> Coverage:
        return Coverage((), (), (), (), f"the tree's coverage {why}")

    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return damaged("was not written")
    with os.fdopen(handle, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            return damaged("is not a file")
        data = source.read(COVERAGE_LIMIT + 1)
    if not data:
        return damaged("was not written")
    if len(data) > COVERAGE_LIMIT:
        return damaged(f"is larger than {COVERAGE_LIMIT >> 20} MiB")
    decoded = value(data.decode("utf-8", "replace"), COVERAGE_LIMIT, "the coverage")
    if not isinstance(decoded, Refused):
        decoded = _decoded(coverage_record, decoded, "the coverage")
    return damaged("is damaged") if isinstance(decoded, Refused) else decoded


# --- the worker's messages ---------------------------------------------------------------

@dataclass(frozen=True)
class WorkerSaid:
    """A message of the runs' worker: ready, a run that ended, or one it could not start."""

    id: int | None = None         # the run it is about
    hello: str = ""               # ready, in this mode
    exit: int | None = None       # the run ended with this code
    unstarted: str = ""           # the run could not be forked: why


def worker_message(data: bytes) -> WorkerSaid | None:
    """A worker's message; None when it is not one (the worker is then lost)."""
    decoded = value(data.decode("utf-8", "replace"), 1 << 16)
    if not isinstance(decoded, dict):
        return None

    def said(message) -> WorkerSaid:
        if "hello" in message:
            return WorkerSaid(hello=_text(message["hello"], WORD_LIMIT))
        run = _int(_field(message, "id"), 0, 1 << 62)
        if "unstarted" in message:
            return WorkerSaid(run, unstarted=_text(message["unstarted"], WORD_LIMIT))
        return WorkerSaid(run, exit=_int(_field(message, "exit"), -1024, 1024))

    message = _decoded(said, decoded, "")
    return None if isinstance(message, Refused) else message
