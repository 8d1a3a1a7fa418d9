"""A chapter as the engine knows it: one record, read from its manifest.

A chapter's manifest (``chapters/<id>.toml``) names its id, its contract (the module and
class a student writes, their methods), where its material lives (the reference, the other
correct trees, the model, the course tests, the mutant catalogs, the stub) and its rung
(the required tests and mutants, the threshold). The engine, grading and reports take a
``Chapter`` and know nothing else of it: user-facing counts (how many course tests, how
many mutants) are derived from the material, never written out.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.errors import OlError
from harness.run.layout import Contract

ROOT = Path(__file__).resolve().parent.parent  # the project: ol.py, harness/, chapters/
CHAPTERS = ROOT / "chapters"  # the course's chapters, a manifest each


@dataclass(frozen=True)
class Rule:
    """A rule the course tests hold a tree to beyond the chapter's text: ``required`` (a
    tree that breaks it fails) or open (the course accepts either way), and why."""

    rule: str
    required: bool
    reason: str


@dataclass(frozen=True)
class Chapter:
    id: str                  # what a user types: `ol check <id>`
    title: str               # what pages call it, after the id
    needs: tuple[str, ...]   # chapters whose course tests the student's code must pass first
    manifest: Path
    # the contract: what a student submits and how tests reach it
    module: str              # "tl_ds.radix": what the tests import
    class_name: str          # the class the tests build
    exports: tuple[str, ...]  # the names the tests may import from the module
    methods: tuple[str, ...]
    properties: tuple[str, ...]
    proxy: Path              # the module a run's tests import in the tree's place
    calls: Path              # what answers the proxy's calls beside the tree
    student_tests: Path      # the student's test file, relative to their workspace
    # the material
    reference: Path
    correct_trees: tuple[tuple[str, Path], ...]  # (how reports name it, its file)
    model: Path
    stub: Path
    course_tests: Path
    course_test_file: Path
    course_machine: Path | None  # the state machine beside the course tests, if any
    course_views: Path | None    # functions of a tree its tree side runs for the machine
    model_test: str
    course_test_names: tuple[str, ...]  # in the order of the course catalog and file
    catalog: Path
    equivalents: Path | None     # `ol audit`: mutmut's survivors that cannot change behaviour
    audit_catalog: Path | None   # `ol audit`: plausible bugs beyond the planted mutants
    examples: Path | None
    mutant_ids: str          # the pattern every planted mutant's id matches
    # the rung
    required_tests: tuple[str, ...]
    threshold_percent: int
    required_mutants: tuple[str, ...]
    required_pitfall: str
    required_test_hint: str
    tests_template: str
    rung: str = ""           # the rung's name, as the course calls it ("R3")
    open_choice: str = ""    # an example of what the contract leaves open
    # what the course holds a tree to that the chapter's own text does not say
    rules: tuple[Rule, ...] = ()
    # the chapters it builds on, and those they build on, each before the ones that need
    # it: resolved once, when the chapter is loaded
    needed: tuple[Chapter, ...] = ()

    @functools.cached_property
    def contract(self) -> Contract:
        """What a run of the chapter imports and its tree must be (made once per chapter)."""
        return Contract(module=self.module, cls=self.class_name, exports=self.exports,
                        proxy=self.proxy, calls=self.calls)

    @property
    def compact_id(self) -> str:
        """The id in names that take no dot: "ab12" for "ab.12"."""
        return self.id.replace(".", "")

    @property
    def required_names(self) -> str:
        """How the text names the required mutants: "x01", or "x01 and x02"."""
        return " and ".join(self.required_mutants)

    @property
    def implementation(self) -> Path:
        """The student's implementation, relative to their workspace: tl_ds/radix.py."""
        return Path(*self.module.split(".")).with_suffix(".py")

    @property
    def package(self) -> str:
        """The package the implementation lives in: tl_ds."""
        return self.module.split(".")[0]

    @property
    def course_catalog(self) -> Path:
        return self.course_tests / "catalog.toml"

    @property
    def kept_from_runs(self) -> tuple[Path, ...]:
        """What no run of submission code may read: ol's checkout, this manifest, the
        reference and the mutants."""
        return (ROOT, self.manifest, self.reference, self.catalog.parent)

    def reference_source(self) -> str:
        return self.reference.read_text(encoding="utf-8")

    def shown(self, path: Path) -> str:
        """``path`` as the project's readers find it: relative to the project when inside."""
        return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def load(manifest: Path, path: tuple[str, ...] = ()) -> Chapter:
    """The chapter ``manifest`` describes, with the chapters it needs (each looked for
    beside the manifest that needs it, then in the course); an ``OlError`` that names the
    fault if it cannot. ``path``: the chapters that led here, which it must not need."""
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        chapter = _chapter(manifest, data)
    except (OSError, KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{manifest}: cannot read this chapter's manifest ({error!r}); restore "
                      "it from the course's repository (`git checkout` it), or fix the line "
                      "named") from None
    found: dict[str, Chapter] = {}
    for id in chapter.needs:
        if id in (*path, chapter.id):
            raise OlError(f"{manifest}: the chapters {' -> '.join((*path, chapter.id, id))} "
                          "need each other in a circle; fix `needs` in a manifest")
        needed = find(id, (manifest.parent,), (*path, chapter.id))
        found.update({each.id: each for each in (*needed.needed, needed) if each.id not in found})
    return dataclasses.replace(chapter, needed=tuple(found.values()))


