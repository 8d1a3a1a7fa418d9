"""The runs' worker: imports pytest and Hypothesis once, then forks each run from there.

Started by the engine as ``python -I -S fork_worker.py FD MODE RUNS LIB`` (inside the
bubblewrap sandbox in mode ``ns``), with a SOCK_SEQPACKET socket to the engine on FD. It
imports nothing of the harness and never runs a test itself, so every run starts from the
same freshly imported state. Protocol, one JSON object per message:

    engine -> worker   {"id": 7, "run": SIDE, "tree": SIDE or null, "group": "run-7"}
                       with two descriptors attached: the records socket, the output socket;
                       "group" names the control group ol made for the run in each of the
                       worker's (none: no groups)
    engine -> worker   {"kill": 7}                      stop run 7 now
    worker -> engine   {"hello": MODE}                  ready
    worker -> engine   {"id": 7, "exit": 1}             run 7 ended: the exit code of its
                                                        tests, or -signal; every process of
                                                        it, on both sides, is gone
    worker -> engine   {"id": 7, "unstarted": "why"}    run 7 could not be forked (memory,
                                                        processes); nothing of it runs

A SIDE is {"root": folder, "cwd", "env", "limits", "argv", "main": "pytest" | "probe" |
"tree", "trusted": bool, "measure": bool, and for the tree side "module", "class",
"exports", "calls", "views"}. The test side of a run gets the records socket
as fd 3, the output as fds 1 and 2 and, when the run has a tree side, the control socket
of the tree's host as fd 4. The tree side is a host process that starts the tree in a
child of its own on request (tree_server.py), so a hung tree can be replaced.

Each side is confined by MODE:
- ``ns``: new user, mount, PID, network, IPC and UTS namespaces; the mount namespace shows
  the side its own folder and nothing of the other runs, a private /tmp, no /proc; the
  side's first process is PID 1 of its namespace, so when it ends the kernel ends every
  process it left (detached or not); all capabilities are dropped before its code runs.
- ``uid``: (the worker runs as root, outside any sandbox) the side runs as the sandbox
  user; after the run the worker kills every process of that user and removes what it
  left in the shared temporary folders. Runs never overlap in this mode.
- ``none``: its own session only.
"""

import contextlib
import ctypes
import gc
import importlib
import json
import os
import resource
import select
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FD, MODE, RUNS, LIB = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
GROUPS = sys.argv[5] if len(sys.argv) > 5 else ""  # "1:pids=DIR,memory=DIR", "2:unified=DIR"
SANDBOX_UID = int(os.environ.get("OL_SANDBOX_UID", "65534"))
# after the standard library: nothing on the path can shadow a module it holds
sys.path += [path for path in (*LIB.split(os.pathsep), HERE) if path]

import _pytest.config  # noqa: E402
import coverage_probe  # noqa: E402, F401 - after the path is set; imported for the runs
import ol_recorder  # noqa: E402 - every run's pytest registers it
import pytest  # noqa: E402
import tree_server  # noqa: E402
import tree_wire  # noqa: E402
from janitor import remove_tree  # noqa: E402

# imported once here, so each child starts warm: every plugin pytest registers by default
# (and what they import on first use), the recorder every run loads, what suites use most
WARM = (*(f"_pytest.{name}" for name in _pytest.config.default_plugins),
        "_pytest.assertion.rewrite", "_pytest.config", "pdb", "xml.etree.ElementTree",
        "hypothesis", "hypothesis.stateful", "hypothesis.strategies", "array",
        "bisect", "heapq", "operator", "signal", "textwrap", "types", "typing", "json",
        "base64", "collections", "dataclasses", "functools", "itertools", "random", "math",
        "re", "tempfile", "coverage")  # a run in the uid sandbox cannot read ol's folder: all here
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
GRACE = 5.0  # seconds the tree side may take to finish after its tests have ended
HOLD = "/ol-hold"  # an empty folder of the sandbox: a side's own folder waits here
INSIDE_GROUPS = "/ol-cgroup"  # where bubblewrap shows the worker its control groups

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 4096, 8192, 16384, 1 << 18
SCRATCH_BYTES = int(os.environ.get("OL_SCRATCH_BYTES", str(64 << 20)))  # each tmpfs of a side
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


class CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32))


def check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def mount(source, target, kind, flags, data=None) -> None:
    check(LIBC.mount(source and source.encode(), target.encode(), kind and kind.encode(),
                     ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def confine_namespaces(side: dict) -> None:
    """In the first process of a side: new namespaces that show only its own folder of the
    runs, read-only, and a fresh, sized scratch (its home, /tmp, /dev/shm) that goes with it.

    Nothing else it sees can be written: the sandbox's root, /dev, /etc and the libraries
    are read-only (bwrap's --remount-ro), so no run leaves anything for a later one.
    """
    own, home = side["root"], side["cwd"]
    uid, gid = os.getuid(), os.getgid()
    check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
                       | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{uid} {uid} 1")
    write("/proc/self/gid_map", f"{gid} {gid} 1")
    # no user namespace may be made below this one: a side could hold every capability in
    # one, and mount what it must not change (its control groups); the kernel counts this
    # limit per namespace, and only this namespace's root, before it drops them, may set it
    write("/proc/sys/user/max_user_namespaces", "0")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount(own, HOLD, None, MS_BIND | MS_REC)
    scratch = f"mode=0700,size={SCRATCH_BYTES}"
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, scratch)
    outside = os.path.isdir(RUNS)  # the run folders live outside /tmp: hide them too
    if outside:
        mount("tmpfs", RUNS, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    os.makedirs(own, exist_ok=True)
    mount(HOLD, own, None, MS_MOVE)
    if outside:
        mount(None, RUNS, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for path in side.get("writable", ()):  # files it hands back (coverage): bound apart
        mount(path, path, None, MS_BIND)
    mount(None, own, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    mount("tmpfs", home, "tmpfs", MS_NOSUID | MS_NODEV, scratch)
    if os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, scratch)
    if os.path.isdir("/dev/pts"):  # no pseudo-terminals: a live channel between sides
        mount("tmpfs", "/dev/pts", "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k")
    mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "mode=0555,size=4k")
    if os.path.isdir(INSIDE_GROUPS):  # the worker's control groups: not the side's to change
        mount("tmpfs", INSIDE_GROUPS, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k")


class SockFilter(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32))


class SockProgram(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter)))


# machine -> (its audit arch, and its numbers of clone, unshare and clone3)
SYSCALLS = {"x86_64": (0xC000003E, 56, 272, 435), "aarch64": (0xC00000B7, 220, 97, 435)}
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
ALLOW, REFUSE = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO | errno


def forbid_user_namespaces() -> None:
    """A seccomp filter, in every mode, on the side and everything it starts: ``unshare``
    and ``clone`` with CLONE_NEWUSER fail with EPERM, ``clone3`` (whose flags a filter
    cannot read) with ENOSYS, so the C library falls back to ``clone``; a system call of
    another ABI (x32, 32-bit) fails whole. Without a user namespace a side holds no
    capability anywhere, so it can make no namespace of its own at all. Where the machine
    is neither x86_64 nor aarch64 there is no filter, and mode ns still forbids them by
    max_user_namespaces."""
    known = SYSCALLS.get(os.uname().machine)
    if known is None:
        return
    arch, clone, unshare, clone3 = known
    load, same, at_least, any_bit, answer = 0x20, 0x15, 0x35, 0x45, 0x06
    program = [
        (load, 0, 0, 4),                        # 0: the ABI
        (same, 1, 0, arch),                     # 1: ours: on at 3
        (answer, 0, 0, REFUSE | 1),             # 2: another ABI: EPERM
        (load, 0, 0, 0),                        # 3: the system call's number
        (at_least, 7, 0, 0x40000000),           # 4: x32's numbers: EPERM at 12
        (same, 7, 0, clone3),                   # 5: clone3: ENOSYS at 13
        (same, 2, 0, unshare),                  # 6: unshare: its flags at 9
        (same, 1, 0, clone),                    # 7: clone: its flags at 9
        (answer, 0, 0, ALLOW),                  # 8: anything else
        (load, 0, 0, 16),                       # 9: the low word of the first argument
        (any_bit, 1, 0, CLONE_NEWUSER),         # 10: a new user namespace: EPERM at 12
        (answer, 0, 0, ALLOW),                  # 11
        (answer, 0, 0, REFUSE | 1),             # 12: EPERM
        (answer, 0, 0, REFUSE | 38),            # 13: ENOSYS
    ]
    filters = (SockFilter * len(program))(*program)
    check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                     ctypes.byref(SockProgram(len(program), filters))), "seccomp")


