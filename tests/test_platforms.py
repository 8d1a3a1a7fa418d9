"""Grading on a course platform: the Gradescope bundle, PrairieLearn, what a platform's
student reads, and the HTML pages as real browsers render them."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import textwrap
import zipfile
import zlib
from pathlib import Path

import pytest
from support import (
    CONTRACT,
    DS07,
    FAILING,
    PASSING,
    TREE,
    autograder,
    bad_input,
    class_html,
    ol_run,
)

import ol
from harness.grade import catalog, grading
from harness.report import batch, bundle
from harness.report.class_page import class_page, class_summary

# --- ol gradescope-bundle ----------------------------------------------------------------------

@pytest.mark.slow
def test_the_gradescope_bundle_grades_a_submission_in_a_folder_of_its_own(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    results = autograder(tmp_path, {"my-work/tl_ds/radix.py": TREE,
                                    "my-work/tests/test_ds07_radix.py": tests})
    assert results["score"] == sum(test.get("max_score", 0) for test in results["tests"]) == 40
    assert results["tests"][-1]["output"].startswith("PASSED")


def test_the_gradescope_bundle_writes_results_for_a_submission_it_cannot_grade(tmp_path):
    results = autograder(tmp_path, {"notes.txt": "I ran out of time"})
    assert results["score"] == 0 and results["tests"] == []
    output = results["output"]
    assert output.startswith("Not graded: your submission holds no tl_ds/radix.py and no "
                             "tests/test_ds07_radix.py. Upload your tree, tl_ds/radix.py")
    assert grader_paths(output, tmp_path) == []


@pytest.mark.parametrize("scoring", ["pass", "rate"])
def test_the_gradescope_bundle_grades_with_the_scoring_staff_chose(tmp_path, scoring):
    code, _, _ = ol_run("gradescope-bundle", "ds.07", tmp_path / "bundle.zip", "--scoring", scoring)
    assert code == ol.ExitCode.PASSED
    with zipfile.ZipFile(tmp_path / "bundle.zip") as archive:
        script = archive.read("run_autograder").decode()
    assert f"--scoring {scoring} " in script and "@SCORING@" not in script


def test_the_gradescope_bundle_never_overwrites_a_file(tmp_path):
    (tmp_path / "bundle.zip").write_text("mine")
    assert "never overwrites" in bad_input("gradescope-bundle", "ds.07", tmp_path / "bundle.zip")
    assert (tmp_path / "bundle.zip").read_text() == "mine"


def setup_script(tmp_path: Path) -> Path:
    script = tmp_path / "setup.sh"
    script.write_text(bundle.filled(bundle.SETUP, DS07).replace("@PINS@", "pins"))
    return script


def stand_in_python(folder: Path, name: str, version: str) -> None:
    """A program called ``name`` that answers the setup's version question as ``version``."""
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\necho {version.replace('.', ' ')}\n")
    (folder / name).chmod(0o755)


@pytest.mark.parametrize("found, chosen", [
    ({"python3": "3.10"}, None),                        # Ubuntu 22.04 as it comes
    ({"python3": "3.10", "python3.11": "3.11"}, "python3.11"),  # after apt-get python3.11
    ({"python3": "3.12"}, "python3"),                   # Ubuntu 24.04
    ({"python3": "3.10", "python3.12": "3.12", "python3.11": "3.11"}, "python3.12"),
    ({}, None),                                         # no Python at all
])
def test_the_bundles_setup_builds_its_environment_from_a_python_of_at_least_3_11(
        tmp_path, found, chosen):
    script = setup_script(tmp_path)
    assert subprocess.run(["bash", "-n", script]).returncode == 0
    for name, version in found.items():
        stand_in_python(tmp_path / "bin", name, version)
    done = subprocess.run(["/bin/bash", script, "--print-python"], capture_output=True,
                          text=True, env={"PATH": str(tmp_path / "bin")})
    if chosen is None:
        assert done.returncode == 1 and "no Python 3.11 or newer" in done.stderr
    else:
        assert done.returncode == 0 and done.stdout.strip() == str(tmp_path / "bin" / chosen)


