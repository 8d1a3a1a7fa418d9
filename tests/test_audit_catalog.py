"""The audit catalog (mutants/audit/): plausible bugs beyond the chapter's 18, which measure
the course suite and are never shown to students."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from itertools import takewhile

import pytest
from support import DS07, RUNS

import ol
from harness.chapter import ROOT
from harness.errors import OlError
from harness.grade import audit, catalog, mutation
from harness.report import bundle
from harness.run import judge
from harness.run.engine import run_together
from harness.run.judge import Status

GROUPS = {"stamping", "relisting", "splits", "eviction", "ids", "errors", "granules", "insert",
          "depth", "wide", "tokens", "views"}


def changed_lines(patch: str) -> list[str]:
    return [line for line in patch.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_the_audit_catalog_holds_at_least_40_bugs_each_with_its_rule():
    mutants = catalog.load_audit_catalog(DS07)
    assert len(mutants) >= 40
    assert all(re.fullmatch(r"a\d\d", mutant.id) for mutant in mutants)
    assert {mutant.group for mutant in mutants} == GROUPS
    assert all(mutant.rule and mutant.title and mutant.symptom for mutant in mutants)
    assert not any(mutant.required for mutant in mutants)


def test_no_audit_mutant_repeats_one_of_the_chapters():
    chapter = {tuple(changed_lines(mutant.patch)) for mutant in catalog.load_catalog(DS07)}
    sources = {mutant.source for mutant in catalog.load_catalog(DS07)}
    for mutant in catalog.load_audit_catalog(DS07):
        assert tuple(changed_lines(mutant.patch)) not in chapter, mutant.id
        assert mutant.source not in sources and mutant.source != DS07.reference_source(), mutant.id


def test_every_audit_patch_applies_by_hand_with_git_apply(tmp_path):
    (tmp_path / "impl").mkdir()
    shutil.copy(ROOT / "impl" / "radix.py", tmp_path / "impl" / "radix.py")
    for mutant in catalog.load_audit_catalog(DS07):
        patch = DS07.audit_catalog.parent / f"{mutant.id}.patch"
        assert mutant.patch.startswith("--- a/impl/radix.py\n+++ b/impl/radix.py\n")
        done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{mutant.id}: {done.stderr}"


def test_an_audit_catalog_with_a_bad_id_or_too_few_mutants_is_refused(tmp_path):
    shutil.copytree(DS07.audit_catalog.parent, tmp_path / "audit")
    path = tmp_path / "audit" / "catalog.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('id = "a01"', 'id = "s01"'), encoding="utf-8")
    with pytest.raises(OlError, match=r"matching a\\d\\d.*s01 do not match"):
        catalog.load_audit_catalog(dataclasses.replace(DS07, audit_catalog=path))
    path.write_text(text[:text.index("[[mutant]]\nid = \"a02\"")], encoding="utf-8")
    with pytest.raises(OlError, match="expected at least 40 mutants"):
        catalog.load_audit_catalog(dataclasses.replace(DS07, audit_catalog=path))


def test_the_chapter_catalog_still_needs_its_18_and_a_hint_each(tmp_path):
    shutil.copytree(DS07.catalog.parent, tmp_path / "mutants",
                    ignore=shutil.ignore_patterns("audit"))
    path = tmp_path / "mutants" / "catalog.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("hint = ", "note = ", 1),
                    encoding="utf-8")
    with pytest.raises(OlError, match="mutant s01: `hint` must be a non-empty string"):
        catalog.load_catalog(dataclasses.replace(DS07, catalog=path))


def test_the_audit_catalog_is_not_shipped_to_graders_of_students():
    shipped = [path.as_posix() for path in bundle.shipped_files(DS07)]
    assert "mutants/catalog.toml" in shipped and "mutants/s11.patch" in shipped
    assert not [path for path in shipped if path.startswith("mutants/audit")]


def test_an_audit_mutant_runs_without_the_self_check():
    mutant = catalog.load_audit_catalog(DS07)[0]
    assert "def _check" in mutant.source
    assert audit.public_only(mutant.source, DS07).endswith(
        "del RadixTree._check  # ol audit: only the public interface judges this tree\n")
    assert mutation.course_ids(DS07)[-1].endswith(DS07.model_test)


@pytest.fixture(scope="module")
def audit_matrix():
    return audit.run_catalog(RUNS, DS07, catalog.load_audit_catalog(DS07))


@pytest.mark.slow
def test_the_course_suite_kills_every_audit_mutant(audit_matrix):
    """At the verdict profile (the course profile's steps, without shrinking)."""
    assert audit_matrix.baseline.all_passed
    assert [result.mutant.id for result in audit_matrix.survivors] == []
    for result in audit_matrix.results:
        assert result.run.status is Status.OK, (result.mutant.id, result.run.detail)
        missing = set(result.mutant.caught_by) - set(result.killers)
        assert not missing, f"{result.mutant.id} survives {sorted(missing)}"


def test_the_model_test_alone_kills_every_audit_mutant_its_entry_says_it_does(audit_matrix):
    """All but the corners the model cannot reach at its sizes (a path 1,100 deep, or 1,100
    listed leaves: the naive model is quadratic by design), which named course tests hold
    instead."""
    missed = [result.mutant.id for result in audit_matrix.results
              if DS07.model_test not in result.killers]
    assert missed == [result.mutant.id for result in audit_matrix.results
                      if DS07.model_test not in result.mutant.caught_by]
    assert len(missed) <= 10


def test_ol_audit_prints_per_mutant_the_course_tests_that_kill_it(audit_matrix, monkeypatch,
                                                                   capsys):
    monkeypatch.setattr(audit, "run_catalog", lambda *args, **kwargs: audit_matrix)
    assert ol.main(["audit", "ds.07", "--catalog-only"]) == ol.ExitCode.PASSED
    out = capsys.readouterr().out
    count = len(audit_matrix.results)
    model = sum(DS07.model_test in result.killers for result in audit_matrix.results)
    assert f"The audit catalog (mutants/audit/): {count} plausible bugs" in out
    assert f"{count} of {count} audit mutants killed by the course suite; the model test " \
           f"alone kills {model}." in out
    lines = out.splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith("a29 "))
    row = " ".join([lines[start], *takewhile(lambda line: line.startswith(" "),
                                             lines[start + 1:])])  # a row wrapped to fit
    assert "eviction" in row and "Evicting from the newest end" in row
    assert "model_based_against_a_naive_map" in row


