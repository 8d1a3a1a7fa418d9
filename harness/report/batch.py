"""`ol grade`: many workspaces graded in one command, a report folder each and a summary.

Each submission is graded exactly as `ol check` grades it, into ``OUT/<name>/``: the
terminal text (``check.txt``) and the reports. A submission that does not import, lacks a
file, crashes, hangs or breaks the grader is graded as such (verdict ``error`` with the
reason); it never stops the batch. The summary goes to ``OUT/summary.csv`` and
``OUT/summary.json``, one row per submission in the order given.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import Blame, OlError, OlFault, blame
from harness.grade.catalog import load_catalog
from harness.grade.grading import Check
from harness.grade.workspace import Submission, Workspace
from harness.report.class_page import Verdict, class_page, class_summary
from harness.report.files import ReportFolder
from harness.report.render import verdict
from harness.run.engine import cores

# How a command grades one workspace: its check and the terminal text, its reports written
# into the folder given; the third argument is how many runs it may make at once.
Grader = Callable[[Submission, ReportFolder, int], tuple[Check, str]]

# the files' names for the fields of a Row; "required" is named after the chapter's required
# mutants (see columns)
FIELDS = ("submission", "verdict", "course_tests_passed", "mutants_killed", "kill_rate",
          "required", "invalid_tests", "seconds", "note")


def columns(chapter: Chapter) -> dict[str, str]:
    """A file's column name -> the Row field it holds: the required mutants' column is
    named after them ("x01", or "x01 and x02")."""
    return {(chapter.required_names if field == "required" else field): field
            for field in FIELDS}


@dataclass(frozen=True)
class Row:
    """One submission of a batch. Counts are numbers (None when that part did not run), so
    summary.json holds JSON numbers and summary.csv cells a spreadsheet reads as numbers."""

    submission: str
    verdict: Verdict
    course_tests_passed: int | None  # of the course tests; None when they did not run
    mutants_killed: int | None      # of the planted mutants; None when they did not run
    kill_rate: float | None         # mutants_killed / planted, 4 decimal places
    required: str                   # the required mutants: killed, survived, or ""
    invalid_tests: tuple[str, ...]  # the invalid tests' names, sorted
    seconds: float
    note: str                       # the verdict line, or why the submission could not be graded
    # for the class's aggregates (summary.json and class.html; not in summary.csv)
    graded: bool = False                 # its tests were valid: its kills count
    killed: tuple[str, ...] = ()         # the mutants its valid tests killed
    course_failed: tuple[str, ...] = ()  # the course tests its tree failed
    refusal: str = ""                    # why its tests were not graded, when they were not
    # the SHA-256 of each file graded, by its path in the submission: what a regrade
    # request can be checked against
    files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:  # a verdict given as its text is the same verdict
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    @property
    def refused(self) -> bool:
        """Its tests ran and were refused (invalid, or failing a correct tree): no kill
        count, rate or required-mutant state is shown for it anywhere."""
        return not self.graded and bool(self.refusal) and self.course_tests_passed is not None


def folder_names(submissions: Sequence[Path]) -> list[str]:
    """One distinct folder name per submission: its own name, numbered when names repeat."""
    names: list[str] = []
    for path in submissions:
        base = path.resolve().name or "submission"
        name, number = base, 1
        while name in names:
            number += 1
            name = f"{base}-{number}"
        names.append(name)
    return names


def prepare(out: Path) -> None:
    """``out`` must be new or empty: a batch never mixes with, or overwrites, older results."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OlError(f"{out} exists and is not an empty folder: ol grade writes only into a "
                      "new or empty one. Pass --out a new folder")
    out.mkdir(parents=True, exist_ok=True)


