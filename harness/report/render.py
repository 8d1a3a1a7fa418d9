"""How `ol` words its results: tables, the course table, the check report, the verdict.

Every function writes to ``out`` (standard output when None) or returns a string, so a
batch of checks can keep each submission's text apart.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TextIO

from harness.chapter import Chapter
from harness.grade import catalog, grading, mutation
from harness.grade.course import CourseTest, in_words, needed
from harness.grade.grading import short_name
from harness.grade.workspace import Workspace, unrooted
from harness.run.judge import RunResult, Status


def table(rows: Sequence[Sequence[str]], head: Sequence[str], out: TextIO | None = None) -> None:
    """Rows under a head, columns padded to the widest cell; the last column is not padded."""
    widths = [max(len(str(row[i])) for row in (head, *rows)) for i in range(len(head) - 1)]
    for row in (head, *rows):
        cells = [f"{cell:<{width}}" for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, str(row[-1])]).rstrip(), file=out)


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless it is one: "1 test", "3 tests"."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def listing(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(map(short_name, names[:most]))
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def print_course(run: RunResult, chapter: Chapter, out: TextIO | None = None) -> None:
    records = {record.name: record for record in run.records}
    rows, failures = [], []
    for name in chapter.course_test_names:
        record = records.get(name)
        if record is None:
            state = run.status.value if run.status is not Status.OK else "not run"
        else:
            state = "pass" if record.outcome == "passed" else "FAIL"
            if record.broke:
                failures.append(record)
        rows.append((state, short_name(name), ""))
    table(rows, ("result", "course test", ""), out)
    if run.status is not Status.OK:
        print(f"  the run did not finish ({run.status.value}): {run.detail}", file=out)
    for record in failures:
        lines = 60 if record.name == chapter.model_test else 6
        said = grading.message(record, lines)
        named = said.startswith(f"{record.exception}:")  # the exception names itself once
        print(f"\n  {short_name(record.name)} failed{'' if named else f' ({record.exception})'}:",
              file=out)
        for line in said.splitlines():
            print(f"    {line}", file=out)


def verdict(result: grading.Check, option: str, platform: bool = False) -> str:
    """One line: PASSED, or what is wrong and what to do first. On a course platform
    (``platform``) the next step is to submit again, never a command."""
    chapter, total = result.tests.chapter, len(result.tests.mutants)
    if result.passed:
        done = (f"PASSED: the course tests pass and your tests kill {result.tests.kills} of "
                f"{total} mutants, {chapter.required_names} among them.")
        return done if platform else f"{done} Next: `ol diff {chapter.id}{option}`."
    wrong, todo = [], []
    if not result.course_passed:
        wrong.append("course tests fail")
        todo.append("fix your tree until the course tests pass")
    if result.tests.problem or result.tests.invalid:
        wrong.append("grade refused: your tests are invalid")
        todo.append("make every test pass on a correct tree")
    if result.tests.missing_names:
        wrong.append(f"{counted(len(result.tests.missing_names), 'required test')} missing")
        todo.append(f"add {', '.join(result.tests.missing_names)}")
    if result.tests.mutants and result.tests.required_survivors:
        wrong.append(f"{' and '.join(result.tests.required_survivors)} survives")
        todo.append(chapter.required_test_hint)
    if result.tests.mutants and not result.tests.rate_met:
        wrong.append(f"{result.tests.kills} of {total} mutants killed, "
                     f"{needed(total, chapter.threshold_percent)} needed")
        todo.append("read the hints of the survivors")
    again = "submit again" if platform else f"run `ol check {chapter.id}{option}`"
    return f"NOT PASSED: {'; '.join(wrong)}. Next: {todo[0]}, then {again}."


def show_check(result: grading.Check, workspace: Workspace,
               out: TextIO | None = None, missed: bool = False,
               audience: str = "student", platform: bool = False) -> None:
    """What `ol check` prints: the course table, the student's tests, the mutants, a verdict.
    On a course platform (``platform``) files are named as submitted, with no folder of the
    grader's, and no command is suggested that the platform does not have."""
    if platform:  # the student's own names; the grader's folders taken out of every message
        text = io.StringIO()
        write_check(result, workspace.shown(workspace.radix), workspace.shown(workspace.tests),
                    None, text, missed, audience)
        print(workspace.renamed(unrooted(text.getvalue(), workspace.chapter)), end="",
              file=out)
    else:
        write_check(result, str(workspace.radix), str(workspace.tests), workspace.option(), out,
                    missed, audience)


