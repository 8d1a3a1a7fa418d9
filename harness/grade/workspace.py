"""A student's workspace: where its files are, and what `ol start` writes into it.

    WORKSPACE/<package>/__init__.py      created if missing, never rewritten
    WORKSPACE/<package>/<module>.py      the student's implementation (the stub at first):
                                         tl_ds/radix.py for the chapter `tl_ds.radix`
    WORKSPACE/tests/test_<chapter>.py    the student's tests (the manifest's contract.tests)

Nothing here ever changes a file that exists.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.chapter import Chapter
from harness.errors import OlError
from harness.grade.catalog import load_catalog
from harness.grade.course import in_words, references
from harness.grade.syntax import parse
from harness.run.layout import Suite

DEFAULT = Path("workspace")
FILE_LIMIT = 1_000_000  # bytes of a workspace file ol reads


def upload(chapter: Chapter) -> str:
    """What to upload, for a platform's student."""
    tree, tests = chapter.implementation, chapter.student_tests
    return (f"your tree, {tree.as_posix()}, and your tests, {tests.as_posix()} (or the bare "
            f"files {tree.name} and {tests.name})")


def submit(chapter: Chapter) -> str:
    return f"Upload {upload(chapter)}, then submit again."


# an absolute path's folders: what a platform's student must never read of the grader's machine
FOLDERS = re.compile(r"(?<![\w.~])/(?:[\w.+@-]+/)+(?=[\w.+@-])")


def unrooted(text: str, chapter: Chapter | None = None) -> str:
    """``text`` with the grader's folders taken out of every absolute path: a submission's
    file keeps its own path (tl_ds/radix.py), any other file only its name."""
    if chapter is not None:
        submitted = "|".join(re.escape(path.parts[0]) for path in
                             (chapter.implementation, chapter.student_tests))
        text = re.sub(rf"(?<![\w.~])/(?:[\w.+@-]+/)*?(?=(?:{submitted})/[\w.]+\.py)", "", text)
    return FOLDERS.sub("", text)


def kind(mode: int) -> str:
    """What a path that is not a regular file is, for a person: "a folder", ..."""
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return what
    return "not a regular file"


def stub_source(chapter: Chapter) -> str:
    return chapter.stub.read_text(encoding="utf-8")


def looks_like_a_workspace(folder: Path, chapter: Chapter) -> bool:
    return (folder / chapter.implementation).is_file() or \
        (folder / chapter.student_tests).is_file()


def locate(given: Path | None, chapter: Chapter) -> Workspace:
    """The workspace a command works on: the one given; else ./workspace when it exists;
    else this folder, or the one above it, when it is a workspace (a command run from inside
    one); else ./workspace, which ol start creates."""
    if given is not None:
        return Workspace(given, chapter)
    if DEFAULT.is_dir():
        return Workspace(DEFAULT, chapter)
    for folder in (Path("."), Path("..")):
        if looks_like_a_workspace(folder, chapter):
            return Workspace(folder, chapter)
    return Workspace(DEFAULT, chapter)


