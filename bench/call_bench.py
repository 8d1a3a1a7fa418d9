"""What one call to a tree behind the sandbox's wall costs, against a raw round trip.

Run from the repository's root::

    python bench/call_bench.py [--calls 20000] [--sandbox auto|bwrap|uid|none]

One run, started by ol's engine as a student's tests are (the tests' side and the tree's
side apart, the tree behind the proxy), times inside its test process, in the same run:

- proxied: ``len(tree)`` on the reference, one call through the chapter's proxy (the
  request and the answer cross as JSON lines of plain data, tree_wire.py), and
  ``match_prefix`` of a 16-token key, whose answer carries a list;
- raw: the floor of any call between two processes: 50 bytes sent over a socketpair to a
  forked echo process of the same test side, and read back (a blocking read, as the
  proxy's far side does).

Each figure is per call, the minimum and the median of ``--calls`` calls, measured one
call at a time with ``time.perf_counter``; proxied and raw calls interleave in blocks, so
a busy machine slows both alike. The report gives each proxied call's ratio to the raw
round trip (goal: within 2x, minimum and median).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.chapter import find  # noqa: E402
from harness.run.engine import Engine  # noqa: E402
from harness.run.layout import Suite  # noqa: E402

TIMED = '''
import json, os, socket, statistics, time
from tl_ds.radix import RadixTree

CALLS = @CALLS@
BLOCK = 500


def test_calls():
    tree = RadixTree(1)
    tree.insert(list(range(64)), list(range(64)))
    key = list(range(16))
    near, far = socket.socketpair()
    child = os.fork()
    if child == 0:
        near.close()
        while True:
            data = far.recv(4096)
            if not data:
                os._exit(0)
            far.sendall(data)
    far.close()
    message = b"x" * 50

    def raw():
        near.sendall(message)
        near.recv(4096)

    kinds = {"raw": raw, "len": lambda: len(tree), "match_prefix": lambda: tree.match_prefix(key)}
    times = {name: [] for name in kinds}
    clock = time.perf_counter
    for _ in range(max(1, CALLS // BLOCK)):
        for name, call in kinds.items():
            kept = times[name]
            for _ in range(BLOCK):
                started = clock()
                call()
                kept.append(clock() - started)
    near.close()
    os.waitpid(child, 0)
    said = {name: [min(kept) * 1e6, statistics.median(kept) * 1e6] for name, kept in times.items()}
    assert False, "TIMES " + json.dumps(said)
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    chapter = find("ds.07")
    with tempfile.TemporaryDirectory() as folder, Engine(args.sandbox) as engine:
        test = Path(folder) / "test_calls.py"
        test.write_text(TIMED.replace("@CALLS@", str(args.calls)), encoding="utf-8")
        suite = Suite(files=(test,), contract=chapter.contract, proxy=())
        run = engine.run(suite, chapter.reference.read_text(encoding="utf-8"), timeout=600,
                         trusted=True)
        text = " ".join(record.text for record in run.records)
        if "TIMES {" not in text:
            print(f"the timed run did not report ({run.status.value}): {run.detail}\n"
                  f"{text[-2000:]}")
            return 1
        times, _ = json.JSONDecoder().raw_decode(text.rsplit("TIMES ", 1)[1])
        print(f"one call, in microseconds ({args.calls:,} calls each; sandbox "
              f"{engine.sandbox.mode})")
        print(f"  {'call':<14} {'min':>7} {'median':>7}  {'min/raw':>8} {'median/raw':>10}")
        raw_min, raw_median = times["raw"]
        for name, (low, middle) in times.items():
            print(f"  {name:<14} {low:7.1f} {middle:7.1f}  {low / raw_min:7.2f}x "
                  f"{middle / raw_median:9.2f}x")
        worst = max(max(low / raw_min, middle / raw_median)
                    for name, (low, middle) in times.items() if name != "raw")
        print(f"  a proxied call at most {worst:.2f}x the raw round trip "
              f"({'meets' if worst <= 2 else 'misses'} the goal of 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
