"""ol grades whatever chapter a manifest describes: t8.4, a test chapter, end to end.

t8.4 (tests/chapters/) is a small prefix cache over ds.07's RadixTree, as the course's
L8.4 builds on ds.07: one course test, two mutants, a model, a proxy of its own. Nothing of
it is written in ol; OL_CHAPTERS names its folder.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from support import DS07, autograder, ol_run, verdict_line

CHAPTERS = Path(__file__).resolve().parent / "chapters"
T84 = CHAPTERS / "t84"

STUDENT_TESTS = """
    from tl_ds.prefix_cache import PrefixCache


    def test_a_put_prefix_hits():
        cache = PrefixCache(100)
        assert cache.put([1, 2, 3]) == 3
        assert cache.hit([1, 2, 9]) == 2
        assert cache.put([1, 2, 4]) == 1


    def test_the_cache_stays_within_its_capacity():
        cache = PrefixCache(4)
        for start in range(10):
            cache.put([start, start + 1])
            assert len(cache) <= 4
    """


@pytest.fixture(autouse=True)
def test_chapters(monkeypatch):
    monkeypatch.setenv("OL_CHAPTERS", str(CHAPTERS))


def workspace(tmp_path: Path, radix: Path) -> Path:
    """A t8.4 workspace: the second correct cache, its tests, and ``radix`` as the
    student's own ds.07."""
    root = tmp_path / "ws"
    (root / "tl_ds").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tl_ds" / "__init__.py").write_text("")
    shutil.copy(T84 / "second.py", root / "tl_ds" / "prefix_cache.py")
    shutil.copy(radix, root / "tl_ds" / "radix.py")
    (root / "tests" / "test_t84_cache.py").write_text(textwrap.dedent(STUDENT_TESTS))
    return root


def test_ol_tests_describes_a_chapter_it_knows_only_from_its_manifest():
    code, out, _ = ol_run("tests", "t8.4")
    assert code == 0
    assert out.startswith("The 1 course test of t8.4 (")
    assert "the_cache_agrees_with_a_list_of_prefixes  [model]" in out
    assert "import only `from tl_ds.prefix_cache import PrefixCache`" in out
    assert "kill p01 (the cache outgrows its capacity): required;" in out
    assert "kill at least 50% of the 2 planted mutants, that is 1 of 2." in out


def test_a_chapter_no_manifest_names_is_refused_with_the_ones_there_are():
    code, _, err = ol_run("tests", "t9.9")
    assert code == 2 and "unknown module id 't9.9': this harness grades ds.07, t8.4" in err
    assert "name that folder in OL_CHAPTERS" in " ".join(err.split())


def test_chapters_that_need_each_other_in_a_circle_are_refused_naming_the_circle(
        tmp_path, monkeypatch):
    manifest = (CHAPTERS / "t84.toml").read_text()
    for id, needs in (("c1.1", "c1.2"), ("c1.2", "c1.1")):
        (tmp_path / f"{id}.toml").write_text(manifest.replace('id = "t8.4"', f'id = "{id}"')
                                             .replace('needs = ["ds.07"]', f'needs = ["{needs}"]'))
    (tmp_path / "t84").symlink_to(T84)
    monkeypatch.setenv("OL_CHAPTERS", str(tmp_path))
    code, _, err = ol_run("tests", "c1.1")
    assert code == 2 and "the chapters c1.1 -> c1.2 -> c1.1 need each other in a circle" in err


def test_ol_start_of_a_chapter_that_builds_on_another_says_what_it_needs(tmp_path):
    code, out, _ = ol_run("start", "t8.4", "--workspace", tmp_path / "ws")
    said = " ".join(out.split())
    assert code == 0 and "t8.4 builds on ds.07: it runs on your tl_ds/radix.py" in said
    assert "is not there yet" in said and f"`ol start ds.07 --workspace {tmp_path / 'ws'}`" \
        in said and "add --ref-deps to ol tdd, check and diff" in said


def test_ol_mutants_runs_the_test_chapters_course_test_against_its_mutants():
    code, out, _ = ol_run("mutants", "t8.4")
    assert code == 0, out
    assert "the 1 course test against the 2 planted mutants" in out
    assert "2 of 2 mutants killed; 2 of 2 killed by every course test" in out


def test_ol_check_stops_while_the_students_own_ds07_fails_its_course_tests(tmp_path):
    root = workspace(tmp_path, DS07.stub)
    code, out, err = ol_run("check", "t8.4", "--workspace", root)
    assert code == 2 and "PASSED" not in out
    assert "] ds.07 course tests 11 of 11: " in err  # its course run shows its progress
    said = "\n".join(line for line in err.splitlines() if not line.startswith("["))
    assert said.startswith("ol: needs ds.07: build it, or pass --ref-deps (11 of its 11 course "
                           "tests fail on ")
    assert "`ol check ds.07 --workspace " in said


