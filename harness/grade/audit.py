"""ol audit, deciding: what the course suite lets through that the planted mutants did not foresee.

Four measurements of the course tests against the reference and its variants:

- the audit catalog (the manifest's ``audit_catalog``): plausible bugs beyond the planted
  mutants, each run against the whole course suite, which must kill every one;
- seeds (``--seeds K``): the model test at the course profile's size with K seeds instead
  of the derandomized one, and the named tests once (they draw nothing), against the
  planted mutants and the audit catalog: the share of seeds under which the course kills
  each mutant, so a kill that depends on one seed's luck shows;
- coverage: the suite runs once in-process with line and branch coverage of the tree;
- mutmut (3.x, run by ``harness/run/mutmut.py``): every small change mutmut makes to the
  tree, run against the suite.

Mutants of the first two run without the reference's self-check (a method ``_check`` of
the chapter's class, which the machine calls when a tree has one): a student's tree has
none, so only the public interface judges them, as it judges a student's tree.

mutmut's survivors are explained by the chapter's equivalents file: a ``[[mutant]]`` entry
names one change (its function, the line before and after) and why it cannot change
behaviour; an ``[[instrument]]`` entry names a function that only checks the tree (its
self-check), whose surviving mutants are weaker checks, not gaps. Every other survivor,
every untested mutant, and every entry that matches no survivor is part of the result.
Each measurement returns a frozen record; ``harness/report/audit.py`` prints them.
"""

from __future__ import annotations

import ast
import dataclasses
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade import catalog, mutation
from harness.grade.syntax import parse
from harness.run import mutmut
from harness.run.engine import Engine
from harness.run.judge import RunResult, Status
from harness.run.layout import Suite
from harness.run.measure import Coverage

COVERAGE_LIMIT = 1800.0  # seconds the measured run of the suite may take
# An audit mutant's run may take this many times the reference's: a bug the model test
# shrinks at length must be killed by its assertions, never by a busy machine's clock.
AUDIT_LIMIT_FACTOR = 15.0


@dataclass(frozen=True)
class Target:
    """What to audit: a tree's source, the suite that judges it, and its explanations."""

    source: str
    suite: Suite
    equivalents: Path
    label: str  # how the tree is named to the reader, as "impl/radix.py"
    chapter: Chapter


@dataclass(frozen=True)
class Entry:
    function: str
    reason: str
    was: str = ""   # empty for an instrument: every survivor of the function
    now: str = ""

    @property
    def instrument(self) -> bool:
        return not self.was and not self.now


@dataclass(frozen=True)
class Audit:
    """mutmut's mutants of a tree and the coverage of its suite, each survivor explained or not."""

    coverage: Coverage           # outside the instruments
    instrument_coverage: Mapping[str, Coverage]  # an instrument's name: its coverage
    mutants: tuple[mutmut.Mutant, ...]
    explained: Mapping[str, Entry]  # a survivor's name: the entry that explains it
    stale: tuple[Entry, ...]        # entries that explain no survivor
    seconds: float

    def having(self, *statuses: str) -> list[mutmut.Mutant]:
        return [mutant for mutant in self.mutants if mutant.status in statuses]

    @property
    def unexplained(self) -> list[mutmut.Mutant]:
        return [mutant for mutant in self.mutants
                if not mutant.caught and mutant.name not in self.explained]

    @property
    def explained_survivors(self) -> tuple[int, int]:
        """How many survivors are explained as equivalent, and how many by an instrument."""
        entries = [self.explained[m.name] for m in self.having("survived")
                   if m.name in self.explained]
        instrument = sum(entry.instrument for entry in entries)
        return len(entries) - instrument, instrument

    @property
    def complete(self) -> bool:
        return (bool(self.mutants) and not self.unexplained and not self.stale
                and self.coverage.complete)


