"""The channel to a run's tree, which lives elsewhere: what a chapter's proxy module calls.

A run's tests import the chapter's module (``tl_ds.radix``, say) as a proxy the chapter
writes (its manifest's ``contract.proxy``): a subclass of ``Remote`` here, one method per
method of the contract. This module is the channel under it.

The engine starts the tree side of a run beside the tests, not under them: the tests'
process is neither its parent nor its child, and shares no folder with it. The proxy talks
to the tree side's host over the control socket on fd 4 (tree_server.py): ``start`` gives it
a data socket to a fresh tree process. Every call crosses as plain data and comes back as
plain data: ids, lists, values, or the exception the tree raised, rebuilt here as the
built-in class it was (KeyError, ValueError, RuntimeError, TypeError, OverflowError, ...).

A call that takes longer than CALL_LIMIT seconds raises TreeStopped and stops the tree;
the next tree starts a fresh process, whose calls get HUNG_LIMIT seconds each.

In the course's runs, a call may bring a reading along (``along``): the tree side answers
the call, then runs the named view and sends its answer as the next line, while the tests
go on with the call's answer. The next request, when it is that reading, takes that line
instead of a round trip of its own; any other request first reads past it. Either way each
answer is the one a request sent then would get: nothing of the tree runs in between.
"""

import builtins as _builtins
import os as _os
import select as _select
import socket as _socket
import threading as _threading
import time as _time

from tree_wire import decode as _decode
from tree_wire import dumps as _dumps
from tree_wire import encode as _encode
from tree_wire import loads as _loads
from tree_wire import spin_recv as _spin_recv

__all__ = ["Remote", "along", "constant", "view"]

_CALL_LIMIT = float(_os.environ.get("OL_CALL_LIMIT", "10"))  # seconds for one call
_HUNG_LIMIT = min(_CALL_LIMIT, 2.0)  # for every call after one has hung: it hangs again
_SPIN = 0.0003
_ANSWER_LIMIT = 64 << 20  # bytes of one answer: more is a tree that does not answer
_CONTROL = 4
_PLAIN_ONLY = (KeyboardInterrupt, SystemExit, GeneratorExit)


class RemoteError(Exception):
    """The tree raised an exception that is not one of Python's built-in ones."""


class TreeStopped(BaseException):
    """The tree's process hung or ended. Not an Exception, so no test or Hypothesis
    catches it: the test fails at once instead of replaying a tree that will hang again."""


_TreeStopped, _RemoteError = TreeStopped, RemoteError
del TreeStopped, RemoteError  # raised, never caught by name: no test imports them


def _rebuild(reply: dict) -> BaseException:
    """The first built-in exception class of the raised one's MRO, with its arguments;
    TreeStopped when the answer is not one a tree server writes."""
    args, names = _decode(reply.get("args", [])), reply.get("names", [])
    if type(args) is not list or type(names) is not list or type(reply["raise"]) is not str \
            or not all(type(name) is str for name in names):
        return _TreeStopped("the tree's process answered something unreadable")
    for name in names:
        kind = getattr(_builtins, name, None)
        if isinstance(kind, type) and issubclass(kind, Exception):
            try:
                return kind(*args)
            except Exception:
                return _RemoteError(*args)
        if kind in _PLAIN_ONLY:
            break
    return _RemoteError(f"the tree raised {reply.get('raise')}", *args)


