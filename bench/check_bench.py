"""How long `ol check` and `ol mutants` take on the fast engine and on the naive baseline.

Run from the repository's root::

    python bench/check_bench.py [--rounds 3] [--mutants-rounds 1] [--workspace DIR]

In one invocation, and interleaved round by round so a busy machine slows both alike:

- fast: the engine's default path, a warm worker that forks a child per run;
- naive: one fresh ``python -m pytest`` process per run (``--isolation strict``).

Each round runs ``ol check ds.07`` on the passing example (and ``ol mutants ds.07``) in
this process, output discarded. It prints the median wall time of each path, their ratio,
and the floor: the sum of the tests' own run times, as pytest measured them inside the
runs, divided by the cores; and our ratio to that floor. Only ratios are meant to be
compared; absolute seconds depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ol  # noqa: E402 - after the path is set
from harness import engine  # noqa: E402

tests_seconds = [0.0]
_run_suite = engine.run_suite


def counting_run_suite(*args, **kwargs):
    """engine.run_suite, adding the tests' own times of every run to ``tests_seconds``."""
    result = _run_suite(*args, **kwargs)
    tests_seconds[0] += sum(record.seconds for record in result.records)
    return result


def patch_engine() -> None:
    from harness import grading, mutation
    for module in (engine, grading, mutation):
        module.run_suite = counting_run_suite


def once(argv: list[str], mode: str) -> tuple[float, float, int]:
    """(wall seconds, tests' own seconds, exit code) of ``ol argv`` under ``mode``."""
    engine.set_isolation(mode)
    tests_seconds[0] = 0.0
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = ol.main(argv)
    return time.perf_counter() - started, tests_seconds[0], code


def measure(name: str, argv: list[str], rounds: int) -> None:
    cores = os.cpu_count() or 1
    walls: dict[str, list[float]] = {"fast": [], "naive": []}
    floors: list[float] = []
    codes = set()
    once(argv, "fast")  # start the worker, warm the disk cache: not timed
    for _ in range(rounds):
        for label, mode in (("fast", "fast"), ("naive", "strict")):
            wall, own, code = once(argv, mode)
            walls[label].append(wall)
            codes.add(code)
            if label == "fast":
                floors.append(own / cores)
    fast, naive = statistics.median(walls["fast"]), statistics.median(walls["naive"])
    floor = statistics.median(floors)
    print(f"{name} ({rounds} rounds, {cores} cores, exit codes {sorted(codes)}):")
    print(f"  naive baseline   {naive:7.2f} s   (one fresh python -m pytest per run)")
    print(f"  fast engine      {fast:7.2f} s   {naive / fast:5.2f}x faster than the baseline")
    print(f"  floor            {floor:7.2f} s   (the tests' own time / {cores} cores); "
          f"fast is {fast / floor:4.2f}x the floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mutants-rounds", type=int, default=1)
    parser.add_argument("--workspace", default=str(ROOT / "examples" / "passing"))
    args = parser.parse_args()
    patch_engine()
    measure("ol check ds.07 (passing example)",
            ["check", "ds.07", "--workspace", args.workspace], args.rounds)
    if args.mutants_rounds > 0:
        measure("ol mutants ds.07", ["mutants", "ds.07"], args.mutants_rounds)


if __name__ == "__main__":
    main()
