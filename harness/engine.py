"""Run a pytest suite against one implementation of ``tl_ds.radix`` and say what happened.

Every run gets a folder of its own, made fresh and removed afterwards::

    run/pytest.ini          our configuration (the only one pytest reads)
    run/impl/tl_ds/         __init__.py and radix.py: the implementation under test
    run/support/            ol_recorder.py and whatever the suite imports besides
    run/tests/              copies of the suite's files
    run/home/               HOME and the working directory's neighbour for the tests

and a fresh ``python -m pytest`` with a clean environment (no PYTHONPATH, PYTEST_ADDOPTS
or PYTEST_PLUGINS; plugin autoloading off; a fixed hash seed), in its own process group
so a run past its limit is killed whole. The verdict comes from the records the
recorder plugin writes, which the engine validates: a run whose records are incomplete,
which collects other tests than expected, or which loads a plugin of its own is a crash,
whatever its exit status says.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import OlError
from harness.measure import Coverage, from_record

RECORDER = Path(__file__).with_name("ol_recorder.py")
PROXY = Path(__file__).with_name("tree_proxy.py")
SERVER = Path(__file__).with_name("tree_server.py")
WIRE = Path(__file__).with_name("tree_wire.py")  # beside both the proxy and the server
OUTPUT_LIMIT = 64_000
PYTEST_EXIT_OK = (0, 1)  # all passed; some failed
TEST_TIMEOUT = "TestTimeout"  # the exception type of a test stopped at its own limit


class Status(enum.Enum):
    OK = "ok"                      # records complete: every collected test has an outcome
    TIMEOUT = "timeout"            # killed at the wall-clock limit
    CRASH = "crash"                # ended early, lost records, or tampered with the run
    COLLECTION_ERROR = "collection error"  # a test file did not import


@dataclass(frozen=True)
class TestRecord:
    nodeid: str
    outcome: str                  # passed, failed, error, skipped, xfailed, xpassed
    exception: str | None = None  # the exception type of a failure or error
    text: str = ""                # the failure text, cut to a sane length
    seconds: float = 0.0          # setup, call and teardown together

    @property
    def name(self) -> str:
        """The test's function name (with its parameters), without the file."""
        return self.nodeid.rsplit("::", 1)[-1]

    @property
    def broke(self) -> bool:
        return self.outcome in ("failed", "error")


@dataclass(frozen=True)
class RunResult:
    status: Status
    records: tuple[TestRecord, ...] = ()
    seconds: float = 0.0
    detail: str = ""              # why the status is what it is, for a person
    output: str = ""              # pytest's own output, cut at OUTPUT_LIMIT
    coverage: Coverage | None = None  # of the tree's radix.py, when the suite measured it

    @property
    def failures(self) -> tuple[TestRecord, ...]:
        return tuple(record for record in self.records if record.broke)

    @property
    def timed_out(self) -> bool:
        """True when the run, or one of its tests, was stopped at its limit."""
        return self.status is Status.TIMEOUT or any(
            record.exception == TEST_TIMEOUT for record in self.records)

    @property
    def slowest(self) -> float:
        return max((record.seconds for record in self.records), default=0.0)

    @property
    def all_passed(self) -> bool:
        return (self.status is Status.OK and bool(self.records)
                and all(record.outcome == "passed" for record in self.records))


@dataclass(frozen=True)
class Suite:
    """Test files to copy into ``tests/`` and support files or packages for ``support/``."""

    files: tuple[Path, ...]
    support: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    # None: the implementation is tl_ds.radix in the test process. Otherwise tl_ds.radix is
    # the proxy (tree_proxy.py) and the implementation runs in a tree server of its own,
    # with these files beside it.
    proxy: tuple[Path, ...] | None = None
    # measure line and branch coverage of the tree's radix.py (only where it runs in-process)
    measure: bool = False


class Cancelled(Exception):
    """The caller asked the runs to stop (Ctrl-C): the run was killed and cleaned up."""


