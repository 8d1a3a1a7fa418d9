"""The student's everyday loop, repeated: edit only the tests, check again, with the tree's
results kept from the check before. Counts every check that did not give the verdict of the
first one (a worker that died, an exit code of 2 or 3), as separate `ol` processes.

    python bench/recheck_loop.py [--rounds 20] [--example passing]

Works on a copy of the example in a temporary folder with a cache of its own; nothing the
user owns is touched. Prints each round's exit code and seconds, then the count of faults.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--example", default="passing", choices=("passing", "failing"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ol-recheck-") as scratch:
        workspace = Path(scratch) / "ws"
        shutil.copytree(ROOT / "examples" / args.example, workspace)
        env = {**os.environ, "OL_CACHE": str(Path(scratch) / "cache")}
        command = [sys.executable, str(ROOT / "ol.py"), "check", "ds.07",
                   "--workspace", str(workspace)]
        first = subprocess.run(command, env=env, capture_output=True, text=True)
        print(f"cold check: exit {first.returncode}")
        tests = workspace / "tests" / "test_ds07_radix.py"
        faults = 0
        for number in range(1, args.rounds + 1):
            tests.write_text(tests.read_text() + f"\n# edited in round {number}\n")
            started = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            fault = done.returncode != first.returncode
            faults += fault
            last = (done.stderr.strip().splitlines() or [""])[-1]
            print(f"round {number:2}: exit {done.returncode} in {seconds:5.1f} s"
                  + (f"  FAULT: {last}" if fault else ""))
    print(f"{faults} of {args.rounds} re-checks did not give the first check's verdict")
    return 1 if faults else 0


if __name__ == "__main__":
    raise SystemExit(main())
