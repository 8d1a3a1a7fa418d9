"""Run a pytest suite against one implementation of ``tl_ds.radix`` and say what happened.

Every run gets a folder of its own, made fresh and removed afterwards, with one folder per
side (harness/run/process.py starts each side confined as harness/run/sandbox.py says)::

    run/test/pytest.ini       our configuration (the only one pytest reads)
    run/test/impl/tl_ds/      the tree itself (our own suites on our own trees), or the
                              proxy (tree_proxy.py) to the tree side
    run/test/support/         ol_recorder.py and whatever the suite imports besides
    run/test/tests/           copies of the suite's files
    run/test/home/            HOME, TMPDIR and the working directory of the tests
    run/tree/tree/tl_ds/      the tree behind the proxy; views/ the course machine's views

A suite that is not ours (a student's tests) always reaches its tree through the proxy, so
it never shares a process, a folder or a view of /proc with any tree. The verdict comes
from the records the recorder writes to a socket only the engine reads, which the engine
validates: a run whose records are incomplete or malformed, which collects other tests than
expected, or which loads a plugin of its own is a crash, whatever its exit status says.
"""

from __future__ import annotations

import atexit
import dataclasses
import enum
import json
import os
import shutil
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.measure import Coverage, from_record
from harness.run import sandbox
from harness.run.process import Runner, Side

PAYLOAD = sandbox.PAYLOAD
RECORDER = PAYLOAD / "ol_recorder.py"
PROXY = PAYLOAD / "tree_proxy.py"
WIRE = PAYLOAD / "tree_wire.py"
PROBE_COVERAGE = PAYLOAD / "coverage_probe.py"
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
    output: str = ""              # pytest's own output, cut at process.OUTPUT_LIMIT
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
    # None: the implementation is tl_ds.radix in the test process (only for our own suites
    # on our own trees). Otherwise tl_ds.radix is the proxy (tree_proxy.py) and the
    # implementation runs on the tree side of the run; a non-empty tuple names the views
    # (ds07_observe.py) the tree side runs for the course machine, and gives the proxy
    # its _ol_view method.
    proxy: tuple[Path, ...] | None = None
    # measure line and branch coverage of the tree's radix.py, on whichever side it runs
    measure: bool = False
    # the suite is ours (the course's), not a submission's: in the uid sandbox it runs as
    # the grader, out of reach of the submission's tree
    ours: bool = False


VIEW_METHOD = """


def _ol_view(self, name, *args):
    return _channel.ask({"tree": self._handle, "view": name, "args": _args(args)},
                        self._generation)


RadixTree._ol_view = _ol_view
"""


def run_suite(suite: Suite, implementation: str, *, timeout: float, test_limit: float = 0.0,
              expected: Iterable[str] | None = None,
              cancel: threading.Event | None = None, trusted: bool = False) -> RunResult:
    """Run ``suite`` with ``implementation`` (the text of a radix.py) as ``tl_ds.radix``.

    ``trusted`` says the implementation is ours (the reference, a mutant, the stub), not a
    submission's. The whole run is killed past ``timeout`` seconds; a single test past
    ``test_limit`` (when positive) fails with TestTimeout and the others go on. Raises
    Cancelled, after killing the run, when ``cancel`` is set while it runs.
    """
    runner = current()
    run = runner.new_folder()
    try:
        test, tree = lay_out(run, suite, implementation, (timeout, test_limit), trusted)
        runner.hand_over(run / "test", untrusted=not suite.ours)
        if tree is not None:
            runner.hand_over(run / "tree", untrusted=not trusted)
        started = time.perf_counter()
        ended = runner.run(test, tree, timeout, cancel)
        seconds = time.perf_counter() - started
        coverage = None
        if suite.measure and suite.proxy is not None:
            coverage = read_coverage(run / "tree" / "coverage.json")
        if ended.returncode is None:
            return RunResult(Status.TIMEOUT, seconds=seconds, output=ended.output,
                             detail=f"still running after {timeout:.0f} s: stopped")
        if ended.overflow:
            return RunResult(Status.CRASH, seconds=seconds, output=ended.output,
                             detail="the run wrote more records than any suite needs")
        result = judge(ended.records, ended.returncode, expected, seconds, ended.output)
        return result if coverage is None else dataclasses.replace(result, coverage=coverage)
    finally:
        shutil.rmtree(run, ignore_errors=True)


def read_coverage(path: Path) -> Coverage:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return from_record({"kind": "coverage", **record})
    except (OSError, ValueError, TypeError, KeyError):
        return from_record({"kind": "coverage", "error": "the tree's coverage was not written"})


