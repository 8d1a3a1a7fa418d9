"""ol audit, saying: the tables and verdicts of an audit, from the frozen records that
``harness/grade/audit.py`` returns; prose wrapped at the terminal's width, diffs as they are."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable

from harness.grade import catalog
from harness.grade.audit import Audit, CatalogRun, SeedRun, Target
from harness.grade.grading import short_name
from harness.run.judge import Status
from harness.run.mutmut import Tally


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
    equivalent, instrument = result.explained_survivors
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
            for line in mutant.diff.splitlines():
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
        killers = (", ".join(map(short_name, result.killers)) if result.run.status is
                   Status.OK else result.run.status.value) or "NOTHING: it survives"
        say(f"{result.mutant.id:<4} {result.mutant.group:<{groups}} "
            f"{result.mutant.title:<{titles}}  {killers}", hang=4 + 1 + groups + 1 + titles + 2)
    killed = len(results) - len(run.survivors)
    model = sum(chapter.model_test in result.killers for result in results)
    say(f"\n{killed} of {len(results)} audit mutants killed by the course suite; the model "
        f"test alone kills {model}.")
    for result in run.survivors:
        say(f"SURVIVES {result.mutant.id}: {result.mutant.title} ({result.mutant.rule})", 9)


def report_seeds(run: SeedRun, out=None, width: int | None = None) -> None:
    """The table of `ol audit --seeds K`: per mutant, the share of seeds that kill it, wrapped
    at ``width`` (the terminal's) under the column of the seeds."""
    columns = width or terminal_width()

    def say(line: str = "", hang: int = 0) -> None:
        print(fitted(line, columns, hang), file=out)

    width = max(len(row.mutant.title) for row in run.rows)
    say(f"\nThe model test under {run.seeds} seed{'s' * (run.seeds != 1)}, the named tests "
        f"once, against {len(run.rows)} mutants "
        f"(on the reference every seed passes: {run.reference_seconds:.0f} s for all)")
    say(f"{'id':<4} {'catalog':<7} {'pitfall':<{width}}  {'killed':>8}  seeds that miss it")
    for row in run.rows:
        missed = [n for n in range(1, run.seeds + 1) if n not in row.killing]
        share = f"{len(row.killing)}/{run.seeds}"
        say(f"{row.mutant.id:<4} {row.catalog:<7} {row.mutant.title:<{width}}  {share:>8}  "
            + (", ".join(map(str, missed)) or (row.detail and f"({row.detail})")
               or (f"(by {row.named[0]}, a named test)" if row.named else "")),
            hang=4 + 1 + 7 + 1 + width + 2 + 8 + 2)
    strong = len(run.rows) - len(run.weak)
    say(f"\n{strong} of {len(run.rows)} mutants killed by {run.seeds} of {run.seeds} seeds.")
    if run.weak:
        say("Weak spots (a seed lets them through): "
            + ", ".join(f"{row.mutant.id} {len(row.killing)}/{run.seeds}" for row in run.weak))


def tallies(out=None) -> Callable[[Tally], None]:
    """What `ol audit` prints while mutmut runs: a line each tenth of the mutants judged."""
    shown = -1

    def say(tally: Tally) -> None:
        nonlocal shown
        step = max(1, tally.total // 10)
        if tally.done // step > shown:
            shown = tally.done // step
            print(f"  mutants {tally.done} of {tally.total} judged, {tally.survived} "
                  "survived so far", file=out, flush=True)
    return say
