"""`ol audit` on a purpose-made module: mutmut's counts, survivors explained or shown, coverage.

The real audit of impl/radix.py takes minutes; these run the same code on a module of two
small functions in seconds.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support import CONTRACT, DS07, RUNS, git_status

from harness.errors import OlError
from harness.grade import audit
from harness.report import audit as audit_report
from harness.run import mutmut
from harness.run.layout import Suite
from ol import main

DATA = Path(__file__).parent / "data" / "audit"


def run(tests: str, equivalents: Path = DATA / "equivalent.toml") -> tuple[audit.Audit, str]:
    target = audit.Target((DATA / "tiny_radix.py").read_text(encoding="utf-8"),
                          Suite(contract=CONTRACT, files=(DATA / tests,)), equivalents,
                          "tiny_radix.py", DS07)
    lines: list[str] = []
    out = io.StringIO()
    result = audit.audit(RUNS, target, 2, lines.append, audit_report.tallies(out))
    audit_report.report(result, target, out)
    return result, "\n".join(lines) + out.getvalue()


@pytest.mark.slow
def test_a_whole_suite_ends_with_every_mutant_caught_or_explained(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = git_status()
    result, said = run("test_tiny_whole.py")
    assert result.complete
    assert len(result.having("killed")) == 3 and len(result.having("survived")) == 2
    assert len(result.explained) == 2 and not result.stale and not result.unexplained
    assert "lines 100% (8 of 8), branches 100% (4 of 4)" in said
    assert "(2 listed as equivalent, 0 in an instrument, 0 unexplained)" in said
    assert "mutants 5 of 5 judged, 2 survived so far" in said
    assert "AUDIT COMPLETE" in said
    assert list(tmp_path.iterdir()) == [] and git_status() == before


def test_a_partial_suite_shows_each_unexplained_mutant_and_the_lines_it_never_runs():
    result, said = run("test_tiny_low.py")
    assert not result.complete
    assert [mutant.status for mutant in result.unexplained] == ["no tests"] * 3
    assert "-    return high - low + 1\n    +    return high + low + 1" in said
    assert "lines never run: 9, 15" in said and "branches never taken: 8->9" in said
    assert "AUDIT INCOMPLETE: the suite leaves lines or branches unrun; 3 mutants unexplained" \
        in said


def test_an_entry_that_matches_no_survivor_is_reported_stale(tmp_path):
    listed = tmp_path / "equivalent.toml"
    listed.write_text((DATA / "equivalent.toml").read_text() + '''
[[mutant]]
function = "width"
was = "return high - low + 1"
now = "return high - low + 2"
reason = "claimed equivalent, but a test kills it"
''')
    result, said = run("test_tiny_whole.py", listed)
    assert not result.complete and len(result.stale) == 1
    words = " ".join(said.split())  # the audit wraps its lines at the terminal's width
    assert "STALE entry of equivalent.toml: `return high - low + 1` -> `return high - low + 2` " \
        "in width matches no surviving mutant" in words


def test_an_instrument_entry_explains_every_survivor_of_its_function(tmp_path):
    listed = tmp_path / "equivalent.toml"
    listed.write_text('[[instrument]]\nfunction = "clamp"\nreason = "only checks"\n')
    result, said = run("test_tiny_whole.py", listed)
    assert result.complete
    assert "(0 listed as equivalent, 2 in an instrument, 0 unexplained)" in said
    assert ("clamp (an instrument: it only checks the tree): lines 100% (6 of 6), "
            "branches 100% (4 of 4)") in said


@pytest.mark.parametrize("text", ["[[mutant]]\nfunction = 'clamp'\n", "not toml [",
                                  "[[other]]\nfunction = 'x'\nreason = 'y'\n"])
def test_a_malformed_equivalents_file_is_refused_with_what_to_fix(tmp_path, text):
    listed = tmp_path / "equivalent.toml"
    listed.write_text(text)
    with pytest.raises(OlError, match=r"equivalent\.toml"):
        audit.load_equivalents(listed, "ds.07")


def test_ol_audit_refuses_an_unknown_module_and_a_bad_jobs_count(capsys):
    assert main(["audit", "ds.08"]) == 2
    assert main(["audit", "ds.07", "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_the_self_check_stores_nothing_into_the_tree():
    """Why mutants/equivalent.toml may call RadixTree._check an instrument."""
    import ast

    tree = ast.parse(DS07.reference.read_text(encoding="utf-8"))
    check = next(node for cls in tree.body if isinstance(cls, ast.ClassDef)
                 for node in cls.body if getattr(node, "name", "") == "_check")
    local = {target.id for node in ast.walk(check) if isinstance(node, ast.Assign | ast.For)
             for target in ast.walk(node.targets[0] if isinstance(node, ast.Assign)
                                    else node.target) if isinstance(target, ast.Name)}
    for node in ast.walk(check):
        assert not isinstance(node, ast.AugAssign | ast.Delete | ast.AnnAssign)
        if isinstance(node, ast.Attribute | ast.Subscript):
            assert not isinstance(node.ctx, ast.Store), ast.unparse(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"append", "add", "pop", "remove", "clear", "update"}:
            assert isinstance(node.func.value, ast.Name) and node.func.value.id in local, \
                ast.unparse(node)


def test_a_survivor_no_entry_lists_is_shown_with_its_diff(tmp_path):
    listed = tmp_path / "equivalent.toml"
    listed.write_text("")
    result, said = run("test_tiny_whole.py", listed)
    assert not result.complete and len(result.unexplained) == 2
    assert "(0 listed as equivalent, 0 in an instrument, 2 unexplained)" in said
    assert "-    if value < low:\n    +    if value <= low:" in said


def test_mutmut_progress_is_read_from_its_data_and_a_half_written_file_is_skipped(tmp_path):
    meta = tmp_path / "mutants" / "tl_ds" / "radix.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text('{"exit_code_by_key": {"a__mutmut_1": 1, "a__mutmut_2": 0, '
                    '"a__mutmut_3": null}}')
    assert mutmut.tally(tmp_path) == mutmut.Tally(done=2, total=3, survived=1)
    meta.write_text('{"exit_code_by_key": {"a__mutmut_1": 1, "a__mu')
    assert mutmut.tally(tmp_path) is None
