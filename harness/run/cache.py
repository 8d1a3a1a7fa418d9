"""Run results kept by content, so a re-check runs only what changed.

A run's key is a hash of everything the run sees: the suite's files and support, its
environment (the Hypothesis profile among it), the proxy and its views, the tree's text,
the time limits, the tests expected, who is trusted, and ol itself: its own source, the
versions of the packages that decide grades, and the interpreter's. A change to any of
them is another key. A run that only a timeout decided is kept only when it timed out twice
in a row (once may be a busy machine); a cancelled run is never kept.

The cache lives in the user's cache folder (``$XDG_CACHE_HOME/ol`` or ``~/.cache/ol``), or
wherever ``OL_CACHE`` (or ``ol grade --cache DIR``) says; ``OL_CACHE=off`` keeps nothing.
It is never inside a workspace, and runs cannot see it: the sandbox shows a run its own
folder only. An entry is JSON holding its own key and a hash of its body; one that does
not parse, holds another key, fails its hash or its schema is ignored and replaced, never
trusted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from harness.run.judge import RunResult, Status, TestRecord
from harness.run.layout import Suite
from harness.run.measure import Coverage

FORMAT = 1  # the layout of an entry; another layout is another key
DECIDING = ("pytest", "hypothesis", "coverage")  # the packages whose versions decide grades
OWN = Path(__file__).resolve().parents[2]  # the checkout: ol.py and harness/


def default_folder() -> Path | None:
    """Where the cache lives unless told: OL_CACHE, else the user's cache folder."""
    said = os.environ.get("OL_CACHE", "")
    if said == "off":
        return None
    if said:
        return Path(said)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ol"


@functools.cache
def ol_version() -> str:
    """A hash of what decides a run's result besides its own inputs: ol's source, the
    deciding packages' versions, the interpreter."""
    digest = hashlib.sha256(f"{FORMAT} {sys.version}".encode())
    for name in DECIDING:
        try:
            digest.update(f"{name} {metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} none\n".encode())
    for path in sorted([OWN / "ol.py", *(OWN / "harness").rglob("*.py")]):
        digest.update(str(path.relative_to(OWN)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def add_tree(digest, path: Path) -> None:
    """The names and bytes of a file, or of every file below a folder, into ``digest``."""
    files = sorted(item for item in path.rglob("*") if item.is_file()
                   and "__pycache__" not in item.parts) if path.is_dir() else [path]
    for item in files:
        digest.update(f"{item.relative_to(path.parent)}\0".encode() + item.read_bytes() + b"\0")


class RunCache:
    """Run results by content, in ``folder``; counts what it served and what it ran."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    def key(self, suite: Suite, implementation: str, limits: tuple[float, float],
            expected: Iterable[str] | None, trusted: bool, sandbox: str) -> str:
        digest = hashlib.sha256(ol_version().encode())
        for label, items in (("files", suite.files), ("support", suite.support),
                             ("views", suite.proxy or ())):
            digest.update(label.encode())
            for item in items:
                add_tree(digest, item)
        fixed = {"env": dict(sorted(suite.env.items())), "proxy": suite.proxy is not None,
                 "measure": suite.measure, "ours": suite.ours, "limits": list(limits),
                 "expected": None if expected is None else sorted(expected),
                 "trusted": trusted, "sandbox": sandbox}
        digest.update(json.dumps(fixed, sort_keys=True).encode())
        digest.update(b"\0tree\0" + implementation.encode())
        return digest.hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> RunResult | None:
        """The result kept under ``key``; None when there is none, or it cannot be trusted."""
        return self.read(key, from_body)

    def put(self, key: str, result: RunResult, timeouts: bool = False) -> None:
        """Keep ``result``; one that only a time limit decided (of the run or of a test) only
        with ``timeouts``: the second of two runs that both timed out."""
        if timeouts or not result.decided_by_timeout:
            self.write(key, to_body(result))

    def get_probe(self, key: str) -> tuple[str | None] | None:
        """What importing a tree said, kept under ``key``: (None,) when it imported."""
        return self.read(key, lambda body: (None if body["problem"] is None
                                            else str(body["problem"]),))

    def put_probe(self, key: str, problem: str | None) -> None:
        self.write(key, {"problem": problem})

    def read(self, key: str, parse):
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
            body = entry["body"]
            if entry["key"] != key or entry["hash"] != body_hash(body):
                raise ValueError("another entry")
            result = parse(body)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def write(self, key: str, body: dict) -> None:
        """Written whole or not at all; a cache that cannot be written only costs time."""
        text = json.dumps({"key": key, "hash": body_hash(body), "body": body})
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                             delete=False, suffix=".tmp") as out:
                out.write(text)
            os.replace(out.name, path)
        except OSError:
            return

    def probe_key(self, implementation: str, sandbox: str) -> str:
        digest = hashlib.sha256(ol_version().encode())
        digest.update(f"\0probe\0{sandbox}\0".encode() + implementation.encode())
        return digest.hexdigest()


def body_hash(body: Mapping) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def to_body(result: RunResult) -> dict:
    return {"status": result.status.value, "seconds": result.seconds, "detail": result.detail,
            "output": result.output,
            "records": [asdict(record) for record in result.records],
            "coverage": None if result.coverage is None else asdict(result.coverage)}


def from_body(body: Mapping) -> RunResult:
    """A RunResult from an entry's body; TypeError or ValueError when it is not one."""
    coverage = body["coverage"]
    if coverage is not None:
        coverage = Coverage(
            tuple(int(line) for line in coverage["executed_lines"]),
            tuple(int(line) for line in coverage["missing_lines"]),
            tuple((int(a), int(b)) for a, b in coverage["executed_branches"]),
            tuple((int(a), int(b)) for a, b in coverage["missing_branches"]),
            str(coverage["error"]))
    records = tuple(TestRecord(str(record["nodeid"]), str(record["outcome"]),
                               None if record["exception"] is None else str(record["exception"]),
                               str(record["text"]), float(record["seconds"]))
                    for record in body["records"])
    return RunResult(Status(body["status"]), records, float(body["seconds"]),
                     str(body["detail"]), str(body["output"]), coverage)
