"""Control groups: caps on a run's processes and memory, counted per run, that hold whatever
uid the run has, root included (the kernel exempts root from RLIMIT_NPROC).

Where ol may make control groups (root on a plain Linux host, cgroup v1 or v2), each worker
gets a group of its own for each of the ``pids`` and ``memory`` controllers, below the
group ol itself runs in, and each run a group inside the worker's. ol makes every group
itself, as root, before the run starts; their folders and every file that sets a cap stay
root's. The only file of a group handed to the worker's host user is ``cgroup.procs``
(and v1's ``tasks``), so that the worker can put a run's sides into the run's group before
any of their code starts. No side can change a cap, make a group, or lift itself out of
its run's group: the files are not its own, and it can make no namespace in which they
would be (fork_worker.py stops it making user namespaces). ol reads whether a cap was
reached when the run has ended, and removes the run's group, deepest first.

Where none can be made (a user without root, most platform containers), ``make`` returns
None and only the per-process limits hold (README: the sandbox).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("pids", "memory")
PREFIX = "ol-"  # a worker's groups: ol-<pid of the ol that made it>-<random>


@dataclass(frozen=True)
class Groups:
    """Groups of one version: the folder of each controller's group (in v2 one folder)."""

    version: int                    # 1 or 2
    folders: tuple[tuple[str, str], ...]  # (controller, folder); in v2 ("unified", folder)

    def argument(self) -> str:
        """How the worker is told: "1:pids=/sys/...,memory=/sys/..." or "2:unified=..."."""
        return f"{self.version}:" + ",".join(f"{name}={folder}" for name, folder in self.folders)

    def handed(self) -> tuple[str, ...]:
        """The files of these groups a host user must write to move its processes in."""
        names = ("cgroup.procs", "tasks") if self.version == 1 else ("cgroup.procs",)
        return tuple(f"{folder}/{name}" for _, folder in self.folders for name in names)

    def hand_over(self, uid: int | None) -> None:
        """Let host user ``uid`` move its own processes into these groups (nothing else)."""
        if uid is None:
            return
        for path in self.handed():
            with contextlib.suppress(FileNotFoundError):
                os.chown(path, uid, uid)

    def run_group(self, name: str, processes: int, memory: int,
                  uid: int | None = None) -> Groups:
        """A group ``name`` for one run inside each of these, capped at ``processes`` and
        ``memory`` bytes, made by ol (root); ``uid`` may only move processes in. OSError
        when it cannot be made (nothing of it is left)."""
        made = Groups(self.version, tuple((controller, f"{folder}/{name}")
                                          for controller, folder in self.folders))
        try:
            for _, folder in made.folders:
                os.mkdir(folder, 0o755)
            made.cap(processes, memory)
            made.hand_over(uid)
        except OSError:
            made.remove(patience=0)
            raise
        return made

    def cap(self, processes: int, memory: int) -> None:
        for controller, folder in self.folders:
            if controller in ("pids", "unified"):
                write(f"{folder}/pids.max", processes)
            if controller == "memory":
                write(f"{folder}/memory.limit_in_bytes", memory)
                with contextlib.suppress(OSError):  # where swap is accounted
                    write(f"{folder}/memory.memsw.limit_in_bytes", memory)
            if controller == "unified":
                write(f"{folder}/memory.max", memory)
                with contextlib.suppress(OSError):
                    write(f"{folder}/memory.swap.max", 0)

    def reached(self) -> tuple[str, ...]:
        """The caps these groups' processes reached (processes, memory), read by ol once they
        have ended: the kernel's own counts."""
        found = []
        for _, folder in self.folders:
            for name, events, cap in (("processes", "pids.events", "max"),
                                      ("memory", "memory.events", "oom_kill"),
                                      ("memory", "memory.oom_control", "oom_kill"),
                                      ("memory", "memory.failcnt", "")):
                counts = read_counts(f"{folder}/{events}")
                if counts.get(cap, 0) > 0 and name not in found:
                    found.append(name)
        return tuple(found)

    def remove(self, patience: int = 100) -> bool:
        """Remove these groups and every group below them, deepest first, once their
        processes have gone (a moment after they were killed): tried ``patience`` more
        times, 20 ms apart. Whether all are gone."""
        for attempt in range(patience + 1):
            if all(remove_subtree(folder) for _, folder in self.folders):
                return True
            if attempt < patience:
                time.sleep(0.02)
        return False