def test_the_bundles_pins_are_requirements_that_fix_each_version_deciding_a_grade():
    from packaging.requirements import Requirement

    pinned = {Requirement(pin).name: Requirement(pin) for pin in bundle.pins()}
    for name in ("hypothesis", "pytest"):
        (spec,) = pinned[name].specifier
        assert spec.operator == "==", pinned[name]
    text = bundle.filled(bundle.SETUP, DS07)
    assert "pip install --no-cache-dir @PINS@" in text and f'"${{OL_VENV:-{bundle.VENV}}}"' in text
    assert f"${{OL_VENV:-{bundle.VENV}}}/bin/python" in bundle.filled(bundle.RUN, DS07)


@pytest.mark.slow
def test_course_tests_that_do_not_import_are_the_graders_fault_not_the_students(workspace,
                                                                               monkeypatch,
                                                                               tmp_path):
    from harness.grade import mutation
    from harness.run.layout import Suite
    broken = tmp_path / "test_ds07_radix.py"
    broken.write_text("import tree_wire_that_is_not_installed\n")
    monkeypatch.setattr(mutation, "course_suite",
                        lambda *args, **kwargs: Suite(contract=CONTRACT, files=(broken,), proxy=()))
    for command in ("check", "diff"):
        code, out, err = ol_run(command, "ds.07", "--workspace", workspace)
        assert code == ol.ExitCode.INTERNAL and "Traceback" not in out + err
        assert "fault of ol itself, not of your work" in err
        assert "fault of this installation of ol, not of your tree" in err
        assert "tree_wire_that_is_not_installed" in err


# --- PrairieLearn -----------------------------------------------------------------------------

def prairielearn(tmp_path: Path, files: dict[str, str]) -> tuple[int, dict]:
    """A /grade folder laid out as PrairieLearn lays it out, graded; (exit code, results)."""
    root = tmp_path / "grade"
    for name, text in files.items():
        (root / "student" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "student" / name).write_text(text)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text('{"gradable": true, "score": 1}')  # forged
    code, out, err = ol_run("prairielearn", "ds.07", "--root", root)
    assert "Traceback" not in out + err
    results = (root / "results" / "results.json").read_text()
    assert len(results.encode()) <= 1_000_000
    assert [path.name for path in (root / "results").iterdir()] == ["results.json"]
    return code, json.loads(results)


