"""What the course suite costs in process, against an older commit's course suite.

Run from the repository's root::

    python bench/course_bench.py --against REV [--rounds 5] [--tree impl/radix.py]

REV is checked out in a temporary git worktree. Each round runs both course suites (this
checkout's ``tests/course`` and REV's, each with its own ``model``) as a fresh ``python -m
pytest`` process on the same tree (``--tree``, by default this checkout's reference), in
the test process itself: no proxy, no sandbox, so only the course's own work is timed.
The two alternate, old first, then new first, so a machine that speeds up or slows down
weighs on both alike; the first round warms the disk cache and is not counted. It prints
each side's median wall time and the median of the per-round ratios new/old: the issue's
bound for the course's growth is a ratio, never an absolute time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def course_copy(checkout: Path, tree: Path, into: Path) -> Path:
    """The course tests of ``checkout`` and its model, beside ``tree`` as tl_ds.radix."""
    shutil.copytree(checkout / "tests" / "course", into)
    shutil.copytree(checkout / "model", into / "model")
    (into / "tl_ds").mkdir()
    shutil.copy(tree, into / "tl_ds" / "radix.py")
    return into


def run_course(folder: Path) -> tuple[float, int]:
    """(wall seconds, exit code) of the course suite in ``folder``, in a fresh process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_ds07_radix.py"], cwd=folder, capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(folder),
                               "PYTHONDONTWRITEBYTECODE": "1"})
    return time.perf_counter() - started, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, metavar="REV",
                        help="the commit whose course suite is the baseline")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=ROOT / "impl" / "radix.py",
                        help="the tree both suites run on (default: the reference)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ol-course-bench-") as name:
        scratch = Path(name)
        old = scratch / "old-checkout"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old),
                        args.against], check=True, capture_output=True)
        try:
            folders = {"old": course_copy(old, args.tree, scratch / "old"),
                       "new": course_copy(ROOT, args.tree, scratch / "new")}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)
        walls: dict[str, list[float]] = {"old": [], "new": []}
        codes: set[int] = set()
        for round in range(args.rounds + 1):
            order = ("old", "new") if round % 2 == 0 else ("new", "old")
            for label in order:
                wall, code = run_course(folders[label])
                codes.add(code)
                if round:
                    walls[label].append(wall)
    ratios = [new / old for new, old in zip(walls["new"], walls["old"], strict=True)]
    print(f"course suite in process on {args.tree.name}, {args.rounds} rounds "
          f"(exit codes {sorted(codes)})")
    for label in ("old", "new"):
        print(f"  {label}: median {statistics.median(walls[label]):.2f} s")
    print(f"  new / old: median {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    return 0 if codes == {0} else 1


if __name__ == "__main__":
    sys.exit(main())