@dataclass(frozen=True)
class Workspace:
    root: Path
    chapter: Chapter
    # a platform's upload gathered here: each file's path in the workspace (posix) -> its
    # path as uploaded, which is how every text the student reads names it
    names: Mapping[str, str] = field(default_factory=dict)
    # the options the command was given that every grading command it suggests must keep
    # (" --ref-deps"); `ol start` takes none of them
    flags: str = ""

    @property
    def package(self) -> Path:
        return self.root / self.chapter.package

    @property
    def radix(self) -> Path:
        return self.root / self.chapter.implementation

    @property
    def tests(self) -> Path:
        return self.root / self.chapter.student_tests

    def option(self) -> str:
        """The options of a grading command (tdd, check, diff) to run next: the --workspace
        that names this workspace (none when the command would find it by itself:
        ./workspace, or the workspace it runs in), and the flags that made this one work."""
        return self.place() + self.flags

    def place(self) -> str:
        """The --workspace option alone, as `ol start` takes it."""
        if self.root == DEFAULT or \
                locate(None, self.chapter).root.resolve() == self.root.resolve():
            return ""
        return f" --workspace {self.root}"

    def start(self) -> tuple[list[Path], list[Path]]:
        """Write what is missing; (created, already there). Never overwrites."""
        chapter = self.chapter
        wanted = {
            self.package / "__init__.py": "",
            self.radix: stub_source(chapter),
            self.tests: chapter.tests_template.format(
                names="\n".join(f"    {name}" for name in chapter.required_tests),
                percent=chapter.threshold_percent, total=len(load_catalog(chapter)),
                required=chapter.required_names, pitfall=chapter.required_pitfall),
        }
        created, kept = [], []
        for path, text in wanted.items():
            if path.exists() or path.is_symlink():
                kept.append(path)
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "x", encoding="utf-8") as out:
                    out.write(text)
            except OSError as error:
                raise OlError(f"cannot create {path}: {error.strerror}. Choose a folder you "
                              "can write to with --workspace DIR.") from None
            created.append(path)
        return created, kept

    def require(self, *, radix: bool, tests: bool) -> None:
        """OlError, saying what to run, unless the workspace has the files a command needs."""
        start = f"`ol start {self.chapter.id}{self.place()}`"
        if not self.root.is_dir():
            raise OlError(f"there is no workspace at {self.root}: run {start} to create one "
                          "(or pass --workspace DIR to name yours)")
        needs = [path for path, wanted in ((self.radix, radix), (self.tests, tests))
                 if wanted and not os.path.lexists(path)]  # anything else: read says what
        if needs:
            named = " and no ".join(self.shown(path) for path in needs)
            raise OlError(f"{' and '.join(map(str, needs))} missing from the workspace: run "
                          f"{start}, which writes only what is missing",
                          platform=f"Not graded: your submission holds no {named}. "
                          f"{submit(self.chapter)}")

    def shown(self, path: Path) -> str:
        """``path`` as a submission names it: relative to the workspace."""
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name
        return self.names.get(relative, relative)

    def renamed(self, text: str) -> str:
        """``text`` (a platform's, already unrooted) with each gathered file named as it was
        uploaded."""
        for relative, uploaded in self.names.items():
            text = re.sub(rf"(?<![\w/.]){re.escape(relative)}", uploaded, text)
        return text

    def read(self, path: Path) -> str:
        """A file of the workspace: a regular file with one name (no link of either kind, no
        folder, device or pipe, nor anything under a linked folder), at most FILE_LIMIT
        bytes, UTF-8. Its content is never shown in an error."""
        try:
            relative = path.relative_to(self.root)
        except ValueError:
            relative = Path(path.name)
        where = self.root
        for part in relative.parts:
            where = where / part
            if where.is_symlink():
                raise OlError(f"{where} is a symbolic link: ol reads only regular files of "
                              "the workspace itself. Replace it with the file or folder it "
                              "points to (a copy), then run the command again.",
                              platform=f"Not graded: {self.shown(where)} is a symbolic link, "
                              "and only plain files are graded. Upload the file itself, then "
                              "submit again.")
        try:
            seen = os.lstat(path)
            if not stat.S_ISREG(seen.st_mode):
                raise self.not_a_file(path, seen)
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as error:
            raise OlError(f"cannot read {path}: {error.strerror}. Make it a readable file.",
                          platform=f"Not graded: {self.shown(path)} cannot be read "
                          f"({error.strerror}). Upload it again as a plain text file, then "
                          "submit again.") from None
        with os.fdopen(descriptor, "rb") as source:
            opened = os.fstat(source.fileno())
            if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) \
                    or not stat.S_ISREG(opened.st_mode):
                raise self.not_a_file(path, opened)
            if opened.st_nlink > 1:
                raise OlError(f"{path} is a hard link (one of {opened.st_nlink} names of one "
                              "file): ol reads only a file with a name of its own. Make it a "
                              f"copy (`cp {path} {path}.copy && mv {path}.copy {path}`), then "
                              "run the command again.",
                              platform=f"Not graded: {self.shown(path)} is a hard link to "
                              "another file, and only plain files are graded. Upload the file "
                              "itself, then submit again.")
            data = source.read(FILE_LIMIT + 1)
        if len(data) > FILE_LIMIT:
            raise OlError(f"{path} is larger than {FILE_LIMIT // 1000} kB, more than any "
                          "tree or test file of this chapter needs: shorten it.",
                          platform=f"Not graded: {self.shown(path)} is larger than "
                          f"{FILE_LIMIT // 1000} kB, more than any tree or test file of this "
                          "chapter needs. Shorten it, then submit again.")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise OlError(f"cannot read {path}: it is not UTF-8 text ({error.reason} at byte "
                          f"{error.start}). Save it as UTF-8.",
                          platform=f"Not graded: {self.shown(path)} is not UTF-8 text "
                          f"({error.reason} at byte {error.start}). Save it as UTF-8, then "
                          "submit again.") from None

    def not_a_file(self, path: Path, info: os.stat_result) -> OlError:
        """What to do about a path of the workspace that is not a plain file, named for what
        it is (a folder, a pipe, a device)."""
        what = kind(info.st_mode)
        return OlError(f"{path} is {what}, not a file: ol reads only a plain text file there. "
                       "Move it away and put your file in its place (`ol start "
                       f"{self.chapter.id}{self.place()}` writes the stub where nothing is), "
                       "then run the command again.",
                       platform=f"Not graded: {self.shown(path)} is {what}, not a file, and "
                       "only plain text files are graded. Upload the file itself, then submit "
                       "again.")

    def snapshot(self, *, tree: bool, tests: bool, builds: bool = False) -> Submission:
        """The files a command grades, read once, now: the tree and the tests when asked
        (OlError, saying what to run, when one is missing), and, with ``builds``, the
        student's own tree of each chapter this one needs (None where there is none).
        Nothing below reads the student's files again."""
        self.require(radix=tree, tests=tests)
        own = []
        for needed in self.chapter.needed if builds else ():
            path = self.root / needed.implementation
            there = os.path.lexists(path)  # read refuses anything but a plain file, saying so
            own.append((needed, self.read(path) if there else None))
        return Submission(self, self.read(self.radix) if tree else None,
                          self.read(self.tests) if tests else None, tuple(own))

    def does_not_import(self, problem: str) -> OlError:
        """What to do about an implementation that does not import (``problem`` says why)."""
        chapter = self.chapter
        said = "\n".join(f"    {line}" for line in problem.splitlines())
        # a name the contract exports that is missing or cannot cross is said in full above;
        # only an import that raised or ended has more to show when run by hand
        whole = "" if problem.startswith(("it defines no ", "its ")) else (
            f" (`python -c 'import {chapter.module}'` in the workspace shows the whole error)")
        return OlError(f"{self.radix} does not import as {chapter.module}:\n{said}\nFix it"
                       f"{whole}, then run the command again.",
                       platform=f"Not graded: your tree, {self.shown(self.radix)}, does not "
                       f"import as {chapter.module}, so no test could run:\n\n"
                       f"{self.renamed(unrooted(problem.strip(), chapter))}\n\nMake it "
                       f"import (it must define {chapter.class_name}), then submit again.")


