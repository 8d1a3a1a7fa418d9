"""Every run bounded: a cap on the processes and the memory of each run, all its processes
together, that holds when ol runs as root; no zombies and no survivors; a thread-safe proxy.

Each attack is bounded by itself (it stops at its first failure, or after a fixed count), so
a cap that failed could not take the machine down; the peak is measured from outside.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support import CONTRACT, DS07, RUNS, inside_run

import ol
from harness.run import sandbox
from harness.run.engine import Engine
from harness.run.layout import Suite
from harness.run.process import RUN_CAPS

REFERENCE = DS07.reference_source()


class Peak(threading.Thread):
    """Counts this machine's processes whose command line holds ``marker``, every 20 ms;
    the highest count seen, and whether any is still there at the end."""

    def __init__(self, marker: str) -> None:
        super().__init__(daemon=True)
        self.marker = marker.encode()
        self.most = 0
        self.done = threading.Event()

    def count(self) -> int:
        found = 0
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    found += self.marker in Path(f"/proc/{entry}/cmdline").read_bytes()
        return found

    def run(self) -> None:
        while not self.done.is_set():
            self.most = max(self.most, self.count())
            time.sleep(0.02)

    def __enter__(self) -> Peak:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.done.set()
        self.join()


def zombies() -> int:
    found = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError):
                found += Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0] \
                    == "Z"
    return found


FORK_STORM = '''
import os, time

def storm(marker, most=2000):
    """Start sleepers until the first failure, at most ``most``: how many started."""
    started = 0
    for _ in range(most):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                os.setsid()
                os.execvp("sleep", ["sleep", marker])
            finally:
                os._exit(0)
        started += 1
    return started
'''


@pytest.mark.slow
@pytest.mark.sandboxed("bwrap")
@pytest.mark.sandboxed("cgroup")
@pytest.mark.parametrize("where", ["the tests", "the tree"])
def test_a_fork_storm_stops_at_the_runs_process_cap_and_leaves_nothing(tmp_path, where):
    marker = f"{311 + len(where)}.{os.getpid() % 1000}"
    if where == "the tests":
        body = f'''
            def test_storms():
                started = storm({marker!r})
                print("STARTED", started)
                assert started < {RUN_CAPS["processes"]}
            '''
        tree = REFERENCE
    else:
        body = f'''
            from tl_ds.radix import RadixTree

            def test_storms():
                started = RadixTree(1).values(0)[0]
                print("STARTED", started)
                assert started < {RUN_CAPS["processes"]}
            '''
        tree = FORK_STORM + textwrap.dedent(f'''
            ROOT = 0

            class RadixTree:
                def __init__(self, granule):
                    pass

                def values(self, id):
                    return [storm({marker!r})]
            ''')
    with Peak(f"sleep\0{marker}") as peak:
        run = inside_run(tmp_path, body, tree=tree, ours=False,
                         prelude=FORK_STORM if where == "the tests" else "")
    assert run.all_passed, run.output
    assert peak.most <= RUN_CAPS["processes"], peak.most
    assert peak.count() == 0, "a sleeper outlived its run"
    said = [line for line in run.output.splitlines() if "cap of 512 processes" in line]
    assert len(said) == 1, run.output[-2000:]


@pytest.mark.sandboxed("bwrap")
@pytest.mark.sandboxed("cgroup")
def test_a_thread_storm_counts_against_the_same_cap(tmp_path):
    run = inside_run(tmp_path, '''
        import threading

        def test_threads():
            threading.stack_size(64 << 10)  # small stacks: the address space is no bound
            stop, started = threading.Event(), 0
            for _ in range(2000):
                try:
                    threading.Thread(target=stop.wait, daemon=True).start()
                except RuntimeError:
                    break
                started += 1
            stop.set()
            assert started < 512
        ''', ours=False)
    assert run.all_passed, run.output


@pytest.mark.slow
@pytest.mark.sandboxed("bwrap")
@pytest.mark.sandboxed("cgroup")
def test_memory_is_capped_for_all_of_a_runs_processes_together(tmp_path):
    """Three processes of 2 GiB each pass the per-process limit (4 GiB of address space)
    but not the run's cap (4 GiB in all): the kernel stops one, and the run is told why."""
    run = inside_run(tmp_path, '''
        import os

        def hog():
            block = bytearray(2 << 30)
            for at in range(0, len(block), 4096):
                block[at] = 1
            os._exit(0)

        def test_hogs():
            children = []
            for _ in range(3):
                pid = os.fork()
                if pid == 0:
                    hog()
                children.append(pid)
            codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
            assert any(code != 0 for code in codes), codes
        ''', ours=False)
    assert run.all_passed, run.output
    assert "cap of 4 GiB of memory" in run.output