def drop_capabilities() -> None:
    header = CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (CapData * 2)()
    check(LIBC.capset(ctypes.byref(header), data), "capset")


def become(side: dict) -> None:
    """In the process that runs a side's code: its session, folder, environment, limits."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if MODE == "uid" and not side.get("trusted"):
        os.setgroups([])
        os.setgid(SANDBOX_UID)
        os.setuid(SANDBOX_UID)
    os.chdir(side["cwd"])
    os.environ.clear()
    os.environ.update(side["env"])
    for name, value in side["limits"].items():
        resource.setrlimit(LIMITS[name], (value, value))
    sys.path[:] = PATH


def start_side(side: dict, fds: dict, groups: list[str] = ()) -> int:
    """Fork the side; its first process's pid. ``fds`` maps target descriptor -> ours;
    the side joins the run's control ``groups`` before anything else."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        for group in groups:
            write(os.path.join(group, "cgroup.procs"), str(os.getpid()))
        null = os.open(os.devnull, os.O_RDONLY)
        wanted = {0: null, **fds}
        moved = {target: os.dup(source) for target, source in wanted.items()}
        for target, source in moved.items():
            os.dup2(source, target)
        os.closerange(max(moved) + 1 if moved else 3, 1 << 16)
        if MODE == "ns":
            confine_namespaces(side)
            inner = os.fork()
            if inner:  # the first process waits for PID 1 of the new namespace
                for target in list(moved):
                    if target > 2:
                        os.close(target)
                _, status = os.waitpid(inner, 0)
                code = os.waitstatus_to_exitcode(status)
                code = code if code >= 0 else 128 - code
                return
            LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if side["main"] != "tree":  # the tree's host keeps them to isolate each tree
                drop_capabilities()
        else:
            LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1)
        become(side)
        forbid_user_namespaces()
        code = init(lambda: run_side(side))
    except BaseException as error:  # the child must never return into the worker
        with contextlib.suppress(BaseException):
            os.write(2, f"ol: the run could not start: {error!r}\n".encode())
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def init(main) -> int:
    """Run ``main()`` in a child and reap every process that ends here meanwhile (orphans come
    to the first process of a side: PID 1 of its namespace, or a child subreaper), so no
    side leaves a zombie; ``main``'s exit code once it has ended."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = main()
        except BaseException as error:
            with contextlib.suppress(BaseException):
                os.write(2, f"ol: the run could not start: {error!r}\n".encode())
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 70
        if done == pid:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code


def isolate_tree(serve) -> int:
    """In a new tree child (mode ns): a PID namespace of its own, whose first process drops
    every capability and serves; stopping the child ends everything the tree started, at
    once. The caller's process only waits for it."""
    check(LIBC.unshare(CLONE_NEWPID), "unshare")
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            drop_capabilities()
            code = init(serve)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def run_side(side: dict) -> int:
    main = side["main"]
    if main == "pytest":
        sys.argv = ["pytest", *side["argv"]]
        return int(pytest.main(side["argv"], plugins=[ol_recorder]))
    if main == "probe":
        return probe(side)
    if main == "tree":
        return tree_server.host(socket.socket(fileno=4), side,
                                isolate_tree if MODE == "ns" else None)
    return 70


