"""Running mutmut (3.x) on a trusted tree and reading what it found from its own data.

mutmut works in a folder of its own named ``mutants/`` beside the code it mutates, so a
run happens in a temporary folder laid out as mutmut expects (the module, ``tests/``, a
``pyproject.toml`` with its settings); the checkout is never touched. Every tree mutmut
mutates here is course material (the reference), never a submission.

What mutmut found is read from its data, never from its screen: after each mutant it
saves ``mutants/<module>.py.meta``, a JSON file with every mutant's exit code. Progress is
that file, read while the run goes; the results are read through mutmut's own API (its
meta data, its exit-code meanings, its diffs) by a small driver in the run's folder.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import OlError
from harness.run.layout import Suite, clean_environment, copy_item, write_module

TIMEOUT_MULTIPLIER = 4.0  # mutmut's: a mutant may use this many times the tests' CPU time
POLL = 1.0  # seconds between two readings of mutmut's data while it runs
CAUGHT = frozenset({"killed", "timeout", "segfault"})  # the statuses where the suite failed

DRIVER = '''\
import json, sys
from pathlib import Path
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code

found = []
for meta in sorted(Path("mutants").rglob("*.py.meta")):
    path = Path(*meta.with_suffix("").parts[1:])
    data = SourceFileMutationData(path=path)
    data.load()
    for name, code in data.exit_code_by_key.items():
        status = status_by_exit_code[code]
        diff = "" if status == "killed" else get_diff_for_mutant(name, path=path)
        found.append({"name": name, "status": status, "diff": diff})
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(found, out)
'''


@dataclass(frozen=True)
class Mutant:
    """One change mutmut made, and what the suite did with it (mutmut's status name)."""

    name: str
    status: str
    diff: str = ""

    @property
    def caught(self) -> bool:
        return self.status in CAUGHT

    @property
    def function(self) -> str:
        """mutmut's ``tl_ds.radix.xǁRadixTreeǁ_walk__mutmut_4`` as ``RadixTree._walk``."""
        mangled = re.sub(r"__mutmut_\d+$", "", self.name.rsplit(".", 1)[-1])
        if "\u01c1" in mangled:
            return ".".join(part for part in mangled.removeprefix("x").split("\u01c1") if part)
        return mangled.removeprefix("x_")

    def changed(self, sign: str) -> str:
        """The lines the diff removes (``sign`` "-") or adds ("+"), stripped, one a line."""
        return "\n".join(line[1:].strip() for line in self.diff.splitlines()
                         if line.startswith(sign) and not line.startswith(sign * 3))


@dataclass(frozen=True)
class Tally:
    """How far a run is: mutants judged of all, and how many of them survived so far."""

    done: int
    total: int
    survived: int


def lay_out(folder: Path, module: Path, source: str, suite: Suite, package: str) -> None:
    """The folder mutmut runs in: ``source`` as ``module``, the suite's files under
    ``tests/``, its support files beside them, and mutmut's settings."""
    write_module(folder, module, source)
    (folder / "tests").mkdir()
    for item in suite.files:
        copy_item(item, folder / "tests" / item.name)
    for name, text in suite.tests:
        (folder / "tests" / name).write_text(text, encoding="utf-8")
    support = []
    for item in suite.support:
        copy_item(item, folder / item.name)
        support.append(item.name)
    (folder / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        f'source_paths = ["{package}"]\n'
        'pytest_add_cli_args_test_selection = ["tests"]\n'
        'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
        f"also_copy = {json.dumps(support)}\n"
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}\n"
        "use_git_change_detection = false\n"
        "\n[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n', encoding="utf-8")


def environment(folder: Path, suite: Suite) -> dict[str, str]:
    (folder / "home").mkdir(exist_ok=True)
    return clean_environment(folder, suite.env)


def tally(folder: Path) -> Tally | None:
    """What mutmut's meta files say so far; None before it has written one (or while it
    is writing one)."""
    codes: list[int | None] = []
    for meta in (folder / "mutants").rglob("*.py.meta"):
        try:
            codes.extend(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
                         .values())
        except (OSError, ValueError, KeyError, AttributeError):
            return None
    if not codes:
        return None
    return Tally(sum(code is not None for code in codes), len(codes), codes.count(0))


def run(folder: Path, suite: Suite, jobs: int,
        progress: Callable[[Tally], None] | None = None) -> None:
    """``mutmut run`` in ``folder`` (laid out by ``lay_out``) until every mutant is judged;
    ``progress`` gets a Tally whenever one more is. OlError, with the end of what mutmut
    said, when it stops early."""
    process = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                                str(jobs)], cwd=folder, env=environment(folder, suite),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    said: collections.deque[bytes] = collections.deque(maxlen=64)  # kept for an error
    reader = threading.Thread(target=lambda: said.extend(iter(
        lambda: process.stdout.read1(4096), b"")), daemon=True)
    reader.start()
    last = None
    try:
        while True:
            try:
                returncode = process.wait(POLL)
            except subprocess.TimeoutExpired:
                returncode = None
            now = tally(folder)
            if progress is not None and now is not None and now != last:
                progress(now)
                last = now
            if returncode is not None:
                break
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    finally:
        reader.join(5)
    if returncode != 0:
        end = b"".join(said).decode("utf-8", "replace").replace("\r", "\n").splitlines()
        raise OlError(f"mutmut stopped (exit code {returncode}) before it had run every "
                      "mutant. The end of what it said:\n"
                      + "\n".join(line for line in end if line.strip())[-3000:])


def results(folder: Path, suite: Suite) -> tuple[Mutant, ...]:
    """Every mutant of the run in ``folder``, with the diff of each the suite did not kill."""
    answer = folder / "home" / "results.json"
    done = subprocess.run([sys.executable, "-c", DRIVER, str(answer)], cwd=folder,
                          env=environment(folder, suite), capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0 or not answer.exists():
        raise OlError(f"mutmut's results could not be read: {done.stderr.strip()[-2000:]}")
    return tuple(Mutant(item["name"], item["status"], item["diff"])
                 for item in json.loads(answer.read_text(encoding="utf-8")))
