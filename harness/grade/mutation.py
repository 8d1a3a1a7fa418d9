"""Mutation runs: prove the wiring, then run a suite against every planted mutant.

Before any score is trusted the suite must pass on the reference and kill a placebo that
breaks every method. Each mutant's time limit comes from the reference run's time, with
a floor; a mutant that times out is run once more and counts as killed only when it
times out again, so a busy machine cannot turn a slow run into a kill.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade.catalog import Mutant
from harness.grade.course import references
from harness.run.engine import Engine, run_together
from harness.run.judge import RunResult, Status
from harness.run.layout import Suite

LIMIT_FLOOR = 30.0      # seconds: no run is cut shorter than this
TEST_LIMIT_FLOOR = 1.0  # seconds: no single test is cut shorter than this
LIMIT_FACTOR = 5.0      # a mutant's run, and each test, may take this many times the reference's

T = TypeVar("T")


def course_ids(chapter: Chapter) -> tuple[str, ...]:
    """The course tests' node ids, as a run of the course suite reports them."""
    return tuple(f"tests/{chapter.course_test_file.name}::{name}"
                 for name in chapter.course_test_names)


PLACEBO_TAIL = '''


def _placebo(*args, **kwargs):
    raise AssertionError("the placebo: every method of this tree is broken")


for _name in {methods!r}:
    setattr({name}, _name, _placebo)
for _name in {properties!r}:
    setattr({name}, _name, property(_placebo))
'''


def placebo(reference: str, chapter: Chapter) -> str:
    """The reference with every method replaced by one that raises."""
    return reference + PLACEBO_TAIL.format(methods=chapter.methods,
                                           properties=chapter.properties,
                                           name=chapter.class_name)


def course_suite(chapter: Chapter, profile: str = "course", proxy: bool = False,
                 call_limit: float | None = None) -> Suite:
    """The course tests, with the state machine and the model beside them.

    With ``proxy``, the tree under test runs in a process of its own behind a proxy (for a
    student's tree, which must not run beside the tests that judge it).
    """
    files = tuple(sorted(chapter.course_tests.glob("*.py")))
    env = {"OL_HYPOTHESIS_PROFILE": profile}
    if call_limit is not None:
        env["OL_CALL_LIMIT"] = str(call_limit)  # seconds one call to a proxied tree may take
    return Suite(files=files, contract=chapter.contract, support=(chapter.model,), env=env,
                 ours=True, beside=references(chapter),
                 proxy=(() if chapter.course_views is None else (chapter.course_views,))
                 if proxy else None)


@dataclass(frozen=True)
class Limits:
    """Seconds a run, and one test of it, may take: from the reference's times, with floors."""

    run: float
    test: float

    @classmethod
    def from_reference(cls, reference: RunResult, factor: float = LIMIT_FACTOR) -> Limits:
        test = max(TEST_LIMIT_FLOOR, factor * reference.slowest)
        run = max(LIMIT_FLOOR, factor * reference.seconds, 2 * test)
        return cls(run, test)


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    run: RunResult

    @property
    def killers(self) -> tuple[str, ...]:
        """The names of the tests that failed or errored on the mutant."""
        return tuple(record.name for record in self.run.failures)

    @property
    def killed(self) -> bool:
        return self.run.status is not Status.OK or bool(self.run.failures)

    @property
    def killed_by(self) -> str:
        """Who killed it, for a table: the tests, or how the run ended."""
        if self.run.status is not Status.OK:
            return self.run.status.value
        return ", ".join(self.killers)


def prove_wiring(engine: Engine, suite: Suite, reference: str, chapter: Chapter,
                 expected: Sequence[str] | None = None,
                 cancel: threading.Event | None = None) -> RunResult:
    """Run the suite on the reference and on the placebo; OlError unless both behave.
    ``expected``: the tests the suite must report, the course tests unless said."""
    expected = course_ids(chapter) if expected is None else expected
    baseline = engine.run(suite, reference, timeout=600, expected=expected, cancel=cancel,
                          trusted=True)
    if not baseline.all_passed:
        broken = ", ".join(record.name for record in baseline.failures) or baseline.detail
        raise OlError(f"the suite does not pass on the reference ({baseline.status.value}: "
                      f"{broken}); no mutation score can be trusted until it does")
    limits = Limits.from_reference(baseline)
    dummy = engine.run(suite, placebo(reference, chapter), timeout=limits.run,
                       test_limit=limits.test, expected=expected, cancel=cancel, trusted=True)
    if dummy.status is Status.OK and not dummy.failures:
        raise OlError("the suite passes on a placebo whose every method raises: the runs "
                      "do not reach the implementation, so no score can be trusted")
    return baseline


def run_limited(engine: Engine, suite: Suite, source: str, limits: Limits,
                expected: Sequence[str] | None,
                cancel: threading.Event | None = None) -> RunResult:
    """One run of a tree of ours within ``limits``; a timeout (of the run or of a test) that
    alone would end it is trusted only if a re-run times out too."""
    def once(again: bool = False) -> RunResult:
        return engine.run(suite, source, timeout=limits.run, test_limit=limits.test,
                          expected=expected, cancel=cancel, trusted=True, again=again)

    run = once()
    if run.decided_by_timeout:
        run = once(again=True)  # a timeout alone is evidence only if it happens again
    return run


def run_mutant(engine: Engine, suite: Suite, mutant: Mutant, limits: Limits,
               expected: Sequence[str] | None,
               cancel: threading.Event | None = None) -> MutantResult:
    """One mutant's run (run_limited)."""
    return MutantResult(mutant, run_limited(engine, suite, mutant.source, limits, expected,
                                            cancel))


def run_mutants(engine: Engine, suite: Suite, mutants: Iterable[Mutant], limits: Limits,
                expected: Sequence[str] | None = None,
                progress: Callable[[MutantResult], None] | None = None,
                jobs: int | None = None) -> list[MutantResult]:
    """Every mutant against the suite, spread over the cores; results in catalog order."""
    def job(mutant: Mutant) -> Callable[[threading.Event], MutantResult]:
        return lambda cancel: run_mutant(engine, suite, mutant, limits, expected, cancel)

    return run_together([job(mutant) for mutant in mutants], jobs, progress)


@dataclass(frozen=True)
class MatrixRow:
    """One mutant of the course suite's kill matrix: who killed it, and who should have."""

    result: MutantResult
    missed_by: tuple[str, ...]  # the course tests its caught_by names that did not kill it

    @property
    def complete(self) -> bool:
        """Killed, and by every course test the catalog says catches it."""
        return self.result.killed and not self.missed_by


def kill_matrix(results: Iterable[MutantResult]) -> tuple[MatrixRow, ...]:
    """The rows of the kill matrix; a run that timed out or crashed stops every test at once,
    so no test is said to have missed it."""
    return tuple(MatrixRow(result, () if result.run.status is not Status.OK else tuple(
        name for name in result.mutant.caught_by if name not in result.killers))
        for result in results)