def run_suite(suite: Suite, implementation: str, *, timeout: float, test_limit: float = 0.0,
              expected: Iterable[str] | None = None,
              cancel: threading.Event | None = None) -> RunResult:
    """Run ``suite`` with ``implementation`` (the text of a radix.py) as ``tl_ds.radix``.

    The whole run is killed past ``timeout`` seconds; a single test past ``test_limit``
    (when positive) fails with TestTimeout and the others go on. Raises Cancelled, after
    killing the run, when ``cancel`` is set while it runs.
    """
    if suite.measure and suite.proxy is not None:
        raise ValueError("coverage is measured only of a tree that runs beside its tests")
    with tempfile.TemporaryDirectory(prefix="ol-run-", ignore_cleanup_errors=True) as folder:
        run = Path(folder)
        lay_out(run, suite, implementation)
        records = run / "records.jsonl"
        started = time.perf_counter()
        measured = run / "impl" / "tl_ds" / "radix.py" if suite.measure else None
        returncode, output = execute(run, records, suite.env, (timeout, test_limit), cancel,
                                     measured)
        seconds = time.perf_counter() - started
        if returncode is None:
            return RunResult(Status.TIMEOUT, seconds=seconds, output=output,
                             detail=f"still running after {timeout:.0f} s: stopped")
        try:
            lines = records.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # never written, or deleted by the run
            lines = []
        return judge(lines, returncode, expected, seconds, output)


def lay_out(run: Path, suite: Suite, implementation: str) -> None:
    if suite.proxy is None:
        write_package(run / "impl", implementation)
    else:
        write_package(run / "impl", PROXY.read_text(encoding="utf-8"))
        write_package(run / "student", implementation)
        server = run / "server"
        server.mkdir()
        for item in (SERVER, WIRE, *suite.proxy):
            copy_item(item, server / item.name)
    support = run / "support"
    support.mkdir()
    if suite.proxy is not None:
        shutil.copy(WIRE, support / WIRE.name)
    shutil.copy(RECORDER, support / RECORDER.name)
    for item in suite.support:
        copy_item(item, support / item.name)
    tests = run / "tests"
    tests.mkdir()
    for item in suite.files:
        copy_item(item, tests / item.name)
    (run / "home").mkdir()
    (run / "pytest.ini").write_text(
        "[pytest]\npythonpath = impl support\ntestpaths = tests\n", encoding="utf-8")


def write_package(folder: Path, radix: str) -> None:
    package = folder / "tl_ds"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "radix.py").write_text(radix, encoding="utf-8")


def copy_item(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy(source, target)


def clean_environment(run: Path, extra: Mapping[str, str]) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(run / "home"),
        "TMPDIR": str(run / "home"),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "CI": "true",  # Hypothesis's CI profile: derandomized, no database, no deadline
    }
    env.update(extra)
    return env


LIMITS = {                     # resource limits of every run (a run also has its wall clock)
    "memory": 4 << 30,         # bytes of address space
    "files": 256,              # open files
    "file_size": 256 << 20,    # bytes in any one file it writes
    "processes": 4096,         # processes of the user (only enforced for an unprivileged user)
}


def run_limits(timeout: float) -> dict[str, int]:
    return {**LIMITS, "cpu": int(timeout) + 5}


def command_line(run: Path, records: Path, test_limit: float,
                 measured: Path | None = None) -> list[str]:
    return ["-c", str(run / "pytest.ini"), "--rootdir", str(run), "-p", "no:cacheprovider",
            "--noconftest", "-p", "ol_recorder", "--ol-records", str(records),
            "--ol-test-limit", str(test_limit), "--ol-coverage", str(measured or ""),
            "-q", "--tb=short", str(run / "tests")]


def execute(run: Path, records: Path, extra: Mapping[str, str], limits: tuple[float, float],
            cancel: threading.Event | None, measured: Path | None = None,
            ) -> tuple[int | None, str]:
    """Run pytest in ``run``; (exit code or None on timeout, its output cut to size)."""
    timeout, test_limit = limits
    argv = command_line(run, records, test_limit, measured)
    env = clean_environment(run, extra)
    log = run / "output.txt"
    if isolation() == "fast":
        returncode = worker().run(run / "home", env, argv, log, run_limits(timeout),
                                  timeout, cancel)
    else:
        returncode = spawn(run / "home", env, argv, log, run_limits(timeout), timeout, cancel)
    try:
        with open(log, "rb") as source:
            output = source.read(OUTPUT_LIMIT).decode("utf-8", "replace")
    except OSError:  # the run deleted its own log
        output = ""
    return returncode, output


