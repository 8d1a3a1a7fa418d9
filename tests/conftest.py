"""The project's own test run: ``tl_ds.radix`` is the reference, ``impl/radix.py``.

The course tests import ``tl_ds.radix`` and nothing else. Graders choose which file that
import yields for each run; in this project's own run it is the reference, loaded from
``impl/radix.py`` under the module name ``tl_ds.radix`` without writing any file.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

from harness.run.engine import Engine

REFERENCE = Path(__file__).resolve().parent.parent / "impl" / "radix.py"


def _load_reference_as_tl_ds() -> None:
    package = types.ModuleType("tl_ds")
    package.__path__ = []
    spec = importlib.util.spec_from_file_location("tl_ds.radix", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tl_ds"] = package
    sys.modules["tl_ds.radix"] = module
    spec.loader.exec_module(module)
    package.radix = module


# The runs the project's own tests make in process (ol.main makes an engine of its own).
RUNS = Engine()


def pytest_configure(config) -> None:
    _load_reference_as_tl_ds()
    # every run of the project's tests runs: results kept by content are tested on purpose
    # (test_cache.py), never met by chance
    os.environ["OL_CACHE"] = "off"


def pytest_unconfigure(config) -> None:
    RUNS.close()


def git_status() -> str:
    """The checkout's changes and untracked files: what a run of ``ol`` must never add to."""
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=REFERENCE.parent.parent, capture_output=True, text=True)
    return done.stdout


def listen_to_ctrl_c() -> None:
    """Undo an ignored SIGINT inherited from a shell that started the suite in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(argv: list[str], scratch: Path, cwd: Path) -> tuple[int, str]:
    """Start ``ol argv``, press Ctrl-C once a run's folder exists; (exit code, stderr).

    The runs' temporary folders go to ``scratch``, which must be empty afterwards.
    """
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen([sys.executable, str(REFERENCE.parent.parent / "ol.py"), *argv],
                               cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=listen_to_ctrl_c)
    deadline = time.monotonic() + 60
    while not list(scratch.glob("ol-runs-*/run-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return process.returncode, err