def grade_one(check: Grader, path: Path, name: str, out: Path, chapter: Chapter, audience: str,
              jobs: int, scoring: str = "pass") -> Row:
    started = time.monotonic()
    folder = out / name
    folder.mkdir()
    workspace = Workspace(path, chapter)
    try:
        submission = workspace.snapshot(tree=True, tests=True, builds=True)
        reports = ReportFolder(folder / "reports", audience, name, scoring, root=path)
        result, text = check(submission, reports, jobs)
    except Exception as error:  # whose it is decides the row; a fault never stops the batch
        if blame(error) is Blame.INPUT:
            return failed(folder, name, str(error), started)
        detail = str(error) if isinstance(error, OlFault) else \
            "".join(traceback.format_exception_only(type(error), error)).strip()
        return failed(folder, name, f"a fault of ol, not of this submission: {detail}. Grade "
                      "it again, and report the fault", started, verdict=Verdict.INTERNAL)
    # staff read it beside the submission: its files named relative to it
    (folder / "check.txt").write_text(text.replace(f"{path}/", ""), encoding="utf-8")
    course = result.course
    passed = sum(record.outcome == "passed" for record in course.records)
    graded = result.tests.graded  # a refused suite's kills are no kills: none is shown
    return Row(
        submission=name,
        verdict=Verdict.PASSED if result.passed else Verdict.NOT_PASSED,
        course_tests_passed=passed,
        mutants_killed=result.tests.kills if graded else None,
        kill_rate=round(result.tests.kills / len(result.tests.mutants), 4) if graded else None,
        required=("survived" if result.tests.required_survivors else "killed") if graded else "",
        invalid_tests=tuple(sorted(result.tests.invalid_names)),
        seconds=round(time.monotonic() - started, 1),
        note=verdict(result, workspace.option()),
        graded=graded,
        killed=tuple(done.mutant.id for done in result.tests.mutants if result.tests.killed(done))
        if graded else (),
        course_failed=tuple(record.name for record in course.failures),
        refusal="" if graded else (result.tests.problem or (
            f"invalid tests: {', '.join(sorted(result.tests.invalid_names))}"
            if result.tests.invalid else "")),
        files=submission.hashes,
    )


def failed(folder: Path, name: str, reason: str, started: float,
           verdict: Verdict = Verdict.ERROR) -> Row:
    (folder / "check.txt").write_text(f"not graded: {reason}\n", encoding="utf-8")
    return Row(name, verdict, None, None, None, "", (), round(time.monotonic() - started, 1),
               " ".join(reason.split()), refusal=" ".join(reason.split()))


def csv_cells(row: Row, chapter: Chapter) -> dict:
    """A row as summary.csv writes it: numbers bare, an empty cell for what did not run, the
    invalid tests space-separated."""
    cells = {name: getattr(row, field) for name, field in columns(chapter).items()}
    cells["invalid_tests"] = " ".join(row.invalid_tests)
    return {name: "" if value is None else value for name, value in cells.items()}


def record(row: Row, chapter: Chapter) -> dict:
    """A row as summary.json writes it: every field, under the files' names."""
    names = {field: name for name, field in columns(chapter).items()}
    return {names.get(field, field): value for field, value in asdict(row).items()}


def kill_count(row: Row, planted: int) -> str:
    """The mutants a row's tests killed: "15 of 18"; "refused" when its tests were checked
    and not graded (invalid, or failing the correct trees); "" when they did not run."""
    if row.mutants_killed is not None:
        return f"{row.mutants_killed} of {planted}"
    return "refused" if row.refused else ""


def grade_all(check: Grader, submissions: Sequence[Path], out: Path, jobs: int,
              chapter: Chapter, audience: str = "student",
              progress: Callable[[str], None] | None = None,
              scoring: str = "pass") -> list[Row]:
    """Grade every submission with ``check``, ``jobs`` at a time; write the summary; rows in
    input order."""
    prepare(out)
    names = folder_names(submissions)
    lock, done = threading.Lock(), [0]

    def one(path: Path, name: str) -> Row:
        row = grade_one(check, path, name, out, chapter, audience, per_check, scoring)
        with lock:
            done[0] += 1
            if progress is not None:
                progress(f"{done[0]} of {len(names)} graded: {name} {row.verdict}")
        return row

    per_check = max(2, cores() // jobs)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows = list(pool.map(one, submissions, names))
    write_summary(out, rows, chapter)
    return rows


def write_summary(out: Path, rows: Sequence[Row], chapter: Chapter) -> None:
    """summary.csv (a row per submission), summary.json (the rows and the class's
    aggregates) and class.html (the aggregates, for staff)."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(columns(chapter)), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(csv_cells(row, chapter) for row in rows)
    (out / "summary.csv").write_text(text.getvalue(), encoding="utf-8")
    aggregates = class_summary(rows, load_catalog(chapter), chapter)
    summary = {"class": aggregates, "submissions": [record(row, chapter) for row in rows]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "class.html").write_text(class_page(aggregates, rows, chapter), encoding="utf-8")
