"""The mutant catalogs: a ``catalog.toml`` and one unified diff per mutant, in a folder.

Two folders hold one: ``mutants/`` the chapter's planted mutants, which grade
students' tests, and ``mutants/audit/`` plausible bugs beyond them, which measure the
course suite only (``ol audit``) and are never shown to students. A catalog is data,
validated when it is read: its ids (one entry for each patch in the folder, and no
other), every field of the right type, ``caught_by`` naming course tests, the required
mutants (those the chapter's manifest names), and every patch applying to the chapter's
reference with exact context, no fuzz and no offset. A mutant's source is built in
memory; nothing is written to disk.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import OlError

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
REGENERATE = ("to regenerate it, make the mutant's change by hand in {reference}, run "
              "`git diff {reference} > {folder}/{id}.patch`, then `git checkout {reference}`")


@dataclass(frozen=True)
class Mutant:
    id: str
    title: str
    symptom: str
    caught_by: tuple[str, ...]
    required: bool
    hint: str
    patch: str          # the unified diff, as text
    source: str         # the chapter's reference with the patch applied
    group: str = ""     # audit mutants: the chapter's rule group ("stamping", "eviction"...)
    rule: str = ""      # audit mutants: the chapter's rule the bug breaks


@dataclass(frozen=True)
class Shape:
    """What a catalog must hold: the text fields of an entry, its ids, its required mutants."""

    texts: tuple[str, ...]
    pattern: str                    # every id matches it
    course_tests: tuple[str, ...]   # the names ``caught_by`` may use
    regenerate: str                 # how to remake a lost patch: REGENERATE, filled in
    minimum: int = 1                # the fewest mutants
    required: tuple[str, ...] = ()


def planted_shape(chapter: Chapter) -> Shape:
    """The chapter's planted mutants: they grade students' tests."""
    return Shape(texts=("title", "symptom", "hint"), pattern=chapter.mutant_ids,
                 course_tests=chapter.course_test_names,
                 regenerate=regenerate(chapter, chapter.catalog),
                 required=chapter.required_mutants)


def audit_shape(chapter: Chapter) -> Shape:
    """The audit catalog: plausible bugs beyond the planted ones, at least 40 of them."""
    return Shape(texts=("group", "title", "symptom", "rule"), pattern=r"a\d\d", minimum=40,
                 course_tests=chapter.course_test_names,
                 regenerate=regenerate(chapter, chapter.audit_catalog))


def regenerate(chapter: Chapter, catalog: Path) -> str:
    return REGENERATE.replace("{reference}", chapter.shown(chapter.reference)).replace(
        "{folder}", chapter.shown(catalog.parent))


def load_catalog(chapter: Chapter, reference: str | None = None) -> tuple[Mutant, ...]:
    """The chapter's planted mutants, read and validated."""
    return read_catalog(chapter.catalog, planted_shape(chapter),
                        chapter.reference_source() if reference is None else reference)


def load_audit_catalog(chapter: Chapter, reference: str | None = None) -> tuple[Mutant, ...]:
    """The chapter's audit catalog: plausible bugs beyond the planted ones."""
    return read_catalog(chapter.audit_catalog, audit_shape(chapter),
                        chapter.reference_source() if reference is None else reference)