def write_check(result: grading.Check, radix: str, tests: str, option: str | None,
                out: TextIO | None, missed: bool, audience: str) -> None:
    """show_check's text, the files named ``radix`` and ``tests``; ``option`` names the
    workspace in the commands it suggests, None where no command can be run (a platform)."""
    def say(line: str = "") -> None:
        print(line, file=out)

    chapter = result.tests.chapter
    if option is not None:  # a command the student ran; on a platform they ran none
        say(f"ol check {chapter.id}{option}\n")
    say(f"1. The course tests against your tree ({radix}):")
    print_course(result.course, chapter, out)
    say(f"\n2. Your tests ({tests}) on {len(chapter.correct_trees)} correct trees:")
    if result.tests.on_reference is not None:
        say(f"  {len(result.tests.on_reference.records)} tests; " + "; ".join(
            f"on {where}: {tally(run)}" for where, run in result.tests.correct_runs))
    if result.tests.problem:
        say(f"  {result.tests.problem}.")
    if audience == "staff" or (result.tests.problem and result.flags):  # the scan is a lint
        for flag in result.flags:
            say(f"  FLAGGED (a lint, not graded) {flag}")
    for entry in result.tests.invalid:
        say(f"  INVALID {short_name(entry.name)} fails on {entry.where}: {entry.detail}")
    say(f"  required tests missing: {', '.join(result.tests.missing_names) or 'none'}")
    if result.tests.own is not None:
        coverage = result.tests.own.coverage
        said = coverage.summary() if coverage is not None else (
            f"not measured: the run on your tree did not finish ({result.tests.own.status.value})")
        say(f"  coverage of {radix} by your tests (not graded): {said}")
        if coverage is not None and missed:
            for line in coverage.missed() or ["every line and branch runs"]:
                say(f"    {line}")
        elif coverage is not None and coverage.missed() and option is not None:
            say(f"    `ol check {chapter.id}{option} --missed` lists what they never run")
    if result.tests.mutants:
        graded = "" if result.tests.graded else " (provisional: without the invalid tests)"
        say(f"\n3. Your tests against the {len(result.tests.mutants)} planted mutants{graded}:")
        rows = [(done.mutant.id, done.mutant.title, mutant_state(result, done))
                for done in result.tests.mutants]
        table(rows, ("id", "pitfall", "result"), out)
        say(f"\n  {kill_rate(result)}")
    say(f"\n{verdict(result, option or '', platform=option is None)}")


def mutant_state(result: grading.Check, done: mutation.MutantResult) -> str:
    killers = result.tests.killers(done)
    return f"killed by {listing(killers)}" if killers else f"SURVIVED  hint: {done.mutant.hint}"


def kill_rate(result: grading.Check) -> str:
    chapter, total = result.tests.chapter, len(result.tests.mutants)
    percent = chapter.threshold_percent
    state = "killed" if not result.tests.required_survivors else "SURVIVED (required)"
    return (f"kill rate {result.tests.kills} of {total} = {result.tests.kills / total:.0%} "
            f"(needs {percent}%: {needed(total, percent)} of {total}); "
            f"{chapter.required_names} {state}")


def tally(run: RunResult) -> str:
    """How a run of the student's tests went, as in "3 pass, 1 fails"."""
    failed = len(run.failures)
    said = f"{len(run.records) - failed} pass, {failed} fail{'s' if failed == 1 else ''}"
    return said if run.status is Status.OK else f"{said} ({run.status.value})"


def show_matrix(rows: Sequence[mutation.MatrixRow], out: TextIO | None = None) -> None:
    """The kill matrix of `ol mutants`: a line per mutant, then the totals."""
    width = max(len(row.result.mutant.title) for row in rows)
    print(f"\n{'id':<4} {'pitfall':<{width}}  caught_by  killed by", file=out)
    for row in rows:
        result = row.result
        verdict = "yes" if row.complete else "NO"
        killers = ", ".join(map(short_name, result.killers)) or result.killed_by or "nothing"
        if result.run.status is not Status.OK:
            killers = result.run.status.value
        print(f"{result.mutant.id:<4} {result.mutant.title:<{width}}  {verdict:<9}  {killers}",
              file=out)
        if row.missed_by:
            print(f"{'':<4} {'':<{width}}  {'':<9}  missed by "
                  f"{', '.join(map(short_name, row.missed_by))}", file=out)
    killed = sum(row.result.killed for row in rows)
    complete = sum(row.complete for row in rows)
    print(f"\n{killed} of {len(rows)} mutants killed; {complete} of {len(rows)} killed by "
          f"every course test their caught_by names.", file=out)


