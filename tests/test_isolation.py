"""Every run in a world of its own: a side can write only its own fresh scratch, nothing it
writes reaches a later run, and the trusted course side imports nothing from a place a
submission could have written.

Each hostile workspace here is kept as a regression test: it must get the verdict its
honest part earns, and an honest classmate graded beside it must get theirs.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from support import (
    CONTRACT,
    DS07,
    REFERENCE,
    RUNS,
    WEAK_TESTS,
    WRITABLE,
    grade,
    inside_run,
    killed,
    student_workspace,
)

import ol
from harness.grade import grading, mutation
from harness.run.layout import Suite

needs_bwrap = pytest.mark.sandboxed("bwrap")

def scratch_only(places: list[str], home: str) -> list[str]:
    """The places that are neither the side's home, its /tmp nor its /dev/shm."""
    return [place for place in places
            if not any(place == root or place.startswith(root + "/")
                       for root in (home, "/tmp", "/dev/shm"))]


@needs_bwrap
def test_a_test_side_can_write_only_its_own_fresh_scratch(tmp_path):
    run = inside_run(tmp_path, '''
        def test_lists_where_it_can_write():
            places = writable_places()
            print("WRITABLE", places)
            assert os.environ["HOME"] in places and "/tmp" in places
            assert [place for place in places if not (
                place.startswith(os.environ["HOME"]) or place.startswith("/tmp")
                or place.startswith("/dev/shm"))] == []
        ''', ours=False, prelude=WRITABLE)
    assert run.all_passed, run.output


@needs_bwrap
def test_a_tree_side_can_write_only_its_own_fresh_scratch(tmp_path):
    tree = WRITABLE + textwrap.dedent('''
        ROOT = 0

        class RadixTree:
            def __init__(self, granule):
                self.granule = granule

            def values(self, id):
                return [os.environ["HOME"], *writable_places()]
        ''')
    run = inside_run(tmp_path, '''
        from tl_ds.radix import RadixTree

        def test_the_tree_lists_where_it_can_write():
            home, *places = RadixTree(1).values(0)
            print("WRITABLE", home, places)
            assert home in places
            assert [place for place in places if not (
                place.startswith(home) or place.startswith("/tmp")
                or place.startswith("/dev/shm"))] == []
        ''', tree=tree, ours=False)
    assert run.all_passed, run.output


@needs_bwrap
def test_the_scratch_is_sized_and_gone_for_the_next_run(tmp_path):
    body = '''
        import os

        def test_fills_its_scratch():
            assert not os.path.exists("/tmp/left-by-an-earlier-run")
            assert not os.path.exists(os.path.join(os.environ["HOME"], "left"))
            open(os.path.join(os.environ["HOME"], "left"), "w").write("x")
            with open("/tmp/left-by-an-earlier-run", "wb") as out:
                try:
                    for _ in range(1024):
                        out.write(b"\\0" * (1 << 20))  # a gigabyte, were there room
                except OSError as error:
                    assert error.errno == 28  # no space left on the device
                else:
                    raise AssertionError("wrote a gigabyte into its scratch")
        '''
    for _ in range(2):
        run = inside_run(tmp_path, body, ours=False)
        assert run.all_passed, run.output


@pytest.mark.slow
@needs_bwrap
def test_the_course_side_imports_nothing_from_a_place_a_submission_could_write(tmp_path):
    """The course suite, and then a test of ours in the same process that checks where every
    loaded module came from: none from a folder or file that process could write."""
    check = tmp_path / "test_zz_where_modules_come_from.py"
    check.write_text(textwrap.dedent('''
        import os, sys

        def test_no_module_comes_from_a_writable_place():
            loaded = [module.__file__ for module in list(sys.modules.values())
                      if getattr(module, "__file__", None)]
            assert len(loaded) > 100  # pytest, Hypothesis and the course's own modules
            writable = [path for path in loaded
                        if os.access(path, os.W_OK) or os.access(os.path.dirname(path), os.W_OK)]
            assert writable == []
        '''), encoding="utf-8")
    suite = mutation.course_suite(DS07, "course", proxy=True)
    suite = Suite(contract=CONTRACT, files=(*suite.files, check), support=suite.support,
                  env=suite.env, proxy=suite.proxy, ours=True)
    run = RUNS.run(suite, REFERENCE, timeout=600)
    assert run.all_passed, run.output
    assert any("where_modules_come_from" in record.nodeid for record in run.records)