class _Channel:
    """The tree's process: started on first use, started again after it stops or hangs."""

    def __init__(self) -> None:
        self.control = _socket.socket(fileno=_CONTROL)
        self.replies = self.control.makefile("rb")
        self.data: _socket.socket | None = None
        self.generation = 0
        self.pending = b""
        self.limit = _CALL_LIMIT
        self.lock = _threading.RLock()  # one call at a time on the data socket
        self.attach = None  # (generation, tree, view, args): what the tree's next call brings
        self.coming = None  # the same, of the reading the last call brought: the next line

    def command(self, word: bytes) -> bytes:
        self.control.sendall(word + b"\n")
        return self.replies.readline().strip()

    def start(self) -> None:
        self.drop()
        self.control.sendall(b"start\n")
        line, fds, _, _ = _socket.recv_fds(self.control, 64, 1)
        if not line.startswith(b"ready") or len(fds) != 1:
            raise _TreeStopped("the tree's process could not be started")
        self.data = _socket.socket(fileno=fds[0])  # blocking; reads poll with MSG_DONTWAIT
        self.generation += 1
        self.pending = b""
        self.attach = self.coming = None

    def drop(self) -> None:
        if self.data is not None:
            self.data.close()
            self.data = None

    def stop(self) -> None:
        self.drop()
        self.command(b"stop")

    def ended(self) -> str:
        self.drop()
        said = self.command(b"status").decode(errors="replace").split()
        return f"the tree's process ended (exit code {said[-1] if said else 'unknown'})"

    def ask(self, request: dict, generation: int | None = None):
        """One call and its answer; calls from several threads wait their turn, so every
        call gets its own answer."""
        with self.lock:
            return self.ask_now(request, generation)

    def ask_now(self, request: dict, generation: int | None = None):
        if generation is not None and generation != self.generation:
            raise _TreeStopped("this tree lived in a tree process that has stopped")
        if self.data is None:
            raise _TreeStopped("the tree's process has stopped")
        if self.coming is not None:
            coming, self.coming = self.coming, None
            if coming == (generation, request.get("tree"), request.get("view"),
                          request.get("args")):
                return self.result(self.read_line())  # it came with the call before
            self.read_line()  # a reading no request took: read past it
        attach, self.attach = self.attach, None
        if attach is not None and "call" in request and attach[:2] == (generation,
                                                                        request["tree"]):
            request = {**request, "then": {"view": attach[2], "args": attach[3]}}
        try:
            self.data.sendall(_dumps(request))
        except OSError:
            raise _TreeStopped(self.ended()) from None
        reply = self.read_line()
        if "then" in request:
            self.coming = attach
        return self.result(reply)

    def result(self, reply: dict):
        """What ``reply`` returned, or the exception it raised, rebuilt."""
        try:
            if "ok" in reply:
                return _decode(reply["ok"])
            error = _rebuild(reply)
        except (ValueError, TypeError, RecursionError):
            error = None
        if not isinstance(error, Exception):  # None, or TreeStopped: not a tree server's answer
            self.stop()
            raise _TreeStopped("the tree's process answered something unreadable")
        raise error

    def read_line(self) -> dict:
        """The next answer. Most come back within microseconds, so the read spins for up
        to _SPIN seconds before it sleeps in select (a sleep and wake-up costs far more)."""
        deadline = None
        while b"\n" not in self.pending:
            chunk = _spin_recv(self.data, _SPIN)
            if chunk is None:
                if deadline is None:  # taken only once the answer is slow to come
                    deadline = _time.monotonic() + self.limit - _SPIN
                left = deadline - _time.monotonic()
                ready, _, _ = _select.select([self.data], [], [], max(0.0, left))
                if not ready:
                    self.stop()
                    limit, self.limit = self.limit, _HUNG_LIMIT
                    raise _TreeStopped(f"the tree did not answer within {limit:g} s")
                chunk = self.data.recv(1 << 20)
            if not chunk:
                raise _TreeStopped(self.ended())
            if not self.pending and chunk.find(b"\n") == len(chunk) - 1:
                return self.reply(chunk[:-1])  # the usual case: one whole answer in one read
            self.pending += chunk
            if len(self.pending) > _ANSWER_LIMIT:
                self.stop()
                raise _TreeStopped(f"the tree answered more than {_ANSWER_LIMIT >> 20} MiB at once")
        line, self.pending = self.pending.split(b"\n", 1)
        return self.reply(line)

    def reply(self, line: bytes) -> dict:
        """The answer on ``line``; TreeStopped, stopping the tree, when it is unreadable."""
        try:
            reply = _loads(line)
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict) or not ("ok" in reply or "raise" in reply):
            self.stop()
            raise _TreeStopped("the tree's process answered something unreadable")
        return reply



_channel = _Channel()
_channel.start()


def _args(args) -> list:
    return [_encode(arg) for arg in args]


def constant(name: str):
    """A module-level name of the implementation the contract exports (a constant), as
    plain data."""
    return _channel.ask({"const": name})


class Remote:
    """An object of the implementation's class, called across a process boundary. A
    chapter's proxy module subclasses it: one method per method of the contract, each a
    ``_call``, so the class offers the contract's names and nothing else."""

    def __init__(self, *args) -> None:
        with _channel.lock:
            if _channel.data is None:
                _channel.start()
            self._generation = _channel.generation
            self._handle = _channel.ask_now({"new": _args(args)})

    def _call(self, name: str, *args):
        return _channel.ask({"tree": self._handle, "call": name, "args": _args(args)},
                            self._generation)


def along(self, name: str, *args) -> None:
    """Have this object's next call bring the reading of view ``name`` along: given to the
    proxy's class as ``_ol_along`` in runs of the course's suite only."""
    _channel.attach = (self._generation, self._handle, name, _args(args))


def view(self, name: str, *args):
    """A function of the views module, run by the tree side on this object's tree: given to
    the proxy's class as ``_ol_view`` in runs of the course's suite only."""
    return _channel.ask({"tree": self._handle, "view": name, "args": _args(args)},
                        self._generation)
