"""ol audit: what the course suite lets through that the planted mutants did not foresee.

Four measurements of the course tests against the reference and its variants:

- the audit catalog (the manifest's ``audit_catalog``): plausible bugs beyond the planted
  mutants, each run against the whole course suite, which must kill every one;
- seeds (``--seeds K``): the model test alone, at the course profile's size, with K seeds
  instead of the derandomized one, against the planted mutants and the audit catalog: the
  share of seeds that kill each mutant, so a kill that depends on one seed's luck shows;
- coverage: the suite runs once in-process with line and branch coverage of the tree;
- mutmut (3.x): every small change mutmut makes to the tree, run against the suite.

Mutants of the first two run without the reference's self-check (a method ``_check`` of
the chapter's class, which the machine calls when a tree has one): a student's tree has
none, so only the public interface judges them, as it judges a student's tree.

mutmut works in a folder of its own named ``mutants/`` beside the code it mutates, so the
whole run happens in a temporary copy laid out as mutmut expects (the chapter's module,
``tests/``, a ``pyproject.toml`` with its settings); the checkout is never touched.
Survivors are explained by the chapter's equivalents file: a
``[[mutant]]`` entry names one change (its function, the line before and after) and why it
cannot change behaviour; an ``[[instrument]]`` entry names a function that only checks the
tree (its self-check), whose surviving mutants are weaker checks, not gaps. Every other
survivor, every untested mutant, and every entry that matches no survivor is reported.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade import catalog, mutation
from harness.grade.syntax import parse
from harness.run.engine import Engine
from harness.run.judge import RunResult, Status
from harness.run.layout import Suite, clean_environment, copy_item, write_module
from harness.run.measure import Coverage

COVERAGE_LIMIT = 1800.0  # seconds the measured run of the suite may take
# An audit mutant's run may take this many times the reference's: a bug the model test
# shrinks at length must be killed by its assertions, never by a busy machine's clock.
AUDIT_LIMIT_FACTOR = 15.0
TIMEOUT_MULTIPLIER = 4.0  # mutmut's: a mutant may use this many times the tests' CPU time
PROGRESS = re.compile(r"(\d+)/(\d+)\s+\U0001f389 (\d+) \U0001fae5 (\d+)\s+\u23f0 (\d+)"
                      r"\s+\U0001f914 (\d+)\s+\U0001f641 (\d+)")
CAUGHT = {"killed": "killed", "timeout": "timed out", "segfault": "crashed"}

DRIVER = '''\
import contextlib, io, json, sys
from mutmut.__main__ import cli

def call(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main(list(args), standalone_mode=False)
        except SystemExit:
            pass
    return out.getvalue()

found = {}
for line in call("results", "--all=true").splitlines():
    name, _, status = line.strip().rpartition(": ")
    if name:
        found[name] = {"status": status, "diff": ""}
for name, item in found.items():
    if item["status"] != "killed":
        item["diff"] = call("show", name)
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(found, out)
'''


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
class Mutant:
    name: str
    status: str
    diff: str = ""

    @property
    def function(self) -> str:
        """mutmut's ``tl_ds.radix.xǁRadixTreeǁ_walk__mutmut_4`` as ``RadixTree._walk``."""
        mangled = re.sub(r"__mutmut_\d+$", "", self.name.rsplit(".", 1)[-1])
        if "\u01c1" in mangled:
            return ".".join(part for part in mangled.removeprefix("x").split("\u01c1") if part)
        return mangled.removeprefix("x_")

    def changed(self, sign: str) -> str:
        return "\n".join(line[1:].strip() for line in self.diff.splitlines()
                         if line.startswith(sign) and not line.startswith(sign * 3))


@dataclass
class Audit:
    coverage: Coverage
    instrument_coverage: dict[str, Coverage] = field(default_factory=dict)
    mutants: list[Mutant] = field(default_factory=list)
    explained: dict[str, Entry] = field(default_factory=dict)
    stale: list[Entry] = field(default_factory=list)
    seconds: float = 0.0

    def having(self, *statuses: str) -> list[Mutant]:
        return [mutant for mutant in self.mutants if mutant.status in statuses]

    @property
    def unexplained(self) -> list[Mutant]:
        return [mutant for mutant in self.mutants
                if mutant.status not in CAUGHT and mutant.name not in self.explained]

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