def show_course_tests(chapter: Chapter, tests: Sequence[CourseTest],
                      out: TextIO | None = None) -> None:
    """What `ol tests` prints: each course test with what it checks and why, then what the
    student's own tests must do."""
    def say(line: str = "") -> None:
        print(line, file=out)

    say(f"The {counted(len(tests), 'course test')} of {chapter.id} "
        f"({chapter.shown(chapter.course_test_file)}):\n")
    for test in tests:
        say(f"{short_name(test.name)}  [{test.kind}]")
        say(f"    checks: {test.checks}")
        say(f"    why:    {test.why}")
    if chapter.rules:
        say(f"\nWhat the course tests hold your {chapter.class_name} to beyond the chapter's "
            "text (required: a tree that breaks it fails; open: either way passes):\n")
        for rule in chapter.rules:
            say(f"  - {'required' if rule.required else 'open'}: {rule.rule}")
            say(f"      ({rule.reason})")
    total = len(catalog.load_catalog(chapter))
    percent = chapter.threshold_percent
    rung = f" (rung {chapter.rung})" if chapter.rung else ""
    say(f"\nYour own tests{rung}, in {chapter.student_tests.as_posix()}, import only "
        f"`from {chapter.module} import {', '.join(chapter.exports)}` and must:")
    required = len(chapter.required_tests)
    say(f"  - include the {in_words(required)} test{'s' * (required != 1)} "
        f"{', '.join(chapter.required_tests)};")
    others = len(chapter.correct_trees) - 1
    example = f", such as {chapter.open_choice}" if chapter.open_choice else ""
    say(f"  - pass on the reference and on {counted(others, 'other correct tree')} (no test "
        f"may rely on what the contract leaves open{example});")
    say(f"  - kill {chapter.required_names} ({chapter.required_pitfall}): required;")
    say(f"  - kill at least {percent}% of the {total} planted mutants, that is "
        f"{needed(total, percent)} of {total}.")


def show_tdd(report: grading.TddReport, workspace: Workspace, out: TextIO | None = None) -> None:
    """What `ol tdd red|green` prints: which tests ran against which tree, the table of
    tests and its verdict with the next step."""
    def say(line: str = "") -> None:
        print(line, file=out)

    chapter, phase, option = workspace.chapter, report.phase, workspace.option()
    say(f"ol tdd red: your tests against the stub ({workspace.tests})" if phase == "red" else
        f"ol tdd green: your tests against your tree ({workspace.radix})")
    if report.rows:
        table([(row.state, short_name(row.name), row.detail) for row in report.rows],
              ("state", "test", "why"), out)
    if report.problem:
        say(f"\nBROKEN: {report.problem}. Fix it, then run `ol tdd {phase} {chapter.id}"
            f"{option}` again.")
        return
    summary = ", ".join(f"{count} {state}" for state, count in report.counts.items())
    every = (f"the test {'fails' if phase == 'red' else 'passes'}" if len(report.rows) == 1
             else f"all {len(report.rows)} tests {'fail' if phase == 'red' else 'pass'}")
    if phase == "red" and report.passed:
        say(f"\nRED: {every} on the stub. Next: implement "
            f"{workspace.radix}, then run `ol tdd green {chapter.id}{option}`.")
    elif phase == "red":
        say(f"\nNOT RED ({summary or 'no tests ran'}): every test must fail on the stub. "
            "Make a vacuous test assert something the stub gets wrong, fix a broken test's "
            f"own code, then run `ol tdd red {chapter.id}` again.")
    elif report.passed:
        say(f"\nGREEN: {every} on your tree. Next: `ol check {chapter.id}{option}`.")
    else:
        say(f"\nNOT GREEN ({summary or 'no tests ran'}): fix {workspace.radix} (or a test "
            "that asserts the wrong thing) until every test passes; skips and xfails do "
            "not count.")
