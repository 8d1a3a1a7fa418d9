"""`ol gradescope-bundle MODULE OUT.zip`: the zip a Gradescope programming assignment takes.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once when it
builds the image, and ``run_autograder`` for every submission. The zip holds ``ol`` itself
(the harness, the reference, the second and third trees, the model, the course tests and the
mutants) under ``ol/``, and the two scripts:

- ``setup.sh`` builds a virtual environment (``/opt/ol-venv``) from a Python of at least
  3.11, installing one from the OS packages where the image's own is older, puts the
  pinned packages that decide grades there (from ``pyproject.toml``) and prepares the
  sandbox: the system's bubblewrap, for containers that allow user
  namespaces, and otherwise a dedicated user, ``ol-sandbox``, that submission code runs as;
  ``/autograder/source`` becomes readable by root only;
- ``run_autograder`` runs ``ol gradescope <chapter>``, which finds the chapter's tree
  (``tl_ds/radix.py``) and test file in the submission in Python (at its top, in a folder,
  or as the two bare files; a name that is not printable text, a link of either kind, a
  pipe or a device is refused, never parsed or followed), grades a fresh copy in the
  sandbox, and writes ``/autograder/results/results.json`` only once every process of the
  submission is gone, under a name no run could know, then moved into place. A
  ``results.json`` the submission wrote earlier is removed first. It refuses to grade where
  no sandbox can start. Every text is worded for the student there (files as submitted, no
  grader's folder, "submit again" rather than a command). When the submission cannot be
  graded (a missing file, a test file that does not compile, a tree that does not import)
  it still writes a ``results.json``: score 0 and why. A fault of ol itself (exit code 3),
  or a grader that cannot start, writes none and fails the autograder, so Gradescope says
  it failed and staff grade it again: never a score of 0 for a fault that is not the
  student's.
"""

from __future__ import annotations

import shlex
import tomllib
import zipfile
from pathlib import Path

from harness.chapter import ROOT, Chapter
from harness.errors import OlError

ENGINE = ("ol.py", "pyproject.toml", "README.md", "harness")


def shipped(chapter: Chapter) -> tuple[Path, ...]:
    """The engine, and the parts of the chapter and of every chapter it builds on (every
    correct tree, the proxy and what answers its calls among them): what grading needs.
    Staff's audit of the course suite is never graded, so never shipped."""
    parts: list[Path] = [ROOT / name for name in ENGINE]
    for each in (chapter, *chapter.needed):
        parts += [each.manifest, *(path for _, path in each.correct_trees), each.stub,
                  each.model, each.course_tests, each.catalog.parent, each.proxy, each.calls]
    return tuple(dict.fromkeys(parts))


def chapter_folders(chapter: Chapter) -> list[str]:
    """The folders, in the bundle's ol/, of the manifests ol would not find in chapters/ by
    itself (the chapter's or one it builds on): what run_autograder names in OL_CHAPTERS.
    OlError for a manifest outside this checkout, which the bundle cannot hold."""
    folders = []
    for each in (chapter, *chapter.needed):
        folder = each.manifest.parent
        if folder == ROOT / "chapters":
            continue
        if not folder.is_relative_to(ROOT):
            raise OlError(f"{each.manifest} is outside this checkout of ol ({ROOT}), so a "
                          "bundle cannot hold it: copy its folder into the checkout (or "
                          "its manifest into chapters/), then run the command again")
        folders.append(folder.relative_to(ROOT).as_posix())
    return list(dict.fromkeys(folders))

SETUP = r"""#!/usr/bin/env bash
# Gradescope image setup for @ID@: a virtual environment of Python 3.11 or newer holding
# the packages that decide grades, at pinned versions (an image's own Python may be older,
# Ubuntu 22.04's is 3.10, and Ubuntu 24.04 refuses system-wide installs), and the sandbox
# of submission code: bubblewrap where the container allows user namespaces, otherwise
# runs as the unprivileged user ol-sandbox. `setup.sh --print-python` only says which
# Python it would build the environment from.
set -euo pipefail
ROOT="${OL_AUTOGRADER_ROOT:-/autograder}"
VENV="${OL_VENV:-@VENV@}"

pick_python() {  # the first interpreter on PATH that is Python 3.11 or newer
    local candidate version
    for candidate in python3.13 python3.12 python3.11 python3; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        version="$("$candidate" -c 'import sys; print("%d %d" % sys.version_info[:2])' \
            2>/dev/null)" || continue
        set -- $version
        if [ "${1:-0}" -eq 3 ] && [ "${2:-0}" -ge 11 ]; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

if [ "${1:-}" = "--print-python" ]; then
    pick_python || { echo "none: no Python 3.11 or newer on PATH" >&2; exit 1; }
    exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq || echo "apt-get update failed; trying with the package lists there are"
fi
PYTHON="$(pick_python)" || {
    command -v apt-get >/dev/null 2>&1 || {
        echo "setup.sh: this image has no Python 3.11 or newer and no apt-get to install one;"
        echo "pick Gradescope's Ubuntu 22.04 or 24.04 base image, or install python3.11 first."
        exit 1
    }
    apt-get install -y -qq python3.11 python3.11-venv
    PYTHON="$(pick_python)"
}
if ! "$PYTHON" -m venv "$VENV"; then  # Debian splits venv off: python3.X-venv
    rm -rf "$VENV"
    apt-get install -y -qq "$(basename "$PYTHON")-venv"
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --no-cache-dir --upgrade pip
"$VENV/bin/python" -m pip install --no-cache-dir @PINS@
if command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -qq bubblewrap || echo "no bubblewrap package: the pinned one is used"
fi
id -u ol-sandbox >/dev/null 2>&1 || useradd --system --no-create-home \
    --shell /usr/sbin/nologin ol-sandbox
chmod 700 "$ROOT/source"  # the reference stays the grader's
"""

