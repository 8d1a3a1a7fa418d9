"""``tl_ds.radix`` in a course run on a student's tree: a proxy to a tree in another process.

The course tests import this module as ``tl_ds.radix``; the student's code never runs
in the test process, so it cannot patch pytest, the recorder or the tests. Every call
goes to ``tree_server.py`` (one process per test process, started at import) and comes
back as plain data: ids, lists, values, or the class of the exception the tree raised,
which is raised here again. A call that takes longer than CALL_LIMIT seconds raises
TreeStopped and stops the server; the next tree starts a fresh one, whose calls get
HUNG_LIMIT seconds each.

Layout (relative to this file, in the run's folder): ``../../student/tl_ds/radix.py`` is
the student's tree; ``../../server/`` holds tree_server.py and ds07_observe.py.
"""

from __future__ import annotations

import builtins
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tree_wire import decode, encode

RUN = Path(__file__).resolve().parent.parent.parent
CALL_LIMIT = float(os.environ.get("OL_CALL_LIMIT", "10"))  # seconds for one call
HUNG_LIMIT = min(CALL_LIMIT, 2.0)  # for every call after one has hung: a hung tree hangs again
SPIN = 0.0003
NodeId = int


class RemoteError(Exception):
    """The tree raised an exception that is not one of Python's built-in ones."""


class TreeStopped(BaseException):
    """The tree's process hung or ended. Not an Exception, so no test or Hypothesis
    catches it: the test fails at once instead of replaying a tree that will hang again."""


def rebuild(names: list[str], text: str) -> BaseException:
    """The first built-in exception class among ``names`` (the raised class's MRO), with text."""
    for name in names:
        kind = getattr(builtins, name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            if kind in (KeyboardInterrupt, SystemExit, GeneratorExit):
                return RemoteError(f"the tree raised {text}")
            try:
                return kind(text)
            except TypeError:
                return RemoteError(text)
    return RemoteError(text)




def spin_read(fd: int) -> bytes | None:
    """What ``fd`` (non-blocking) has within SPIN seconds, or None."""
    end = time.perf_counter() + SPIN
    while True:
        try:
            return os.read(fd, 1 << 20)
        except BlockingIOError:
            if time.perf_counter() > end:
                return None


class Server:
    """The tree process: started on first use, restarted after it stops or hangs."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.generation = 0
        self.pending = b""
        self.limit = CALL_LIMIT

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-s", "-P", str(RUN / "server" / "tree_server.py"),
             str(RUN / "student")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=os.getcwd())
        os.set_blocking(self.process.stdout.fileno(), False)
        self.generation += 1
        self.pending = b""

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def ask(self, request: dict, generation: int | None = None):
        if generation is not None and generation != self.generation:
            raise TreeStopped("this tree lived in a tree process that has stopped")
        if self.process is None:
            raise TreeStopped("the tree's process has stopped")
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self.process.poll()
            self.stop()
            raise TreeStopped(f"the tree's process ended (exit code {code})") from None
        reply = self.read_line()
        if "raise" in reply:
            raise rebuild(reply["raise"], reply.get("text", ""))
        return decode(reply["ok"])

    def read_line(self) -> dict:
        """The next answer. Most come back within microseconds, so the read spins for up
        to SPIN seconds before it sleeps in select (a sleep and wake-up costs far more)."""
        deadline = time.monotonic() + self.limit
        out = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            chunk = spin_read(out)
            if chunk is None:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([out], [], [], max(0.0, left))
                if not ready:
                    self.stop()
                    limit, self.limit = self.limit, HUNG_LIMIT
                    raise TreeStopped(f"the tree did not answer within {limit:g} s")
                chunk = os.read(out, 1 << 20)
            if not chunk:
                code = self.process.wait()
                self.process = None
                raise TreeStopped(f"the tree's process ended (exit code {code})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            self.stop()
            raise TreeStopped("the tree's process answered something unreadable") from None
        if not isinstance(reply, dict) or not ("ok" in reply or "raise" in reply):
            self.stop()
            raise TreeStopped("the tree's process answered something unreadable")
        return reply


_server = Server()
_server.start()
ROOT: NodeId = _server.ask({"root": True})


class RadixTree:
    """The student's RadixTree, called across a process boundary."""

    def __init__(self, granule: int) -> None:
        if _server.process is None:
            _server.start()
        self._generation = _server.generation
        self._handle = _server.ask({"new": granule})

    def _call(self, name: str, *args):
        return _server.ask({"tree": self._handle, "call": name,
                            "args": [encode(arg) for arg in args]}, self._generation)

    def _ol_view(self, name: str, *args):
        return _server.ask({"tree": self._handle, "view": name,
                            "args": [encode(arg) for arg in args]}, self._generation)

    @property
    def granule(self) -> int:
        return self._call("granule")

    def __len__(self) -> int:
        return self._call("__len__")

    def __repr__(self) -> str:
        return f"RadixTree(proxy of tree {self._handle})"

    def is_empty(self) -> bool:
        return self._call("is_empty")

    def node_count(self) -> int:
        return self._call("node_count")

    def key(self, id):
        return self._call("key", id)

    def values(self, id):
        return self._call("values", id)

    def parent(self, id):
        return self._call("parent", id)

    def children(self, id):
        return self._call("children", id)

    def child_count(self, id):
        return self._call("child_count", id)

    def lock_count(self, id):
        return self._call("lock_count", id)

    def lru_order(self):
        return self._call("lru_order")

    def match_prefix(self, key):
        tokens, path = self._call("match_prefix", list(key))
        return tokens, path

    def insert(self, key, values):
        node, back = self._call("insert", list(key), list(values))
        return node, back

    def lock(self, id) -> None:
        return self._call("lock", id)

    def unlock(self, id) -> None:
        return self._call("unlock", id)

    def evict(self, n, f) -> int:
        answer = self._call("evict", n)
        for value in answer["values"]:
            f(value)
        return answer["freed"]