def load_equivalents(path: Path, id: str) -> list[Entry]:
    """The entries of chapter ``id``'s equivalents file; OlError naming the entry that is
    malformed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{path} cannot be read as TOML ({error}). Fix the file and run "
                      f"`ol audit {id}` again.") from None
    entries = []
    for kind in ("instrument", "mutant"):
        for number, item in enumerate(data.get(kind, []), 1):
            wanted = ("function", "reason") + (("was", "now") if kind == "mutant" else ())
            if not isinstance(item, dict) or any(
                    not isinstance(item.get(key), str) or not item[key].strip()
                    for key in wanted):
                raise OlError(f"{path}: [[{kind}]] number {number} needs a non-empty "
                              f"{', '.join(wanted)}. Fix it and run `ol audit {id}` again.")
            entries.append(Entry(item["function"], item["reason"].strip(),
                                 item.get("was", "").strip(), item.get("now", "").strip()))
    unknown = set(data) - {"instrument", "mutant"}
    if unknown:
        raise OlError(f"{path}: unknown tables {sorted(unknown)}; only [[instrument]] and "
                      f"[[mutant]] entries are read. Fix it and run `ol audit {id}` again.")
    return entries


def explain(mutants: tuple[mutmut.Mutant, ...], entries: list[Entry],
            ) -> tuple[dict[str, Entry], tuple[Entry, ...]]:
    """Which survivors each entry explains, and the entries that explain none."""
    explained: dict[str, Entry] = {}
    used: set[Entry] = set()
    for mutant in mutants:
        if mutant.caught:
            continue
        for entry in entries:
            if entry.function != mutant.function:
                continue
            if entry.instrument or (entry.was == mutant.changed("-")
                                    and entry.now == mutant.changed("+")):
                explained[mutant.name] = entry
                used.add(entry)
                break
    return explained, tuple(entry for entry in entries if entry not in used)


def function_lines(source: str, name: str) -> set[int]:
    """The lines of function ``name`` ("Class.method" or "function") in ``source``."""
    tree = parse(source)
    *owner, function = name.split(".")
    scopes = [node for node in tree.body if isinstance(node, ast.ClassDef)
              and node.name == owner[0]] if owner else [tree]
    for scope in scopes:
        for node in scope.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
                return set(range(node.lineno, node.end_lineno + 1))
    return set()


def split_coverage(coverage: Coverage, lines: set[int]) -> tuple[Coverage, Coverage]:
    """``coverage`` of the lines outside ``lines``, and of ``lines`` alone."""
    def part(inside: bool) -> Coverage:
        return Coverage(*(tuple(item for item in items
                                if ((item[0] if isinstance(item, tuple) else item) in lines)
                                == inside)
                          for items in (coverage.executed_lines, coverage.missing_lines,
                                        coverage.executed_branches,
                                        coverage.missing_branches)), coverage.error)
    return part(False), part(True)


def audit(engine: Engine, target: Target, jobs: int,
          stage: Callable[[str], None] | None = None,
          tally: Callable[[mutmut.Tally], None] | None = None) -> Audit:
    """Measure coverage, run mutmut, and explain the survivors. ``stage`` hears of each
    stage as it starts, ``tally`` of mutmut's progress."""
    started = time.perf_counter()
    entries = load_equivalents(target.equivalents, target.chapter.id)
    if stage is not None:
        stage("the suite runs once, measuring coverage")
    run = engine.run(dataclasses.replace(target.suite, measure=True), target.source,
                     timeout=COVERAGE_LIMIT)
    if not run.all_passed or run.coverage is None:
        failed = ", ".join(record.name for record in run.failures) or run.detail
        raise OlError(f"the suite does not pass on {target.label} ({run.status.value}: "
                      f"{failed}), so mutmut cannot judge a mutant of it. Make it pass first.")
    if stage is not None:
        stage("mutmut makes its mutants and runs the suite against each")
    with tempfile.TemporaryDirectory(prefix="ol-audit-", ignore_cleanup_errors=True) as name:
        folder = Path(name)
        mutmut.lay_out(folder, target.suite.contract.path, target.source, target.suite,
                       target.chapter.package)
        mutmut.run(folder, target.suite, jobs, tally)
        mutants = mutmut.results(folder, target.suite)
    explained, stale = explain(mutants, entries)
    coverage, instruments = run.coverage, {}
    for entry in entries:
        if entry.instrument:
            lines = function_lines(target.source, entry.function)
            coverage, instruments[entry.function] = split_coverage(coverage, lines)
    return Audit(coverage=coverage, instrument_coverage=instruments, mutants=mutants,
                 explained=explained, stale=stale, seconds=time.perf_counter() - started)


# --- the audit catalog and the seeds ------------------------------------------------------

NO_SELF_CHECK = """


del {name}._check  # ol audit: only the public interface judges this tree
"""
SEEDED_TEST = '''"""The course's model test once per seed, and its named tests once: ol audit
--seeds (a named test draws nothing, so it kills a mutant under every seed or none)."""

import os

import pytest
import @MODULE@ as course
from @MODULE@ import @MODEL_TEST@ as model_test

for _name in dir(course):
    if _name.startswith("test_") and _name != "@MODEL_TEST@":
        globals()[_name] = getattr(course, _name)


@pytest.mark.parametrize("seed", range(1, int(os.environ["OL_AUDIT_SEEDS"]) + 1))
def test_model_with_seed(seed):
    os.environ["OL_HYPOTHESIS_SEED"] = str(seed)
    model_test()
'''


def public_only(source: str, chapter: Chapter) -> str:
    """``source``, a tree of the chapter, without the reference's self-check."""
    return source + NO_SELF_CHECK.format(name=chapter.class_name)


def public_mutants(mutants: tuple[catalog.Mutant, ...] | list[catalog.Mutant],
                   chapter: Chapter) -> list[catalog.Mutant]:
    return [dataclasses.replace(mutant, source=public_only(mutant.source, chapter))
            for mutant in mutants]


