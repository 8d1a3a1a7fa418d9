"""ol audit: what the course suite lets through that the planted mutants did not foresee.

Two measurements of one tree (the reference) by one suite (the course tests):

- coverage: the suite runs once in-process with line and branch coverage of the tree;
- mutmut (3.x): every small change mutmut makes to the tree, run against the suite.

mutmut works in a folder of its own named ``mutants/`` beside the code it mutates, so the
whole run happens in a temporary copy laid out as mutmut expects (``tl_ds/radix.py``,
``tests/``, a ``pyproject.toml`` with its settings); the checkout is never touched.
Survivors are explained by an equivalents file (``mutants/equivalent.toml``): a
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
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.engine import Suite, clean_environment, copy_item, run_suite, write_package
from harness.errors import OlError
from harness.measure import Coverage

COVERAGE_LIMIT = 1800.0  # seconds the measured run of the suite may take
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


def load_equivalents(path: Path) -> list[Entry]:
    """The entries of an equivalents file; OlError naming the entry that is malformed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{path} cannot be read as TOML ({error}). Fix the file and run "
                      "`ol audit ds.07` again.") from None
    entries = []
    for kind in ("instrument", "mutant"):
        for number, item in enumerate(data.get(kind, []), 1):
            wanted = ("function", "reason") + (("was", "now") if kind == "mutant" else ())
            if not isinstance(item, dict) or any(
                    not isinstance(item.get(key), str) or not item[key].strip()
                    for key in wanted):
                raise OlError(f"{path}: [[{kind}]] number {number} needs a non-empty "
                              f"{', '.join(wanted)}. Fix it and run `ol audit ds.07` again.")
            entries.append(Entry(item["function"], item["reason"].strip(),
                                 item.get("was", "").strip(), item.get("now", "").strip()))
    unknown = set(data) - {"instrument", "mutant"}
    if unknown:
        raise OlError(f"{path}: unknown tables {sorted(unknown)}; only [[instrument]] and "
                      "[[mutant]] entries are read. Fix it and run `ol audit ds.07` again.")
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
    tree = ast.parse(source)
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
    write_package(folder, target.source)
    (folder / "tests").mkdir()
    for item in target.suite.files:
        copy_item(item, folder / "tests" / item.name)
    support = []
    for item in target.suite.support:
        copy_item(item, folder / item.name)
        support.append(item.name)
    (folder / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        'source_paths = ["tl_ds"]\n'
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


def audit(target: Target, jobs: int, progress: Callable[[str], None] | None = None) -> Audit:
    """Measure coverage, run mutmut, and explain the survivors."""
    started = time.perf_counter()
    entries = load_equivalents(target.equivalents)
    if progress is not None:
        progress("the suite runs once, measuring coverage")
    run = run_suite(dataclasses.replace(target.suite, measure=True), target.source,
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


def report(result: Audit, target: Target, out=None) -> None:
    """What `ol audit` prints: coverage, the mutmut counts, every unexplained survivor."""
    def say(line: str = "") -> None:
        print(line, file=out)

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
                say(f"    {line}")
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