@pytest.mark.slow
def test_prairielearn_scores_a_passing_submission_one(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    code, results = prairielearn(tmp_path, {"radix.py": TREE, "test_ds07_radix.py": tests})
    assert code == ol.ExitCode.PASSED
    assert results["gradable"] is True and results["score"] == 1.0
    assert all(test["points"] == test["max_points"] for test in results["tests"])
    assert results["message"].startswith("PASSED")
    assert grader_paths(platform_texts(results), tmp_path) == []


@pytest.mark.slow
def test_prairielearn_gives_a_fail_zero_with_what_is_missing_and_the_file_cannot_be_forged(
        tmp_path):
    results_path = tmp_path / "grade" / "results" / "results.json"
    failing = DS07.examples / "failing"
    tests = (failing / "tests" / "test_ds07_radix.py").read_text() + textwrap.dedent(f"""

        def test_forges_the_results():
            with open({str(results_path)!r}, "w") as out:
                out.write('{{"gradable": true, "score": 1}}')
        """)
    tree = (DS07.examples / "failing" / "tl_ds" / "radix.py").read_text()
    _, results = prairielearn(tmp_path, {"tl_ds/radix.py": tree,
                                         "tests/test_ds07_radix.py": tests})
    assert results["gradable"] is True and results["score"] == 0
    assert results["message"].startswith("NOT PASSED")
    course = [test for test in results["tests"] if test["name"].startswith("the course's ")]
    assert len(course) == len(DS07.course_test_names)
    assert any(test["message"] == "failed" for test in course)
    assert results["message"].endswith("then submit again.")
    assert grader_paths(results["output"] + results["message"], tmp_path) == []


def test_prairielearn_says_why_a_submission_cannot_be_graded(tmp_path):
    _, results = prairielearn(tmp_path, {"notes.txt": "I ran out of time"})
    assert results["gradable"] is False and results["score"] == 0
    assert "tl_ds/radix.py" in results["format_errors"][0]
    assert grader_paths(platform_texts(results), tmp_path) == []


def test_prairielearns_message_for_a_tree_that_does_not_import_is_whole(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    _, results = prairielearn(tmp_path, {"radix.py": "raise RuntimeError('half-written')\n",
                                         "test_ds07_radix.py": tests})
    assert results["gradable"] is False
    message = results["message"]
    assert "RuntimeError: half-written" in message and message.rstrip().endswith("again.")
    assert "your tree, radix.py, does not import" in message  # named as uploaded, bare
    assert grader_paths(platform_texts(results), tmp_path) == []


# --- what a student reads on a course platform ----------------------------------------------

GRADER_ONLY = ("/autograder", "/grade/", "/tmp/", "ol-runs-", "ol-pl-", "--workspace", "ol diff",
               "ol start", "ol check", "python -c", "send the log")
SYNTAX_ERROR = "from tl_ds.radix import RadixTree\n\ndef test_split_by_hand(:\n    pass\n"
AS_PYTHON_SHOWS_IT = ('  File "tests/test_ds07_radix.py", line 3\n'
                      '    def test_split_by_hand(:\n'
                      '                           ^\n'
                      "SyntaxError: invalid syntax")


def grader_paths(text: str, *roots: Path) -> list[str]:
    """What of the grader's machine, or of a local command line, ``text`` shows."""
    return [found for found in (*GRADER_ONLY, *map(str, roots)) if found in text]


def platform_texts(results: dict) -> str:
    """Every text of a platform's results file a student can read."""
    return "\n".join(str(value) for value in (
        results.get("output"), results.get("message"), *results.get("format_errors", []),
        *(test.get(key, "") for test in results["tests"] for key in ("output", "message"))))


@pytest.fixture(scope="module")
def on_gradescope(tmp_path_factory) -> tuple[Path, dict]:
    """The failing example (course tests fail, one test invalid) graded as the Gradescope
    bundle grades it: ``ol check --report --platform``; (its folder, results.json)."""
    root = tmp_path_factory.mktemp("gradescope")
    shutil.copytree(FAILING, root / "ws")
    code, _, _ = ol_run("check", "ds.07", "--workspace", root / "ws", "--report",
                        root / "report", "--platform")
    assert code == ol.ExitCode.NOT_PASSED
    return root, json.loads((root / "report" / "results.json").read_text())


def test_gradescope_tells_a_failing_invalid_suite_what_to_fix_without_the_graders_paths(
        on_gradescope):
    root, results = on_gradescope
    text = platform_texts(results)
    assert grader_paths(text, root) == []
    assert "1. The course tests against your tree (tl_ds/radix.py):" in results["output"]
    assert "2. Your tests (tests/test_ds07_radix.py) on 3 correct trees:" in results["output"]
    said = results["tests"][-1]["output"]
    assert said.startswith("NOT PASSED: course tests fail; grade refused: your tests are "
                           "invalid") and said.endswith("then submit again.")
    assert "not graded: your tests are invalid" in text


@pytest.mark.slow
def test_gradescope_shows_a_pass_without_a_next_command_or_the_graders_paths(tmp_path):
    tests = (PASSING / "tests" / "test_ds07_radix.py").read_text()
    results = autograder(tmp_path, {"tl_ds/radix.py": TREE, "tests/test_ds07_radix.py": tests})
    assert results["score"] == 40
    assert grader_paths(platform_texts(results), tmp_path) == []
    assert results["tests"][-1]["output"].endswith("s11 among them.")


def test_gradescope_shows_a_syntax_error_as_python_does_and_what_to_do(tmp_path):
    results = autograder(tmp_path, {"tl_ds/radix.py": TREE,
                                    "tests/test_ds07_radix.py": SYNTAX_ERROR})
    output = results["output"]
    assert results["score"] == 0 and AS_PYTHON_SHOWS_IT in output
    assert output.endswith("Fix that line, then submit again.")
    assert grader_paths(output, tmp_path) == []


def test_a_fault_of_ol_on_gradescope_says_so_without_a_log_or_the_graders_paths(
        workspace, monkeypatch, tmp_path):
    def broken(*args, **kwargs):
        raise ZeroDivisionError(f"division by zero in {tmp_path}/harness/x.py")

    monkeypatch.setattr(grading, "check", broken)
    code, out, err = ol_run("check", "ds.07", "--workspace", workspace, "--report",
                            tmp_path / "report", "--platform")
    assert code == ol.ExitCode.INTERNAL and not (tmp_path / "report" / "results.json").exists()
    assert "the grader met a fault of its own (ZeroDivisionError: division by zero in x.py)" in err
    assert grader_paths(out + err, tmp_path) == [] and "Traceback" not in err


def test_prairielearn_shows_a_syntax_error_as_python_does_without_the_graders_paths(tmp_path):
    code, results = prairielearn(tmp_path, {"radix.py": TREE,
                                            "test_ds07_radix.py": SYNTAX_ERROR})
    assert code == ol.ExitCode.PASSED and results["gradable"] is False
    # named as uploaded: a bare file, not tests/ as a workspace holds it
    assert AS_PYTHON_SHOWS_IT.replace('"tests/', '"') in results["format_errors"][0]
    assert "your tests, test_ds07_radix.py, do not compile" in results["format_errors"][0]
    assert grader_paths(platform_texts(results), tmp_path) == []


def test_prairielearn_says_a_fault_of_ol_without_a_log_or_the_graders_paths(
        tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError(f"division by zero in {tmp_path}/harness/x.py")

    monkeypatch.setattr(grading, "check", broken)
    root = tmp_path / "grade"
    shutil.copytree(PASSING, root / "student")
    code, out, err = ol_run("prairielearn", "ds.07", "--root", root)
    assert code == ol.ExitCode.INTERNAL and not (root / "results" / "results.json").exists()
    assert "fault of its own" in err and grader_paths(out + err, tmp_path) == []


# --- real browsers: class.html and the submission pages in headless Chromium ----------------

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found on PATH "
                                    "(chromium, chromium-browser or google-chrome): install it "
                                    "with `apt-get install -y chromium`, as .ci/run does")
WIDTHS = (390, 1280)  # a phone and a desktop


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """An 8-bit RGB or RGBA PNG without interlace: (width, height, rows of RGB(A) bytes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        position += 12 + length
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour, interlace = header[8], header[9], header[12]
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    size = 3 if colour == 2 else 4
    raw, stride, rows = zlib.decompress(b"".join(chunks)), width * size, []
    previous = bytearray(stride)
    for number in range(height):
        start = number * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                           (abs(guess - corner), 2, corner))[2]
                line[i] = (line[i] + near) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, [row if size == 3 else bytes(b for i, b in enumerate(row)
                                                       if i % 4 != 3) for row in rows]


def looks_like_a_page(shot: Path, width: int) -> None:
    """The screenshot is ``width`` wide, not blank (many colours), with dark text at the top."""
    shot_width, height, rows = png_pixels(shot)
    assert shot_width == width, (shot, shot_width)
    colours = {row[i:i + 3] for row in rows[::7] for i in range(0, len(row), 21)}
    assert len(colours) > 8, f"{shot} is blank: {len(colours)} colours"
    top = rows[:min(height, 120)]
    dark = sum(sum(row[i:i + 3]) < 240 for row in top for i in range(0, len(row), 3))
    assert dark > 200, f"{shot} shows no text at the top ({dark} dark pixels)"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots are kept: OL_SCREENSHOTS, else pytest's own kept temporary
    folders (the last three runs)."""
    kept = os.environ.get("OL_SCREENSHOTS")
    folder = Path(kept) if kept else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# measures, inside the page as laid out, every element that reaches past the right edge of
# its viewport, or whose content is wider than its box (clipped by a scroller, or spilling
# out of it, as a long name does from a paragraph): the page's own frame reports to its host
OVERFLOW_PROBE = """<script>
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth, wide = [];
  for (const element of document.querySelectorAll("body *")) {
    // a box whose content is wider than it: a scroller clips it, any other spills it
    const spills = element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1;
    if (element.getBoundingClientRect().right > width + 1 || spills)
      wide.push(element.tagName + ": " + (element.textContent || "").trim().slice(0, 60));
  }
  window.parent.document.body.setAttribute("data-wide", JSON.stringify(wide.slice(0, 12)));
});
</script>"""


def too_wide(page: Path, width: int, flags: list[str]) -> list[str]:
    """The elements of ``page`` wider than a screen ``width`` pixels wide (a frame of that
    width: a desktop browser's window is never narrower than 500 px)."""
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text().replace("</body>", OVERFLOW_PROBE + "</body>"))
    host = page.with_name(f".host-{width}-{page.name}")
    host.write_text(f"<!DOCTYPE html><html><body style='margin:0'><iframe src='{probe.name}' "
                    f"style='width:{width}px;height:1400px;border:0'></iframe></body></html>")
    try:
        dom = subprocess.run([CHROMIUM, *flags, "--allow-file-access-from-files",
                              "--window-size=1400,1400", "--virtual-time-budget=5000",
                              "--dump-dom", host.as_uri()], capture_output=True, text=True,
                             timeout=120).stdout
    finally:
        probe.unlink()
        host.unlink()
    found = re.search(r'data-wide="([^"]*)"', dom)
    assert found, f"the overflow probe did not run on {page}"
    return json.loads(html.unescape(found.group(1)))


def rendered(page: Path, shots: Path, name: str) -> str:
    """The DOM headless Chromium builds from ``page``, after keeping a screenshot at each of
    WIDTHS as ``name``-WIDTH.png and checking that each shows a page with text, and that
    nothing of it is wider than the screen; every link of the page is followed (a file that
    exists, or an element of the page)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={shots / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    assert "</html>" in dom, f"Chromium rendered nothing of {page}"
    for width in WIDTHS:
        shot = shots / f"{name}-{width}.png"
        subprocess.run([CHROMIUM, *flags, f"--window-size={width},1400",
                        f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
        looks_like_a_page(shot, width)
        print(f"screenshot: {shot}")
        assert too_wide(page, width, flags) == [], f"{page.name} at {width} px"
    for link in re.findall(r'href="([^"]+)"', dom):
        if link.startswith("#"):
            assert f'id="{link[1:]}"' in dom, f"{page.name}: {link} names no element"
        else:
            assert "://" not in link and (page.parent / link).is_file(), f"{page.name}: {link}"
    return dom


@needs_chromium
def test_class_html_shows_its_headline_threshold_and_s11_in_a_browser_at_both_widths(
        tmp_path, shots):
    class_html(tmp_path)
    dom = rendered(tmp_path / "class.html", shots, "class")
    assert "2 of 5 submissions passed." in dom and "Required: s11" in dom
    assert "threshold: 13 of 18" in dom


@needs_chromium
def test_class_html_of_fifty_submissions_renders_every_row_and_aggregate(tmp_path, shots):
    mutants = catalog.load_catalog(DS07)
    rows = [batch.Row(f"student-{number:02d}", "passed" if number % 3 else "not passed",
                      11, number % (len(mutants) + 1), 0.5, "killed", (), 30.0, "",
                      graded=number % 5 != 0,
                      killed=tuple(mutant.id for mutant in mutants[:number % len(mutants)]),
                      course_failed=("test_locks_pin_the_path",) if number % 4 == 0 else (),
                      refusal="" if number % 5 else "invalid tests: test_x")
            for number in range(50)]
    for row in rows:
        (tmp_path / row.submission / "reports").mkdir(parents=True)
        (tmp_path / row.submission / "reports" / "mutation.html").write_text("")
    page = tmp_path / "class.html"
    page.write_text(class_page(class_summary(rows, mutants, DS07), rows, DS07))
    dom = rendered(page, shots, "class-of-fifty")
    assert dom[dom.index("Every submission"):].count("/reports/mutation.html") == 50
    assert "33 of 50 submissions passed." in dom and "The pitfalls the class missed most" in dom


@needs_chromium
def test_the_staff_and_student_pages_render_with_their_headings_and_every_mutant(
        checked, reports, shots):
    staff = rendered(reports["passing"] / "mutation.html", shots, "staff")
    student = rendered(reports["failing"] / "mutation.html", shots, "student")
    for id in [mutant.id for mutant in catalog.load_catalog(DS07)]:
        assert f"<tr id=\"{id}\">" in staff and f"<tr id=\"{id}\">" in student
    assert "<h1>passing: PASSED</h1>" in staff and "Staff only: the reference" in staff
    assert "<h1>failing: NOT PASSED</h1>" in student and "Staff only" not in student


def test_a_blank_screenshot_is_told_apart_from_a_page(tmp_path):
    blank = tmp_path / "blank.png"
    row = b"\x00" + b"\xff\xff\xff" * 390
    header = (390).to_bytes(4, "big") + (200).to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (len(body).to_bytes(4, "big") + kind + body
                + zlib.crc32(kind + body).to_bytes(4, "big"))

    blank.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                      + chunk(b"IDAT", zlib.compress(row * 200)) + chunk(b"IEND", b""))
    assert png_pixels(blank)[:2] == (390, 200)
    with pytest.raises(AssertionError, match="blank"):
        looks_like_a_page(blank, 390)
