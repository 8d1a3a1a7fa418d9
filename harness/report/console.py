"""What each command says on the terminal around its results: headings, the lines that
tell what was written or reused, the diff, the batch table. The commands decide; these
functions only word what they are given.

Every function writes to ``out`` (standard output when None).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from harness.chapter import Chapter
from harness.grade.course import in_words
from harness.grade.workspace import Workspace
from harness.report import batch
from harness.report.class_page import Verdict, course_count
from harness.report.render import counted, table
from harness.run.cache import RunCache
from harness.run.judge import RunResult
from harness.run.sandbox import Sandbox

# the colours of a diff's added, removed and position lines, on a terminal
DIFF_COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}


def say(line: str, out: TextIO | None) -> None:
    print(line, file=out)


def show_mutants_heading(chapter: Chapter, planted: int, out: TextIO | None = None) -> None:
    say(f"ol mutants {chapter.id}: the {counted(len(chapter.course_test_names), 'course test')}"
        f" against the {planted} planted mutants", out)


def show_wiring(baseline: RunResult, out: TextIO | None = None) -> None:
    """That the course tests pass on the reference and kill the placebo, and how long."""
    say(f"wiring: the course tests pass on the reference "
        f"({counted(len(baseline.records), 'test')}, {baseline.seconds:.1f} s) and kill the "
        "placebo", out)


def show_seeds_heading(chapter: Chapter, seeds: int, out: TextIO | None = None) -> None:
    say(f"ol audit {chapter.id} --seeds {seeds}: the model test under {seeds} seeds instead "
        "of the derandomized one, the named tests once", out)


def show_audit_heading(chapter: Chapter, label: str, out: TextIO | None = None) -> None:
    say(f"ol audit {chapter.id}: mutmut on {label} against the "
        f"{len(chapter.course_test_names)} course tests (the course profile's steps, without "
        "shrinking)", out)


def show_started(workspace: Workspace, created: Sequence[Path], kept: Sequence[Path],
                 out: TextIO | None = None) -> None:
    """What `ol start` made and kept, and the next step."""
    chapter = workspace.chapter
    for path in created:
        say(f"created  {path}", out)
    for path in kept:
        say(f"kept     {path} (it exists; ol start never overwrites)", out)
    for needed in chapter.needed:  # what it builds on, and the two ways to have it
        path = workspace.root / needed.implementation
        there = "is there" if path.exists() else "is not there yet"
        say(f"\n{chapter.id} builds on {needed.id}: it runs on your {needed.implementation} "
            f"({path} {there}), which must pass {needed.id}'s course tests first; "
            f"`ol start {needed.id}{workspace.place()}` writes its stub beside this one. "
            f"Until it passes, add --ref-deps to ol tdd, check and diff to run on the "
            f"reference {needed.id} instead.", out)
    required = len(chapter.required_tests)
    say(f"\nNext: write the {in_words(required)} test{'s' * (required != 1)} named in "
        f"{workspace.tests}, then run `ol tdd red {chapter.id}{workspace.option()}`.", out)


def show_unsandboxed(used: Sandbox, out: TextIO | None = None) -> None:
    """A note where submission code ran unconfined."""
    if not used.confined:
        say(f"note: ran unsandboxed ({used.reason}); fine for your own work, but staff grade "
            "in a sandbox", out)


def show_written(folder: Path, written: Sequence[str], out: TextIO | None = None) -> None:
    say(f"\nreports: {', '.join(written)} in {folder}", out)


def show_diff_refused(workspace: Workspace, failed: int, out: TextIO | None = None) -> None:
    """Why `ol diff` shows nothing: ``failed`` course tests fail on the student's tree."""
    chapter = workspace.chapter
    say(f"ol diff refuses: {counted(failed, 'course test')} "
        f"{'fails' if failed == 1 else 'fail'} on your tree, and the reference is shown only "
        f"to a tree that passes them all. Run `ol check {chapter.id}{workspace.option()}` to "
        "see which, and fix them first.", out)


def show_diff(workspace: Workspace, theirs: str, reference: str, colour: bool,
              out: TextIO | None = None) -> None:
    """The unified diff from the student's tree to the reference, coloured on a terminal."""
    lines = difflib.unified_diff(
        theirs.splitlines(keepends=True), reference.splitlines(keepends=True),
        fromfile=f"{workspace.radix} (yours)",
        tofile=f"reference {workspace.chapter.implementation.as_posix()}")
    for line in lines:
        line = line.removesuffix("\n")
        start = DIFF_COLOURS.get(line[:1]) if colour else None
        say(f"{start}{line}\033[0m" if start else line, out)


def show_grades(rows: Sequence[batch.Row], chapter: Chapter, planted: int, seconds: float,
                folder: Path, out: TextIO | None = None) -> None:
    """`ol grade`'s table, a line per submission, and the batch's totals."""
    table([(row.submission, row.verdict, course_count(row, chapter),
            batch.kill_count(row, planted), row.required, f"{row.seconds:.0f} s")
           for row in rows],
          ("submission", "verdict", "course", "killed", chapter.required_names, "time"), out)
    counts = {verdict: sum(row.verdict is verdict for row in rows) for verdict in Verdict}
    say(f"\n{len(rows)} submissions in {seconds:.0f} s: "
        + ", ".join(f"{count} {verdict}" for verdict, count in counts.items())
        + f". Reports and summary.csv/summary.json in {folder}", out)


def show_platform_result(said: Mapping, results: Path, out: TextIO | None = None) -> None:
    """`ol prairielearn`'s or `ol gradescope`'s one line: the score it recorded (a share on
    PrairieLearn, points on Gradescope), or that it could not grade."""
    if "gradable" in said:
        command = "prairielearn"
        score = f"score {said['score']:.0%}" if said["gradable"] else "not gradable"
    else:
        command = "gradescope"
        most = sum(test.get("max_score", 0) for test in said["tests"])
        score = f"score {said['score']:g} of {most:g}" if said["tests"] else "not graded"
    say(f"ol {command}: {score}; results in {results}", out)


def show_bundle(path: Path, files: int, chapter: Chapter, out: TextIO | None = None) -> None:
    """What `ol gradescope-bundle` wrote (``files`` of ol besides the two scripts) and what
    to do with it."""
    say(f"wrote {path}: setup.sh, run_autograder and {files} files of ol. Upload it as the "
        "autograder of a Gradescope programming assignment; students submit "
        f"{chapter.implementation.as_posix()} and {chapter.student_tests.as_posix()}.", out)


def show_reused(cache: RunCache | None, out: TextIO | None = None) -> None:
    """A line saying what the cache gave, when it gave or refused anything."""
    if cache is None:
        return
    if cache.hits:
        say(f"\nreused {cache.hits} of {cache.hits + cache.misses} results kept from earlier "
            f"runs ({cache.folder}); --fresh runs everything again", out)
    if cache.unverified:
        say(f"\n{counted(cache.unverified, 'kept result')} did not verify against the "
            "cache's key (forged or damaged): run again and replaced", out)
    if cache.problem:
        say(f"\nnote: kept no results and reused none: {cache.problem}", out)