def probe(side: dict) -> int:
    """Import the side's module from its ``tree`` folder and check that it holds what the
    contract exports (exports_problem); write what happened as one JSON line to fd 3."""
    import traceback

    package, name = side["argv"][0], side["module"]
    sys.path.insert(0, package)
    try:
        module = importlib.import_module(name)
        problem = exports_problem(module, side["class"], side["exports"])
        result = {"ok": not problem, "error": problem}
    except BaseException as error:
        mine = os.path.join(package, *name.split(".")) + ".py"
        frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                  if frame.filename == mine]
        where = f"line {frames[-1].lineno}: {frames[-1].line}\n" if frames else ""
        said = "".join(traceback.format_exception_only(type(error), error)).rstrip()
        result = {"ok": False, "error": where + said.replace(package + "/", "")}
    with os.fdopen(3, "w", encoding="utf-8") as out:
        out.write(json.dumps(result) + "\n")
    return 0


def exports_problem(module, cls: str, exports) -> str:
    """"" when ``module`` defines every name the contract exports as the tests can use it:
    ``cls`` a class, every other name a type (``NodeId = int``) or plain data that can
    cross to the tests (``ROOT = 0``); else what is wrong, in the student's terms."""
    for export in exports:
        if not hasattr(module, export):
            return f"it defines no {'class ' if export == cls else ''}{export}"
        value = getattr(module, export)
        if export == cls or isinstance(value, type):
            if not isinstance(value, type):
                return f"its {cls} is not a class"
            continue
        try:
            tree_wire.encode(value)
        except (TypeError, RecursionError):
            return (f"its {export} (of type {type(value).__name__}) cannot cross to the "
                    f"tests: {tree_wire.RULE}")
    return ""


VIEWS = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs",
         "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "binfmt_misc",
         "autofs", "nsfs", "efivarfs", "selinuxfs", "rpc_pipefs"}  # kernel views, no storage


def writable_places(uid: int) -> list[str]:
    """Every folder on this machine's file systems that ``uid`` (with no groups but its own)
    could create a file in: found by walking each mounted file system once, not listed by
    hand (/tmp, /var/tmp, /dev/shm, /run/lock and whatever else this machine has)."""
    try:
        with open("/proc/self/mounts") as mounts:
            points = [line.split()[1].replace("\\040", " ") for line in mounts
                      if line.split()[2] not in VIEWS]
    except OSError:
        points = ["/"]
    found, seen = [], set()
    for point in points:
        try:
            device = os.stat(point).st_dev
        except OSError:
            continue
        todo = [point]
        while todo:
            folder = todo.pop()
            try:
                info = os.stat(folder, follow_symlinks=False)
                entries = list(os.scandir(folder))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            if info.st_mode & 0o002 or (info.st_uid == uid and info.st_mode & 0o200) \
                    or (info.st_gid == uid and info.st_mode & 0o020):
                found.append(folder)
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False) \
                            and entry.stat(follow_symlinks=False).st_dev == device:
                        todo.append(entry.path)
                except OSError:
                    pass
    return sorted(set(found))