@dataclass(frozen=True)
class Submission:
    """A workspace's files as one command grades them, read once at its start: every part
    of one verdict sees the same texts, whatever happens to the files meanwhile."""

    workspace: Workspace
    tree: str | None                 # the implementation's text; None: not read
    tests: str | None                # the test file's text; None: not read
    # each chapter this one needs, with the student's own tree of it (None: there is none)
    builds: tuple[tuple[Chapter, str | None], ...] = ()

    @property
    def chapter(self) -> Chapter:
        return self.workspace.chapter

    @property
    def hashes(self) -> dict[str, str]:
        """The SHA-256 of each file read, by its path in the submission."""
        chapter = self.chapter
        texts = [(chapter.implementation, self.tree), (chapter.student_tests, self.tests),
                 *((needed.implementation, text) for needed, text in self.builds)]
        return {path.as_posix(): hashlib.sha256(text.encode()).hexdigest()
                for path, text in texts if text is not None}

    def suite(self) -> Suite:
        """The student's tests, as a suite the engine runs; OlError when the file does not
        compile or names no test."""
        workspace, source = self.workspace, self.tests
        assert source is not None, "a submission read without its tests has no suite"
        try:  # parsing only: nothing of the file runs here
            compile(source, str(workspace.tests), "exec", dont_inherit=True)
        except (RecursionError, MemoryError):  # Python's compiler gives up on it
            raise OlError(f"{workspace.tests} does not compile, so none of its tests can run: "
                          "an expression or a block in it nests too deeply for Python's "
                          "compiler. Split it up, then run the command again.",
                          platform=f"Not graded: your tests, "
                          f"{workspace.shown(workspace.tests)}, do not compile, so none "
                          "of them could run: an expression or a block in them nests too "
                          "deeply for Python's compiler. Split it up, then submit "
                          "again.") from None
        except (SyntaxError, ValueError) as error:
            said = "".join(traceback.format_exception_only(type(error), error)).rstrip()
            shown = "\n".join(f"    {line}" for line in said.splitlines())
            if isinstance(error, SyntaxError):  # as Python shows it, named as submitted
                error.filename = workspace.shown(workspace.tests)
            as_submitted = "".join(traceback.format_exception_only(type(error), error)).rstrip()
            raise OlError(f"{workspace.tests} does not compile, so none of its tests can run:\n"
                          f"{shown}\nFix it, then run the command again.",
                          platform=f"Not graded: your tests, "
                          f"{workspace.shown(workspace.tests)}, do not "
                          f"compile, so none of them could run:\n\n{as_submitted}\n\nFix "
                          "that line, then submit again.") from None
        if not names_a_test(source):
            raise no_tests(workspace)
        # trees only behind the proxy
        return Suite(files=(), tests=((workspace.tests.name, source),),
                     contract=self.chapter.contract, proxy=(),
                     beside=references(self.chapter))