RUN = r"""#!/usr/bin/env bash
# Grade /autograder/submission with ol, which finds the student's files in Python (no file
# name is parsed as text here) and writes /autograder/results/results.json only after every
# process of the submission has gone. No results file means the autograder failed: a fault
# of ol, or a grader that cannot run here; Gradescope then says so, and staff grade again.
ROOT="${OL_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${OL_PYTHON:-${OL_VENV:-@VENV@}/bin/python}"  # setup.sh made it
DEDICATED="$(id -u ol-sandbox 2>/dev/null)"
export OL_SANDBOX_UID="${OL_SANDBOX_UID:-${DEDICATED:-65534}}"
@CHAPTERS@
rm -f "$ROOT/results/results.json"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
"$PYTHON" "$ROOT/source/ol/ol.py" gradescope @ID@ --root "$ROOT" --scoring @SCORING@ \
    > "$OUT" 2>&1
STATUS=$?
# the sandbox ended every process of the submission; in the uid sandbox, make sure of it
if [ "$(id -u)" = 0 ] && [ -n "$DEDICATED" ]; then
    pkill -KILL -U "$DEDICATED" 2>/dev/null || true
fi
if [ "$STATUS" != 0 ] || [ ! -f "$ROOT/results/results.json" ]; then
    rm -f "$ROOT/results/results.json"
    if [ "$STATUS" != 3 ]; then
        echo "Not graded: the grader could not run here, a problem of its setup and not of your"
        echo "work. No score was recorded; tell the course staff, who will grade it again."
    fi
    cat "$OUT"
    exit 1
fi
"""


VENV = "/opt/ol-venv"  # where setup.sh builds the environment run_autograder runs ol in


def filled(script: str, chapter: Chapter) -> str:
    """A script with the chapter's id in place of its @ID@, and the environment's folder."""
    return script.replace("@ID@", chapter.id).replace("@VENV@", VENV)


def chapters_line(chapter: Chapter) -> str:
    """run_autograder's line naming the chapters ol finds only through OL_CHAPTERS."""
    folders = chapter_folders(chapter)
    if not folders:
        return "# every chapter it grades is in ol/chapters/"
    joined = ":".join(f'$ROOT/source/ol/{folder}' for folder in folders)
    return f'export OL_CHAPTERS="{joined}"  # the chapters beyond ol/chapters/'


def pins() -> list[str]:
    """The project's runtime dependencies as pyproject.toml pins them."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])


def shipped_files(chapter: Chapter) -> list[Path]:
    """Every file of ol that grading ``chapter`` needs, relative to the project root,
    sorted."""
    audit = None if chapter.audit_catalog is None else chapter.audit_catalog.parent
    files: set[Path] = set()
    for path in shipped(chapter):
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files |= {candidate.relative_to(ROOT) for candidate in candidates
                  if candidate.is_file() and "__pycache__" not in candidate.parts
                  and (audit is None or not candidate.is_relative_to(audit))}
    return sorted(files)


def write_bundle(out: Path, chapter: Chapter, scoring: str = "pass") -> list[str]:
    """Write the autograder zip to ``out``, a file that does not exist yet; its entry names.
    ``scoring`` is how its results score a submission (``ol check --scoring``)."""
    if out.exists():
        raise OlError(f"{out} exists: ol never overwrites a file. Pass a new file name, "
                      f"e.g. `ol gradescope-bundle {chapter.id} "
                      f"{chapter.compact_id}-autograder.zip`")
    if not out.parent.is_dir():
        raise OlError(f"{out.parent} is not a folder: create it first, or pass a path in an "
                      "existing one")
    entries = {
        "setup.sh": filled(SETUP, chapter).replace(
            "@PINS@", " ".join(shlex.quote(pin) for pin in pins())),
        "run_autograder": filled(RUN, chapter).replace("@SCORING@", scoring).replace(
            "@CHAPTERS@", chapters_line(chapter)),
    }
    with zipfile.ZipFile(out, "x", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable scripts
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
        for path in shipped_files(chapter):
            archive.write(ROOT / path, f"ol/{path.as_posix()}")
        return archive.namelist()
