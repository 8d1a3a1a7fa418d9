"""`ol gradescope-bundle OUT.zip`: the zip a Gradescope programming assignment takes.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once when it
builds the image, and ``run_autograder`` for every submission. The zip holds ``ol`` itself
(the harness, the reference, the second and third trees, the model, the course tests and the
mutants) under ``ol/``, and the two scripts:

- ``setup.sh`` installs the pinned packages that decide grades (from ``pyproject.toml``)
  and prepares the sandbox: the system's bubblewrap, for containers that allow user
  namespaces, and otherwise a dedicated user, ``ol-sandbox``, that submission code runs as;
  ``/autograder/source`` becomes readable by root only;
- ``run_autograder`` finds the chapter's tree (``tl_ds/radix.py``) and test file in the
  submission (at its top, in a folder, or as the two bare files), copies them into a fresh
  workspace, runs ``ol check <chapter> --report``, and copies ``results.json`` to
  ``/autograder/results/`` only once every process of the submission is gone (the sandbox
  ends them; then every process of ``ol-sandbox`` is killed as well), from a folder only
  root can write. A ``results.json`` the submission wrote earlier is removed first. It
  refuses to grade where no sandbox can start. ``ol check --platform`` words every text
  for the student there (files as submitted, no grader's folder, "submit again" rather than
  a command). When the submission cannot be graded (a missing file, a test file that does
  not compile, a tree that does not import) it still writes a ``results.json``: score 0 and
  why. A fault of ol itself (exit code 3), or a grader that cannot start, writes none and
  fails the autograder, so Gradescope says it failed and staff grade it again: never a
  score of 0 for a fault that is not the student's.
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
    """The engine and the chapter's parts, every correct tree among them: what grading
    needs. Staff's audit of the course suite is never graded, so never shipped."""
    return (*(ROOT / name for name in ENGINE), chapter.manifest,
            *(path for _, path in chapter.correct_trees), chapter.stub, chapter.model,
            chapter.course_tests, chapter.catalog.parent)

SETUP = """#!/usr/bin/env bash
# Gradescope image setup for @ID@: the packages that decide grades, at pinned versions, and
# the sandbox of submission code: the system's bubblewrap where the container allows user
# namespaces, otherwise runs as the unprivileged user ol-sandbox.
set -euo pipefail
python3 -m pip install --no-cache-dir {pins}
if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq bubblewrap) || echo "no bubblewrap package"
fi
id -u ol-sandbox >/dev/null 2>&1 || useradd --system --no-create-home \\
    --shell /usr/sbin/nologin ol-sandbox
chmod 700 "${{OL_AUTOGRADER_ROOT:-/autograder}}/source"  # the reference stays the grader's
"""

RUN = r"""#!/usr/bin/env bash
# Grade /autograder/submission with ol check; always leave /autograder/results/results.json,
# written only after every process of the submission has gone.
ROOT="${OL_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${OL_PYTHON:-python3}"
OL="$ROOT/source/ol/ol.py"
SUBMISSION="$ROOT/submission"
DEDICATED="$(id -u ol-sandbox 2>/dev/null)"
export OL_SANDBOX_UID="${OL_SANDBOX_UID:-${DEDICATED:-65534}}"
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws/@PACKAGE@" "$(dirname "$WORK/ws/@TESTS@")"
touch "$WORK/ws/@PACKAGE@/__init__.py"
first() {  # the first file under the submission matching a path pattern, by sorted path
    find "$SUBMISSION" -type f -path "$1" -not -path '*/.*' 2>/dev/null | LC_ALL=C sort | head -n 1
}
RADIX="$(first '*/@TREE@')"
[ -n "$RADIX" ] || RADIX="$(first '*/@TREE_NAME@')"
TESTS="$(first '*/@TESTS@')"
[ -n "$TESTS" ] || TESTS="$(first '*/@TESTS_NAME@')"
[ -z "$RADIX" ] || cp "$RADIX" "$WORK/ws/@TREE@"
[ -z "$TESTS" ] || cp "$TESTS" "$WORK/ws/@TESTS@"
cd "$WORK"
"$PYTHON" "$OL" check @ID@ --workspace ws --report report --require-sandbox --platform \
    --scoring @SCORING@ > out.txt 2>&1
STATUS=$?
# the sandbox ended every process of the submission; in the uid sandbox, make sure of it
if [ "$(id -u)" = 0 ] && [ -n "$DEDICATED" ]; then
    pkill -KILL -U "$DEDICATED" 2>/dev/null || true
fi
rm -f "$ROOT/results/results.json"
if [ "$STATUS" = 3 ]; then
    # a fault of ol, not of the submission: no results, so Gradescope reports the autograder
    # failed and staff grade it again; what ol said is in the autograder's output
    cat out.txt
    exit 1
fi
if [ -f report/results.json ]; then
    # graded, or not graded for a reason of the submission's own, said in the student's terms
    cp report/results.json "$ROOT/results/results.json"
else
    # the grader's setup stopped the grade, not the submission: no score; staff read why
    echo "Not graded: the grader could not run here, a problem of its setup and not of your"
    echo "work. No score was recorded; tell the course staff, who will grade it again."
    cat out.txt
    exit 1
fi
"""


def filled(script: str, chapter: Chapter) -> str:
    """A script with the chapter's names in place of its @ID@, @PACKAGE@, @TREE@,
    @TREE_NAME@, @TESTS@ and @TESTS_NAME@."""
    names = {"@ID@": chapter.id, "@PACKAGE@": chapter.package,
             "@TREE_NAME@": chapter.implementation.name,
             "@TREE@": chapter.implementation.as_posix(),
             "@TESTS_NAME@": chapter.student_tests.name,
             "@TESTS@": chapter.student_tests.as_posix()}
    for name, value in names.items():
        script = script.replace(name, value)
    return script


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
                      f"e.g. `ol gradescope-bundle {chapter.compact_id}-autograder.zip`")
    if not out.parent.is_dir():
        raise OlError(f"{out.parent} is not a folder: create it first, or pass a path in an "
                      "existing one")
    entries = {
        "setup.sh": filled(SETUP, chapter).format(
            pins=" ".join(shlex.quote(pin) for pin in pins())),
        "run_autograder": filled(RUN, chapter).replace("@SCORING@", scoring),
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
