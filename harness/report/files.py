"""The files `ol check --report DIR` writes for course staff: Gradescope, JUnit, mutation reports.

- ``results.json``: Gradescope's autograder results (one row per course test, one for the
  required test names, one per planted mutant, one for the verdict);
- ``junit.xml``: the course tests, for CI dashboards;
- ``mutation.html``: a self-contained page (no network, no script) with the score against
  the threshold and every mutant's status, killing tests or hint;
- ``mutation.json`` (staff only): the mutation testing report format (schemaVersion 2)
  that Stryker's dashboard and the mutation-testing-elements viewer read.

The audience decides what a report may show. ``student`` (the default) never shows the
reference or a mutant's diff: the chapter shows the reference only through `ol diff`,
after the course tests pass. ``staff`` adds the reference source with each mutant's lines
marked, the diffs, and ``mutation.json``, which must carry the source.
"""

from __future__ import annotations

import html
import json
import os
import secrets
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import OlError
from harness.grade import catalog, mutation
from harness.grade.course import in_words, needed
from harness.grade.grading import Check, message, short_name
from harness.grade.score import SCORINGS, score
from harness.run.judge import Status

AUDIENCES = ("student", "staff")
STUDENT_FILES = ("results.json", "junit.xml", "mutation.html")
STAFF_FILES = (*STUDENT_FILES, "mutation.json")

@dataclass
class ReportFolder:
    """A folder the reports go to: new or empty of them, checked before any grading starts."""

    folder: Path
    audience: str = "student"
    name: str = ""  # the submission, as its page's heading names it
    scoring: str = "pass"  # how results.json scores it: one of SCORINGS
    # in `ol grade`, the submission's folder: its page names the submission's files relative
    # to it, links to the class page and its own files, and suggests no command
    root: Path | None = None
    written: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.audience not in AUDIENCES:
            raise OlError(f"unknown audience {self.audience!r}: choose student or staff")
        if self.scoring not in SCORINGS:
            raise OlError(f"unknown scoring {self.scoring!r}: choose {' or '.join(SCORINGS)}")
        if self.folder.exists() and not self.folder.is_dir():
            raise OlError(f"{self.folder} is a file, not a folder: pass --report a new folder "
                          "(or one without reports in it)")
        taken = [name for name in self.names if (self.folder / name).exists()]
        if taken:
            raise OlError(f"{self.folder} already holds {', '.join(taken)}: ol never "
                          "overwrites a file. Pass --report a new folder, or move those away")

    @property
    def names(self) -> tuple[str, ...]:
        return STAFF_FILES if self.audience == "staff" else STUDENT_FILES

    def write(self, result: Check, terminal: str, verdict: str, seconds: float) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        staff = self.audience == "staff"
        if self.root is not None:  # the grader's folders are not the submission's names
            terminal = terminal.replace(f"{self.root}/", "")
            verdict = verdict.replace(f"{self.root}/", "")
        documents = {
            "results.json": json.dumps(gradescope(result, terminal, verdict, seconds,
                                                  self.scoring), indent=2),
            "junit.xml": junit(result),
            "mutation.html": page(result, verdict, staff, self.name, self.links()),
        }
        if staff:
            documents["mutation.json"] = json.dumps(stryker(result), indent=2)
        for name in self.names:
            self.put(name, documents[name])

    def links(self) -> list[tuple[str, str]]:
        """What the page links to: in a batch, the class page and the submission's other
        files; on its own, the other reports beside it."""
        own = [(name, name) for name in self.names if name != "mutation.html"]
        if self.root is None:
            return own
        return [("the class", "../../class.html"), ("check.txt", "../check.txt"), *own]

    def write_ungraded(self, reason: str) -> None:
        """Only results.json, for a submission that could not be graded: no score, and why."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.put("results.json", json.dumps(not_graded(reason), indent=2))

    def put(self, name: str, text: str) -> None:
        with (self.folder / name).open("x", encoding="utf-8") as out:  # "x": never overwrite
            out.write(text + "\n")
        self.written.append(name)


# --- what every report says of a mutant ---------------------------------------------------

def status(result: Check, done: mutation.MutantResult) -> str:
    """The mutant's status in the mutation testing report format."""
    if done.run.status is Status.TIMEOUT:
        return "Timeout"
    if done.run.status is not Status.OK:
        return "RuntimeError"
    return "Killed" if result.tests.killed(done) else "Survived"


