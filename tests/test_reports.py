"""What ol writes and shows of a check: the report files, ol grade's summary and class page,
how failures read, and the progress line while a check runs."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from types import NoneType

import pytest
from support import AUDIENCE, DATA, DS07, PASSING, PERCENT, TOTAL, bad_input, class_html, ol_run

import ol
from harness.grade import catalog
from harness.grade import score as score_module
from harness.grade.course import needed
from harness.grade.grading import COURSE_STAGE, MUTANT_STAGE, Event
from harness.report import batch
from harness.report.progress import Display, per_submission
from harness.report.render import counted, print_course
from harness.run import judge

# --- reports (ol check --report) and ol grade -------------------------------------------------

GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
GRADESCOPE_FORMATS = {"text", "html", "simple_format", "md", "ansi"}
REFERENCE_LINE = "A radix tree over token ids: the prefix cache of an LLM server"


def test_the_staff_mutation_json_is_valid_against_the_published_schema(checked, reports):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DATA / "mutation-testing-report-schema-3.8.4.json").read_text())
    report = json.loads((reports["passing"] / "mutation.json").read_text())
    jsonschema.validate(report, schema)
    mutants = report["files"]["impl/radix.py"]["mutants"]
    planted = catalog.load_catalog(DS07)
    assert [mutant["id"] for mutant in mutants] == [mutant.id for mutant in planted]
    assert {mutant["status"] for mutant in mutants} == {"Killed"}
    assert all(mutant["killedBy"] and mutant["description"] for mutant in mutants)
    assert REFERENCE_LINE in report["files"]["impl/radix.py"]["source"]


def test_results_json_has_the_fields_gradescope_reads_and_scores_the_rows(checked, reports):
    for name in AUDIENCE:
        results = json.loads((reports[name] / "results.json").read_text())
        assert isinstance(results["score"], int | float)
        assert isinstance(results["execution_time"], int | float)
        assert results["visibility"] in GRADESCOPE_VISIBILITY
        assert results["output_format"] in GRADESCOPE_FORMATS
        for test in results["tests"]:
            assert isinstance(test["name"], str) and test["output"]
            assert 0 <= test.get("score", 0) <= test.get("max_score", 0)
            assert test["status"] in ("passed", "failed")
            assert test["visibility"] in GRADESCOPE_VISIBILITY
        assert results["score"] == sum(test.get("score", 0) for test in results["tests"])
        assert numbers_written_as_text({key: value for key, value in results.items()
                                        if key != "output"}) == []
        assert len(results["tests"]) == len(DS07.course_test_names) + 1 + TOTAL + 1
    passing = json.loads((reports["passing"] / "results.json").read_text())
    assert passing["score"] == 40 == sum(test.get("max_score", 0) for test in passing["tests"])
    failed = json.loads((reports["failing"] / "results.json").read_text())
    assert failed["score"] == 0
    failing = {test["name"]: test for test in failed["tests"]}
    assert failing["the course's locks_pin_the_path on your tree"]["status"] == "failed"
    assert "missing: test_insert_hands_back" in \
        failing["your tests include the six required ones"]["output"]
    assert failing["your tests against planted bug s11: Leaving locked leaves on the list"][
        "status"] == "failed"
    grade = failing["your grade: the course tests, your tests, the planted bugs"]
    assert grade["output"].startswith("NOT PASSED")


@pytest.mark.parametrize(("passed", "kills", "scoring", "earned"), [
    (True, 13, "pass", 40), (True, 18, "pass", 40), (False, 17, "pass", 0),
    (True, 13, "rate", 30), (True, 14, "rate", 32), (True, 17, "rate", 38),
    (True, 18, "rate", 40), (False, 18, "rate", 0)])
def test_a_pass_earns_full_marks_by_default_and_the_rate_scheme_pays_kills_beyond_the_bar(
        passed, kills, scoring, earned):
    assert score_module.points(passed, kills, 18, PERCENT, scoring) == earned


def test_the_rate_scheme_never_falls_below_the_pass_mark_nor_passes_the_full_marks():
    for total in range(1, 30):
        for kills in range(needed(total, PERCENT), total + 1):
            assert 30 <= score_module.points(True, kills, total, PERCENT, "rate") <= 40


def test_student_reports_never_show_the_reference_or_a_diff(checked, reports):
    folder = reports["failing"]
    assert sorted(path.name for path in folder.iterdir()) == [
        "junit.xml", "mutation.html", "results.json"]
    for path in folder.iterdir():
        text = path.read_text()
        assert REFERENCE_LINE not in text and "\n@@ -" not in text and "+++ " not in text
    page = (folder / "mutation.html").read_text()
    assert "Staff only" not in page and "hint" in page.lower()


def test_the_student_page_names_the_submission_its_course_failures_and_invalid_tests(
        checked, reports):
    page = (reports["failing"] / "mutation.html").read_text()
    assert "<h1>failing: NOT PASSED</h1>" in page
    name = "test_<wbr>locks_<wbr>pin_<wbr>the_<wbr>path"  # it may break after an underscore
    assert f"<td class='FAIL'>FAIL</td><td>{name}</td><td><pre>assert" in page
    assert "Invalid: your tests that fail on a correct tree" in page
    invalid = checked["failing"][1]  # the terminal names the same invalid tests
    assert "the second correct tree" in page and "the submission's tests" not in page
    assert "invalid" in invalid.lower()


def test_the_staff_page_speaks_of_the_submission_and_links_each_mutant_to_its_coloured_diff(
        checked, reports):
    page = (reports["passing"] / "mutation.html").read_text()
    assert "<h1>passing: PASSED</h1>" in page
    assert "the submission's tests against the planted mutants" in page
    assert "your tests" not in page
    for id in [mutant.id for mutant in catalog.load_catalog(DS07)]:
        assert f"<a href='#diff-{id}'>{id}</a>" in page and f"<h3 id='diff-{id}'>" in page
    assert "<span class='add'>+" in page and "<span class='del'>-" in page


def test_junit_xml_lists_every_course_test_and_its_failure(checked, reports):
    suite = ElementTree.parse(reports["failing"] / "junit.xml").getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == list(DS07.course_test_names)
    assert cases["test_locks_pin_the_path"].find("failure") is not None
    assert cases["test_hand_example_split_and_match"].find("failure") is None
    assert int(suite.get("failures")) == sum(
        case.find("failure") is not None for case in cases.values())


def test_report_refuses_a_folder_that_already_holds_reports(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    err = bad_input("check", "ds.07", "--workspace", PASSING, "--report", tmp_path)
    assert "already holds results.json" in err and "never overwrites" in err
    assert (tmp_path / "results.json").read_text() == "{}"


@pytest.mark.slow
def test_ol_grade_grades_each_submission_and_a_broken_one_does_not_stop_the_batch(tmp_path):
    good = tmp_path / "class" / "alice"
    shutil.copytree(PASSING, good, symlinks=False)
    broken = tmp_path / "class" / "bob"
    shutil.copytree(PASSING, broken, symlinks=False)
    (broken / "tl_ds" / "radix.py").write_text("class RadixTree(:\n")
    empty = tmp_path / "class" / "carol"
    (empty / "tl_ds").mkdir(parents=True)
    out = tmp_path / "grades"
    code, text, err = ol_run("grade", "ds.07", good, broken, empty, "--out", out)
    assert code == ol.ExitCode.PASSED, text + err
    assert "3 submissions in" in text and "1 passed, 0 not passed, 2 error" in text
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [row["submission"] for row in rows] == ["alice", "bob", "carol"]
    assert [row["verdict"] for row in rows] == ["passed", "error", "error"]
    assert rows[0]["course_tests_passed"] == "11" and rows[1]["course_tests_passed"] == ""
    assert rows[0]["mutants_killed"] == str(TOTAL) and rows[0]["kill_rate"] == "1.0"
    assert "does not import" in rows[1]["note"] and "missing" in rows[2]["note"]
    alice = json.loads((out / "summary.json").read_text())["submissions"][0]
    assert alice["s11"] == "killed"
    assert alice["files"] == {  # what was graded, as read at the start of alice's check
        name: hashlib.sha256((good / name).read_bytes()).hexdigest()
        for name in ("tl_ds/radix.py", "tests/test_ds07_radix.py")}
    assert (out / "alice" / "reports" / "results.json").exists()
    assert "not graded" in (out / "bob" / "check.txt").read_text()


NUMBER_AS_TEXT = re.compile(r"-?\d+(\.\d+)?( ?%| of \d+| s)?")


LABELS = {"number", "schemaVersion"}  # strings by their formats' definitions ("1.1", "2")


def numbers_written_as_text(data, where: str = "") -> list[str]:
    """Where ``data`` (parsed JSON) holds a count, a share or a time as a string."""
    if isinstance(data, dict):
        return [found for key, value in data.items() if key not in LABELS
                for found in numbers_written_as_text(value, f"{where}.{key}")]
    if isinstance(data, list):
        return [found for number, value in enumerate(data)
                for found in numbers_written_as_text(value, f"{where}[{number}]")]
    return [f"{where} = {data!r}"] if isinstance(data, str) and NUMBER_AS_TEXT.fullmatch(
        data.strip()) else []


SUBMISSION_TYPES = {"submission": str, "verdict": str, "course_tests_passed": (int, NoneType),
                    "mutants_killed": (int, NoneType), "kill_rate": (float, int, NoneType),
                    "s11": str, "invalid_tests": list, "seconds": (float, int), "note": str,
                    "graded": bool, "killed": list, "course_failed": list, "refusal": str,
                    "files": dict}


def test_summary_json_holds_counts_shares_and_times_as_json_numbers(tmp_path):
    mutants = catalog.load_catalog(DS07)
    rows = [batch.Row("alice", "passed", 11, 15, 0.8333, "killed", (), 61.5, "PASSED",
                      graded=True, killed=tuple(mutant.id for mutant in mutants[:15])),
            batch.Row("bob", "not passed", 9, None, None, "", ("test_x",), 40.0,
                      "NOT PASSED", graded=False, refusal="invalid tests: test_x"),
            batch.Row("carol", "error", None, None, None, "", (), 0.4, "missing",
                      refusal="missing")]
    batch.write_summary(tmp_path, rows, DS07)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert numbers_written_as_text(summary) == []
    for row in summary["submissions"]:
        assert set(row) == set(SUBMISSION_TYPES)
        for key, kind in SUBMISSION_TYPES.items():
            assert isinstance(row[key], kind), (key, row[key])
    aggregates = summary["class"]
    assert isinstance(aggregates["submissions"], int)
    assert all(isinstance(entry["share"], float | int) for entry in aggregates["mutants"])
    cells = list(csv.DictReader((tmp_path / "summary.csv").open()))
    assert [cell["course_tests_passed"] for cell in cells] == ["11", "9", ""]
    assert cells[1]["invalid_tests"] == "test_x"


def consistent(row: dict) -> list[str]:
    """What a summary.json row says that the rest of it contradicts: a suite that was not
    graded has no kills, rate or required-mutant state, and a graded one has all three."""
    graded = row["graded"]
    told = {"mutants_killed": row["mutants_killed"] is not None,
            "kill_rate": row["kill_rate"] is not None, "s11": row["s11"] != "",
            "killed": bool(row["killed"]) or row["mutants_killed"] == 0}
    wrong = [name for name, said in told.items() if said != graded]
    if graded and len(row["killed"]) != row["mutants_killed"]:
        wrong.append("killed")
    return wrong


@pytest.mark.slow
def test_a_refused_suite_has_no_kill_count_rate_or_s11_state_in_any_summary(
        workspace, tmp_path, capsys):
    with (workspace / "tests" / "test_ds07_radix.py").open("a") as tests:  # fails the third tree
        tests.write("\n\ndef test_first_node_is_one():\n    tree = RadixTree(1)\n"
                    "    tree.insert([1, 2], [10, 20])\n    assert tree.children(ROOT) == [1]\n")
    out = tmp_path / "grades"
    assert ol.main(["grade", "ds.07", str(workspace), str(PASSING), "--out", str(out)]) == 0
    terminal = capsys.readouterr().out
    refused = next(line for line in terminal.splitlines() if line.startswith("ws "))
    assert refused.split()[1:3] == ["not", "passed"] and "refused" in refused
    assert " of 18" not in refused and "killed" not in refused
    rows = {row["submission"]: row for row in
            json.loads((out / "summary.json").read_text())["submissions"]}
    assert rows["ws"]["graded"] is False and rows["ws"]["mutants_killed"] is None
    assert rows["ws"]["kill_rate"] is None and rows["ws"]["s11"] == ""
    assert rows["ws"]["killed"] == [] and "invalid" in rows["ws"]["refusal"]
    assert {name: consistent(row) for name, row in rows.items()} == {"ws": [], "passing": []}
    cells = {cell["submission"]: cell for cell in csv.DictReader((out / "summary.csv").open())}
    assert [cells["ws"][name] for name in ("mutants_killed", "kill_rate", "s11")] == [""] * 3
    assert cells["passing"]["mutants_killed"] == "18" and cells["passing"]["s11"] == "killed"
    page = (out / "passing" / "reports" / "mutation.html").read_text()
    links = re.findall(r"href='([^']+)'", page[page.index("<nav>"):page.index("</nav>")])
    assert links[:2] == ["../../class.html", "../check.txt"] and "results.json" in links
    assert all((out / "passing" / "reports" / link).resolve().is_file() for link in links)
    assert "<div class='required'><h3>Required: s11" in page and "killed by test_" in page
    for written in (page, (out / "ws" / "check.txt").read_text()):
        assert str(workspace) not in written and "`ol " not in written


def from_reports(out: Path, names: list[str]) -> dict:
    """What the class's aggregates must say, read off each submission's own results.json."""
    graded, killed, trees, failed = 0, Counter(), 0, Counter()
    for name in names:
        report = out / name / "reports" / "results.json"
        if not report.exists():
            continue  # not graded at all: no tree ran
        tests = json.loads(report.read_text())["tests"]
        trees += 1
        failed.update("test_" + test["name"].removeprefix("the course's ").removesuffix(
            " on your tree") for test in tests
            if test["tags"] == ["course"] and test["status"] == "failed")
        mutants = [test for test in tests if test["tags"] == ["mutants"]]
        if mutants and not mutants[0]["output"].startswith("not graded"):
            graded += 1
            killed.update(test["name"].split(":")[0].rsplit(" ", 1)[-1]
                          for test in mutants if test["status"] == "passed")
    return {"graded": graded, "killed": killed, "trees": trees, "failed": failed}


@pytest.mark.slow
def test_the_class_summary_agrees_with_the_submissions_own_reports(tmp_path):
    names = ["alice", "dave", "erin"]
    for name, example in zip(names, (PASSING, DS07.examples / "failing", PASSING), strict=True):
        shutil.copytree(example, tmp_path / "class" / name, symlinks=False)
    (tmp_path / "class" / "erin" / "tests" / "test_ds07_radix.py").write_text(
        "from tl_ds.radix import RadixTree\n\n"
        "def test_split_by_hand():\n    assert RadixTree(1).is_empty()\n")
    out = tmp_path / "grades"
    code, text, err = ol_run("grade", "ds.07", *(tmp_path / "class" / name for name in names),
                             "--out", out, "--jobs", "2")
    assert code == ol.ExitCode.PASSED, text + err
    summary = json.loads((out / "summary.json").read_text())["class"]
    truth = from_reports(out, names)
    assert summary["submissions"] == 3 and summary["graded_suites"] == truth["graded"] == 2
    for entry in summary["mutants"]:
        assert (entry["killed_by"], entry["suites"]) == (truth["killed"][entry["id"]], 2)
    shares = [entry["share"] for entry in summary["mutants"]]
    assert shares == sorted(shares)  # most missed first
    for entry in summary["course_tests"]:
        assert (entry["failed_by"], entry["trees"]) == (truth["failed"][entry["name"]], 3)
    assert [(entry["submission"], entry["verdict"]) for entry in summary["refused"]] == [
        ("dave", "not passed")]
    assert sum(entry["suites"] for entry in summary["scores"]) == 2
    page = (out / "class.html").read_text()
    assert "1 of 3 submissions passed." in page and "2 not passed, 0 could not be graded" in page
    assert "<a href='dave/reports/mutation.html'>dave</a>" in page
    assert "<script" not in page and "http:" not in page.replace(SVG_NAMESPACE, "")
    for link in re.findall(r"href='([^']+)'", page):
        assert (out / link).is_file(), link


SVG_NAMESPACE = "xmlns='http://www.w3.org/2000/svg'"  # a name, never fetched


def test_class_html_opens_with_how_many_passed_then_the_pitfalls_missed_most(tmp_path):
    page = class_html(tmp_path)
    order = [page.index(text) for text in (
        "2 of 5 submissions passed.", "The pitfalls the class missed most",
        "How the graded suites' kill rates spread", "The course tests, most failed first",
        "Every submission")]
    assert order == sorted(order)


def test_class_html_sets_the_required_mutant_apart_and_lists_misses_most_first(tmp_path):
    page = class_html(tmp_path)
    box = page[page.index("<div class='required'"):]
    assert box.startswith("<div class='required' id='required'><h3>Required: s11")
    assert "Missed by 1 of 3 graded suites (33%)" in box
    table = page[page.index("suites that miss it"):page.index("How the graded suites")]
    misses = [int(count) for count in re.findall(r"<td class='n'>(\d+) of 3</td>", table)]
    assert len(misses) == TOTAL - 1 and misses == sorted(misses, reverse=True)
    assert "<td>s11</td>" not in table


def test_class_html_bars_show_the_share_their_heading_names(tmp_path):
    page = class_html(tmp_path)
    table = page[page.index("suites that miss it"):page.index("How the graded suites")]
    for count, share, shown in re.findall(
            r"<td class='n'>(\d+) of 3</td><td class='n'>(\d+)%</td><td><span class='track'>"
            r"<span class='bar missed' style='width:([\d.]+)%'", table):
        assert round(float(shown)) == int(share) == round(int(count) * 100 / 3)


def test_class_html_draws_the_kill_rates_coloured_by_verdict_with_the_threshold_marked(tmp_path):
    page = class_html(tmp_path)
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert f"threshold: {needed(TOTAL, PERCENT)} of {TOTAL}" in svg and "id='threshold'" in svg
    bars = re.findall(r"fill='(#\w+)'><title>(\d+) of the suites that killed (\d+) of \d+: "
                      r"([a-z ]+)</title>", svg)
    assert sum(int(suites) for _, suites, _, _ in bars) == 3  # the refused suite is not drawn
    colour = {"passed": "#2f8a4f", "not passed": "#c2452f"}
    assert sorted((int(killed), said) for _, _, killed, said in bars) == [
        (13, "passed"), (17, "not passed"), (18, "passed")]  # 17 kills, but s11 survived
    assert all(fill == colour[said] for fill, _, _, said in bars)
    assert ">passed</text>" in svg and ">not passed (too few kills, s11 survived" in svg


def test_class_html_counts_nothing_for_a_refused_suite_and_links_only_what_exists(tmp_path):
    page = class_html(tmp_path)
    dee = page[page.rindex("<tr><td><a href='dee/"):].split("</tr>")[0]
    assert "<td class='n refused'>refused</td><td></td>" in dee and "18 of 18" not in dee
    assert "<a href='eve/check.txt'>eve</a>" in page and "eve/reports" not in page
    for link in re.findall(r"href='([^']+)'", page):
        assert (tmp_path / link).is_file(), link
    assert "<script" not in page and "http:" not in page.replace(SVG_NAMESPACE, "")


def test_ol_grade_refuses_an_out_folder_with_files_in_it(tmp_path):
    (tmp_path / "old.csv").write_text("kept")
    err = bad_input("grade", "ds.07", PASSING, "--out", tmp_path)
    assert "not an empty folder" in err
    assert (tmp_path / "old.csv").read_text() == "kept"


# --- how failures read -----------------------------------------------------------------------

def failed_course_run(text: str, exception: str = "NotImplementedError") -> judge.RunResult:
    records = tuple(judge.TestRecord(f"tests/test_ds07_radix.py::{name}", "passed")
                    for name in DS07.course_test_names[1:])
    broken = judge.TestRecord(f"tests/test_ds07_radix.py::{DS07.course_test_names[0]}", "failed",
                        exception, text)
    return judge.RunResult(judge.Status.OK, (broken, *records))


def test_a_course_failure_names_its_exception_once():
    out = io.StringIO()
    print_course(failed_course_run("E   NotImplementedError: RadixTree.insert\n"), DS07, out)
    said = out.getvalue()
    assert "hand_example_split_and_match failed:\n    NotImplementedError: RadixTree.insert" in said
    assert said.count("NotImplementedError") == 1


def test_a_long_failure_is_cut_on_a_line_boundary_and_says_so():
    text = "E   AssertionError: assert [1] == [2]\n" + "".join(
        f"E     line {number} of the diff\n" for number in range(20))
    out = io.StringIO()
    print_course(failed_course_run(text, "AssertionError"), DS07, out)
    shown = out.getvalue().splitlines()[-6:]
    assert shown[0] == "    AssertionError: assert [1] == [2]"
    assert shown[-2] == "      line 3 of the diff"
    assert shown[-1] == "    [... 16 more lines cut]"


def test_counts_read_in_the_singular_and_the_plural():
    assert counted(1, "required test") == "1 required test"
    assert counted(3, "required test") == "3 required tests"
    assert counted(0, "course test") == "0 course tests"


# --- progress while a check runs -------------------------------------------------------------

def test_piped_progress_is_plain_lines_with_every_stage_counted(checked):
    err = checked["failing"][2]
    assert "\r" not in err and "\033" not in err
    lines = err.splitlines()
    assert sum(" course tests " in line for line in lines) == len(DS07.course_test_names)
    assert any(f"your tests against the mutants {TOTAL} of {TOTAL}: mutant " in line
               for line in lines)
    assert any("the placebo (every method raises) killed" in line for line in lines)
    assert any("the reference again: as before" in line for line in lines)
    assert not any("mutant reference" in line or "mutant placebo" in line for line in lines)


def test_a_terminal_gets_one_status_line_with_the_course_tests_printed_above_it():
    screen = io.StringIO()
    ticks = iter(range(100))
    display = Display(screen, live=True, clock=lambda: float(next(ticks)))
    display(Event(COURSE_STAGE, 1, 11, "hand_example_split_and_match", "pass"))
    display(Event(MUTANT_STAGE, 12, 18, "mutant s07", "killed"))
    display.close()
    said = screen.getvalue()
    assert "\r\033[K  pass  hand_example_split_and_match\n" in said
    assert "  2 s · course tests 1 of 11 · mutants 12 of 18 · mutant s07 killed" in said
    assert said.endswith("\r\033[K")




def test_ol_grade_says_each_submissions_stage_as_it_changes_and_every_five_seconds_at_most():
    lines, now = [], [0.0]
    said = per_submission(lines.append, "alice", clock=lambda: now[0])
    for at, event in ((1, Event(COURSE_STAGE, 1, 11, "a", "pass")),
                      (2, Event(COURSE_STAGE, 2, 11, "b", "pass")),  # the same stage: quiet
                      (3, Event(MUTANT_STAGE, 1, 18, "mutant s01", "killed")),
                      (4, Event(COURSE_STAGE, 3, 11, "c", "pass")),
                      (9.5, Event(COURSE_STAGE, 4, 11, "d", "pass"))):  # 5 s on: said again
        now[0] = at
        said(event)
    assert lines == ["alice: started", "alice: course tests 1 of 11",
                     f"alice: {MUTANT_STAGE} 1 of 18", "alice: course tests 3 of 11",
                     "alice: course tests 4 of 11"]