def read_counts(path: str) -> dict[str, int]:
    """A cgroup file of "name count" lines (or one bare count, under the name "")."""
    try:
        with open(path) as text:
            lines = text.read(1 << 16).split("\n")
    except OSError:
        return {}
    counts = {}
    for line in lines:
        parts = line.split()
        with contextlib.suppress(ValueError, IndexError):
            counts[parts[0] if len(parts) > 1 else ""] = int(parts[-1])
    return counts


def remove_subtree(folder: str) -> bool:
    """rmdir ``folder`` and every group below it, deepest first (cgroupfs removes only an
    empty group, and a group with child groups is not empty); whether it is gone."""
    if not os.path.isdir(folder):
        return True
    for below, groups, _ in os.walk(folder, topdown=False):
        for name in groups:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(below, name))
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def own_groups() -> dict[str, tuple[int, Path]]:
    """controller -> (version, the folder of the group this process is in), where mounted."""
    mounts: dict[str, tuple[int, Path]] = {}
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text().splitlines()
        membership = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    paths = {}
    for line in membership:
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else ["unified"]:
            paths[name] = path
    for line in mountinfo:
        fields = line.split()
        try:
            kind = fields[fields.index("-") + 1]
        except (ValueError, IndexError):
            continue
        root, point, options = fields[3], fields[4], fields[-1].split(",")
        if kind == "cgroup":
            for name in CONTROLLERS:
                if name in options and name in paths:
                    mounts[name] = (1, Path(point) / relative(paths[name], root))
        elif kind == "cgroup2" and "unified" in paths:
            folder = Path(point) / relative(paths["unified"], root)
            try:
                offered = (folder / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if all(name in offered for name in CONTROLLERS):
                mounts.setdefault("unified", (2, folder))
    return mounts


def relative(path: str, root: str) -> str:
    path = path if root in ("/", "") else path.removeprefix(root)
    return path.lstrip("/")


def sweep(parent: Path) -> None:
    """Remove, whole, the groups that an ol no longer running left in ``parent`` (one killed
    before it and its keeper could clean up): their processes are gone by now."""
    with contextlib.suppress(OSError):
        for folder in parent.glob(f"{PREFIX}*-*"):
            owner = folder.name.split("-")[1]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                remove_subtree(str(folder))


def make(processes: int, memory: int, name: str = "") -> Groups | None:
    """Groups for one worker, capped at ``processes`` and ``memory`` bytes in all, named
    ``name``... (ol-<pid>-... by default); None where none can be made here."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    found = own_groups()
    for _, folder in found.values():
        sweep(folder)
    name = f"{name or f'{PREFIX}{os.getpid()}'}-{secrets.token_hex(4)}"
    if all(controller in found and found[controller][0] == 1 for controller in CONTROLLERS):
        parents = Groups(1, tuple((controller, str(found[controller][1]))
                                  for controller in CONTROLLERS))
    elif "unified" in found:
        parent = found["unified"][1]
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if not all(controller in enabled for controller in CONTROLLERS):
            return None  # the parent does not hand these controllers down
        parents = Groups(2, (("unified", str(parent)),))
    else:
        return None
    try:
        made = parents.run_group(name, processes, memory)
    except OSError:
        return None
    if made.version == 2:  # v2 keeps processes in leaves: the worker's own is "worker"
        try:
            os.mkdir(f"{made.folders[0][1]}/worker", 0o755)
            write(f"{made.folders[0][1]}/cgroup.subtree_control", "+pids +memory")
        except OSError:
            made.remove(patience=0)
            return None
    return made


def write(path: str | Path, value) -> None:
    with open(path, "w") as out:
        out.write(f"{value}\n")


def entering(groups: Groups | None, command: list[str]) -> list[str]:
    """``command``, started so that it is in ``groups`` before it runs (a shell puts its own
    pid there, then becomes the command): in v2, in their leaf ``worker``."""
    if groups is None:
        return command
    leaf = "/worker" if groups.version == 2 else ""
    procs = [f"{folder}{leaf}/cgroup.procs" for _, folder in groups.folders]
    script = 'for procs in "$@"; do [ "$procs" = -- ] && break; echo $$ > "$procs" || exit 71; ' \
             'shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "ol-cgroup", *procs, "--", *command]
