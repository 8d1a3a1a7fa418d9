"""Control groups: caps on a run's processes and memory, counted per run, that hold whatever
uid the run has, root included (the kernel exempts root from RLIMIT_NPROC).

Where ol may make control groups (root on a plain Linux host, cgroup v1 or v2), each worker
gets a group of its own for each of the ``pids`` and ``memory`` controllers, below the
group ol itself runs in; the worker makes a group per run inside it, sets the run's caps,
puts each side of the run there before any of the side's code starts, reads whether a cap
was reached when the run has ended, and removes the group. Where none can be made (a user
without root, most platform containers), ``make`` returns None and only the per-process
limits hold (README: the sandbox).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("pids", "memory")


@dataclass(frozen=True)
class Groups:
    """A worker's groups: the folder of each controller's group, and the cgroup version."""

    version: int                    # 1 or 2
    folders: tuple[tuple[str, str], ...]  # (controller, folder); in v2 one folder for both

    def argument(self) -> str:
        """How the worker is told: "1:pids=/sys/...,memory=/sys/..." or "2:unified=..."."""
        return f"{self.version}:" + ",".join(f"{name}={folder}" for name, folder in self.folders)

    def hand_over(self, uid: int) -> None:
        """Let host user ``uid`` (the worker's) make groups inside these and move its own
        processes into them; the caps on these stay root's."""
        for _, folder in self.folders:
            for path in (folder, f"{folder}/cgroup.procs", f"{folder}/tasks"):
                if os.path.exists(path):
                    os.chown(path, uid, uid)

    def remove(self, patience: int = 100) -> None:
        """Remove the groups once their processes have gone (a moment after the worker):
        tried ``patience`` times, 20 ms apart."""
        for _, folder in self.folders:
            for _ in range(patience):
                with contextlib.suppress(OSError):
                    for child in Path(folder).iterdir():
                        if child.is_dir():
                            with contextlib.suppress(OSError):
                                child.rmdir()
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


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
    """Remove the groups that an ol no longer running left in ``parent`` (one killed before
    it could clean up): empty by now, since their processes are gone."""
    with contextlib.suppress(OSError):
        for folder in parent.glob("ol-*-*"):
            owner = folder.name.split("-")[1]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                Groups(1, (("stale", str(folder)),)).remove(patience=1)


def make(processes: int, memory: int) -> Groups | None:
    """Groups for one worker, capped at ``processes`` and ``memory`` bytes in all; None
    where none can be made here."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    found = own_groups()
    for _, folder in found.values():
        sweep(folder)
    name = f"ol-{os.getpid()}-{secrets.token_hex(4)}"
    if all(controller in found and found[controller][0] == 1 for controller in CONTROLLERS):
        made: list[tuple[str, str]] = []
        try:
            for controller in CONTROLLERS:
                folder = found[controller][1] / name
                folder.mkdir()
                made.append((controller, str(folder)))
            write(Path(dict(made)["pids"]) / "pids.max", processes)
            write(Path(dict(made)["memory"]) / "memory.limit_in_bytes", memory)
        except OSError:
            Groups(1, tuple(made)).remove()
            return None
        return Groups(1, tuple(made))
    if "unified" in found:
        parent = found["unified"][1]
        folder = parent / name
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            if not all(controller in enabled for controller in CONTROLLERS):
                return None  # the parent does not hand these controllers down
            folder.mkdir()
            write(folder / "cgroup.subtree_control", "+pids +memory")
            write(folder / "pids.max", processes)
            write(folder / "memory.max", memory)
        except OSError:
            Groups(2, (("unified", str(folder)),)).remove()
            return None
        return Groups(2, (("unified", str(folder)),))
    return None


def write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def entering(groups: Groups | None, command: list[str]) -> list[str]:
    """``command``, started so that it is in ``groups`` before it runs (a shell puts its own
    pid there, then becomes the command)."""
    if groups is None:
        return command
    procs = [f"{folder}/cgroup.procs" for _, folder in groups.folders]
    script = 'for procs in "$@"; do [ "$procs" = -- ] && break; echo $$ > "$procs" || exit 71; ' \
             'shift; done; shift; exec "$@"'
    return ["/bin/sh", "-c", script, "ol-cgroup", *procs, "--", *command]