@pytest.mark.slow
def test_ol_check_grades_the_test_chapter_on_the_reference_ds07_with_ref_deps(tmp_path):
    root = workspace(tmp_path, DS07.stub)
    code, out, _ = ol_run("check", "t8.4", "--workspace", root, "--ref-deps")
    assert code == 0, out
    assert "on the reference: 2 pass, 0 fail; on the second correct cache: 2 pass" in out
    assert "p01  no eviction                    killed by the_cache_stays_within_its_capacity" \
        in out
    assert verdict_line(out).startswith("PASSED: the course tests pass and your tests kill 2 "
                                        "of 2 mutants, p01 among them.")


@pytest.mark.slow
def test_ol_check_runs_the_test_chapter_on_the_students_own_ds07_once_it_passes(tmp_path):
    root = workspace(tmp_path, DS07.correct_trees[1][1])  # the passing example's tree
    code, out, err = ol_run("check", "t8.4", "--workspace", root)
    assert code == 0, out + err
    assert verdict_line(out).startswith("PASSED")


@pytest.mark.slow
def test_a_cache_that_forgets_what_it_holds_fails_the_test_chapters_course_test(tmp_path):
    root = workspace(tmp_path, DS07.stub)
    (root / "tl_ds" / "prefix_cache.py").write_text(
        (T84 / "reference.py").read_text(encoding="utf-8").replace(
            "        return matched\n", "        return matched if len(self) < 40 else 0\n"))
    code, out, _ = ol_run("check", "t8.4", "--workspace", root, "--ref-deps")
    assert code == 1 and "FAIL    the_cache_agrees_with_a_list_of_prefixes" in out
    assert verdict_line(out).startswith("NOT PASSED: course tests fail")
    assert verdict_line(out).endswith(f"then run `ol check t8.4 --workspace {root} --ref-deps`.")


def test_the_scan_lets_a_test_import_its_chapters_module_and_those_it_builds_on_only():
    from harness.chapter import find
    from harness.grade.scan import scan

    t84 = find("t8.4", (CHAPTERS,))
    modules = (t84.module, *(needed.module for needed in t84.needed))
    source = ("from tl_ds.prefix_cache import PrefixCache\nfrom tl_ds.radix import RadixTree\n"
              "import tl_ds\nimport tl_ds.secrets\n")
    assert [str(flag) for flag in scan(source, modules)] == [
        "line 4: imports tl_ds.secrets: a test imports tl_ds.prefix_cache or tl_ds.radix only"]
    assert [flag.line for flag in scan(source, (DS07.module,))] == [1, 4]


def test_a_bundle_of_the_test_chapter_says_why_a_submission_without_its_ds07_is_not_graded(
        tmp_path):
    results = autograder(tmp_path, {"tl_ds/prefix_cache.py": (T84 / "second.py").read_text(),
                                    "tests/test_t84_cache.py": textwrap.dedent(STUDENT_TESTS)},
                         "t8.4")
    assert results["score"] == 0 and results["tests"] == []
    said = " ".join(results["output"].split())
    assert said.startswith("Not graded: t8.4 builds on ds.07, and runs on your own "
                           "tl_ds/radix.py, which must pass ds.07's course tests first")
    assert "/autograder" not in said and str(tmp_path) not in said


@pytest.mark.slow
def test_a_bundle_of_the_test_chapter_grades_it_on_the_students_own_ds07(tmp_path):
    results = autograder(tmp_path, {
        "work/tl_ds/prefix_cache.py": (T84 / "second.py").read_text(),
        "work/tests/test_t84_cache.py": textwrap.dedent(STUDENT_TESTS),
        "work/tl_ds/radix.py": DS07.correct_trees[1][1].read_text()}, "t8.4")
    assert results["score"] == 40, results["output"]


@pytest.mark.slow
def test_the_test_chapter_runs_through_tdd_diff_and_grade_on_the_reference_ds07(tmp_path):
    root = workspace(tmp_path, DS07.stub)
    code, out, _ = ol_run("tdd", "green", "t8.4", "--workspace", root, "--ref-deps")
    assert code == 0 and f"`ol check t8.4 --workspace {root} --ref-deps`" in out
    code, out, _ = ol_run("diff", "t8.4", "--workspace", root, "--ref-deps")
    assert code == 0 and "reference tl_ds/prefix_cache.py" in out
    own = workspace(tmp_path / "own", DS07.correct_trees[1][1])
    code, out, _ = ol_run("grade", "t8.4", str(own), "--out", tmp_path / "grades")
    assert code == 0 and "1 passed" in out
