"""The layout's one rule: data flows one way, from running code to deciding to saying.

``harness/run/`` (running untrusted code) imports nothing from ``harness/grade/``
(deciding) or ``harness/report/`` (saying); ``grade/`` imports nothing from ``report/``;
only ol.py imports ``harness/commands/``, the handlers that both grade and say; and
nothing imports ``harness/run/payload/``, whose files are copied into runs and started
there. And the engine does not know its chapter: no chapter fact is written in it.
"""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path

from support import DS07

from harness.chapter import ROOT, Chapter, load, manifests
from harness.grade import syntax
from harness.grade.mutation import placebo as placebo_source
from harness.grade.scan import scan

# (the package whose modules are checked, the packages they must not import)
RULES = (
    ("harness.run", ("harness.grade", "harness.report", "harness.commands")),
    ("harness.grade", ("harness.report", "harness.commands")),
    ("harness.report", ("harness.commands",)),
    ("harness.chapter", ("harness.grade", "harness.report", "harness.commands")),
    ("harness.errors", ("harness",)),  # the exceptions stand below everything
    ("", ("harness.run.payload",)),  # every module: the payload is copied, never imported
)


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, name: str) -> set[str]:
    """The modules ``path`` imports, absolute, with every name of a ``from`` import."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".")[:len(name.split(".")) - node.level]
                base = ".".join([*package, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def violations(root: Path) -> list[str]:
    """Every import under ``root`` (harness/, ol.py, bench/) that breaks a rule."""
    files = [*sorted((root / "harness").rglob("*.py")), root / "ol.py",
             *sorted((root / "bench").glob("*.py"))]
    broken = []
    for path in files:
        if not path.exists():
            continue
        name = module_name(path, root)
        if name.startswith("harness.run.payload"):
            continue  # payload files run inside the sandbox, where no harness exists
        for target in sorted(imported(path, name)):
            for package, banned in RULES:
                if package and not (name == package or name.startswith(package + ".")):
                    continue
                for ban in banned:
                    if target == ban or target.startswith(ban + "."):
                        broken.append(f"{path.relative_to(root)} imports {target}")
    return sorted(set(broken))


def test_run_grade_and_report_import_only_downstream_and_nothing_imports_the_payload():
    assert violations(ROOT) == []


def test_an_import_against_the_flow_is_reported_with_its_file(tmp_path):
    for folder in ("harness/run/payload", "harness/grade", "harness/report", "bench"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "ol.py").write_text("from harness.run.payload import tree_wire\n")
    (tmp_path / "harness" / "run" / "engine.py").write_text("from harness.grade import mutation\n")
    (tmp_path / "harness" / "grade" / "grading.py").write_text(
        "from ..report.render import table\n")
    (tmp_path / "harness" / "report" / "render.py").write_text("from harness.grade import x\n")
    assert violations(tmp_path) == [
        "harness/grade/grading.py imports harness.report.render",
        "harness/grade/grading.py imports harness.report.render.table",
        "harness/run/engine.py imports harness.grade",
        "harness/run/engine.py imports harness.grade.mutation",
        "ol.py imports harness.run.payload",
        "ol.py imports harness.run.payload.tree_wire",
    ]


def test_no_test_module_imports_conftest_or_another_test_module():
    tests = Path(__file__).parent
    found = [f"{path.name} imports {target}" for path in sorted(tests.glob("*.py"))
             for target in sorted(imported(path, path.stem))
             if target.split(".")[0] == "conftest" or target.startswith("test_")]
    assert found == []


# --- one home for the chapter: every list of the tree's names agrees with its manifest ------

def class_members(path: Path, name: str = "RadixTree") -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    return {node.name: node for node in found.body if isinstance(node, ast.FunctionDef)}


def contract_names(members: dict[str, ast.FunctionDef]) -> set[str]:
    return {name for name in members if not name.startswith("_") or name in DS07.methods}


def literal(path: Path, name: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.Assign) and node.targets[0].id == name)


def test_the_stub_and_the_proxy_offer_exactly_the_chapters_methods():
    names = set(DS07.methods) | set(DS07.properties)
    assert contract_names(class_members(DS07.stub)) == names
    assert contract_names(class_members(DS07.proxy)) == names


def test_the_tree_side_answers_exactly_the_chapters_calls():
    calls = set(literal(DS07.calls, "CALLS"))
    assert calls == (set(DS07.methods) - {"__init__"}) | set(DS07.properties)


def test_the_machine_tries_on_a_dead_id_exactly_the_methods_that_take_one():
    takes_an_id = {name for name, node in class_members(DS07.stub).items()
                   if [arg.arg for arg in node.args.args[1:2]] == ["id"]}
    assert set(literal(DS07.course_tests / "ds07_machine.py", "DEAD_ID_ACCESSORS")) == takes_an_id


def test_the_placebo_breaks_every_method_of_the_chapter():
    namespace: dict = {}
    exec(compile(placebo_source(DS07.reference_source(), DS07), "placebo", "exec"), namespace)
    tree = namespace["RadixTree"]
    assert all(getattr(tree, name).__name__ == "_placebo" for name in DS07.methods)
    assert all(getattr(tree, name).fget.__name__ == "_placebo" for name in DS07.properties)


def test_ol_parses_source_one_thread_at_a_time():
    """Two threads building syntax trees at once can fail in CPython 3.11 (a SystemError
    that once graded a submission `error` in ol grade --jobs 2)."""
    done = threading.Event()
    with syntax.LOCK:
        other = threading.Thread(target=lambda: (scan("x = 1\n", ()), done.set()))
        other.start()
        assert not done.wait(0.5)  # the scan waits for the lock
    other.join(5)
    assert done.is_set()


def engine_files() -> list[Path]:
    """ol and every module of the harness, ``harness/chapter.py`` (the manifests' reader)
    among them: the engine."""
    return [ROOT / "ol.py", *sorted((ROOT / "harness").rglob("*.py"))]


def every_chapter() -> list[Chapter]:
    """The course's chapters and the test chapters of tests/chapters/."""
    return [load(manifest) for manifest in manifests((ROOT / "tests" / "chapters",))]


def chapter_facts() -> list[str]:
    """What only a chapter may say, for every chapter there is: its id (dotted and not), its
    course tests' names, the required tests' names and the planted mutants' ids."""
    from harness.grade.catalog import load_catalog

    return [fact for chapter in every_chapter()
            for fact in (chapter.id, chapter.compact_id, *chapter.course_test_names,
                         *chapter.required_tests,
                         *(mutant.id for mutant in load_catalog(chapter)))]


def facts_written_in(text: str, facts: list[str]) -> list[str]:
    """The facts ``text`` names: a chapter's id anywhere (in a file name too), a name or an
    id as a word of its own."""
    ids = {id for chapter in every_chapter() for id in (chapter.id, chapter.compact_id)}
    return [fact for fact in facts
            if (fact in text if fact in ids else
                re.search(rf"(?<![\w.]){re.escape(fact)}(?![\w])", text))]


def test_no_chapter_fact_is_written_in_the_engine():
    facts = chapter_facts()
    found = {path.relative_to(ROOT).as_posix(): written for path in engine_files()
             if (written := facts_written_in(path.read_text(encoding="utf-8"), facts))}
    assert found == {}, f"chapter facts written outside the chapters' manifests: {found}"


def contract_words() -> list[str]:
    """What only a chapter's contract may name: its module, the module's package and file,
    and its class, for every chapter there is."""
    return sorted({name for chapter in every_chapter()
                   for name in (chapter.module, chapter.package, chapter.class_name,
                                chapter.implementation.as_posix())})


def literals(source: str) -> list[str]:
    """The text of every string literal of ``source`` that is not a docstring (a docstring
    may give a chapter's names as an example; code must not hold them)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def names_in_code(source: str, names: list[str]) -> list[str]:
    return sorted({name for text in literals(source) for name in names
                   if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)})


def test_no_contract_name_is_written_in_the_engines_code():
    """The way the scan once allowed only tl_ds.radix: a string in code naming a chapter's
    module, package, file or class."""
    names = contract_words()
    found = {path.relative_to(ROOT).as_posix(): written for path in engine_files()
             if (written := names_in_code(path.read_text(encoding="utf-8"), names))}
    assert found == {}, f"contract names written in the engine's code: {found}"


def test_the_contract_name_check_finds_the_module_a_scan_once_hard_coded():
    leak = 'if top == "tl_ds" and name not in ("tl_ds", "tl_ds.radix"):\n    pass\n'
    assert names_in_code(leak, contract_words()) == ["tl_ds", "tl_ds.radix"]
    assert names_in_code('"""An example: tl_ds.radix."""\n', contract_words()) == []


def test_the_chapter_fact_check_finds_a_mutant_id_planted_in_a_report():
    planted = (ROOT / "harness" / "report" / "render.py").read_text(encoding="utf-8") + (
        '\nREQUIRED_COLUMN = "s11"\n')
    assert facts_written_in(planted, chapter_facts()) == ["s11"]


def test_the_chapter_fact_check_finds_the_chapter_in_a_file_name():
    assert facts_written_in('TESTS = "tests/test_ds07_radix.py"', chapter_facts()) == ["ds07"]


def test_every_rule_beyond_the_chapters_text_is_in_the_readme_and_each_required_one_in_the_stub():
    """What `ol tests` prints, the README's table and the stub's docstring say the same."""
    def flat(text: str) -> str:
        return " ".join(text.split())

    readme = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    stub = flat(DS07.stub.read_text(encoding="utf-8"))
    assert DS07.rules and any(rule.required for rule in DS07.rules)
    for rule in DS07.rules:
        assert flat(rule.rule) in readme and flat(rule.reason) in readme, rule
        assert (flat(rule.rule) in stub) == rule.required, rule
