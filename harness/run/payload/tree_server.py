"""The far side of a run's proxy: the tree under test, in processes of its own.

Imported by fork_worker.py, which forks the tree side of a run and calls ``host``. The host
never imports the tree. On the control socket from the run's proxy it takes one command
per line and answers one line:

    start    stop the tree child there is, start a fresh one: "ready", with the proxy's end
             of a new data socket attached
    stop     stop the tree child: "stopped"
    status   how the last tree child ended: "ended CODE" (waits up to a second for it)

The tree child imports the chapter's module (the side's ``module``: ``tl_ds.radix``, say)
from the side's ``tree/`` folder and answers JSON requests on its data socket, one per line
(values in tree_wire's format):

    {"new": [args]}                       -> {"ok": handle}: a new object of the side's class
    {"tree": h, "call": name, "args": []} -> {"ok": result} or {"raise": class, "args": [...],
                                             "names": [classes of its MRO]}
    {"tree": h, "view": name, "args": []} -> the same, for a function of the views module
    a call with "then": {"view": name, "args": []}
                                          -> the call's answer, then, as the next line, the
                                             view's: the reading a call brings along
    {"const": name}                       -> {"ok": the module's name}, an export of the
                                             contract

Calls are answered by the chapter's calls module (the side's ``calls``, from ``calls/``):
only its ``CALLS`` can be called, and its ``call`` makes the answer plain data. Views are
answered only where the side allows them. The tree's prints go to stderr, capped. When its
data socket closes (the tests have ended), the child writes the coverage it measured, if
asked, to ``coverage.json`` in the side's folder and leaves.
"""

import contextlib
import functools
import importlib
import json
import os
import select
import signal
import socket
import sys
import time

from tree_wire import decode, dumps, encode, loads, spin_recv

OUTPUT_LIMIT = 64_000  # characters of the tree's prints passed on to stderr
SPIN = 0.0002  # seconds a read polls for the next request before it sleeps


class Capped:
    """sys.stdout and sys.stderr of the tree: the first OUTPUT_LIMIT characters, then none."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.left = OUTPUT_LIMIT

    def write(self, text: str) -> int:
        if self.left > 0:
            self.stream.write(text[:self.left])
            self.left -= len(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def host(control: socket.socket, side: dict, isolate=None) -> int:
    """The tree side's first process: start, stop and report tree children on command.

    ``isolate(serve)``, where given, runs each tree child's ``serve`` in a PID namespace of
    its own (and without capabilities), so stopping the child ends all the tree started."""
    child = None
    ended = None
    reader = control.makefile("rb")
    for line in reader:
        command = line.strip()
        if command in (b"start", b"stop") and child is not None:
            stop(child)
            child = None
        if command == b"start":
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            child = os.fork()
            if child == 0:
                code = 70
                try:
                    reader.close()
                    control.close()
                    theirs.close()
                    code = (serve(mine, side) if isolate is None
                            else isolate(functools.partial(serve, mine, side)))
                finally:
                    os._exit(code)
            mine.close()
            socket.send_fds(control, [b"ready\n"], [theirs.fileno()])
            theirs.close()
        elif command == b"stop":
            control.sendall(b"stopped\n")
        elif command == b"status":
            if child is not None:
                ended = wait(child, 1.0)
                child = None if ended is not None else child
            control.sendall(f"ended {ended}\n".encode())
    if child is not None and wait(child, 4.0) is None:  # the tests have ended
        stop(child)
    return 0


def wait(pid: int, seconds: float) -> int | None:
    """The child's exit code once it has ended, or None when it runs past ``seconds``."""
    deadline = time.monotonic() + seconds
    try:
        ended = os.pidfd_open(pid)  # readable once the child has ended
    except (AttributeError, OSError):
        ended = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            left = deadline - time.monotonic()
            if left < 0:
                return None
            if ended is None:
                time.sleep(0.005)
            else:
                select.select([ended], [], [], left)
    finally:
        if ended is not None:
            os.close(ended)


def stop(pid: int) -> None:
    for target in (-pid, pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def serve(channel: socket.socket, side: dict) -> int:
    """A tree child: answer requests until the data socket closes."""
    os.setsid()
    sys.stdout = sys.stderr = Capped(sys.stderr)
    folder = side["root"]
    measure = None
    if side.get("measure"):
        from coverage_probe import Measure

        measure = Measure(os.path.join(folder, "tree", *side["module"].split(".")) + ".py")
    sys.path[:0] = [os.path.join(folder, "tree"), os.path.join(folder, "calls")]
    views = None
    if side.get("views"):
        sys.path.insert(2, os.path.join(folder, "views"))
    trees: list = []
    module = calls = None
    for line in lines(channel):
        then = None
        try:
            request = loads(line)
            then = request.get("then")
            if module is None:
                module = importlib.import_module(side["module"])
                calls = importlib.import_module(side["calls"])
                if side.get("views"):
                    views = importlib.import_module(side["views"])
            reply = {"ok": encode(answer(request, trees, module, calls, views, side))}
        except BaseException as error:  # every failure is the caller's to judge
            reply = failure(error)
        channel.sendall(dumps(reply))
        if then is not None:  # the reading this call brings along, as the next line
            try:
                reading = {"ok": encode(answer({"tree": request["tree"], "view": then["view"],
                                                "args": then["args"]},
                                               trees, module, calls, views, side))}
            except BaseException as error:
                reading = failure(error)
            channel.sendall(dumps(reading))
    if measure is not None:
        with open(os.path.join(folder, "coverage.json"), "w", encoding="utf-8") as report:
            json.dump(measure.stop(), report)
    return 0


def lines(channel: socket.socket):
    """The requests, a line each. The next one usually follows an answer within
    microseconds, so a read polls for up to SPIN seconds before it sleeps in recv (a sleep
    and a wake-up cost far more than the poll)."""
    pending = b""
    while True:
        newline = pending.find(b"\n")
        if newline >= 0:
            yield pending[:newline]
            pending = pending[newline + 1:]
            continue
        chunk = read(channel)
        if not chunk:
            return
        if not pending and chunk.find(b"\n") == len(chunk) - 1:
            yield chunk[:-1]  # the usual case: one whole request in one read
        else:
            pending += chunk


def read(channel: socket.socket) -> bytes:
    """What the channel holds, polled for SPIN seconds, then waited for."""
    chunk = spin_recv(channel, SPIN)
    return channel.recv(1 << 20) if chunk is None else chunk


def failure(error: BaseException) -> dict:
    try:
        args = encode(list(error.args))
    except TypeError:
        args = [str(error)]
    text = json.dumps(args)
    if len(text) > 4000:
        args = [text[:4000]]
    return {"raise": type(error).__name__, "args": args,
            "names": [kind.__name__ for kind in type(error).__mro__]}


def answer(request: dict, trees: list, module, calls, views, side: dict):
    if "new" in request:
        trees.append(getattr(module, side["class"])(*decode(request["new"])))
        return len(trees) - 1
    if "const" in request:
        if request["const"] not in side["exports"]:
            raise AttributeError(f"{request['const']!r} is not a name of the contract")
        return getattr(module, request["const"])
    handle = request["tree"]
    if type(handle) is not int or not 0 <= handle < len(trees):
        raise ValueError("no such tree")
    tree = trees[handle]
    args = [decode(arg) for arg in request["args"]]
    if "view" in request:
        if views is None:
            raise ValueError("no views here")
        return views.VIEWS[request["view"]](tree, *args)
    name = request["call"]
    if name not in calls.CALLS:
        raise AttributeError(f"{side['class']} has no method {name!r} in the contract")
    return calls.call(tree, name, args)
