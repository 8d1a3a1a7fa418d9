"""The host user a bubblewrap worker runs as, when ol runs as root: never root itself.

A bwrap sandbox started by root keeps its processes host uid 0 whatever uid they show
inside, and the kernel exempts root from ``RLIMIT_NPROC``. So, as root, each runner (one
submission's runs) leases an unprivileged host uid of its own, as isolate gives each box
its own uid: the per-uid process limit then binds, and one submission's processes never
count against another's. A lease is an exclusive ``flock`` on a file in a root-only
folder (under /run), so two ol commands on one machine never share a uid; it ends with
the runner (or with ol, whatever way it ends).

That user must reach the interpreter, the packages and bwrap itself, which may lie under a
folder only root can enter (``/root``, mode 0700). ``reach`` then starts the worker in a
private mount namespace of its own where each such folder is covered by a small tmpfs
that holds, bound in, only the entries on the way to what the runs need: the host's
folders and their modes are never changed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.errors import OlError, OlFault

FIRST_UID, UIDS = 61000, 1000  # a range no distribution hands to its users by default


@dataclass
class Lease:
    uid: int
    lock: int  # the open, flock-ed descriptor; closing it ends the lease

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.lock)
        self.lock = -1


def leases_folder() -> Path:
    """One folder for the whole machine, whatever TMPDIR says: every ol command run by root
    must see every other's leases."""
    folder = Path("/run" if os.path.isdir("/run") else "/tmp") / "ol-run-uids"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise OlFault(f"{folder} is not a folder only root can write; remove it and run the "
                      "command again")
    return folder


def lease() -> Lease | None:
    """An unprivileged host uid for one runner, when ol runs as root; None otherwise."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    folder = leases_folder()
    for uid in range(FIRST_UID, FIRST_UID + UIDS):
        with contextlib.suppress(KeyError):
            pwd.getpwuid(uid)
            continue  # a user of this machine's: never borrowed
        lock = os.open(folder / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            continue
        return Lease(uid, lock)
    raise OlError(f"all {UIDS} host uids ol runs submissions as ({FIRST_UID} to "
                  f"{FIRST_UID + UIDS - 1}) are taken by other ol commands: wait for some "
                  "to end, or give fewer --jobs")


def blocked(paths, uid: int) -> dict[str, list[str]]:
    """The folders on the way to ``paths`` that ``uid`` may not enter, each with the names
    inside it on the way (top folders first)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        parts = Path(os.path.realpath(path)).parts
        for depth in range(1, len(parts) - 1 + (1 if os.path.isdir(path) else 0)):
            folder = os.path.join(*parts[:depth])
            info = os.stat(folder)
            if info.st_uid != uid and not info.st_mode & stat.S_IXOTH:
                names = found.setdefault(folder, [])
                if depth < len(parts) and parts[depth] not in names:
                    names.append(parts[depth])
    return dict(sorted(found.items(), key=lambda item: item[0].count("/")))


def reach(paths, uid: int) -> list[str]:
    """A command prefix that makes every one of ``paths`` reachable by ``uid`` in a mount
    namespace of its own (see the module's docstring); empty when nothing is in the way."""
    folders = blocked(paths, uid)
    if not folders:
        return []
    lines = ["set -e", "stage=$(mktemp -d)"]
    count = 0
    for folder, names in folders.items():
        moves = []
        for name in names:
            count += 1
            inside, there = f"$stage/{count}", shlex.quote(os.path.join(folder, name))
            make = "mkdir" if os.path.isdir(os.path.join(folder, name)) else "touch"
            lines += [f"{make} {inside}", f"mount --rbind {there} {inside}"]
            moves += [f"{make} {there}", f"mount --move {inside} {there}"]
        lines.append(f"mount -t tmpfs -o mode=0755,size=64k ol-reach {shlex.quote(folder)}")
        lines += moves
    lines += ['rm -d -- "$stage"/* "$stage"', 'exec "$@"']  # empty now: never recursive
    return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
            "\n".join(lines), "ol-reach"]


def become(uid: int) -> list[str]:
    """A command prefix that runs the rest as ``uid``, with no groups and no capabilities."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def unreadable(paths) -> list[str]:
    """Those of ``paths`` (folders and files the runs need) that others may not read."""
    found = []
    for path in paths:
        mode = os.stat(path).st_mode
        wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & wanted != wanted:
            found.append(str(path))
    return found