def spawn(cwd: Path, env: Mapping[str, str], argv: list[str], log: Path,
          limits: Mapping[str, int], timeout: float, cancel: threading.Event | None) -> int | None:
    """The strict path: a fresh interpreter for the run; its exit code, or None past timeout."""
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-s", "-P", "-m", "pytest", *argv], cwd=cwd,
                                   env=dict(env), stdin=subprocess.DEVNULL, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            for name, value in limits.items():
                with contextlib.suppress(OSError, ValueError):
                    resource.prlimit(process.pid, RESOURCES[name], (value, value))
            return wait(process, timeout, cancel)
        finally:
            kill_group(process)


RESOURCES = {"cpu": resource.RLIMIT_CPU, "memory": resource.RLIMIT_AS,
             "files": resource.RLIMIT_NOFILE, "file_size": resource.RLIMIT_FSIZE,
             "processes": resource.RLIMIT_NPROC}
ISOLATION = os.environ.get("OL_ISOLATION", "")


def isolation() -> str:
    """"fast" (forks of a warm worker) where fork exists, else "strict" (a fresh process)."""
    if ISOLATION in ("fast", "strict"):
        return ISOLATION
    return "fast" if hasattr(os, "fork") else "strict"


def set_isolation(mode: str) -> None:
    global ISOLATION
    ISOLATION = mode


class Worker:
    """The fork worker (fork_worker.py), shared by every thread of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.next_id = 0
        self.waiting: dict[int, queue.SimpleQueue] = {}

    def start(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            # each child gets its own folder and environment; the worker needs neither
            env = clean_environment(Path(tempfile.gettempdir()), {})
            self.process = subprocess.Popen(
                [sys.executable, "-s", "-P", str(FORK_WORKER)], cwd="/", env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            threading.Thread(target=self.read, args=(self.process,), daemon=True).start()
        return self.process

    def read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            message = json.loads(line)
            with self.lock:
                box = self.waiting.get(message["id"])
            if box is not None:
                box.put(message)
        with self.lock:  # the worker died: every run still waiting ends now
            for box in self.waiting.values():
                box.put({"exit": None, "lost": True})

    def run(self, cwd: Path, env: Mapping[str, str], argv: list[str], log: Path,
            limits: Mapping[str, int], timeout: float,
            cancel: threading.Event | None) -> int | None:
        box: queue.SimpleQueue = queue.SimpleQueue()
        with self.lock:
            process = self.start()
            self.next_id += 1
            id = self.next_id
            self.waiting[id] = box
            request = {"id": id, "cwd": str(cwd), "env": dict(env), "argv": argv,
                       "log": str(log), "limits": dict(limits)}
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
        pid, ended = None, False
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    message = box.get(timeout=0.05)
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled from None
                    if time.monotonic() >= deadline:
                        return None
                    continue
                if "pid" in message:
                    pid = message["pid"]
                    continue
                ended = True
                if message.get("lost"):
                    raise OlError("the engine's fork worker stopped unexpectedly; run the "
                                  "command again with --isolation strict")
                if pid is not None:  # what the run left behind in its session goes too
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
                return message["exit"]
        finally:
            while not ended:  # still running: kill its session once its pid is known
                if pid is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
                try:
                    message = box.get(timeout=10)
                except queue.Empty:
                    break
                pid = message.get("pid", pid)
                ended = "pid" not in message
            with self.lock:
                self.waiting.pop(id, None)


FORK_WORKER = Path(__file__).with_name("fork_worker.py")
_worker = Worker()


def worker() -> Worker:
    return _worker


def wait(process: subprocess.Popen, timeout: float,
         cancel: threading.Event | None) -> int | None:
    """The exit code, or None past ``timeout``; Cancelled as soon as ``cancel`` is set."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return process.wait(timeout=min(0.05, max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                raise Cancelled from None
            if time.monotonic() >= deadline:
                return None