def purge(places: list[str]) -> None:
    """In uid mode, after a run: every process of the sandbox user, and everything it owns
    in every place it could write."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(SANDBOX_UID)
            os.setuid(SANDBOX_UID)
            os.kill(-1, signal.SIGKILL)  # every process this user may signal: its own
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    for folder in places:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != SANDBOX_UID:
                    continue
                remove_tree(entry.path)  # never recursing: a run may nest folders deep
            except OSError:
                pass


class Run:
    def __init__(self, id: int, test: int, tree: int | None) -> None:
        self.id = id
        self.test = test          # pid of the test side's first process
        self.tree = tree          # pid of the tree side's first process, or None
        self.exit = None          # the test side's exit code, once it ended
        self.deadline = None      # when the tree side is killed, once the tests ended
        self.groups: list[str] = []  # the groups ol made for it, one per controller (or one)

    @property
    def pids(self) -> list[int]:
        return [pid for pid in (self.test, self.tree) if pid is not None]


def main() -> None:
    """One thread only (a fork copies no other thread's locks): requests in, exits out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    places = []  # uid mode: where the sandbox user could leave something, emptied after a run
    if MODE == "uid":
        places = [place for place in writable_places(SANDBOX_UID)
                  if not place.startswith(RUNS.rstrip("/") + "/")]
    channel = socket.socket(fileno=FD)
    runs: dict[int, Run] = {}
    owner: dict[int, Run] = {}  # pid -> its run
    ends: dict[int, int] = {}  # pid -> a descriptor readable once it has ended (a pidfd)
    channel.send(json.dumps({"hello": MODE}).encode())
    while True:
        for pid in [pid for pid in ends if pid not in owner]:
            os.close(ends.pop(pid))
        # a side's end wakes the loop at once where each has a pidfd; else it looks often
        timeout = 0.01 if len(ends) < len(owner) else None
        waiting = [run.deadline for run in runs.values() if run.deadline is not None]
        if waiting:
            left = max(0.0, min(waiting) - time.monotonic())
            timeout = left if timeout is None else min(left, timeout)
        ready, _, _ = select.select([channel, *ends.values()], [], [], timeout)
        if channel in ready:
            data, fds, _, _ = socket.recv_fds(channel, 1 << 20, 4)
            if not data:  # the engine has gone: so do its runs
                for run in runs.values():
                    for pid in run.pids:
                        kill(pid)
                if MODE == "uid" and runs:
                    purge(places)
                return
            request = json.loads(data)
            if "kill" in request:
                run = runs.get(request["kill"])
                for pid in run.pids if run else ():
                    kill(pid)
                for fd in fds:
                    os.close(fd)
                continue
            run = Run(request["id"], None, None)
            try:
                start_run(run, request, fds)
            except OSError as error:  # no fork here (memory, processes): the run never was
                for pid in run.pids:
                    kill(pid)
                    os.waitpid(pid, 0)
                channel.send(json.dumps({"id": run.id, "unstarted": str(error)}).encode())
                continue
            runs[run.id] = run
            for pid in run.pids:
                owner[pid] = run
                with contextlib.suppress(AttributeError, OSError):  # no pidfds: it looks often
                    ends[pid] = os.pidfd_open(pid)
        reap(runs, owner, channel, places)


def run_groups(request: dict) -> list[str]:
    """The control groups ol made for the run (a folder per controller, or one in v2), as
    this worker sees them; none where there are no groups."""
    name = request.get("group") or ""
    if not GROUPS or not name or "/" in name:
        return []
    _, _, listed = GROUPS.partition(":")
    return [os.path.join(entry.partition("=")[2], name) for entry in listed.split(",")]


def start_run(run: Run, request: dict, fds: list[int]) -> None:
    """Fork the run's sides: the tree first, when there is one, then the tests."""
    records, output = fds
    control = None
    try:
        run.groups = run_groups(request)
        if request["tree"] is not None:
            control, far = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            with far:
                run.tree = start_side(request["tree"], {1: output, 2: output, 4: far.fileno()},
                                      run.groups)
        wanted = {1: output, 2: output, 3: records}
        if control is not None:
            wanted[4] = control.fileno()
        run.test = start_side(request["run"], wanted, run.groups)
    finally:
        for fd in fds:
            os.close(fd)
        if control is not None:
            control.close()


def kill(pid: int) -> None:
    """The side's first process and its session (which is all of it in mode ns)."""
    for target in (pid, -pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)


def reap(runs: dict, owner: dict, channel, places: list[str]) -> None:
    while owner:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        run = owner.pop(pid, None)
        if run is None:
            continue
        if pid == run.test:
            run.test = None
            run.exit = os.waitstatus_to_exitcode(status)
            if run.tree is not None:
                run.deadline = time.monotonic() + GRACE
        else:
            run.tree = None
    now = time.monotonic()
    for run in list(runs.values()):
        if run.deadline is not None and run.tree is not None and now >= run.deadline:
            kill(run.tree)
            run.deadline = None
        if run.test is None and run.tree is None:
            if MODE == "uid":
                purge(places)
            del runs[run.id]
            channel.send(json.dumps({"id": run.id, "exit": run.exit}).encode())


if __name__ == "__main__":
    main()