def reason(result: Check, done: mutation.MutantResult) -> str:
    """Why it has its status: the first killing test's message, how its run ended, or a hint."""
    if done.run.status is not Status.OK:
        return f"the run ended early ({done.run.status.value}): {done.run.detail}".strip()
    killers = set(result.tests.killers(done))
    for record in done.run.failures:
        if record.name in killers:
            return f"{record.name}: {message(record, 8)}"
    return f"survived; hint: {done.mutant.hint}"


def changed_lines(patch: str) -> list[int]:
    """The reference's line numbers a unified diff removes, or inserts before."""
    lines: list[int] = []
    old = 0
    for line in patch.splitlines():
        hunk = catalog.HUNK.match(line)
        if hunk:
            old = int(hunk.group(1))
        elif line.startswith(("---", "+++")) or not old:
            continue
        elif line.startswith("-"):
            lines.append(old)
            old += 1
        elif line.startswith("+"):
            if not lines or lines[-1] != old:
                lines.append(old)
        else:
            old += 1
    return sorted(set(lines))


def location(patch: str, source: str) -> dict:
    """The span of the lines a mutant changes, as the mutation report's location."""
    text = source.splitlines()
    lines = [min(max(line, 1), len(text)) for line in changed_lines(patch)] or [1]
    last = max(lines)
    return {"start": {"line": min(lines), "column": 1},
            "end": {"line": last, "column": len(text[last - 1]) + 1}}


# --- results.json (Gradescope) ------------------------------------------------------------

