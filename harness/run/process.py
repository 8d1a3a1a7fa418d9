"""Starting, limiting and stopping runs: the engine's side of the runs' worker.

One worker process (payload/fork_worker.py) per ``Runner``, started in the sandbox on first
use, forks every run. The engine talks to it over a SOCK_SEQPACKET socket that no run can
reach, and hands each run two sockets of its own: one the run's recorder writes records
to, one for its output. A socket (unlike a pipe) cannot be opened again through /proc, so
no run can write into another's channel. The engine never signals a process itself: it
asks the worker, which knows its runs' processes because it forked them.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import OlError, OlFault
from harness.run import accounts, cgroups, intake
from harness.run.sandbox import PAYLOAD, Sandbox

OUTPUT_LIMIT = 64_000       # characters of a run's output kept
RECORDS_LIMIT = 32 << 20    # bytes of records a run may write; more is a crash
START_LIMIT = 60.0          # seconds the worker may take to start
STOP_LIMIT = 15.0           # seconds a stopped run may take to be reported gone
# What one run may hold at once, all of its processes on both sides together, where control
# groups can be made (cgroups.py); each process is limited apart as well (layout.LIMITS).
RUN_CAPS = {"processes": 512, "memory": 4 << 30}
WORKER_PROCESSES = 4096     # the whole worker: every run it holds at once


def worker_memory() -> int:
    """The worker's memory cap, all runs together: three quarters of the machine's memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4
    except (ValueError, OSError):
        return 8 << 30


class Cancelled(Exception):
    """The caller asked the runs to stop (Ctrl-C): the run was killed and cleaned up."""


@dataclass(frozen=True)
class Side:
    """One side of a run: the tests, or the tree behind their proxy."""

    root: Path                      # the side's own folder: all it sees of the runs
    cwd: Path
    env: Mapping[str, str]
    limits: Mapping[str, int]
    main: str                       # pytest, probe or tree
    argv: tuple[str, ...] = ()
    trusted: bool = False           # our own code only (the uid sandbox runs it as root)
    measure: bool = False           # the tree side measures coverage of its tree
    views: str = ""                 # the module of views the tree side answers, if any
    # the tree side: the module the tree is, its class, the names it exports, and the module
    # (in calls/) that answers the proxy's calls
    module: str = ""
    cls: str = ""
    exports: tuple[str, ...] = ()
    calls: str = ""
    # files under root the side writes for the engine (the tree's coverage); everything
    # else under root is read-only in the bubblewrap sandbox, and cwd is a fresh scratch
    writable: tuple[Path, ...] = ()

    def message(self) -> dict:
        return {"root": str(self.root), "cwd": str(self.cwd), "env": dict(self.env),
                "limits": dict(self.limits), "main": self.main, "argv": list(self.argv),
                "trusted": self.trusted, "measure": self.measure, "views": self.views,
                "module": self.module, "class": self.cls, "exports": list(self.exports),
                "calls": self.calls,
                "writable": [str(path) for path in self.writable]}


@dataclass(frozen=True)
class Ended:
    returncode: int | None          # None: stopped at its time limit
    records: list[str]              # the lines the run wrote to its records socket
    output: str                     # its output, cut at OUTPUT_LIMIT
    overflow: bool = False          # it wrote more records than RECORDS_LIMIT
    capped: tuple[str, ...] = ()    # the caps of RUN_CAPS it reached (processes, memory)


class WorkerLost(Exception):
    """The worker died while it held the run: the run never ended, and may be run again."""