def read_catalog(path: Path, shape: Shape, reference: str) -> tuple[Mutant, ...]:
    """Read and validate a catalog; raise OlError naming the file (and hunk) at fault."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise OlError(f"{path}: cannot read the mutant catalog: {error}") from None
    entries = data.get("mutant")
    if not isinstance(entries, list):
        raise OlError(f"{path}: expected [[mutant]] tables, one per planted mutant")
    ids = [entry.get("id") for entry in entries]
    wrong = [str(id) for id in ids
             if not isinstance(id, str) or not re.fullmatch(shape.pattern, id)]
    if wrong or len(set(ids)) != len(ids) or len(ids) < shape.minimum:
        raise OlError(f"{path}: expected at least {shape.minimum} mutants with distinct "
                      f"ids matching {shape.pattern}, found {len(ids)}"
                      + (f" ({', '.join(wrong)} do not match)" if wrong else ""))
    patches = sorted(patch.stem for patch in path.parent.glob("*.patch"))
    if patches != sorted(ids):
        unlisted = sorted(set(patches) - set(ids))
        missing = sorted(set(ids) - set(patches))
        raise OlError(f"{path}: every patch in {path.parent} needs an entry and every entry "
                      "its patch" + (f"; no entry for {', '.join(unlisted)}" if unlisted else "")
                      + (f"; no patch for {', '.join(missing)}" if missing else ""))
    return tuple(read_entry(path, entry, reference, shape) for entry in entries)


def read_entry(path: Path, entry: dict, reference: str, shape: Shape) -> Mutant:
    id = entry["id"]
    where = f"{path}, mutant {id}"
    for name in shape.texts:
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise OlError(f"{where}: `{name}` must be a non-empty string")
    caught_by = entry.get("caught_by")
    if (not isinstance(caught_by, list) or not caught_by
            or any(name not in shape.course_tests for name in caught_by)):
        raise OlError(f"{where}: `caught_by` must list course tests, from: "
                      f"{', '.join(shape.course_tests)}")
    if entry.get("required", False) is not (id in shape.required):
        raise OlError(f"{where}: `required` must be {str(id in shape.required).lower()}")
    patch_path = path.parent / f"{id}.patch"
    try:
        patch = patch_path.read_text(encoding="utf-8")
    except OSError as error:
        raise OlError(f"{patch_path}: cannot read the patch ({error}); "
                      + shape.regenerate.format(id=id)) from None
    source = apply_patch(reference, patch, patch_path, shape.regenerate.format(id=id))
    return Mutant(id, entry["title"], entry["symptom"], tuple(caught_by), id in shape.required,
                  entry.get("hint", ""), patch, source, entry.get("group", ""),
                  entry.get("rule", ""))


def apply_patch(original: str, patch: str, patch_path: Path, regenerate: str) -> str:
    """``original`` with the unified diff ``patch`` applied exactly; OlError otherwise."""
    lines = original.split("\n")
    hunks = parse_hunks(patch, patch_path, regenerate)
    if not hunks:
        raise OlError(f"{patch_path}: holds no hunk; " + regenerate)
    result: list[str] = []
    cursor = 0
    for number, (header, start, old, new) in enumerate(hunks, 1):
        at = start - 1 if old else start
        if at < cursor or lines[at:at + len(old)] != old:
            raise OlError(f"{patch_path}, hunk {number} ({header}): the reference no longer has "
                          f"these lines at line {start}; " + regenerate)
        result.extend(lines[cursor:at])
        result.extend(new)
        cursor = at + len(old)
    result.extend(lines[cursor:])
    return "\n".join(result)


def parse_hunks(patch: str, patch_path: Path, regenerate: str) -> list[tuple[str, int, list, list]]:
    hunks: list[tuple[str, int, list, list]] = []
    body = patch.split("\n")
    index = 0
    while index < len(body):
        match = HUNK.match(body[index])
        if not match:
            index += 1
            continue
        header = body[index].split(" @@")[0] + " @@"
        start = int(match.group(1))
        old_count = int(match.group(2) or 1)
        new_count = int(match.group(4) or 1)
        old: list[str] = []
        new: list[str] = []
        index += 1
        while index < len(body) and (len(old) < old_count or len(new) < new_count):
            line = body[index]
            tag, text = line[:1], line[1:]
            if tag == " ":
                old.append(text)
                new.append(text)
            elif tag == "-":
                old.append(text)
            elif tag == "+":
                new.append(text)
            elif tag != "\\":
                raise OlError(f"{patch_path}, hunk {len(hunks) + 1} ({header}): a line neither "
                              f"context, removed nor added; " + regenerate)
            index += 1
        if (len(old), len(new)) != (old_count, new_count):
            raise OlError(f"{patch_path}, hunk {len(hunks) + 1} ({header}): the hunk is cut "
                          f"short; " + regenerate)
        hunks.append((header, start, old, new))
    return hunks
