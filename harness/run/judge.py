"""A run's records, as the recorder wrote them, turned into a validated ``RunResult``.

The recorder (payload/ol_recorder.py) writes one JSON line per event to a socket only the
engine reads. Nothing in them is trusted: a run whose records are incomplete or malformed,
which collects other tests than expected, or which loads a plugin of its own is a crash,
whatever its exit status says.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from harness.run.intake import (
    Collected,
    CollectError,
    Finished,
    Refused,
    TestRecord,
    records,
)
from harness.run.measure import Coverage

PYTEST_EXIT_OK = (0, 1)  # all passed; some failed
TEST_TIMEOUT = "TestTimeout"  # the exception type of a test stopped at its own limit


class Status(enum.Enum):
    OK = "ok"                      # records complete: every collected test has an outcome
    TIMEOUT = "timeout"            # killed at the wall-clock limit
    CRASH = "crash"                # ended early, lost records, or tampered with the run
    COLLECTION_ERROR = "collection error"  # a test file did not import


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
    def decided_by_timeout(self) -> bool:
        """Stopped at a limit, with no failure besides the timeouts to say anything else."""
        return self.timed_out and not [record for record in self.failures
                                       if record.exception != TEST_TIMEOUT]

    @property
    def slowest(self) -> float:
        return max((record.seconds for record in self.records), default=0.0)

    @property
    def all_passed(self) -> bool:
        return (self.status is Status.OK and bool(self.records)
                and all(record.outcome == "passed" for record in self.records))



def judge(lines: list[str], returncode: int, expected: Iterable[str] | None,
          seconds: float, output: str) -> RunResult:
    """Turn the recorder's lines into a validated result: lines that are not the records it
    writes make the run a crash (intake.py reads them), and so do records that do not add
    up to a finished session of exactly the expected tests."""
    tests: dict[str, TestRecord] = {}

    def crash(detail: str) -> RunResult:
        return RunResult(Status.CRASH, tuple(tests.values()), seconds, detail, output)

    decoded = records(lines)
    if isinstance(decoded, Refused):
        return crash(f"the run's records are malformed ({decoded.reason})")
    collected: tuple[str, ...] | None = None
    collect_errors: list[str] = []
    finish = None
    plugins: set[str] = set()
    coverage = None
    for record in decoded:
        if isinstance(record, Collected):
            collected = record.ids
            plugins.update(record.plugins)
        elif isinstance(record, CollectError):
            collect_errors.append(f"{record.nodeid}: {record.text}")
        elif isinstance(record, TestRecord):
            if record.nodeid in tests:
                return crash(f"{record.nodeid} reported twice")
            tests[record.nodeid] = record
        elif isinstance(record, Coverage):
            coverage = record
        elif isinstance(record, Finished):
            finish = record.exitstatus
            plugins.update(record.plugins)
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