def names_a_test(source: str) -> bool:
    """False when the module surely binds no ``test...`` name (``source`` compiles)."""
    tree = parse(source)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        else:
            names.update(target.id for target in ast.walk(node) if isinstance(target, ast.Name)
                         and isinstance(target.ctx, ast.Store))
    return any(name.lower().startswith("test") or name == "*" for name in names)


def no_tests(workspace: Workspace) -> OlError:
    chapter = workspace.chapter
    required = in_words(len(chapter.required_tests))
    return OlError(f"{workspace.tests} holds no tests: write functions named test_... "
                   f"(`ol tests {chapter.id}` lists the {required} required ones), then run "
                   "the command again.",
                   platform=f"Not graded: your tests, {workspace.shown(workspace.tests)}, hold "
                   f"no test. Write functions named test_..., the {required} required ones "
                   f"among them ({', '.join(chapter.required_tests)}), then submit again.")


UPLOAD_LIMIT = 10_000  # files and folders of an upload ol looks through


def uploaded(submission: Path) -> list[Path]:
    """Every file and folder of a platform's upload folder, hidden ones left out, walked
    without recursion and without following a link; OlError when a name is not printable
    text (a newline, a control character, bytes that are not UTF-8: refused, not parsed) or
    the upload holds more than UPLOAD_LIMIT entries."""
    found: list[Path] = []
    todo = [submission]
    while todo:
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.name.isprintable():
                shown = ascii(Path(entry.path).relative_to(submission).as_posix())
                raise OlError(f"the submission holds a name that is not printable text, "
                              f"{shown}: rename it, then grade it again",
                              platform=f"Not graded: your submission holds a file or folder "
                              f"whose name is not printable text ({shown}). Rename it, then "
                              "submit again.")
            if entry.name.startswith("."):
                continue
            found.append(Path(entry.path))
            if len(found) > UPLOAD_LIMIT:
                raise OlError(f"the submission holds more than {UPLOAD_LIMIT:,} files and "
                              "folders", platform=f"Not graded: your submission holds more "
                              f"than {UPLOAD_LIMIT:,} files and folders. Upload only your "
                              "tree and your tests, then submit again.")
            if entry.is_dir(follow_symlinks=False):
                todo.append(Path(entry.path))
    return sorted(found)


def gather(submission: Path, into: Path, chapter: Chapter) -> Workspace:
    """A workspace at ``into`` holding the tree and the tests found in ``submission`` (a
    platform's upload folder): for each, the first file, by sorted path, whose path ends in
    its workspace path, else whose name is its bare name. It must be a plain file of its
    own (no link of either kind, pipe or device: refused, never skipped for another).
    OlError naming what is wrong and what to upload."""
    paths = [path for path in uploaded(submission) if not path.is_dir() or path.is_symlink()]
    names = {}
    workspace = Workspace(into, chapter)
    missing = []
    submitted = tuple((path.as_posix(), path.name)
                      for path in (chapter.implementation, chapter.student_tests))
    for (wanted, bare), target in zip(submitted, (workspace.radix, workspace.tests),
                                      strict=True):
        match = next((path for path in paths if path.as_posix().endswith("/" + wanted)),
                     None) or next((path for path in paths if path.name == bare), None)
        if match is None:
            missing.append(wanted)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(Workspace(submission, chapter).read(match), encoding="utf-8")
        names[wanted] = match.relative_to(submission).as_posix()
    for needed in chapter.needed:  # what it builds on, when uploaded beside it
        wanted, bare = needed.implementation.as_posix(), needed.implementation.name
        match = next((path for path in paths if path.as_posix().endswith("/" + wanted)),
                     None) or next((path for path in paths if path.name == bare), None)
        if match is not None:
            target = into / needed.implementation
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(Workspace(submission, chapter).read(match), encoding="utf-8")
            names[wanted] = match.relative_to(submission).as_posix()
    if missing:
        raise OlError(f"the submission holds no {' and no '.join(missing)}: upload "
                      f"{upload(chapter)}, then submit again",
                      platform=f"Not graded: your submission holds no "
                      f"{' and no '.join(missing)}. {submit(chapter)}")
    (workspace.package / "__init__.py").write_text("", encoding="utf-8")
    return Workspace(into, chapter, names)