def explain(mutants: list[Mutant], entries: list[Entry]) -> tuple[dict[str, Entry], list[Entry]]:
    """Which survivors each entry explains, and the entries that explain none."""
    explained: dict[str, Entry] = {}
    used: set[Entry] = set()
    for mutant in mutants:
        if mutant.status in CAUGHT:
            continue
        for entry in entries:
            if entry.function != mutant.function:
                continue
            if entry.instrument or (entry.was == mutant.changed("-")
                                    and entry.now == mutant.changed("+")):
                explained[mutant.name] = entry
                used.add(entry)
                break
    return explained, [entry for entry in entries if entry not in used]


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


def lay_out(folder: Path, target: Target) -> None:
    write_module(folder, target.suite.contract.path, target.source)
    (folder / "tests").mkdir()
    for item in target.suite.files:
        copy_item(item, folder / "tests" / item.name)
    support = []
    for item in target.suite.support:
        copy_item(item, folder / item.name)
        support.append(item.name)
    (folder / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        f'source_paths = ["{target.chapter.package}"]\n'
        'pytest_add_cli_args_test_selection = ["tests"]\n'
        'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
        f"also_copy = {json.dumps(support)}\n"
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}\n"
        "use_git_change_detection = false\n"
        "\n[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n', encoding="utf-8")


def environment(folder: Path, suite: Suite) -> dict[str, str]:
    """The engine's clean environment, unbuffered so mutmut's progress arrives as it happens."""
    (folder / "home").mkdir(exist_ok=True)
    return clean_environment(folder, {"PYTHONUNBUFFERED": "1", **suite.env})