def kill_group(process: subprocess.Popen) -> None:
    """Kill the run's whole process group, children it forked included."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def judge(lines: list[str], returncode: int, expected: Iterable[str] | None,
          seconds: float, output: str) -> RunResult:
    """Turn the recorder's lines into a validated result."""
    def crash(detail: str) -> RunResult:
        return RunResult(Status.CRASH, tuple(tests.values()), seconds, detail, output)

    tests: dict[str, TestRecord] = {}
    collected: list[str] | None = None
    collect_errors: list[str] = []
    finish = None
    plugins: set[str] = set()
    coverage = None
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            return crash("the run's records are damaged")
        kind = record.get("kind")
        if kind == "collected":
            collected = record["ids"]
            plugins.update(record["plugins"])
        elif kind == "collect_error":
            collect_errors.append(f"{record['nodeid']}: {record['text']}")
        elif kind == "test":
            if record["nodeid"] in tests:
                return crash(f"{record['nodeid']} reported twice")
            tests[record["nodeid"]] = TestRecord(
                record["nodeid"], record["outcome"], record["exception"], record["text"],
                record["seconds"])
        elif kind == "coverage":
            coverage = from_record(record)
        elif kind == "finish":
            finish = record["exitstatus"]
            plugins.update(record["plugins"])
    if plugins:
        return crash(f"the tests loaded plugins of their own: {', '.join(sorted(plugins))}")
    if collect_errors:
        return RunResult(Status.COLLECTION_ERROR, tuple(tests.values()), seconds,
                         "\n".join(collect_errors), output)
    if collected is None:
        return crash(f"the run ended before its tests were collected (exit code {returncode})")
    if finish is None:
        return crash(f"the run ended without finishing its session (exit code {returncode}): "
                     "a test or the code under test stopped the interpreter")
    if finish not in PYTEST_EXIT_OK and not (finish == 5 and not collected):
        return crash(f"pytest stopped early (exit status {finish})")
    if set(tests) != set(collected) or len(collected) != len(set(collected)):
        missing = sorted(set(collected) - set(tests))
        return crash(f"{len(missing)} collected test(s) have no outcome: {', '.join(missing[:5])}")
    if expected is not None and set(collected) != set(expected):
        return crash(f"the run collected other tests than expected: {sorted(collected)}")
    failed = any(record.broke for record in tests.values())
    if returncode != finish or (finish == 1) != failed:
        return crash(f"the exit code {returncode} disagrees with the tests' outcomes")
    ordered = tuple(tests[nodeid] for nodeid in collected)
    return RunResult(Status.OK, ordered, seconds, "", output, coverage)


PROBE = """\
import json, sys, traceback
try:
    import tl_ds.radix as module
    tree = getattr(module, "RadixTree", None)
    result = {"ok": isinstance(tree, type),
              "error": "" if isinstance(tree, type) else "it defines no class RadixTree"}
except BaseException as error:
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if frame.filename.endswith("radix.py")]
    where = f"line {frames[-1].lineno}: {frames[-1].line}\\n" if frames else ""
    said = "".join(traceback.format_exception_only(type(error), error)).rstrip()
    result = {"ok": False, "error": where + said.replace(sys.argv[2], "")}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(result, out)
"""
PROBE_LIMIT = 30.0


def probe_import(implementation: str) -> str | None:
    """Import ``implementation`` as ``tl_ds.radix`` in a fresh process: None, or why it fails."""
    with tempfile.TemporaryDirectory(prefix="ol-probe-") as folder:
        run = Path(folder)
        lay_out(run, Suite(files=()), implementation)
        answer = run / "probe.json"
        command = [sys.executable, "-s", "-P", "-c", PROBE, str(answer), f"{run}/impl/"]
        env = clean_environment(run, {"PYTHONPATH": str(run / "impl")})
        with open(run / "output.txt", "wb") as sink:
            process = subprocess.Popen(command, cwd=run / "home", env=env,
                                       stdin=subprocess.DEVNULL, stdout=sink,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            try:
                returncode = wait(process, PROBE_LIMIT, None)
            finally:
                kill_group(process)
        if returncode is None:
            return f"importing it takes more than {PROBE_LIMIT:.0f} s"
        try:
            result = json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return f"importing it ends the interpreter (exit code {returncode})"
        return None if result.get("ok") is True else str(result.get("error") or "it fails")
