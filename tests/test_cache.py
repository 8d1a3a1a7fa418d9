"""Results kept by content: a re-check runs only what changed, and says what it reused.

The project's other tests run with the cache off (conftest.py); these turn it on, each in a
folder of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import textwrap
from pathlib import Path

import pytest
from support import CONTRACT, DS07, RUNS, ol_run

import ol
from harness.run.cache import RunCache
from harness.run.engine import Engine
from harness.run.layout import Suite

REUSED = "reused "


def without_reuse_line(out: str) -> str:
    return "\n".join(line for line in out.splitlines() if not line.startswith(REUSED)).rstrip()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("OL_CACHE", str(folder))
    return folder


@pytest.fixture
def runs(monkeypatch) -> list[str]:
    """What actually ran, by kind: "course", "students" (the student's tests), "probe"."""
    ran: list[str] = []
    run_now, probe_now = Engine.run_now, Engine.probe_now

    def counting_run(self, suite, implementation, **kwargs):
        ran.append("course" if any(path.name == "ds07_machine.py" for path in suite.files)
                   else "students")
        return run_now(self, suite, implementation, **kwargs)

    def counting_probe(self, implementation, *more):
        ran.append("probe")
        return probe_now(self, implementation, *more)

    monkeypatch.setattr(Engine, "run_now", counting_run)
    monkeypatch.setattr(Engine, "probe_now", counting_probe)
    return ran


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A workspace with the passing tree and a few of its tests: quick to check."""
    root = tmp_path_factory.mktemp("small") / "ws"
    shutil.copytree(DS07.examples / "passing", root, symlinks=False)
    (root / "tests" / "test_ds07_radix.py").write_text(textwrap.dedent("""
        import pytest
        from tl_ds.radix import RadixTree

        def test_split_by_hand():
            tree = RadixTree(1)
            tree.insert([1, 2, 3], ["a", "b", "c"])
            tree.insert([1, 2, 4], ["a", "b", "d"])
            assert [list(tree.key(id)) for id in tree.match_prefix([1, 2, 4])[1]] == [[1, 2], [4]]

        def test_insert_rejects_a_wrong_number_of_values():
            with pytest.raises(ValueError):
                RadixTree(2).insert([1, 2, 3, 4], ["a"])
        """))
    return root


def check(workspace: Path, *more: str) -> tuple[int, str]:
    code, out, err = ol_run("check", "ds.07", "--workspace", workspace, *more)
    assert "Traceback" not in err
    return code, out


@pytest.mark.slow
def test_a_recheck_of_an_unchanged_workspace_runs_nothing_and_says_so(cache, runs, small):
    code, cold = check(small)
    assert "course" in runs and REUSED not in cold
    ran = len(runs)
    runs.clear()
    again, warm = check(small)
    assert runs == []
    assert again == code and without_reuse_line(warm) == cold.rstrip()
    assert [line for line in warm.splitlines() if line.startswith(REUSED)] == [
        f"reused {ran} of {ran} results kept from earlier runs ({cache.resolve()}); --fresh "
        "runs everything again"]


def rerun_after(small: Path, tmp_path: Path, runs: list[str], path: str, more: str) -> list:
    """What a re-check runs after ``more`` is appended to the workspace's file ``path``."""
    changed = tmp_path / "ws"
    shutil.copytree(small, changed)
    check(changed)
    runs.clear()
    touched = changed / path
    touched.write_text(touched.read_text() + more)
    check(changed)
    return sorted(runs)


@pytest.mark.slow
def test_a_change_to_the_tree_alone_reruns_only_the_course_and_the_students_own_run(
        cache, runs, small, tmp_path):
    ran = rerun_after(small, tmp_path, runs, "tl_ds/radix.py",
                      "\n# a comment: another tree, the same behaviour\n")
    assert ran == ["course", "probe", "students"]  # its own tests on its own tree


@pytest.mark.slow
def test_a_change_to_the_tests_alone_reruns_only_their_runs(cache, runs, small, tmp_path):
    ran = rerun_after(small, tmp_path, runs, "tests/test_ds07_radix.py",
                      "\n\ndef test_extra():\n    assert True\n")
    assert "course" not in ran and "probe" not in ran and "students" in ran


@pytest.mark.slow
def test_fresh_runs_everything_and_keeps_the_output(cache, runs, small):
    _, first = check(small)
    runs.clear()
    _, fresh = check(small, "--fresh")
    assert "course" in runs and "probe" in runs
    assert fresh == first


def test_a_cache_inside_a_submission_is_refused_before_anything_runs(small, runs, monkeypatch):
    code, _, err = ol_run("grade", "ds.07", str(small), "--cache", str(small / "kept"),
                          "--out", str(small.parent / "grades"))
    assert code == ol.ExitCode.BAD_INPUT and "overlap" in err
    monkeypatch.setenv("OL_CACHE", str(small / "tests" / "kept"))
    code, _, err = ol_run("check", "ds.07", "--workspace", small)
    assert code == ol.ExitCode.BAD_INPUT and "overlap" in err
    assert runs == [] and not (small / "kept").exists() and not (small / "tests" / "kept").exists()


# --- entries that cannot be trusted are ignored and replaced -----------------------------

def tiny_suite(tmp_path: Path) -> Suite:
    test = tmp_path / "test_tiny.py"
    test.write_text("from tl_ds.radix import RadixTree\n\n"
                    "def test_granule():\n    assert RadixTree(3).granule == 3\n")
    return Suite(contract=CONTRACT, files=(test,))


TREE = "class RadixTree:\n    def __init__(self, granule):\n        self.granule = granule\n"


def kept_run(tmp_path: Path) -> tuple[Engine, Suite, Path]:
    engine = Engine(cache=RunCache(tmp_path / "cache"))
    engine.runner = RUNS.current()  # the session's worker: only the cache is new
    suite = tiny_suite(tmp_path)
    first = engine.run(suite, TREE, timeout=60)
    assert first.all_passed and engine.cache.misses == 1
    [entry] = (tmp_path / "cache").rglob("*.json")
    return engine, suite, entry


@pytest.mark.parametrize("damage", ["garbage", "another key", "a forged body",
                                    "a forged body signed without the key"])
def test_a_damaged_entry_is_ignored_and_replaced(tmp_path, damage):
    engine, suite, entry = kept_run(tmp_path)
    kept = json.loads(entry.read_text())
    if damage == "garbage":
        entry.write_text("{not json")
    elif damage == "another key":
        entry.write_text(json.dumps({**kept, "key": "0" * 64}))
    else:  # a result that says a passing run failed, with the honest MAC or a made-up one
        body = {**kept["body"], "records": [{**kept["body"]["records"][0],
                                             "outcome": "failed"}]}
        forged = {**kept, "body": body}
        if damage.endswith("without the key"):
            guess = hmac.new(b"\0" * 32, kept["key"].encode() + b"\0"
                             + json.dumps(body, sort_keys=True).encode(), hashlib.sha256)
            forged["mac"] = guess.hexdigest()
        entry.write_text(json.dumps(forged))
    again = engine.run(suite, TREE, timeout=60)
    assert again.all_passed and engine.cache.hits == 0 and engine.cache.misses == 2
    assert engine.cache.unverified == 1
    replaced = json.loads(entry.read_text())
    assert replaced["key"] == kept["key"]
    assert replaced["body"]["records"][0]["outcome"] == "passed"
    assert engine.run(suite, TREE, timeout=60).all_passed and engine.cache.hits == 1


def test_a_run_decided_by_a_timeout_is_kept_only_when_it_timed_out_twice(tmp_path):
    engine = Engine(cache=RunCache(tmp_path / "cache"))
    engine.runner = RUNS.current()
    test = tmp_path / "test_slow.py"
    test.write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n")
    suite = Suite(contract=CONTRACT, files=(test,))
    first = engine.run(suite, TREE, timeout=60, test_limit=1.0)
    assert first.decided_by_timeout and not list((tmp_path / "cache").rglob("*.json"))
    engine.run(suite, TREE, timeout=60, test_limit=1.0, again=True)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


def test_a_cache_key_that_others_can_read_makes_the_cache_unused_and_says_why(tmp_path):
    _, suite, _ = kept_run(tmp_path)
    key = tmp_path / "cache" / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o644)
    fresh = Engine(cache=RunCache(tmp_path / "cache"))
    fresh.runner = RUNS.current()
    assert fresh.run(suite, TREE, timeout=60).all_passed
    assert fresh.cache.hits == 0 and "only you can read" in fresh.cache.problem
