"""The fast path's worker: imports pytest and Hypothesis once, then forks a child per run.

Started by the engine as ``python -s -P fork_worker.py`` with the runs' common clean
environment; it imports nothing of the harness and never runs a test itself, so every
child starts from the same freshly imported state. Protocol, one JSON object per line:

    engine -> worker   {"id": 7, "cwd": ..., "env": {...}, "argv": [...], "log": ...,
                        "limits": {"cpu": s, "memory": bytes, ...}}
    worker -> engine   {"id": 7, "pid": 4242}        the child is running, in its own session
    worker -> engine   {"id": 7, "exit": 1}          it ended: its exit code, or -signal

The child sets up its session, folder, environment, output and resource limits, runs
``pytest.main(argv)`` and leaves with ``os._exit``, so nothing of the worker runs after it.
"""

import gc
import importlib
import json
import os
import resource
import select
import signal
import sys

import pytest

# imported once here, so each child starts warm
WARM = ("_pytest.assertion.rewrite", "_pytest.capture", "_pytest.config", "_pytest.fixtures",
        "_pytest.python", "_pytest.runner", "_pytest.terminal", "hypothesis",
        "hypothesis.stateful", "hypothesis.strategies", "array", "bisect", "heapq", "operator",
        "signal", "textwrap", "types", "typing")
for _name in WARM:
    importlib.import_module(_name)
gc.freeze()  # what is imported now is never garbage: each child's collections skip it

LIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "memory": resource.RLIMIT_AS,
    "files": resource.RLIMIT_NOFILE,
    "file_size": resource.RLIMIT_FSIZE,
    "processes": resource.RLIMIT_NPROC,
}
PATH = list(sys.path)


def send(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def child(request: dict) -> None:
    """In the forked child: become the run, then leave without returning."""
    code = 3
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for name, value in request["limits"].items():
            resource.setrlimit(LIMITS[name], (value, value))
        sys.path[:] = PATH
        sys.argv = ["pytest", *request["argv"]]
        code = int(pytest.main(request["argv"]))
    except BaseException:  # the child must never return into the worker
        code = 3
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    """One thread only (a fork copies no other thread's locks): requests in, exits out.

    Ctrl-C is the engine's to handle: it kills the runs it started, then closes our stdin.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    running: dict[int, int] = {}  # pid -> request id
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], 0.01 if running else None)
        if ready:
            chunk = os.read(0, 65536)
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    child(request)
                running[pid] = request["id"]
                send({"id": request["id"], "pid": pid})
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            send({"id": running.pop(pid), "exit": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()
