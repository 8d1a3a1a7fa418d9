"""How long `ol check` and `ol mutants` take on the fast engine and on the naive baseline.

Run from the repository's root::

    python bench/check_bench.py [--rounds 3] [--mutants-rounds 1] [--workspace DIR]

In one invocation, and interleaved round by round so a busy machine slows both alike:

- fast: the engine's default path, a warm worker that forks a child per run;
- naive: one fresh ``python -m pytest`` process per run (``--isolation strict``).

Each round runs ``ol check ds.07`` on the passing example (or ``--workspace``; and
``ol mutants ds.07``) in this process, output discarded. It prints the median wall time
of each path, their ratio, and the floor: the sum of the tests' own run times, as pytest
measured them inside the runs, divided by the cores; and our ratio to that floor. Only
ratios are meant to be compared; absolute seconds depend on the machine.

``--against REV`` instead compares this checkout with an older commit: REV is checked out
in a temporary git worktree, and ``ol check ds.07`` on the passing example runs as a
fresh ``python ol.py`` process of each, interleaved round by round. ``--proxy-calls N``
measures what one call to a tree costs through the proxy of a sandboxed run, against the
same calls on the tree in the test's own process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ol  # noqa: E402 - after the path is set
from harness.run.engine import Engine  # noqa: E402
from harness.run.layout import Suite  # noqa: E402

tests_seconds = [0.0]
_run = Engine.run


def counting_run(self, *args, **kwargs):
    """Engine.run, adding the tests' own times of every run to ``tests_seconds``."""
    result = _run(self, *args, **kwargs)
    tests_seconds[0] += sum(record.seconds for record in result.records)
    return result


def patch_engine() -> None:
    Engine.run = counting_run


def once(argv: list[str], mode: str) -> tuple[float, float, int]:
    """(wall seconds, tests' own seconds, exit code) of ``ol argv --isolation mode``."""
    tests_seconds[0] = 0.0
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        fresh = ["--fresh"] if argv[0] == "check" else []  # every round runs it all
        code = ol.main([*argv, "--isolation", mode, *fresh])
    return time.perf_counter() - started, tests_seconds[0], code


def measure(name: str, argv: list[str], rounds: int) -> None:
    cores = os.cpu_count() or 1
    walls: dict[str, list[float]] = {"fast": [], "naive": []}
    floors: list[float] = []
    codes = set()
    once(argv, "fast")  # warm the disk cache: not timed
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


def against(revision: str, workspace: str, rounds: int) -> None:
    """``ol check`` of this checkout against ``revision``'s, each a fresh process, interleaved."""
    with tempfile.TemporaryDirectory(prefix="ol-bench-") as folder:
        old = Path(folder) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old),
                        revision], check=True, capture_output=True)
        try:
            walls: dict[str, list[float]] = {"old": [], "new": []}
            codes: dict[str, set[int]] = {"old": set(), "new": set()}
            for _ in range(rounds + 1):  # the first round warms the disk cache: not counted
                for label, checkout in (("old", old), ("new", ROOT)):
                    started = time.perf_counter()
                    done = subprocess.run(
                        [sys.executable, str(checkout / "ol.py"), "check", "ds.07",
                         "--workspace", workspace], capture_output=True, cwd=checkout,
                        env={**os.environ, "OL_CACHE": "off"})  # every round runs it all
                    walls[label].append(time.perf_counter() - started)
                    codes[label].add(done.returncode)
            old_wall = statistics.median(walls["old"][1:])
            new_wall = statistics.median(walls["new"][1:])
            print(f"ol check ds.07 ({rounds} rounds, interleaved; exit codes old "
                  f"{sorted(codes['old'])}, new {sorted(codes['new'])}):")
            print(f"  {revision:<12} {old_wall:7.2f} s")
            print(f"  this checkout {new_wall:7.2f} s   "
                  f"{new_wall / old_wall:5.2f}x of {revision}")
            paired = [new / old for old, new in zip(walls["old"][1:], walls["new"][1:],
                                                     strict=True)]
            print(f"  round by round: {statistics.median(paired):5.2f}x (median of "
                  + ", ".join(f"{ratio:.2f}" for ratio in paired) + ")")
            for label in ("old", "new"):
                print(f"    {label} rounds: "
                      + ", ".join(f"{wall:.2f}" for wall in walls[label][1:]))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)


PROXY_TEST = """
import time
import pytest
from tl_ds.radix import RadixTree

def test_calls():
    tree = RadixTree(1)
    tree.insert([1, 2, 3], ["a", "b", "c"])
    started = time.perf_counter()
    for _ in range({calls}):
        tree.node_count()
    plain = (time.perf_counter() - started) / {calls}
    started = time.perf_counter()
    for _ in range({calls} // 10):
        tree.match_prefix([1, 2, 3, 4])
    walk = (time.perf_counter() - started) / ({calls} // 10)
    pytest.fail(f"PER-CALL {{plain}} {{walk}}")  # how the numbers leave a sandboxed run
"""


def proxy_calls(calls: int) -> None:
    """Seconds per call through the proxy of a sandboxed run, and beside the tests."""
    from harness.chapter import find

    chapter = find("ds.07")
    reference_source, CONTRACT = chapter.reference_source, chapter.contract

    with tempfile.TemporaryDirectory(prefix="ol-bench-") as folder:
        test = Path(folder) / "test_calls.py"
        test.write_text(PROXY_TEST.format(calls=calls), encoding="utf-8")
        said = {}
        with Engine() as engine:
            mode = engine.sandbox.mode
            for label, proxy in (("proxied", ()), ("in-process", None)):
                suite = Suite(contract=CONTRACT, files=(test,), proxy=proxy, ours=proxy is None)
                run = engine.run(suite, reference_source(), timeout=600, trusted=True)
                text = run.records[0].text if run.records else ""
                found = [line for line in text.splitlines() if "PER-CALL " in line]
                said[label] = ([float(part)
                                for part in found[-1].split("PER-CALL ")[1].split()[:2]]
                               if found else None)
    if said["proxied"] is None or said["in-process"] is None:
        print("proxy calls: the measuring run failed")
        return
    print(f"one call to the reference ({calls} calls, sandbox "
          f"{mode}):")
    for index, name in enumerate(("node_count()", "match_prefix(4 tokens)")):
        proxied, local = said["proxied"][index], said["in-process"][index]
        print(f"  {name:<24} proxied {proxied * 1e6:7.1f} us   in-process "
              f"{local * 1e6:7.2f} us   ({proxied / local:5.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mutants-rounds", type=int, default=1)
    parser.add_argument("--workspace", default=str(ROOT / "examples" / "passing"))
    parser.add_argument("--against", metavar="REV", default=None,
                        help="compare ol check with this commit's, in a git worktree")
    parser.add_argument("--proxy-calls", type=int, default=0, metavar="N",
                        help="measure the proxy's cost per call over N calls")
    args = parser.parse_args()
    if args.against:
        against(args.against, args.workspace, args.rounds)
        return
    if args.proxy_calls:
        proxy_calls(args.proxy_calls)
        return
    patch_engine()
    measure(f"ol check ds.07 ({Path(args.workspace).resolve().name})",
            ["check", "ds.07", "--workspace", args.workspace], args.rounds)
    if args.mutants_rounds > 0:
        measure("ol mutants ds.07", ["mutants", "ds.07"], args.mutants_rounds)


if __name__ == "__main__":
    main()