def lay_out(run: Path, suite: Suite, implementation: str, limits: tuple[float, float],
            trusted: bool) -> tuple[Side, Side | None]:
    """Write the run's folders; the two sides to start."""
    timeout, test_limit = limits
    test = run / "test"
    support = test / "support"
    support.mkdir(parents=True)
    if suite.proxy is None:
        write_package(test / "impl", implementation)
    else:
        proxy = PROXY.read_text(encoding="utf-8") + (VIEW_METHOD if suite.proxy else "")
        write_package(test / "impl", proxy)
        shutil.copy(WIRE, support / WIRE.name)
    for item in (RECORDER, PROBE_COVERAGE):  # the recorder measures through coverage_probe
        shutil.copy(item, support / item.name)
    for item in suite.support:
        copy_item(item, support / item.name)
    tests = test / "tests"
    tests.mkdir()
    for item in suite.files:
        copy_item(item, tests / item.name)
    (test / "home").mkdir()
    (test / "pytest.ini").write_text(
        "[pytest]\npythonpath = impl support\ntestpaths = tests\n", encoding="utf-8")
    measured = test / "impl" / "tl_ds" / "radix.py" if suite.measure and suite.proxy is None \
        else None
    test_side = Side(test, test / "home", clean_environment(test, suite.env), run_limits(timeout),
                     "pytest", tuple(command_line(test, test_limit, measured)),
                     trusted=suite.ours)
    if suite.proxy is None:
        return test_side, None
    tree = run / "tree"
    write_package(tree / "tree", implementation)
    if suite.proxy:
        views = tree / "views"
        views.mkdir()
        for item in suite.proxy:
            copy_item(item, views / item.name)
    (tree / "home").mkdir()
    tree_side = Side(tree, tree / "home", clean_environment(tree, {}), run_limits(timeout),
                     "tree", trusted=trusted, measure=suite.measure, views=bool(suite.proxy))
    return test_side, tree_side


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


def clean_environment(side: Path, extra: Mapping[str, str]) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(side / "home"),
        "TMPDIR": str(side / "home"),
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


def command_line(side: Path, test_limit: float, measured: Path | None = None) -> list[str]:
    return ["-c", str(side / "pytest.ini"), "--rootdir", str(side), "-p", "no:cacheprovider",
            "--noconftest", "-p", "ol_recorder", "--ol-test-limit", str(test_limit),
            "--ol-coverage", str(measured or ""), "-q", "--tb=short", str(side / "tests")]


class Engine:
    """The runner every run of this process uses: chosen once, closed at exit."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runner: Runner | None = None
        self.fresh = os.environ.get("OL_ISOLATION", "") == "strict"
        self.sandbox_request = sandbox.requested()

    def current(self) -> Runner:
        with self.lock:
            if self.runner is None:
                self.runner = Runner(sandbox.choose(self.sandbox_request), fresh=self.fresh)
            return self.runner

    def configure(self, *, fresh: bool | None = None, sandbox_mode: str | None = None) -> None:
        with self.lock:
            if self.runner is not None:
                self.runner.close()
                self.runner = None
            if fresh is not None:
                self.fresh = fresh
            if sandbox_mode is not None:
                self.sandbox_request = sandbox_mode

    def close(self) -> None:
        self.configure()


ENGINE = Engine()
atexit.register(ENGINE.close)  # the worker stops and the run folders go, whatever happened


def current() -> Runner:
    return ENGINE.current()


def active_sandbox() -> sandbox.Sandbox:
    """The sandbox runs use here (choosing it, when no run has yet)."""
    return current().sandbox


def isolation() -> str:
    """"strict" (a fresh worker per run) or "fast" (one warm worker forks every run)."""
    return "strict" if ENGINE.fresh else "fast"


def set_isolation(mode: str) -> None:
    ENGINE.configure(fresh=mode == "strict")


def set_sandbox(mode: str) -> None:
    ENGINE.configure(sandbox_mode=mode)


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
            kind = record["kind"] if isinstance(record, dict) else None
            if kind == "collected":
                collected = strings(record["ids"])
                plugins.update(strings(record["plugins"]))
            elif kind == "collect_error":
                collect_errors.append(f"{text(record['nodeid'])}: {text(record['text'])}")
            elif kind == "test":
                nodeid = text(record["nodeid"])
                if nodeid in tests:
                    return crash(f"{nodeid} reported twice")
                tests[nodeid] = TestRecord(
                    nodeid, outcome(record["outcome"]), optional_text(record["exception"]),
                    text(record["text"]), seconds_of(record["seconds"]))
            elif kind == "coverage":
                coverage = from_record(record)
            elif kind == "finish":
                finish = record["exitstatus"]
                if type(finish) is not int:
                    raise TypeError("exitstatus")
                plugins.update(strings(record["plugins"]))
            else:
                raise ValueError("unknown record")
        except (ValueError, TypeError, KeyError, AttributeError):
            return crash("the run's records are malformed")
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


OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def text(value) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def optional_text(value) -> str | None:
    return None if value is None else text(value)


def strings(value) -> list[str]:
    if type(value) is not list:
        raise TypeError("not a list")
    return [text(item) for item in value]


def outcome(value) -> str:
    if value not in OUTCOMES:
        raise ValueError("unknown outcome")
    return value


def seconds_of(value) -> float:
    if type(value) not in (int, float) or not 0 <= value < 1e9:
        raise ValueError("not a duration")
    return float(value)


PROBE_LIMIT = 30.0


def probe_import(implementation: str) -> str | None:
    """Import ``implementation`` as ``tl_ds.radix`` in a confined process: None, or why not."""
    runner = current()
    run = runner.new_folder()
    try:
        side = run / "tree"
        write_package(side / "tree", implementation)
        (side / "home").mkdir()
        runner.hand_over(side, untrusted=True)
        probe = Side(side, side / "home", clean_environment(side, {}),
                     run_limits(PROBE_LIMIT), "probe", (str(side / "tree"),))
        ended = runner.run(probe, None, PROBE_LIMIT, None)
    finally:
        shutil.rmtree(run, ignore_errors=True)
    if ended.returncode is None:
        return f"importing it takes more than {PROBE_LIMIT:.0f} s"
    try:
        result = json.loads(ended.records[0])
        ok, error = result["ok"], str(result["error"])
    except (IndexError, ValueError, TypeError, KeyError):
        return f"importing it ends the interpreter (exit code {ended.returncode})"
    return None if ok is True else (error or "it fails")
