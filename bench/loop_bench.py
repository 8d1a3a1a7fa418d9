"""The TDD loop as a student runs it: `ol check` cold and warm, after touching only the tree
or only the tests, `ol diff` after a passing check, and the failing example against the
passing one, all in one run, as ratios against the cold check of the passing example.

    python bench/loop_bench.py [--rounds N]

Each round copies both examples into a fresh folder with a fresh, empty cache (OL_CACHE),
so nothing the user owns is touched and every cold check is cold. "the course part alone"
is the course tests on the passing tree, run once without the cache: the floor of a check
after a change to the tree. The medians of the rounds are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ol  # noqa: E402 - after the path is set
from harness.chapter import find  # noqa: E402
from harness.grade import grading  # noqa: E402
from harness.grade.workspace import Workspace  # noqa: E402
from harness.run.engine import Engine  # noqa: E402

CHAPTER = find("ds.07")

STEPS = ("passing cold", "passing warm", "failing cold", "failing warm", "tree touched",
         "tests touched", "diff after a check", "the course part alone")


def timed(argv: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = ol.main(argv)
    return time.perf_counter() - started, code


def one_round(folder: Path) -> dict[str, float]:
    os.environ["OL_CACHE"] = str(folder / "cache")
    spaces = {}
    for name in ("passing", "failing"):
        spaces[name] = folder / name
        shutil.copytree(ROOT / "examples" / name, spaces[name])

    def check(name: str) -> float:
        return timed(["check", "ds.07", "--workspace", str(spaces[name])])[0]

    seconds = {"passing cold": check("passing"), "passing warm": check("passing"),
               "failing cold": check("failing"), "failing warm": check("failing")}
    radix = spaces["passing"] / "tl_ds" / "radix.py"
    radix.write_text(radix.read_text() + "\n# touched\n")
    seconds["tree touched"] = check("passing")
    tests = spaces["passing"] / "tests" / "test_ds07_radix.py"
    tests.write_text(tests.read_text() + "\n# touched\n")
    seconds["tests touched"] = check("passing")
    seconds["diff after a check"] = timed(["diff", "ds.07", "--workspace",
                                           str(spaces["passing"])])[0]
    with Engine() as engine:
        started = time.perf_counter()
        submission = Workspace(spaces["passing"], CHAPTER).snapshot(tree=True, tests=False)
        grading.course_run(engine, grading.tree_source(engine, submission), CHAPTER)
        seconds["the course part alone"] = time.perf_counter() - started
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="rounds (default 1)")
    args = parser.parse_args()
    rounds: list[dict[str, float]] = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="ol-loop-") as name:
            rounds.append(one_round(Path(name)))
    median = {step: statistics.median(found[step] for found in rounds) for step in STEPS}
    base = median["passing cold"]
    print(f"ol check in the TDD loop ({args.rounds} round(s), {os.cpu_count()} cores); "
          "ratios against the cold check of the passing example:")
    for step in STEPS:
        print(f"  {step:<24} {median[step] / base:6.3f}x   ({median[step]:6.2f} s)")
    print(f"  failing cold / passing cold: {median['failing cold'] / base:.2f}x (goal: <= 2)")
    print(f"  tree touched / the course part alone: "
          f"{median['tree touched'] / median['the course part alone']:.2f}x (goal: <= 1, "
          "with the student's own run beside it)")
    print(f"  passing warm: {median['passing warm']:.2f} s (goal: < 1 s)")


if __name__ == "__main__":
    main()