@dataclass(frozen=True)
class CatalogRun:
    """The course suite against every audit mutant: the wiring run and each mutant's run."""

    chapter: Chapter
    baseline: RunResult
    results: tuple[mutation.MutantResult, ...]

    @property
    def survivors(self) -> list[mutation.MutantResult]:
        return [result for result in self.results if not result.killed]


def run_catalog(engine: Engine, chapter: Chapter, mutants: tuple[catalog.Mutant, ...],
                jobs: int | None = None,
                progress: Callable[[mutation.MutantResult], None] | None = None,
                profile: str = "verdict") -> CatalogRun:
    """Every mutant against the course suite (the ``verdict`` profile: the course steps)."""
    suite = mutation.course_suite(chapter, profile)
    baseline = mutation.prove_wiring(engine, suite,
                                     public_only(chapter.reference_source(), chapter), chapter)
    limits = mutation.Limits.from_reference(baseline, AUDIT_LIMIT_FACTOR)
    results = mutation.run_mutants(engine, suite, public_mutants(mutants, chapter), limits,
                                   mutation.course_ids(chapter), progress, jobs)
    return CatalogRun(chapter, baseline, tuple(results))


@dataclass(frozen=True)
class SeedRow:
    mutant: catalog.Mutant
    catalog: str        # "chapter" or "audit"
    killing: tuple[int, ...]  # the seeds under which the course fails on the mutant
    seeds: int
    detail: str = ""    # how a run that ended early ended
    named: tuple[str, ...] = ()  # the named course tests that fail on it, under every seed

    @property
    def weak(self) -> bool:
        return len(self.killing) < self.seeds


@dataclass(frozen=True)
class SeedRun:
    seeds: int
    reference_seconds: float
    rows: tuple[SeedRow, ...]

    @property
    def weak(self) -> list[SeedRow]:
        return [row for row in self.rows if row.weak]


def seeded_suite(folder: Path, seeds: int, chapter: Chapter) -> Suite:
    """The model test parametrised by seed and the named tests, with the course files
    beside them."""
    test = folder / "test_model_seeds.py"
    test.write_text(SEEDED_TEST.replace("@MODULE@", chapter.course_test_file.stem)
                    .replace("@MODEL_TEST@", chapter.model_test), encoding="utf-8")
    beside = tuple(path for path in (chapter.course_test_file, chapter.course_machine,
                                     chapter.course_views) if path is not None)
    course = mutation.course_suite(chapter, "verdict")
    return dataclasses.replace(course, files=(test,), support=(*course.support, *beside),
                               env={**course.env, "OL_AUDIT_SEEDS": str(seeds)})


def seed_of(name: str) -> int:
    return int(name.rsplit("[", 1)[-1].rstrip("]"))


def run_seeds(engine: Engine, chapter: Chapter, planted: tuple[catalog.Mutant, ...],
              audit_mutants: tuple[catalog.Mutant, ...], seeds: int,
              jobs: int | None = None,
              progress: Callable[[mutation.MutantResult], None] | None = None) -> SeedRun:
    """The course with ``seeds`` seeds against every mutant of both catalogs: the model test
    once per seed, the named tests once (they draw nothing), a mutant a named test kills
    being killed under every seed.

    OlError unless every seed passes on the reference (a seed that fails there would count
    as a kill everywhere).
    """
    if seeds < 1:
        raise OlError(f"--seeds must be at least 1, got {seeds}.")
    named = [name for name in chapter.course_test_names if name != chapter.model_test]
    expected = [*(f"tests/test_model_seeds.py::{name}" for name in named),
                *(f"tests/test_model_seeds.py::test_model_with_seed[{n}]"
                  for n in range(1, seeds + 1))]
    with tempfile.TemporaryDirectory(prefix="ol-seeds-") as name:
        suite = seeded_suite(Path(name), seeds, chapter)
        baseline = mutation.prove_wiring(engine, suite,
                                         public_only(chapter.reference_source(), chapter),
                                         chapter, expected)
        limits = mutation.Limits.from_reference(baseline, AUDIT_LIMIT_FACTOR)
        mutants = [*planted, *audit_mutants]
        results = mutation.run_mutants(engine, suite, public_mutants(mutants, chapter),
                                       limits, expected, progress, jobs)
    rows = []
    for number, result in enumerate(results):
        ended = result.run.status is not Status.OK
        by_name = tuple(name for name in named if name in result.killers)
        killing = tuple(range(1, seeds + 1)) if ended or by_name else tuple(
            sorted(seed_of(name) for name in result.killers))
        rows.append(SeedRow(mutants[number], "chapter" if number < len(planted) else "audit",
                            killing, seeds, result.run.status.value if ended else "",
                            by_name))
    return SeedRun(seeds, baseline.seconds, tuple(rows))