@pytest.mark.sandboxed("bwrap")
def test_a_tree_restarted_many_times_with_children_leaves_no_zombie_and_no_survivor(tmp_path):
    marker = f"319.{os.getpid() % 1000}"
    tree = FORK_STORM + textwrap.dedent(f'''
        ROOT = 0
        storm({marker!r}, most=20)

        class RadixTree:
            def __init__(self, granule):
                pass

            def values(self, id):
                os._exit(3)  # the tree's process ends: the proxy starts a new one
        ''')
    before = zombies()
    with Peak(f"sleep\0{marker}") as peak:
        run = inside_run(tmp_path, '''
            import pytest
            from tl_ds.radix import RadixTree

            def test_restarts():
                for _ in range(15):
                    tree = RadixTree(1)
                    with pytest.raises(BaseException):
                        tree.values(0)
            ''', tree=tree, ours=False)
    assert run.all_passed, run.output
    assert peak.most <= 2 * 20, f"{peak.most} sleepers at once: stopped trees left theirs"
    assert peak.count() == 0 and zombies() <= before


@pytest.mark.slow
@pytest.mark.sandboxed("bwrap")
def test_a_background_thread_calling_the_tree_gets_its_own_answers(tmp_path):
    run = inside_run(tmp_path, '''
        import threading
        from tl_ds.radix import RadixTree

        def test_two_threads_call_at_once():
            tree = RadixTree(1)
            for token in range(1, 41):
                tree.insert([token], [token])
            wrong = []

            def caller(first):
                for _ in range(300):
                    for token in range(first, first + 20):
                        if list(tree.values(tree.match_prefix([token])[1][-1])) != [token]:
                            wrong.append(token)

            threads = [threading.Thread(target=caller, args=(first,)) for first in (1, 21)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert wrong == []
        ''', ours=False)
    assert run.all_passed, run.output


def test_a_test_stopped_at_its_time_limit_is_told_the_limit(tmp_path):
    test = tmp_path / "test_slow.py"
    test.write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n")
    run = RUNS.run(Suite(contract=CONTRACT, files=(test,)), REFERENCE, timeout=60,
                   test_limit=1.0, trusted=True)
    [record] = run.records
    assert "ran past its time limit of 1 s" in record.text, record.text


