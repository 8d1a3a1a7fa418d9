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
folder only. An entry is JSON holding its own key, its body and an HMAC-SHA256 of both
under a secret key kept in the cache folder (``key``, mode 0600, made at first use); one
that does not parse, holds another key, fails its MAC or its schema is ignored and
replaced, never trusted. So a user or a submission that can write the cache folder, but
cannot read the key, cannot plant a result; a key that others could read or that another
user owns makes the whole cache unused.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from harness.run import intake
from harness.run.judge import RunResult, Status
from harness.run.layout import Contract, Suite

FORMAT = 2  # the layout of an entry; another layout is another key
ENTRY_LIMIT = 64 << 20  # bytes of an entry read (a run keeps at most 32 MiB of records)
DECIDING = ("pytest", "hypothesis", "coverage")  # the packages whose versions decide grades
OWN = Path(__file__).resolve().parents[2]  # the checkout: ol.py and harness/


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
    """Run results by content, in ``folder``; counts what it served, what it ran, and the
    entries it could not verify."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0
        self.unverified = 0    # entries present but forged or damaged: run again
        self.problem = ""      # why the cache is not used at all, when it is not
        self._secret: bytes | None = None

    def secret(self) -> bytes | None:
        """The key entries are signed with (made on first use); None when it cannot be
        trusted (then nothing is read or kept, and ``problem`` says why)."""
        if self._secret is not None or self.problem:
            return self._secret
        path = self.folder / "key"
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(handle, "wb") as out:
                    out.write(secrets.token_bytes(32))
            handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(handle, "rb") as source:
                info = os.fstat(source.fileno())
                data = source.read(64)
        except OSError as error:
            self.problem = f"its key {path} cannot be made or read ({error.strerror})"
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() \
                or info.st_mode & 0o077 or len(data) != 32:
            self.problem = (f"its key {path} is not a 32-byte file of yours that only you can "
                            "read (remove it, and ol makes a new one)")
            return None
        self._secret = data
        return data

    def key(self, suite: Suite, implementation: str, limits: tuple[float, float],
            expected: Iterable[str] | None, trusted: bool, sandbox: str) -> str:
        digest = hashlib.sha256(ol_version().encode())
        contract = suite.contract
        for label, items in (("files", suite.files), ("support", suite.support),
                             ("views", suite.proxy or ()),
                             ("contract", (contract.proxy, contract.calls))):
            digest.update(label.encode())
            for item in items:
                add_tree(digest, item)
        fixed = {"env": dict(sorted(suite.env.items())), "proxy": suite.proxy is not None,
                 "measure": suite.measure, "ours": suite.ours, "limits": list(limits),
                 "expected": None if expected is None else sorted(expected),
                 "trusted": trusted, "sandbox": sandbox,
                 "module": [contract.module, contract.cls, list(contract.exports)],
                 "beside": [list(module) for module in suite.beside],
                 "tests": [list(test) for test in suite.tests]}
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
        secret = self.secret()
        if secret is None:
            self.misses += 1
            return None
        try:
            with open(self.path(key), "rb") as source:
                text = source.read(ENTRY_LIMIT + 1).decode("utf-8", "replace")
        except OSError:
            self.misses += 1
            return None
        try:
            entry = intake.value(text, ENTRY_LIMIT)
            if isinstance(entry, intake.Refused):
                raise ValueError(entry.reason)
            body = entry["body"]
            if entry["key"] != key or not hmac.compare_digest(str(entry["mac"]),
                                                              mac(secret, key, body)):
                raise ValueError("another entry, or a forged one")
            result = parse(body)
        except (ValueError, TypeError, KeyError, AttributeError):
            self.misses += 1
            self.unverified += 1
            return None
        self.hits += 1
        return result

    def write(self, key: str, body: dict) -> None:
        """Written whole or not at all; a cache that cannot be written only costs time."""
        secret = self.secret()
        if secret is None:
            return
        text = json.dumps({"key": key, "mac": mac(secret, key, body), "body": body})
        path = self.path(key)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                             delete=False, suffix=".tmp") as out:
                out.write(text)
            os.replace(out.name, path)
        except OSError:
            return

    def probe_key(self, implementation: str, contract: Contract, sandbox: str,
                  beside: tuple[tuple[str, str], ...] = ()) -> str:
        digest = hashlib.sha256(ol_version().encode())
        digest.update(f"\0probe\0{sandbox}\0{contract.module}\0{contract.cls}\0"
                      f"{' '.join(contract.exports)}\0".encode() + implementation.encode())
        digest.update(json.dumps(beside).encode())
        return digest.hexdigest()


def mac(secret: bytes, key: str, body: Mapping) -> str:
    """The entry's signature: HMAC-SHA256 of its key and body under the cache's secret."""
    message = key.encode() + b"\0" + json.dumps(body, sort_keys=True).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def to_body(result: RunResult) -> dict:
    return {"status": result.status.value, "seconds": result.seconds, "detail": result.detail,
            "output": result.output,
            "records": [asdict(record) for record in result.records],
            "coverage": None if result.coverage is None else asdict(result.coverage)}


def from_body(body: Mapping) -> RunResult:
    """A RunResult from an entry's body, its records and coverage checked as a run's are;
    TypeError or ValueError (intake.Malformed among them) when it is not one."""
    coverage = body["coverage"]
    if coverage is not None:
        coverage = intake.coverage_record(coverage)
    records = tuple(map(intake.test_record, body["records"]))
    return RunResult(Status(body["status"]), records, float(body["seconds"]),
                     str(body["detail"]), str(body["output"]), coverage)