def run_mutmut(folder: Path, suite: Suite, jobs: int,
               progress: Callable[[str], None] | None) -> str:
    """``mutmut run`` in ``folder``; its output. Progress every tenth of the mutants."""
    env = environment(folder, suite)
    process = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                                str(jobs)], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    said: list[str] = []
    shown, phase = -1, ""
    try:
        buffer = ""
        for chunk in iter(lambda: process.stdout.read1(4096), b""):
            buffer += chunk.decode("utf-8", "replace")
            *pieces, buffer = re.split(r"[\r\n]", buffer)
            for piece in pieces:
                said.append(piece)
                found = PROGRESS.search(piece)
                if found and progress is not None:
                    done, total = int(found[1]), int(found[2])
                    step = max(1, total // 10)
                    if done // step > shown:
                        shown = done // step
                        progress(f"mutants {done} of {total}: {found[3]} killed, "
                                 f"{found[5]} timed out, {found[7]} survived")
                elif progress is not None and piece.strip() and not found:
                    name = piece.strip().lstrip("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ").strip()
                    if name.startswith(("Generating", "Running")) and name != phase:
                        phase = name
                        progress(f"mutmut: {name.lower()}")
        returncode = process.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    output = "\n".join(said[-40:])
    if returncode != 0:
        raise OlError(f"mutmut stopped (exit code {returncode}) before it had run every "
                      f"mutant. The end of what it said:\n{output}")
    return output


def read_results(folder: Path, suite: Suite) -> list[Mutant]:
    answer = folder / "home" / "results.json"
    done = subprocess.run([sys.executable, "-c", DRIVER, str(answer)], cwd=folder,
                          env=environment(folder, suite), capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0 or not answer.exists():
        raise OlError(f"mutmut's results could not be read: {done.stderr.strip()[-2000:]}")
    found = json.loads(answer.read_text(encoding="utf-8"))
    return [Mutant(name, item["status"], item["diff"]) for name, item in found.items()]


def audit(engine: Engine, target: Target, jobs: int,
          progress: Callable[[str], None] | None = None) -> Audit:
    """Measure coverage, run mutmut, and explain the survivors."""
    started = time.perf_counter()
    entries = load_equivalents(target.equivalents, target.chapter.id)
    if progress is not None:
        progress("the suite runs once, measuring coverage")
    run = engine.run(dataclasses.replace(target.suite, measure=True), target.source,
                     timeout=COVERAGE_LIMIT)
    if not run.all_passed or run.coverage is None:
        failed = ", ".join(record.name for record in run.failures) or run.detail
        raise OlError(f"the suite does not pass on {target.label} ({run.status.value}: "
                      f"{failed}), so mutmut cannot judge a mutant of it. Make it pass first.")
    with tempfile.TemporaryDirectory(prefix="ol-audit-", ignore_cleanup_errors=True) as name:
        folder = Path(name)
        lay_out(folder, target)
        run_mutmut(folder, target.suite, jobs, progress)
        mutants = read_results(folder, target.suite)
    result = Audit(run.coverage, mutants=mutants)
    result.explained, result.stale = explain(mutants, entries)
    for entry in entries:
        if entry.instrument:
            lines = function_lines(target.source, entry.function)
            result.coverage, result.instrument_coverage[entry.function] = split_coverage(
                result.coverage, lines)
    result.seconds = time.perf_counter() - started
    return result


def terminal_width() -> int:
    """The columns of the terminal ol prints to (100 when it is not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def fitted(line: str, width: int, hang: int = 0) -> str:
    """``line`` cut into lines of at most ``width`` columns at spaces, the lines after the
    first indented by ``hang`` (by 8 when ``hang`` leaves less than half the width)."""
    if len(line) <= width:
        return line
    lead = len(line) - len(line.lstrip(" "))
    hang = hang if 0 < hang <= width // 2 else lead + 8
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=" " * hang,
                                    break_long_words=False, break_on_hyphens=False,
                                    drop_whitespace=True)) or line


def report(result: Audit, target: Target, out=None, width: int | None = None) -> None:
    """What `ol audit` prints: coverage, the mutmut counts, every unexplained survivor; prose
    wrapped at ``width`` (the terminal's), diffs as they are."""
    width = width or terminal_width()

    def say(line: str = "", hang: int = 0) -> None:
        print(fitted(line, width, hang), file=out)

    aside = "".join(f", {name} aside" for name in result.instrument_coverage)
    say(f"\nCoverage of {target.label} by the suite{aside}: {result.coverage.summary()}")
    for line in result.coverage.missed():
        say(f"  {line}")
    for name, part in result.instrument_coverage.items():
        say(f"  {name} (an instrument: it only checks the tree): {part.summary()}")
    counts = {status: len(result.having(status)) for status in
              ("killed", "timeout", "segfault", "survived", "no tests")}
    other = [mutant for mutant in result.mutants if mutant.status not in counts]
    survivors = result.having("survived")
    instrument = sum(result.explained[m.name].instrument for m in survivors
                     if m.name in result.explained)
    equivalent = sum(m.name in result.explained for m in survivors) - instrument
    say(f"\nmutmut: {len(result.mutants)} mutants of {target.label}")
    say(f"  killed     {counts['killed']:4}")
    say(f"  timed out  {counts['timeout']:4}   (the suite stops them at their time limit)")
    say(f"  crashed    {counts['segfault']:4}   (the run died of a signal)")
    say(f"  survived   {counts['survived']:4}   ({equivalent} listed as equivalent, "
        f"{instrument} in an instrument, "
        f"{counts['survived'] - equivalent - instrument} unexplained)")
    say(f"  untested   {counts['no tests']:4}   (no test of the suite reaches them)")
    if other:
        say(f"  other      {len(other):4}   ({', '.join(sorted({m.status for m in other}))})")
    unexplained = result.unexplained
    if unexplained:
        say(f"\n{len(unexplained)} unexplained (a gap in the suite, or an equivalent mutant "
            f"to list in {target.equivalents.name} with its reason):")
        for mutant in unexplained:
            say(f"\n{mutant.name}: {mutant.status}")
            for line in mutant.diff.splitlines()[1:]:
                print(f"    {line}", file=out)  # a diff is never rewrapped
    for entry in result.stale:
        what = "every survivor of" if entry.instrument else f"`{entry.was}` -> `{entry.now}` in"
        say(f"\nSTALE entry of {target.equivalents.name}: {what} {entry.function} "
            "matches no surviving mutant: remove it or correct it")
    say(f"\n{result.seconds:.0f} s.")
    if result.complete:
        say("AUDIT COMPLETE: every line and branch runs, and every mutant is caught or "
            "explained.")
    else:
        wrong = []
        if not result.coverage.complete:
            wrong.append("the suite leaves lines or branches unrun")
        if unexplained:
            wrong.append(f"{len(unexplained)} mutants unexplained")
        if result.stale:
            wrong.append(f"{len(result.stale)} stale entries")
        if not result.mutants:
            wrong.append("mutmut made no mutant")
        say(f"AUDIT INCOMPLETE: {'; '.join(wrong)}.")


# --- the audit catalog and the seeds ------------------------------------------------------

NO_SELF_CHECK = """


del {name}._check  # ol audit: only the public interface judges this tree
"""
SEEDED_TEST = '''"""The course's model test alone, once per seed: ol audit --seeds."""

import os

import pytest
from @MODULE@ import @MODEL_TEST@ as model_test


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


def short(name: str) -> str:
    return name.removeprefix("test_")


def report_catalog(run: CatalogRun, out=None, width: int | None = None) -> None:
    """What `ol audit` prints of the audit catalog: per mutant, the course tests that kill it,
    wrapped at ``width`` (the terminal's) under the column of the killers."""
    width = width or terminal_width()

    def say(line: str = "", hang: int = 0) -> None:
        print(fitted(line, width, hang), file=out)

    results, chapter = run.results, run.chapter
    say(f"\nThe audit catalog ({chapter.shown(chapter.audit_catalog.parent)}/): "
        f"{len(results)} plausible bugs beyond the chapter's "
        f"{len(catalog.load_catalog(chapter))}, against the course suite (the course "
        "profile's steps, without shrinking; each tree judged by its public interface alone)")
    titles = max(len(result.mutant.title) for result in results)
    groups = max(len(result.mutant.group) for result in results)
    say(f"{'id':<4} {'rule':<{groups}} {'pitfall':<{titles}}  killed by")
    for result in results:
        killers = (", ".join(map(short, result.killers)) if result.run.status is
                   Status.OK else result.run.status.value) or "NOTHING: it survives"
        say(f"{result.mutant.id:<4} {result.mutant.group:<{groups}} "
            f"{result.mutant.title:<{titles}}  {killers}", hang=4 + 1 + groups + 1 + titles + 2)
    killed = len(results) - len(run.survivors)
    model = sum(chapter.model_test in result.killers for result in results)
    say(f"\n{killed} of {len(results)} audit mutants killed by the course suite; the model "
        f"test alone kills {model}.")
    for result in run.survivors:
        say(f"SURVIVES {result.mutant.id}: {result.mutant.title} ({result.mutant.rule})", 9)


@dataclass(frozen=True)
class SeedRow:
    mutant: catalog.Mutant
    catalog: str        # "chapter" or "audit"
    killing: tuple[int, ...]  # the seeds whose run of the model test fails on the mutant
    seeds: int
    detail: str = ""    # how a run that ended early ended

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
    """The model test alone, parametrised by seed, with the course files beside it."""
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
    """The model test with ``seeds`` seeds against every mutant of both catalogs.

    OlError unless every seed passes on the reference (a seed that fails there would count
    as a kill everywhere).
    """
    if seeds < 1:
        raise OlError(f"--seeds must be at least 1, got {seeds}.")
    expected = [f"tests/test_model_seeds.py::test_model_with_seed[{n}]"
                for n in range(1, seeds + 1)]
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
        killing = tuple(range(1, seeds + 1)) if ended else tuple(
            sorted(seed_of(name) for name in result.killers))
        rows.append(SeedRow(mutants[number], "chapter" if number < len(planted) else "audit",
                            killing, seeds, result.run.status.value if ended else ""))
    return SeedRun(seeds, baseline.seconds, tuple(rows))


def report_seeds(run: SeedRun, out=None, width: int | None = None) -> None:
    """The table of `ol audit --seeds K`: per mutant, the share of seeds that kill it, wrapped
    at ``width`` (the terminal's) under the column of the seeds."""
    columns = width or terminal_width()

    def say(line: str = "", hang: int = 0) -> None:
        print(fitted(line, columns, hang), file=out)

    width = max(len(row.mutant.title) for row in run.rows)
    say(f"\nThe model test alone, {run.seeds} seed{'s' * (run.seeds != 1)}, against "
        f"{len(run.rows)} mutants "
        f"(on the reference every seed passes: {run.reference_seconds:.0f} s for all)")
    say(f"{'id':<4} {'catalog':<7} {'pitfall':<{width}}  {'killed':>8}  seeds that miss it")
    for row in run.rows:
        missed = [n for n in range(1, run.seeds + 1) if n not in row.killing]
        share = f"{len(row.killing)}/{run.seeds}"
        say(f"{row.mutant.id:<4} {row.catalog:<7} {row.mutant.title:<{width}}  {share:>8}  "
            + (", ".join(map(str, missed)) or (row.detail and f"({row.detail})")),
            hang=4 + 1 + 7 + 1 + width + 2 + 8 + 2)
    strong = len(run.rows) - len(run.weak)
    say(f"\n{strong} of {len(run.rows)} mutants killed by {run.seeds} of {run.seeds} seeds.")
    if run.weak:
        say("Weak spots (a seed lets them through): "
            + ", ".join(f"{row.mutant.id} {len(row.killing)}/{run.seeds}" for row in run.weak))
