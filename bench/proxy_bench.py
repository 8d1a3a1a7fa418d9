"""What the proxy costs the course run: the course suite behind the wall against in process.

Run from the repository's root::

    python bench/proxy_bench.py [--rounds 5] [--tree impl/radix.py] [--sandbox auto]

One engine (one sandbox, one warm worker) runs the course suite on ``--tree`` (by default
the reference) two ways, alternating, round after round:

- in process: the tree imported beside the tests, as the project's own test run does;
- proxied: the tree in a process of its own behind the chapter's proxy, as a student's
  tree is run by ``ol check``.

Both are the same run otherwise (same sandbox, worker, profile and seeds), so their
difference is the proxy's. The first round warms the worker and is not counted. It prints
each way's median wall time and the median of the per-round ratios proxied / in process
(the target: at most 1.3), with the machine's load averages, since a shared machine slows
both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.chapter import find  # noqa: E402
from harness.grade import mutation  # noqa: E402
from harness.run.engine import Engine  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=ROOT / "impl" / "radix.py")
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    chapter = find("ds.07")
    tree = args.tree.read_text(encoding="utf-8")
    suites = {"in process": mutation.course_suite(chapter, "course", proxy=False),
              "proxied": mutation.course_suite(chapter, "course", proxy=True)}
    walls: dict[str, list[float]] = {label: [] for label in suites}
    failed = set()
    with Engine(args.sandbox) as engine:
        for round in range(args.rounds + 1):
            order = list(suites) if round % 2 == 0 else list(reversed(suites))
            for label in order:
                started = time.perf_counter()
                run = engine.run(suites[label], tree, timeout=900, trusted=True)
                wall = time.perf_counter() - started
                if not run.all_passed:
                    failed.add(label)
                if round:
                    walls[label].append(wall)
        mode = engine.sandbox.mode
    ratios = [proxied / inside for proxied, inside
              in zip(walls["proxied"], walls["in process"], strict=True)]
    print(f"the course suite on {args.tree.name}, {args.rounds} rounds, sandbox {mode}"
          + (f"; FAILED: {', '.join(sorted(failed))}" if failed else ""))
    for label, times in walls.items():
        print(f"  {label}: median {statistics.median(times):.2f} s")
    print(f"  proxied / in process: median {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f}; target at most 1.3)")
    print(f"  load averages {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