def gradescope(result: Check, terminal: str, verdict: str, seconds: float,
               scoring: str = "pass") -> dict:
    """Gradescope's autograder results; what a student sees, so never the reference. Every
    row is a check that passed or failed; the points are the verdict row's (see ``points``)."""
    tests = []
    course = {record.name: record for record in result.course.records}
    chapter = result.tests.chapter
    for number, name in enumerate(chapter.course_test_names, 1):
        record = course.get(name)
        passed = record is not None and record.outcome == "passed"
        said = ("passed" if passed else
                f"not run: the course run ended early ({result.course.status.value})"
                if record is None else f"{record.outcome}: {message(record, 40)}")
        tests.append(row(f"the course's {short_name(name)} on your tree", passed, said,
                         f"1.{number}", "course"))
    missing = result.tests.missing_names
    required = in_words(len(chapter.required_tests))
    tests.append(row(f"your tests include the {required} required ones", not missing,
                     f"all {required} present" if not missing else
                     f"missing: {', '.join(missing)} "
                     f"(all of {', '.join(chapter.required_tests)})",
                     "2.1", "your tests"))
    graded = result.tests.graded
    for number, done in enumerate(result.tests.mutants, 1):
        killed = graded and result.tests.killed(done)
        said = (f"{status(result, done)}: " + reason(result, done) if graded else
                "not graded: your tests are invalid on a correct tree (see the output)")
        tests.append(row(f"your tests against planted bug {done.mutant.id}: "
                         f"{done.mutant.title}", killed, said, f"3.{number}", "mutants"))
    earned = score(result, scoring)
    # the points are all on the verdict's row; every other row is a check that shows what
    # is missing
    tests.append(row("your grade: the course tests, your tests, the planted bugs",
                     result.passed, verdict, "4.1", "verdict")
                 | {"score": earned.earned, "max_score": earned.out_of})
    return {
        "score": earned.earned,
        "execution_time": round(seconds, 3),
        "output": terminal,
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def not_graded(reason: str) -> dict:
    """Gradescope's results for a submission ol could not grade: 0 and why, in the student's
    terms (the files as submitted, what to change before submitting again)."""
    return {"score": 0, "execution_time": 0, "output": reason, "output_format": "text",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def prepare_results(folder: Path, command: str) -> Path:
    """A platform's results folder, made if need be, with no results.json in it: whatever
    was there before (written by a submission, or by an earlier grade) is not this grade."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in (folder / "results.json", *folder.glob(".ol-results-*")):
            stale.unlink(missing_ok=True)
    except OSError as error:
        raise OlError(f"cannot prepare {folder}: {error.strerror}. Run {command} where its "
                      "--root is writable") from None
    return folder


def write_results(folder: Path, said: dict) -> Path:
    """``said`` as ``folder``/results.json: written under a name no run could know, then
    moved into place (every run has ended by now); the file's path."""
    secret = folder / f".ol-results-{secrets.token_hex(16)}"
    secret.write_text(json.dumps(said, indent=2) + "\n", encoding="utf-8")
    os.replace(secret, folder / "results.json")
    return folder / "results.json"


PRAIRIELEARN_LIMIT = 1_000_000  # bytes PrairieLearn accepts in results.json


def prairielearn(result: Check, terminal: str, verdict: str, seconds: float,
                 scoring: str = "pass") -> dict:
    """PrairieLearn's external grader results: the Gradescope rows as tests (points on the
    verdict's alone), the score as a share in [0, 1]; outputs cut so the file stays under
    1 MB."""
    rows = gradescope(result, terminal, verdict, seconds, scoring)["tests"]
    tests = [{"name": test["name"], "points": test.get("score", 0),
              "max_points": test.get("max_score", 0), "message": test["status"],
              "output": test["output"]} for test in rows]
    results = {"gradable": True, "score": score(result, scoring).share,
               "message": verdict,
               "output": terminal, "tests": tests}
    while len(json.dumps(results)) > PRAIRIELEARN_LIMIT:
        longest = max(results["tests"], key=lambda test: len(test["output"]))
        if len(results["output"]) > len(longest["output"]):
            longest = results
        longest["output"] = longest["output"][:len(longest["output"]) // 2] + "\n[... cut]"
    return results


def ungradable(reason: str) -> dict:
    """What PrairieLearn shows for a submission ol cannot grade: why, and no score."""
    return {"gradable": False, "score": 0, "format_errors": [reason],
            "message": reason, "output": reason, "tests": []}  # whole: it is all they see


def row(name: str, passed: bool, output: str, number: str, tag: str) -> dict:
    """A check of Gradescope's results, without points: it shows passed or failed."""
    return {"name": name, "number": number, "status": "passed" if passed else "failed",
            "output": output, "output_format": "text", "tags": [tag], "visibility": "visible"}


# --- junit.xml --------------------------------------------------------------------------------

def junit(result: Check) -> str:
    """The course tests as a JUnit XML test suite."""
    run = result.course
    records = {record.name: record for record in run.records}
    chapter = result.tests.chapter
    suite = ElementTree.Element("testsuite", name=f"{chapter.id} course tests")
    failures = errors = 0
    for name in chapter.course_test_names:
        record = records.get(name)
        case = ElementTree.SubElement(suite, "testcase", classname=f"{chapter.compact_id}.course",
                                      name=name, time=f"{record.seconds:.3f}" if record else "0")
        if record is None:
            errors += 1
            ElementTree.SubElement(case, "error", message=f"not run: the course run ended "
                                   f"early ({run.status.value if run else 'not run'})")
        elif record.outcome in ("skipped", "xfailed"):
            ElementTree.SubElement(case, "skipped", message=record.outcome)
        elif record.outcome != "passed":
            failures += 1
            failure = ElementTree.SubElement(case, "failure", type=record.exception or "",
                                             message=message(record, 1))
            failure.text = record.text
    suite.set("tests", str(len(chapter.course_test_names)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("time", f"{run.seconds:.3f}" if run else "0")
    ElementTree.indent(suite)
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)


# --- mutation.json (staff) ------------------------------------------------------------------

def stryker(result: Check) -> dict:
    """The mutation testing report (schemaVersion 2) of the student's tests on the mutants."""
    chapter = result.tests.chapter
    source = chapter.reference_source()
    mutants = []
    for done in result.tests.mutants:
        mutant = done.mutant
        entry = {
            "id": mutant.id,
            "mutatorName": "PlantedPitfall",
            "description": f"{mutant.title}: {mutant.symptom}",
            "location": location(mutant.patch, source),
            "status": status(result, done),
            "statusReason": reason(result, done),
            "replacement": "".join(line[1:] + "\n" for line in mutant.patch.splitlines()
                                   if line.startswith("+") and not line.startswith("+++")),
            "duration": round(done.run.seconds * 1000),
        }
        if status(result, done) == "Killed":
            entry["killedBy"] = list(result.tests.killers(done))
        mutants.append(entry)
    tests = [{"id": name, "name": name} for name in result.tests.names]
    return {
        "schemaVersion": "2",
        "thresholds": {"high": chapter.threshold_percent, "low": chapter.threshold_percent},
        "projectRoot": ".",
        "files": {chapter.shown(chapter.reference): {"language": "python", "source": source,
                                                     "mutants": mutants}},
        "testFiles": {chapter.student_tests.as_posix(): {"tests": tests}},
        "framework": {"name": "ol"},
    }


# --- mutation.html --------------------------------------------------------------------------

BASE_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 76em; color: #222;
       padding: 0 1em; overflow-wrap: break-word; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd;
         vertical-align: top; overflow-wrap: break-word; }
td.pass, td.FAIL, td.Killed, td.Survived, td.Timeout, td.RuntimeError { white-space: nowrap; }
pre { background: #f6f6f6; padding: .6em; font-size: 13px; white-space: pre-wrap;
      overflow-wrap: anywhere; }
.required { border: 2px solid #c2452f; border-radius: .4em; padding: .2em .9em .6em;
            margin: 1em 0; background: #fdf3f1; }
@media (max-width: 40em) {  /* a phone: each row's cells flow as lines, never past the edge */
  body { margin: 1em .6em; padding: 0; }
  table, thead, tbody { display: block; }
  tr { display: block; padding: .3em 0; border-bottom: 1px solid #ddd; }
  th, td { display: inline-block; max-width: 100%; border: 0; padding: .1em .6em .1em 0;
           white-space: normal; }
  td pre { display: block; }
}
"""  # every page ol writes: the submission pages and class.html; on a phone a long test
# name, hint or error wraps, so nothing is wider than the screen

STYLE = BASE_STYLE + """
.Killed { color: #11632b; } .Survived { color: #a1130c; font-weight: 600; }
.Timeout, .RuntimeError { color: #8a5a00; }
.score { font-size: 1.2em; padding: .6em 1em; border-radius: .4em; display: inline-block; }
.met { background: #e3f4e8; } .unmet { background: #fbe4e2; }
.source span.marked { background: #fff1b8; display: block; }
.source span.plain { display: block; }
.source i { color: #8a5a00; font-style: normal; float: right; }
.diff .add { color: #11632b; background: #e9f7ee; display: block; }
.diff .del { color: #a1130c; background: #fdeeed; display: block; }
.diff .hunk { color: #5a3fa0; display: block; }
.diff .plain { display: block; }
td.pass { color: #11632b; } td.FAIL { color: #a1130c; font-weight: 600; }
"""


def page(result: Check, verdict: str, staff: bool, name: str = "",
         links: Sequence[tuple[str, str]] = ()) -> str:
    """A page that needs nothing but itself: whose it is and its verdict, the course tests,
    the invalid tests, the score and the mutants; for staff also the source and the diffs.
    A student reads of "your tests", staff of "the submission's tests"."""
    whose = "the submission's tests" if staff else "your tests"
    if staff:  # the verdict line speaks to the student; staff read it of the submission
        verdict = verdict.replace("your tests", whose).replace("your tree",
                                                               "the submission's tree")
    chapter, total = result.tests.chapter, len(result.tests.mutants)
    met = result.tests.graded and result.tests.rate_met and not result.tests.required_survivors
    if total:
        percent = chapter.threshold_percent
        kills = result.tests.kills
        score = (f"{kills} of {total} mutants killed ({kills / total:.0%}); "
                 f"the bar is {percent}% ({needed(total, percent)} of {total}) with "
                 f"{chapter.required_names} killed")
    else:
        score = f"{whose} were not run on the mutants"
    rows = []
    for done in result.tests.mutants:
        state = status(result, done)
        said = ", ".join(map(breakable, result.tests.killers(done))) if state == "Killed" \
            else html.escape(done.mutant.hint if state == "Survived" else reason(result, done))
        id = (f"<a href='#diff-{done.mutant.id}'>{done.mutant.id}</a>" if staff
              else done.mutant.id)
        rows.append(f"<tr id='{done.mutant.id}'><td>{id}</td>"
                    f"<td>{html.escape(done.mutant.title)}</td>"
                    f"<td class='{state}'>{state}</td><td>{said}</td></tr>")
    outcome = verdict.split(":", 1)[0]
    title = f"{name}: {outcome}" if name else outcome
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)} ({chapter.id})</title>",
        f"<style>{STYLE}</style></head><body>",
        *nav(links),
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{html.escape(verdict)}</p>",
        *required_section(result, whose),
        *course_section(result),
        *invalid_section(result, whose),
        f"<h2>{chapter.id} {chapter.title}: {whose} against the planted mutants</h2>",
        f"<p class='score {'met' if met else 'unmet'}'>{html.escape(score)}</p>",
    ]
    if not result.tests.graded and total:
        parts.append(f"<p><b>Provisional:</b> {whose} are invalid on a correct tree (above), "
                     "so this score does not count.</p>")
    parts += ["<table><thead><tr><th>id</th><th>pitfall</th><th>status</th>"
              "<th>killed by, or a hint</th></tr></thead><tbody>", *rows, "</tbody></table>"]
    if staff:
        parts += staff_sections(result)
    parts.append("</body></html>")
    return "\n".join(parts)


def staff_sections(result: Check) -> list[str]:
    """The reference with each mutant's lines marked, and every mutant's diff."""
    source = result.tests.chapter.reference_source().splitlines()
    marks: dict[int, list[str]] = {}
    for done in result.tests.mutants:
        for line in changed_lines(done.mutant.patch):
            marks.setdefault(min(max(line, 1), len(source)), []).append(done.mutant.id)
    lines = []
    for number, text in enumerate(source, 1):
        ids = marks.get(number)
        label = f"<i>{' '.join(ids)}</i>" if ids else ""
        kind = "marked" if ids else "plain"
        lines.append(f"<span class='{kind}'>{number:4d}  {html.escape(text)}{label}</span>")
    parts = ["<h2>Staff only: the reference, each mutant's lines marked</h2>",
             f"<pre class='source'>{''.join(lines)}</pre>", "<h2>Staff only: the diffs</h2>"]
    for done in result.tests.mutants:
        parts.append(f"<h3 id='diff-{done.mutant.id}'>{done.mutant.id}: "
                     f"{html.escape(done.mutant.title)}</h3>{coloured(done.mutant.patch)}")
    return parts


def coloured(patch: str) -> str:
    """A unified diff as a block whose added, removed and hunk lines are told apart."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    lines = [f"<span class='{kinds.get(line[:1], 'plain')}'>{html.escape(line)}</span>"
             for line in patch.splitlines() if not line.startswith(("+++", "---"))]
    return f"<pre class='diff'>{''.join(lines)}</pre>"


def nav(links: Sequence[tuple[str, str]]) -> list[str]:
    """A line of links, (label, relative address) each; none without links."""
    return [" · ".join(f"<a href='{html.escape(href, quote=True)}'>{html.escape(label)}</a>"
                       for label, href in links).join(("<nav>", "</nav>"))] if links else []


def breakable(name: str) -> str:
    """A test's name for a page: it may break after each underscore on a narrow screen (and
    nowhere else, so a word is never cut)."""
    return html.escape(name).replace("_", "_<wbr>")


def preformatted(text: str) -> str:
    """``text`` as a block that keeps its lines (an error with its caret), or nothing."""
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def required_section(result: Check, whose: str) -> list[str]:
    """The required mutants set apart, as the class page does: a suite that misses one does
    not pass, whatever its kill rate."""
    parts = []
    for done in result.tests.mutants:
        if not done.mutant.required:
            continue
        killers = result.tests.killers(done) if result.tests.graded else ()
        state = (f"killed by {', '.join(map(breakable, killers))}" if killers else
                 "not counted: the tests are invalid" if not result.tests.graded else
                 f"SURVIVED: {html.escape(done.mutant.hint)}")
        parts.append(f"<div class='required'><h3>Required: {done.mutant.id}, "
                     f"{html.escape(done.mutant.title)}</h3><p>{state}. A suite "
                     f"that misses it does not pass, whatever its kill rate; {whose} "
                     f"{'kill it' if killers else 'must kill it'}.</p></div>")
    return parts


def course_section(result: Check) -> list[str]:
    """The course tests on the tree, each with its first failure line."""
    records = {record.name: record for record in result.course.records}
    rows = []
    for name in result.tests.chapter.course_test_names:
        record = records.get(name)
        state = ("not run" if record is None else "pass" if record.outcome == "passed"
                 else "FAIL")
        first = message(record) if record is not None and record.broke else ""
        rows.append(f"<tr><td class='{state}'>{state}</td><td>{breakable(name)}</td>"
                    f"<td>{preformatted(first)}</td></tr>")
    said = ("" if result.course.status is Status.OK else
            f"<p>The course run did not finish ({html.escape(result.course.status.value)}): "
            f"{html.escape(result.course.detail)}</p>")
    return ["<h2>The course tests on the tree</h2>", said,
            "<table><thead><tr><th>result</th><th>course test</th><th>first failure</th>"
            "</tr></thead><tbody>", *rows, "</tbody></table>"]


def invalid_section(result: Check, whose: str) -> list[str]:
    """The tests that fail on a correct tree, each with the tree and why; or the problem."""
    parts = []
    if result.tests.problem:
        parts.append(f"<p><b>Not graded:</b></p>{preformatted(result.tests.problem)}")
    if result.tests.invalid:
        rows = [f"<tr><td>{breakable(entry.name)}</td><td>{html.escape(entry.where)}</td>"
                f"<td>{preformatted(entry.detail)}</td></tr>" for entry in result.tests.invalid]
        parts += [f"<h2>Invalid: {whose} that fail on a correct tree</h2>",
                  "<table><thead><tr><th>test</th><th>fails on</th><th>why</th></tr></thead>"
                  "<tbody>", *rows, "</tbody></table>"]
    return parts