@pytest.mark.slow
@pytest.mark.sandboxed("bwrap")
@pytest.mark.sandboxed("cgroup")
def test_a_storming_submission_changes_no_classmates_verdict_in_ol_grade(tmp_path):
    """A tree that forks until it cannot and a test that does the same, graded with an
    honest classmate at --jobs 2: the classmate passes, and nothing of the storm is left."""
    marker = f"323.{os.getpid() % 1000}"
    tree = (DS07.examples / "passing" / "tl_ds" / "radix.py").read_text() + FORK_STORM + \
        f"\nstorm({marker!r}, most=2000)\n"
    tests = (DS07.examples / "passing" / "tests" / "test_ds07_radix.py").read_text() + \
        FORK_STORM + f"\n\ndef test_storms():\n    storm({marker!r}, most=2000)\n"
    stormer = tmp_path / "stormer"
    (stormer / "tl_ds").mkdir(parents=True)
    (stormer / "tests").mkdir()
    (stormer / "tl_ds" / "__init__.py").write_text("")
    (stormer / "tl_ds" / "radix.py").write_text(tree)
    (stormer / "tests" / "test_ds07_radix.py").write_text(tests)
    out = tmp_path / "grades"
    with Peak(f"sleep\0{marker}") as peak:
        code = ol.main(["grade", "ds.07", str(stormer), str(DS07.examples / "passing"),
                        "--jobs", "2", "--out", str(out)])
    assert code == ol.ExitCode.PASSED
    rows = {row["submission"]: row
            for row in json.loads((out / "summary.json").read_text())["submissions"]}
    assert rows["passing"]["verdict"] == "passed", rows["passing"]
    assert rows["stormer"]["verdict"] in ("passed", "not passed"), rows["stormer"]
    assert peak.most <= 2 * RUN_CAPS["processes"], peak.most
    assert peak.count() == 0


def host_uids(marker: bytes) -> set[int]:
    """The host uids of this machine's processes whose command line holds ``marker``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if marker in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.add(Path(f"/proc/{entry}").stat().st_uid)
    return found


@pytest.mark.sandboxed("bwrap")
def test_no_process_of_a_run_is_host_root_even_when_ol_runs_as_root(tmp_path):
    marker = f"1.329{os.getpid() % 1000:03}"  # seconds to sleep, and a mark to find it by
    seen: list[set[int]] = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            seen.append(host_uids(f"sleep\0{marker}".encode()))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        run = inside_run(tmp_path, f'''
            import subprocess

            def test_sleeps():
                subprocess.run(["sleep", {marker!r}])
            ''', ours=False)
    finally:
        done.set()
        watcher.join()
    assert run.all_passed, run.output
    uids = set().union(*seen)
    assert uids, "the sleeper was never seen"
    assert 0 not in uids, uids


@pytest.mark.sandboxed("bwrap")
def test_a_process_limit_a_run_sets_itself_binds_even_when_ol_runs_as_root(tmp_path):
    """The kernel exempts host root from RLIMIT_NPROC: a run whose processes were host root
    could fork 60 sleepers under a limit of 20."""
    run = inside_run(tmp_path, '''
        import resource

        def test_forks_under_a_lowered_limit():
            resource.setrlimit(resource.RLIMIT_NPROC, (20, 20))
            started = storm("331.0", most=60)
            print("STARTED", started)
            assert started < 20
        ''', ours=False, prelude=FORK_STORM)
    assert run.all_passed, run.output


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands out host uids")
def test_two_runners_at_once_run_as_two_different_host_users_and_a_released_one_is_reused():
    from harness.run import accounts
    first, second = accounts.lease(), accounts.lease()
    try:
        assert first.uid != second.uid
        assert 0 not in (first.uid, second.uid)
        taken = first.uid
        first.release()
        again = accounts.lease()
        assert again.uid == taken
        again.release()
    finally:
        first.release()
        second.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands out host uids")
def test_two_ol_commands_with_different_temporary_folders_never_share_a_host_user(
        tmp_path, monkeypatch):
    from harness.run import accounts
    leases = []
    try:
        for name in ("first", "second"):
            (tmp_path / name).mkdir()
            monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / name))
            leases.append(accounts.lease())
        assert leases[0].uid != leases[1].uid
    finally:
        for held in leases:
            held.release()


@pytest.mark.slow
@pytest.mark.sandboxed("bwrap")
def test_a_check_whose_temporary_folder_only_its_user_may_enter_grades_as_usual(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    done = subprocess.run(
        [sys.executable, str(Path(ol.__file__)), "check", "ds.07", "--workspace",
         str(DS07.examples / "passing")], env={**os.environ, "TMPDIR": str(private),
                                          "OL_CACHE": str(tmp_path / "cache")},
        capture_output=True, text=True, timeout=600)
    assert done.returncode == ol.ExitCode.PASSED, done.stderr
    assert list(private.iterdir()) == []


LIFT_CAPS = '''
import ctypes, os

NEWUSER, NEWNS, NEWCGROUP = 0x10000000, 0x00020000, 0x02000000


def lift_caps(marker):
    """Make a user, mount and cgroup namespace, mount the cgroup hierarchies there and lift
    the run's caps; then fork sleepers until that fails. What happened, in words."""
    libc = ctypes.CDLL(None, use_errno=True)
    said = []
    for flags in (NEWUSER | NEWNS | NEWCGROUP, NEWUSER):
        made = libc.unshare(flags)
        said.append(f"unshare {made} {os.strerror(ctypes.get_errno())}")
        if made == 0:
            os.makedirs("/tmp/groups/pids", exist_ok=True)
            libc.mount(b"cgroup", b"/tmp/groups/pids", b"cgroup", 0, b"pids")
            for path, value in (("pids.max", "max"), ("child/pids.max", "max")):
                try:
                    os.makedirs("/tmp/groups/pids/child", exist_ok=True)
                    with open(f"/tmp/groups/pids/{path}", "w") as out:
                        out.write(value)
                    said.append(f"LIFTED {path}")
                except OSError as error:
                    said.append(f"{path}: {error.strerror}")
            break
    pid = os.fork()  # a thread of the C library's own making: clone3 must fall back
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    said.append(f"forked {storm(marker, most=700)}")
    return "; ".join(said)
