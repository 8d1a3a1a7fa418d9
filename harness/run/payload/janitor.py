"""The janitor of one ol command's runs: it removes what they leave, however ol ends.

Started by ol (run/process.py, ``Janitor``) as ``python -I -S janitor.py FD``, in a session
of its own, so that neither Ctrl-C at a terminal nor a signal to ol's process group reaches
it, with a stream socket to ol on FD. It imports nothing of the harness. ol tells it, a line
each, what it makes, before it makes it:

    folder PATH     a folder of runs: removed at the end
    groups PREFIX   control groups named PREFIX... beside the janitor's own: removed, with
                    every group below them, at the end
    uid N           a host user whose every process is ol's (a leased uid, or the uid
                    sandbox's user): each is killed at the end; a lease's lock may come
                    attached, and is held until then, so no other ol takes that uid while
                    its processes die
    drop PATH       a run's folder, done with: removed now

The end is the end of the socket: ol closed it after its own clean-up, or ol is gone (a
signal, SIGKILL included; the kernel closes a dead process's sockets). Then, in this order,
every process of each uid is killed, the groups are removed deepest first (for up to
GROUP_PATIENCE seconds, while the kernel lets their last processes go), the folders are
removed, and the janitor exits. Removing a folder never recurses, so no folder a run made
is too deep for it.
"""

import contextlib
import errno
import os
import signal
import socket
import stat
import sys
import time

GROUP_PATIENCE = 10.0  # seconds to wait for a control group's last processes to go


def remove_tree(path: str) -> None:
    """Remove ``path`` and everything below it, without recursion and without long paths:
    each folder below the top is emptied by moving its own folders up into the top one,
    so a chain of any depth takes as many steps as it has folders. Links are removed,
    never followed. What cannot be removed is left."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    moved, token = 0, os.urandom(4).hex()  # names a run cannot have made ready in advance
    try:
        while True:
            try:
                entries = list(os.scandir(top))
            except OSError:
                break
            if not entries:
                break
            progress = False
            for entry in entries:
                with contextlib.suppress(OSError):
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=top)
                        progress = True
                        continue
                    with contextlib.suppress(OSError):
                        os.rmdir(entry.name, dir_fd=top)
                        progress = True
                        continue
                    inner = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                    dir_fd=top)
                    try:
                        for child in os.scandir(inner):
                            if child.is_dir(follow_symlinks=False):
                                moved += 1
                                os.rename(child.name, f".ol-up-{token}-{moved}", src_dir_fd=inner,
                                          dst_dir_fd=top)
                            else:
                                os.unlink(child.name, dir_fd=inner)
                    finally:
                        os.close(inner)
                    os.rmdir(entry.name, dir_fd=top)
                    progress = True
            if not progress:
                break
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def kill_every_process_of(uid: int) -> None:
    """SIGKILL to every process of host user ``uid``, from a child that has become that
    user (kill(-1) reaches exactly the processes a user may signal: its own), until none is
    left to signal."""
    for _ in range(50):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                code = 0  # none left
            except BaseException:
                code = 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 1:
            return
        time.sleep(0.02)


def groups_of(prefix: str) -> list[str]:
    """The control groups named ``prefix``... beside this process's own, in every hierarchy
    (this process runs in the groups ol runs in, and ol makes its groups there)."""
    found = []
    try:
        with open("/proc/self/mountinfo") as mounts:
            lines = mounts.read().splitlines()
        with open("/proc/self/cgroup") as own:
            membership = own.read().splitlines()
    except OSError:
        return []
    paths = {}
    for line in membership:
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else ["unified"]:
            paths[name] = path
    for line in lines:
        fields = line.split()
        try:
            kind = fields[fields.index("-") + 1]
        except (ValueError, IndexError):
            continue
        if kind not in ("cgroup", "cgroup2"):
            continue
        names = ["unified"] if kind == "cgroup2" else fields[-1].split(",")
        for name in names:
            if name in paths:
                root, point = fields[3], fields[4]
                inside = paths[name] if root in ("/", "") else paths[name].removeprefix(root)
                parent = os.path.join(point, inside.lstrip("/"))
                with contextlib.suppress(OSError):
                    found += [os.path.join(parent, entry) for entry in os.listdir(parent)
                              if entry.startswith(prefix)]
    return sorted(set(found))


def remove_groups(folders: list[str]) -> None:
    """rmdir each group and all below it, deepest first, until all are gone or patience
    runs out (a group goes once the kernel has let its last process go)."""
    deadline = time.monotonic() + GROUP_PATIENCE
    while folders and time.monotonic() < deadline:
        left = []
        for folder in folders:
            for below, groups, _ in os.walk(folder, topdown=False):
                for name in groups:
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(below, name))
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(folder)
        folders = left
        if folders:
            time.sleep(0.05)


def main() -> None:
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    channel = socket.socket(fileno=int(sys.argv[1]))
    folders, prefixes, uids, held = [], [], [], []
    pending = b""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, 1 << 16, 4)
        except OSError as error:
            if error.errno == errno.EINTR:
                continue
            data, fds = b"", []
        held += fds
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            word, _, rest = line.decode("utf-8", "surrogateescape").partition(" ")
            if word == "folder":
                folders.append(rest)
            elif word == "groups":
                prefixes.append(rest)
            elif word == "uid" and rest.isdigit() and int(rest) > 0:
                uids.append(int(rest))
            elif word == "drop":
                remove_tree(rest)
    for uid in uids:
        kill_every_process_of(uid)
    remove_groups([group for prefix in prefixes for group in groups_of(prefix)])
    for folder in folders:
        remove_tree(folder)
    for fd in held:
        with contextlib.suppress(OSError):
            os.close(fd)


if __name__ == "__main__":
    main()