# --- hostile workspaces --------------------------------------------------------------------

# A tree whose every method raises, which at import plants, in every folder it can write,
# modules under the names of standard ones that pytest imports later: each turns every
# report of the process that imports it into a pass, then stands in for the real module.
PLANT = textwrap.dedent('''
    import importlib, os, sys

    def _forge():
        from _pytest import reports
        made = reports.TestReport.from_item_and_call.__func__

        def passed(cls, item, call):
            report = made(cls, item, call)
            report.outcome, report.longrepr = "passed", None
            return report
        reports.TestReport.from_item_and_call = classmethod(passed)

    try:
        _forge()
    except Exception:
        pass
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.modules.pop(__name__, None)
    _path = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]
    try:
        _real = importlib.import_module(__name__)
    finally:
        sys.path[:] = _path
    sys.modules[__name__] = _real
    globals().update(vars(_real))
    ''')
PLANTER = WRITABLE + textwrap.dedent('''
    import sys

    PLANT = %r
    NAMES = sorted(name for name in sys.stdlib_module_names
                   if not name.startswith("_") and name not in sys.modules)
    for place in ["/ol-lib", "/ol-payload", "/", "/etc", "/dev", "/ol-hold", *writable_places()]:
        for name in NAMES:
            try:
                with open(os.path.join(place, name + ".py"), "w") as out:
                    out.write(PLANT)
            except OSError:
                pass

    NodeId = int
    ROOT = 0

    class RadixTree:
        def __init__(self, granule):
            raise NotImplementedError("a tree that only plants")
    ''') % PLANT


@pytest.mark.slow
@needs_bwrap
def test_a_tree_that_plants_modules_wherever_it_can_write_still_fails_every_course_test():
    for _ in range(2):  # the second run, in the same worker, imports what the first planted
        run = grading.course_run(RUNS, PLANTER, DS07)
        # every course test fails: on the tree's NotImplementedError, or, when planting takes
        # the tree past its first call's limit on a busy machine, on the tree stopping
        assert not run.all_passed, run.output
        assert run.records or "TreeStopped" in run.detail, run.detail
        assert not any(record.outcome == "passed" for record in run.records)
    again = grading.course_run(RUNS, REFERENCE, DS07)
    assert again.all_passed, again.output


# A weak suite that counts its runs in every place it can write, and fails (so kills) on
# every run that finds two before it: were counting possible, it would be invalid or kill
# every mutant.
COUNTER = WEAK_TESTS + WRITABLE + textwrap.dedent('''

    def test_counts_its_runs():
        seen = 0
        for place in writable_places() + ["/", "/dev", "/ol-hold", "/ol-lib", "/etc"]:
            try:
                seen = max(seen, int(open(os.path.join(place, ".ol-count")).read()))
            except (OSError, ValueError):
                pass
        for place in writable_places():
            try:
                open(os.path.join(place, ".ol-count"), "w").write(str(seen + 1))
            except OSError:
                pass
        assert seen < 2
    ''')


@pytest.mark.slow
@needs_bwrap
def test_a_suite_that_counts_its_runs_in_every_writable_place_gets_its_honest_grade(
        tmp_path, honest):
    result = grade(tmp_path, COUNTER)
    assert not result.invalid and not result.problem
    assert killed(result) == killed(honest)
    assert not result.rate_met


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("order", ["planter first", "planter last"])
def test_a_planter_in_ol_grade_changes_no_classmates_verdict(tmp_path, order):
    planter = student_workspace(tmp_path / "planter", COUNTER, tree=PLANTER).root
    honest_one = DS07.examples / "passing"
    subs = [planter, honest_one] if order == "planter first" else [honest_one, planter]
    out = tmp_path / "grades"
    assert ol.main(["grade", "ds.07", *map(str, subs), "--jobs", "2", "--out", str(out)]) == 0
    rows = {row["submission"]: row
            for row in json.loads((out / "summary.json").read_text())["submissions"]}
    assert rows["passing"]["verdict"] == "passed", rows["passing"]
    assert rows["passing"]["course_tests_passed"] == 11
    assert rows["ws"]["verdict"] == "not passed"
    assert rows["ws"]["course_tests_passed"] == 0, rows["ws"]