'''


@pytest.mark.slow
@pytest.mark.sandboxed("cgroup")
@pytest.mark.parametrize("mode", ["bwrap", "uid"])
def test_a_run_that_tries_to_lift_its_caps_can_make_no_namespace_and_stays_capped(
        tmp_path, mode):
    """A side could once make a user namespace of its own, mount the cgroup hierarchies
    there and rewrite its run's caps (600 processes, 4.6 GiB, groups left behind). Now it
    can make no user namespace (a seccomp filter in every mode; max_user_namespaces 0 in
    the bubblewrap sandbox), and the cap files are root's whatever it does."""
    if mode == "uid" and sandbox.uid_problem():
        pytest.skip(f"needs the uid sandbox: {sandbox.uid_problem()}")
    marker = f"337.{os.getpid() % 1000}"
    engine = RUNS if mode == "bwrap" else Engine("uid")
    if engine.sandbox.mode != mode:
        pytest.skip(f"needs the {mode} sandbox, which cannot start here")
    test = tmp_path / "test_lifts.py"
    test.write_text(FORK_STORM + LIFT_CAPS + textwrap.dedent(f'''
        def test_lifts_its_caps():
            said = lift_caps({marker!r})
            assert "LIFTED" not in said and "unshare 0" not in said, said
            assert "Operation not permitted" in said or "No space left" in said, said
            assert int(said.rsplit("forked ", 1)[1]) < {RUN_CAPS["processes"]}, said
        '''), encoding="utf-8")
    before = ol_groups()
    try:
        with Peak(f"sleep\0{marker}") as peak:
            run = engine.run(Suite(contract=CONTRACT, files=(test,), proxy=()), REFERENCE,
                             timeout=120, trusted=True)
    finally:
        if engine is not RUNS:
            engine.close()
    assert run.all_passed, run.output
    assert peak.most <= RUN_CAPS["processes"], peak.most
    assert peak.count() == 0
    assert [group for group in ol_groups() - before if "/run-" in group or "child" in group] \
        == [], "a run's group, or one it made, outlived the run"


def ol_groups() -> set[str]:
    """Every control group below a group of ol's (a worker's, a run's, or one made inside
    those), in every hierarchy of this machine."""
    found = set()
    for mount in Path("/proc/self/mounts").read_text().splitlines():
        kind, point = mount.split()[2], mount.split()[1]
        if kind in ("cgroup", "cgroup2"):
            for folder, _, _ in os.walk(point):
                if "/ol-" in folder:
                    found.add(folder)
    return found