class Worker:
    """The runs' worker process, shared by every thread of the engine.

    The worker is started by a keeper thread of its own, which lives until ``close``:
    bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started
    it ends, so a worker started from a pool thread would die with that thread.
    """

    def __init__(self, sandbox: Sandbox, runs: Path, uid: int | None = None,
                 groups: str = "") -> None:
        self.sandbox = sandbox
        self.runs = runs
        self.uid = uid  # the host user it runs as (ol runs as root), else None
        self.groups_name = groups  # its control groups' names begin so (the janitor's)
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.channel: socket.socket | None = None
        self.generation = 0     # how many workers this one has started
        self.lost = 0           # the generation whose worker died, once it has
        self.next_id = 0
        self.waiting: dict[int, tuple[int, queue.SimpleQueue]] = {}
        self.errors = None  # the worker's standard error, read when it fails
        self.closing = threading.Event()
        self.keeper: threading.Thread | None = None
        self.requests: queue.SimpleQueue = queue.SimpleQueue()  # (command, options, answer)
        self.groups: cgroups.Groups | None = None  # the worker's control groups, if any
        self.leftover: list[cgroups.Groups] = []  # ended runs' groups not yet removed

    def start(self) -> socket.socket:
        """The worker's channel, starting a worker when none is alive (the lock is held)."""
        if self.channel is not None and self.lost != self.generation:
            return self.channel
        self.retire()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - read if the worker fails to start
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "OL_SANDBOX_UID": str(self.sandbox.uid)}
        self.groups = cgroups.make(WORKER_PROCESSES, worker_memory(), self.groups_name)
        if self.groups is not None and self.groups.version == 2:
            self.groups.hand_over(self.uid)  # v2 moves a process only by the common parent
        try:
            self.process = self.launch(
                self.sandbox.worker_command(theirs.fileno(), self.runs, self.groups, self.uid),
                pass_fds=[theirs.fileno()],
                cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=errors)
        except OSError as error:
            raise OlError(f"the runs' worker cannot start ({error}); run the command again "
                          "with OL_SANDBOX=none to see whether the sandbox is the cause") from None
        finally:
            theirs.close()
        ours.settimeout(START_LIMIT)
        try:
            hello = intake.worker_message(ours.recv(1 << 16))
        except OSError:
            hello = None
        if hello is None or not hello.hello:  # the sandbox was probed and starts: ol's fault
            self.process.kill()
            self.process.wait()
            raise WorkerLost(f"a worker did not start: {last_line(errors)}")
        ours.settimeout(None)
        self.generation += 1
        self.channel, self.errors = ours, errors
        threading.Thread(target=self.read, args=(ours, self.generation), daemon=True).start()
        threading.Thread(target=watch, args=(self.process, ours), daemon=True).start()
        return ours

    def launch(self, command: list[str], **options) -> subprocess.Popen:
        """Popen ``command`` from the keeper thread, which lives until ``close``."""
        if self.keeper is None or not self.keeper.is_alive():
            self.keeper = threading.Thread(target=self.keep, daemon=True,
                                           name="ol-worker-keeper")
            self.keeper.start()
        answer: queue.SimpleQueue = queue.SimpleQueue()
        self.requests.put((command, options, answer))
        started = answer.get()
        if isinstance(started, BaseException):
            raise started
        return started

    def keep(self) -> None:
        """The keeper: starts workers on request; ending (at ``close``) ends its workers."""
        while not self.closing.is_set():
            try:
                command, options, answer = self.requests.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                answer.put(subprocess.Popen(command, **options))
            except BaseException as error:  # handed to the thread that asked
                answer.put(error)

    def read(self, channel: socket.socket, generation: int) -> None:
        while True:
            try:
                data = channel.recv(1 << 16)
            except OSError:
                data = b""
            message = intake.worker_message(data) if data else None
            if message is None:  # the worker is gone, or says what no worker says: lost
                break
            with self.lock:
                held = self.waiting.get(message.id)
            if held is not None:
                held[1].put(message)
        with self.lock:  # the worker died: every run it held ends now
            self.lost = max(self.lost, generation)
            for held_by, box in self.waiting.values():
                if held_by == generation:
                    box.put(None)

    def send(self, message: dict, fds: list[int] = ()) -> None:
        try:
            socket.send_fds(self.channel, [json.dumps(message).encode()], list(fds))
        except OSError:
            raise WorkerLost("its channel was closed") from None

    def run(self, test: Side, tree: Side | None, timeout: float,
            cancel: threading.Event | None,
            on_record: Callable[[str], None] | None = None) -> Ended:
        """Run the sides once; raises WorkerLost when the worker dies while it holds them."""
        box: queue.SimpleQueue = queue.SimpleQueue()
        records, records_far = socket.socketpair()
        output, output_far = socket.socketpair()
        drain = Drain(records, output, on_record)
        group = None
        with self.lock:
            try:
                self.start()
                self.next_id += 1
                id = self.next_id
                group = self.run_group(id)
                self.waiting[id] = (self.generation, box)
                self.send({"id": id, "run": test.message(),
                           "tree": tree.message() if tree else None,
                           "group": f"run-{id}" if group else ""},
                          [records_far.fileno(), output_far.fileno()])
            except BaseException:
                for sock in (records, output):
                    sock.close()
                self.done_with(group)
                raise
            finally:
                records_far.close()
                output_far.close()
        drain.start()
        returncode, stopped, capped = None, False, ()
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    message = box.get(timeout=0.05)
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled from None
                    if time.monotonic() >= deadline and not stopped:
                        self.stop(id)
                        stopped, deadline = True, time.monotonic() + STOP_LIMIT
                    elif stopped and time.monotonic() >= deadline:
                        break
                    continue
                if message is None:
                    raise WorkerLost(last_line(self.errors))
                if message.unstarted:
                    raise OlError(f"a run could not start here ({message.unstarted}): the "
                                  "machine is short of memory or processes. Run the command "
                                  "again, with fewer --jobs")
                returncode = None if stopped else message.exit
                capped = group.reached() if group is not None else ()
                break
        except WorkerLost:
            raise
        except BaseException:
            self.stop(id)
            raise
        finally:
            with self.lock:
                self.waiting.pop(id, None)
                self.done_with(group)
            drain.finish()
        return Ended(returncode, drain.lines(), drain.text(), drain.overflow, capped)

    def run_group(self, id: int) -> cgroups.Groups | None:
        """The run's own control groups, inside the worker's, with RUN_CAPS (none where the
        worker has none); made here, by ol, so that their caps are not the worker's to
        change. A group that cannot be made is a fault of ol: the run would go uncapped."""
        self.tidy()
        if self.groups is None:
            return None
        try:
            return self.groups.run_group(f"run-{id}", RUN_CAPS["processes"],
                                         RUN_CAPS["memory"], self.uid)
        except OSError as error:
            raise OlFault(f"a run's control group could not be made ({error.strerror})") \
                from None

    def done_with(self, group: cgroups.Groups | None) -> None:
        """Remove a run's groups, or keep them to remove once the kernel lets them go (their
        last processes are a moment from gone); the lock is held."""
        if group is not None and not group.remove(patience=0):
            self.leftover.append(group)

    def tidy(self, patience: int = 0) -> None:
        """Remove the groups of ended runs that the kernel held a moment ago."""
        self.leftover = [group for group in self.leftover if not group.remove(patience)]

    def stop(self, id: int) -> None:
        with self.lock, contextlib.suppress(WorkerLost):
            self.send({"kill": id})

    def retire(self) -> None:
        """Let go of a dead (or half-started) worker: its channel closed, its process reaped."""
        if self.channel is not None:
            # shut down before closing: the reader thread is blocked in recv on this socket,
            # and a close alone neither wakes it nor, while it waits, ends the channel, so
            # the worker would never read its end and would be killed at the timeout below
            with contextlib.suppress(OSError):
                self.channel.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self.channel.close()
            self.channel = None
        if self.process is not None:
            try:
                self.process.wait(timeout=5 if self.process.poll() is None else 0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        self.tidy(patience=100)
        if self.groups is not None:
            self.groups.remove()
            self.groups = None

    def close(self) -> None:
        """Stop the worker (closing its channel ends it and its runs), also half-started."""
        with self.lock:
            self.retire()
        self.closing.set()


def watch(process: subprocess.Popen, channel: socket.socket) -> None:
    """When the process ol started a worker with ends, its channel ends too: the worker
    is lost, even where the sandbox inside outlived that process (a bwrap killed in its
    first moments may not pass its parent-death signal on), and the worker, at the end of
    its channel, stops with its runs."""
    process.wait()
    with contextlib.suppress(OSError):
        channel.shutdown(socket.SHUT_RDWR)


def last_line(errors) -> str:
    """The last line a worker wrote to its standard error (a temporary file)."""
    try:
        errors.seek(0)
        said = errors.read().decode(errors="replace").strip().splitlines()
    except (AttributeError, OSError, ValueError):
        said = []
    return said[-1] if said else "it said nothing"


class Drain(threading.Thread):
    """Reads a run's records and output sockets until every writer has gone."""

    def __init__(self, records: socket.socket, output: socket.socket,
                 on_record: Callable[[str], None] | None = None) -> None:
        super().__init__(daemon=True)
        self.sockets = {records: bytearray(), output: bytearray()}
        self.records, self.output = records, output
        self.on_record = on_record  # sees each whole record line as it arrives
        self.seen = 0               # bytes of the records already handed to on_record
        self.overflow = False
        self.closed = threading.Event()

    def run(self) -> None:
        with selectors.DefaultSelector() as selector:
            for sock in self.sockets:
                selector.register(sock, selectors.EVENT_READ)
            open_ = len(self.sockets)
            while open_ and not self.closed.is_set():
                for key, _ in selector.select(timeout=0.1):
                    sock = key.fileobj
                    try:
                        chunk = sock.recv(1 << 16)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        selector.unregister(sock)
                        open_ -= 1
                        continue
                    kept = self.sockets[sock]
                    limit = RECORDS_LIMIT if sock is self.records else OUTPUT_LIMIT * 4
                    if len(kept) < limit:
                        kept += chunk
                    elif sock is self.records:
                        self.overflow = True
                    if sock is self.records and self.on_record is not None:
                        self.hand_on(kept)

    def hand_on(self, kept: bytearray) -> None:
        end = kept.rfind(b"\n") + 1
        if end > self.seen:
            for line in kept[self.seen:end - 1].decode("utf-8", "replace").split("\n"):
                self.on_record(line)
            self.seen = end

    def finish(self) -> None:
        """Wait a moment for the last bytes (every writer is gone by now), then close."""
        self.join(timeout=2.0)
        self.closed.set()
        self.join()
        for sock in self.sockets:
            sock.close()

    def lines(self) -> list[str]:
        """The record lines, split at newlines only (a record is one line of JSON)."""
        text = self.sockets[self.records].decode("utf-8", "replace")
        return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text \
            else []

    def text(self) -> str:
        return self.sockets[self.output].decode("utf-8", "replace")[:OUTPUT_LIMIT]


class Janitor:
    """The janitor of a runner's runs (payload/janitor.py): a process of its own, outside
    every sandbox and in a session of its own, told of each folder, control group and host
    user of the runs before they exist. When ol closes its socket, or ol ends in any way
    (SIGKILL included), it kills every process of those users, removes the groups deepest
    first and the folders, and exits: nothing of a run outlives the ol that made it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.process = subprocess.Popen(
                [os.path.realpath(sys.executable), "-I", "-S", str(PAYLOAD / "janitor.py"),
                 str(theirs.fileno())], pass_fds=[theirs.fileno()], cwd="/",
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            ours.close()
            raise OlError(f"ol cannot start a process here ({error.strerror}): the machine is "
                          "short of memory or processes. Run the command again") from None
        finally:
            theirs.close()
        self.channel = ours
        self.lock = threading.Lock()

    def tell(self, word: str, what: object, fds: tuple[int, ...] = ()) -> None:
        """One line to the janitor (see its docstring), with descriptors it is to hold."""
        with self.lock, contextlib.suppress(OSError):
            socket.send_fds(self.channel, [f"{word} {what}\n".encode()], list(fds))

    def close(self, patience: float = 60.0) -> None:
        """Tell the janitor that ol is done, and wait (at most ``patience`` seconds) while it
        removes what is left."""
        with self.lock, contextlib.suppress(OSError):
            self.channel.shutdown(socket.SHUT_WR)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=patience)
        self.channel.close()


class Runner:
    """Where runs happen: one sandbox, one folder of run folders, one worker, and the
    janitor that removes all of it however ol ends."""

    def __init__(self, sandbox: Sandbox, fresh: bool = False) -> None:
        self.sandbox = sandbox
        self.fresh = fresh  # a new worker for every run (slower; for comparison)
        self.janitor = Janitor()
        self.folder = Path(tempfile.gettempdir()) / f"ol-runs-{secrets.token_hex(6)}"
        self.janitor.tell("folder", self.folder)  # told first: no moment where it is unknown
        self.folder.mkdir(mode=0o700)
        self.folder.chmod(0o711)
        # as root, bubblewrap's processes are a host user of this runner's own, never root
        self.lease = accounts.lease() if sandbox.leases_host_user else None
        self.uid = self.lease.uid if self.lease else None
        if self.lease is not None:  # the janitor holds the lease until that user's are gone
            self.janitor.tell("uid", self.lease.uid, (self.lease.lock,))
        for uid in sandbox.users():
            self.janitor.tell("uid", uid)
        self.groups = f"{cgroups.PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        self.janitor.tell("groups", self.groups)
        self.worker = Worker(sandbox, self.folder, self.uid, self.groups)
        self.serial = threading.Lock()  # for a sandbox whose runs go one at a time

    def new_folder(self) -> Path:
        folder = Path(tempfile.mkdtemp(prefix="run-", dir=self.folder))
        folder.chmod(0o711)
        return folder

    def drop(self, folder: Path) -> None:
        """A run's folder is done with: the janitor removes it, off the runs' way."""
        self.janitor.tell("drop", folder)

    def hand_over(self, side: Path, untrusted: bool) -> None:
        """A side's folder becomes what the sandbox says: in the uid sandbox, a side of
        submission code is its user's and ours stays private; in bubblewrap as root, every
        side is the runner's host user's (each side sees only its own folder)."""
        self.sandbox.hand_over(side, untrusted, self.uid)

    def run(self, test: Side, tree: Side | None, timeout: float,
            cancel: threading.Event | None,
            on_record: Callable[[str], None] | None = None) -> Ended:
        """Run the sides; ``on_record`` sees each record line as the run writes it."""
        serial = self.serial if self.sandbox.one_run_at_a_time else contextlib.nullcontext()
        with serial:
            if not self.fresh:
                return self.worker.run(test, tree, timeout, cancel, on_record)
            worker = Worker(self.sandbox, self.folder, self.uid, self.groups)
            try:
                return worker.run(test, tree, timeout, cancel, on_record)
            finally:
                worker.close()

    def close(self) -> None:
        """The worker stops with its runs; then the janitor removes every folder and group
        and kills whatever of the runs' users is left, and ol waits for it."""
        self.worker.close()
        self.janitor.close()
        if self.lease is not None:
            self.lease.release()
