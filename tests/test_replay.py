"""A failing model test prints a standalone test of the tree's API: pasted into a test file,
it fails on the tree that failed, for the same reason, and passes on every correct tree."""

from __future__ import annotations

import threading

import pytest
from support import CONTRACT, DS07, RUNS

from harness.grade import audit, catalog, mutation
from harness.run.engine import run_together
from harness.run.judge import Status
from harness.run.layout import Suite

# a bug of each kind the machine reports: an evict that frees the wrong values, a lock
# count, the LRU order after a rejoin, a dead id, a count of tokens, a hand-back
REPLAYED = ("s06", "s13", "a29", "a39", "a53", "a56")
HEAD = "def test_replay_of_the_model_test():"
pytestmark = pytest.mark.slow  # a course run per mutant replayed


def replay_text(record) -> str:
    """The pasteable test in a failure's text: its ``E`` lines from the test's head on."""
    said = [line[4:] if line.startswith("E   ") else "" for line in record.text.splitlines()
            if line.startswith("E")]
    return "\n".join(said[said.index(HEAD):]).rstrip() + "\n"


def replay_on(folder, text: str, source: str):
    test = folder / "test_pasted.py"
    test.write_text(text, encoding="utf-8")
    return RUNS.run(Suite(contract=CONTRACT, files=(test,)), source, timeout=120)


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    """Each mutant's failure under the course profile, its replay, and the replay's runs on
    the mutant and on each correct tree."""
    mutants = {mutant.id: mutant for mutant in
               (*catalog.load_catalog(DS07), *catalog.load_audit_catalog(DS07))}

    def job(id: str):
        def run(cancel: threading.Event):
            source = audit.public_only(mutants[id].source, DS07)
            course = RUNS.run(mutation.course_suite(DS07, "course"), source, timeout=600,
                              cancel=cancel)
            record = next(record for record in course.records
                          if record.name == DS07.model_test)
            text = replay_text(record)
            folder = tmp_path_factory.mktemp(id)
            return id, record, text, [replay_on(folder, text, tree) for tree in (
                source, *(path.read_text(encoding="utf-8") for _, path in DS07.correct_trees))]
        return run

    return {id: rest for id, *rest in run_together([job(id) for id in REPLAYED])}


@pytest.mark.parametrize("id", REPLAYED)
def test_a_pasted_replay_fails_on_the_mutant_and_passes_on_every_correct_tree(replays, id):
    record, text, (mutant, *correct) = replays[id]
    assert record.broke and "the model test fails at granule" in record.text
    assert text.count("tree.") >= 2 and "state." not in text and "RadixMachine" not in text
    assert mutant.status is Status.OK and mutant.failures, (text, mutant.output)
    for (where, _), run in zip(DS07.correct_trees, correct, strict=True):
        assert run.all_passed, (where, text, run.output)


def test_the_replay_fails_for_the_reason_the_model_test_gave(replays):
    """The first assertion that differs is the model's own words: the same message."""
    for id in ("s06", "a29", "a53"):
        record, text, (mutant, *_) = replays[id]
        reason = record.text.split("the model test fails at granule ", 1)[1].split("\n")[0]
        reason = reason.split(": ", 1)[1]
        assert reason in mutant.failures[0].text or reason in text, (id, reason)
        assert mutant.failures[0].exception == "AssertionError", (id, mutant.failures[0])