def killed_by_every_course_test(mutant: catalog.Mutant) -> mutation.MutantResult:
    records = tuple(judge.TestRecord(name, "failed", "AssertionError", "E   assert 1 == 2")
                    for name in mutation.course_ids(DS07))
    return mutation.MutantResult(mutant, judge.RunResult(Status.OK, records))


@pytest.mark.parametrize("width", [60, 80, 120])
def test_ol_audit_wraps_its_table_at_the_terminal_width_under_the_killers_column(
        monkeypatch, capsys, width):
    mutants = catalog.load_audit_catalog(DS07)
    run = audit.CatalogRun(DS07, judge.RunResult(Status.OK, ()),
                           tuple(map(killed_by_every_course_test, mutants)))
    monkeypatch.setattr(audit, "run_catalog", lambda *args, **kwargs: run)
    monkeypatch.setenv("COLUMNS", str(width))
    assert ol.main(["audit", "ds.07", "--catalog-only"]) == ol.ExitCode.PASSED
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= width, max(lines, key=len)
    first = next(number for number, line in enumerate(lines) if line.startswith(mutants[0].id))
    assert lines[first + 1].startswith(" ") and lines[first + 1].strip()  # continued below
    assert sum(line.startswith(mutants[0].id + " ") for line in lines) == 1


@pytest.mark.slow
def test_ol_audit_seeds_reports_the_share_of_seeds_that_kill_each_mutant(monkeypatch, capsys):
    """A correct tree among the mutants survives every seed: a weak spot, exit 1. A mutant
    only a named test kills (a65, among a thousand leaves) is killed under every seed."""
    audit_mutants = {mutant.id: mutant for mutant in catalog.load_audit_catalog(DS07)}
    correct = catalog.Mutant("a99", "a correct tree", "none", (), False, "", "",
                             DS07.correct_trees[1][1].read_text())
    monkeypatch.setattr(catalog, "load_catalog", lambda chapter: ())
    monkeypatch.setattr(catalog, "load_audit_catalog",
                        lambda chapter: (audit_mutants["a45"], audit_mutants["a65"], correct))
    assert ol.main(["audit", "ds.07", "--seeds", "1"]) == ol.ExitCode.NOT_PASSED
    out = capsys.readouterr().out
    assert "The model test under 1 seed, the named tests once, against 3 mutants" in out
    lines = out.splitlines()
    assert any(line.startswith("a45 ") and " 1/1 " in line for line in lines)
    assert any(line.startswith("a65 ") and " 1/1  (by" in line for line in lines)  # wraps
    assert "a named test)" in out
    assert any(line.startswith("a99 ") and " 0/1  1" in line for line in lines)
    assert "2 of 3 mutants killed by 1 of 1 seeds." in out
    assert "Weak spots (a seed lets them through): a99 0/1" in out


def test_ol_audit_refuses_fewer_than_one_seed(capsys):
    assert ol.main(["audit", "ds.07", "--seeds", "0"]) == ol.ExitCode.BAD_INPUT
    assert "--seeds must be at least 1" in capsys.readouterr().err


# trees right by the chapter's contract that make a choice it leaves open unlike the
# reference: the course must pass each (none of them is a tree students are graded on)
OPEN_CHOICES = {
    "takes a bool id as the int it equals": (
        "if type(id) is int and 0 <= id < len(self._nodes):",
        "if isinstance(id, int) and 0 <= id < len(self._nodes):"),
}


@pytest.mark.slow
def test_the_course_passes_every_tree_that_makes_an_open_choice_otherwise():
    reference = audit.public_only(DS07.reference_source(), DS07)
    trees = {"the second correct tree": DS07.correct_trees[1][1].read_text(encoding="utf-8"),
             "the third correct tree": DS07.correct_trees[2][1].read_text(encoding="utf-8")}
    for choice, (old, new) in OPEN_CHOICES.items():
        assert reference.count(old) == 1, choice
        trees[choice] = reference.replace(old, new)

    def job(source: str):
        return lambda cancel: RUNS.run(mutation.course_suite(DS07, "verdict"), source,
                                       timeout=600, cancel=cancel)

    runs = run_together([job(source) for source in trees.values()])
    for choice, run in zip(trees, runs, strict=True):
        assert run.all_passed, (choice, run.output)


def test_the_readme_counts_the_audit_catalog_as_it_is():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"`mutants/audit/`: {len(catalog.load_audit_catalog(DS07))} plausible bugs" in readme
