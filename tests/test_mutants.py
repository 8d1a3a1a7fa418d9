"""The planted-mutant catalog, and the course suite's kill matrix over it."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

import pytest
from support import DS07, RUNS, git_status, interrupt

import ol
from harness.chapter import ROOT
from harness.errors import OlError
from harness.grade import catalog, mutation
from harness.run.judge import Status

MODEL_TEST = "test_model_based_against_a_naive_map"


@pytest.fixture(scope="module")
def kill_matrix():
    suite = mutation.course_suite(DS07, "verdict")
    baseline = mutation.prove_wiring(RUNS, suite, DS07.reference_source(), DS07)
    limits = mutation.Limits.from_reference(baseline)
    return baseline, mutation.run_mutants(RUNS, suite, catalog.load_catalog(DS07), limits,
                                          mutation.course_ids(DS07))


def test_the_catalog_holds_the_chapters_pitfalls_one_per_patch_and_every_patch_applies():
    mutants = catalog.load_catalog(DS07)
    ids = [mutant.id for mutant in mutants]
    assert sorted(ids) == sorted(patch.stem for patch in DS07.catalog.parent.glob("*.patch"))
    chapter = {f"s{n:02d}" for n in range(1, 16)} | {f"m{n:02d}" for n in range(1, 4)}
    assert chapter <= set(ids)
    assert [mutant.id for mutant in mutants if mutant.required] == ["s11"]
    reference = DS07.reference_source()
    for mutant in mutants:
        assert mutant.source != reference
        assert mutant.patch.startswith("--- a/impl/radix.py\n+++ b/impl/radix.py\n")


def test_every_patch_also_applies_by_hand_with_git_apply(tmp_path):
    (tmp_path / "impl").mkdir()
    shutil.copy(ROOT / "impl" / "radix.py", tmp_path / "impl" / "radix.py")
    for mutant in catalog.load_catalog(DS07):
        patch = DS07.catalog.parent / f"{mutant.id}.patch"
        done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{mutant.id}: {done.stderr}"


def test_a_patch_that_no_longer_fits_the_reference_names_its_file_and_hunk(tmp_path):
    shutil.copytree(DS07.catalog.parent, tmp_path / "mutants")
    changed = DS07.reference_source().replace(
        "values[runs:], child.parent", "values[runs:],  child.parent"
    )
    changed = changed.replace(
        "child.values[:runs], child.parent", "child.values[:runs],  child.parent"
    )
    with pytest.raises(OlError, match=r"s01\.patch, hunk 1 \(@@ -\d+,\d+ \+\d+,\d+ @@\).*git diff"):
        catalog.load_catalog(
            dataclasses.replace(DS07, catalog=tmp_path / "mutants" / "catalog.toml"), changed)


def test_a_catalog_without_the_entry_of_a_patch_is_refused(tmp_path):
    shutil.copytree(DS07.catalog.parent, tmp_path / "mutants")
    path = tmp_path / "mutants" / "catalog.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.rindex("[[mutant]]")], encoding="utf-8")
    with pytest.raises(OlError, match="no entry for m03"):
        catalog.load_catalog(dataclasses.replace(DS07, catalog=path))


def test_a_catalog_entry_naming_an_unknown_course_test_is_refused(tmp_path):
    shutil.copytree(DS07.catalog.parent, tmp_path / "mutants")
    path = tmp_path / "mutants" / "catalog.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('["test_reinserting_hands_every_value_back"]', '["test_nope"]'),
                    encoding="utf-8")
    with pytest.raises(OlError, match="mutant s05: `caught_by` must list course tests"):
        catalog.load_catalog(dataclasses.replace(DS07, catalog=path))


@pytest.mark.slow
def test_the_reference_passes_every_course_test(kill_matrix):
    baseline, _ = kill_matrix
    assert baseline.all_passed
    assert sorted(record.name for record in baseline.records) == sorted(DS07.course_test_names)


def test_every_mutant_is_killed_by_each_course_test_its_catalog_names(kill_matrix):
    _, results = kill_matrix
    for result in results:
        assert result.run.status is Status.OK, (result.mutant.id, result.run.detail)
        missing = set(result.mutant.caught_by) - set(result.killers)
        assert not missing, f"{result.mutant.id} survives {sorted(missing)}"


def test_the_model_based_test_alone_kills_all_18_mutants(kill_matrix):
    _, results = kill_matrix
    assert [r.mutant.id for r in results if MODEL_TEST not in r.killers] == []


@pytest.mark.slow
def test_ol_mutants_prints_the_matrix_and_fails_when_a_caught_by_test_misses(
        monkeypatch, capsys):
    mutants = {mutant.id: mutant for mutant in catalog.load_catalog(DS07)}
    claimed = dataclasses.replace(mutants["s15"], caught_by=(
        "test_insert_needs_one_value_per_granule", "test_freed_slots_are_reused"))
    monkeypatch.setattr(catalog, "load_catalog", lambda chapter: (mutants["s11"], claimed))
    assert ol.main(["mutants", "ds.07"]) == ol.ExitCode.NOT_PASSED
    out = capsys.readouterr().out
    assert "wiring: the course tests pass on the reference (11 tests" in out
    assert any(line.startswith("s11") and " yes " in line for line in out.splitlines())
    assert any(line.startswith("s15") and " NO " in line for line in out.splitlines())
    assert "missed by freed_slots_are_reused" in out
    assert "2 of 2 mutants killed; 1 of 2 killed by every course test" in out


def test_ol_mutants_refuses_an_unknown_module(capsys):
    assert ol.main(["mutants", "ds.99"]) == ol.ExitCode.BAD_INPUT
    assert "unknown module id 'ds.99'" in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_in_the_middle_of_ol_mutants_leaves_nothing_behind(tmp_path):
    before = git_status()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code, err = interrupt(["mutants", "ds.07"], scratch, ROOT)
    assert code == ol.ExitCode.INTERRUPTED, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(scratch.iterdir()) == []
    assert git_status() == before