def _chapter(manifest: Path, data: dict) -> Chapter:
    here = manifest.parent

    def path(text: str) -> Path:
        return (here / text).resolve()

    def maybe(text: str | None) -> Path | None:
        return None if text is None else path(text)

    contract, material, rung = data["contract"], data["material"], data["rung"]
    course_tests = path(material["course_tests"])
    return Chapter(
        id=str(data["id"]), title=str(data["title"]), needs=tuple(data.get("needs", ())),
        manifest=manifest.resolve(),
        module=contract["module"], class_name=contract["class"],
        exports=tuple(contract["exports"]), methods=tuple(contract["methods"]),
        properties=tuple(contract.get("properties", ())),
        proxy=path(contract["proxy"]), calls=path(contract["calls"]),
        student_tests=Path(contract["tests"]),
        reference=path(material["reference"]),
        correct_trees=tuple((str(label), path(file)) for label, file
                            in material["correct_trees"]),
        model=path(material["model"]), stub=path(material["stub"]),
        course_tests=course_tests,
        course_test_file=path(material["course_test_file"]),
        course_machine=maybe(material.get("course_machine")),
        course_views=maybe(material.get("course_views")),
        model_test=material["model_test"],
        course_test_names=_course_test_names(course_tests / "catalog.toml"),
        catalog=path(material["catalog"]), equivalents=maybe(material.get("equivalents")),
        audit_catalog=maybe(material.get("audit_catalog")),
        examples=maybe(material.get("examples")),
        mutant_ids=material["mutant_ids"],
        required_tests=tuple(rung["required_tests"]),
        threshold_percent=int(rung["threshold_percent"]),
        required_mutants=tuple(rung["required_mutants"]),
        required_pitfall=rung["required_pitfall"],
        required_test_hint=rung["required_test_hint"],
        tests_template=rung["tests_template"],
        rung=rung.get("name", ""), open_choice=rung.get("open_choice", ""),
        rules=tuple(Rule(str(entry["rule"]), _required(entry["choice"]), str(entry["reason"]))
                    for entry in data.get("rule", ())),
    )


def _required(choice: str) -> bool:
    if choice not in ("required", "open"):
        raise ValueError(f"a rule's choice is 'required' or 'open', not {choice!r}")
    return choice == "required"


def _course_test_names(catalog: Path) -> tuple[str, ...]:
    return tuple(entry["name"] for entry in
                 tomllib.loads(catalog.read_text(encoding="utf-8"))["test"])


def manifests(folders: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """Every chapter manifest ol can grade: the course's, then those in ``folders``."""
    return tuple(manifest for folder in (CHAPTERS, *folders)
                 for manifest in sorted(folder.glob("*.toml")))


def known(folders: tuple[Path, ...] = ()) -> dict[str, Path]:
    """Chapter id -> its manifest. A manifest's id is its first ``id = "..."`` line."""
    found = {}
    for manifest in manifests(folders):
        match = re.search(r'^id\s*=\s*"([^"]+)"', manifest.read_text(encoding="utf-8"), re.M)
        if match:
            found.setdefault(match.group(1), manifest)
    return found


def find(id: str, folders: tuple[Path, ...] = (), path: tuple[str, ...] = ()) -> Chapter:
    """The chapter a user named (needed by those in ``path``), or an ``OlError`` listing
    the chapters there are."""
    chapters = known(folders)
    if id not in chapters:
        raise OlError(f"unknown module id {id!r}: this harness grades "
                      f"{', '.join(chapters) or 'no chapter (chapters/ is empty)'}. "
                      f"Run e.g. `ol tests {next(iter(chapters), '<id>')}`. A chapter is a "
                      f"manifest (<id>.toml, as in {CHAPTERS}) beside its material: "
                      "your course staff hand out the folder that holds it; name that folder "
                      "in OL_CHAPTERS (several joined by ':') and run the command again.")
    return load(chapters[id], path)


def default() -> Chapter:
    """The course's first chapter: what a command grades when it names none (ol grade)."""
    return load(manifests()[0])
