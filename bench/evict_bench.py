"""Benchmark of eviction as the cache grows: time per evicted node from 10,000 to 1,000,000 nodes.

Run from the repo root (the script puts the root on ``sys.path`` itself)::

    python bench/evict_bench.py [--sizes 10000,100000,1000000] [--old REV]
                                [--leaf-values 100,1000,4000] [--budget SECONDS]
                                [--steady-values 1,16,100,1000] [--rounds N]
                                [--parts emptied,per-value,steady]

``bench/prefix_bench.py`` grows the trace against a fixed capacity; this one grows the
cache itself, with a pattern that makes every evicted leaf's parent rejoin the LRU list.

Emptied parents. At granule 1, parents 0, 1, 2, ... each get two one-token leaves:
``insert([p, 0], ...)`` then ``insert([p, 1], ...)``, which splits ``[p, 0]`` into the
parent ``[p]`` over the leaves ``[0]`` and ``[1]``. The parent shares its stamp with its
newer leaf, so evicting everything removes a parent's two leaves, leaves it childless
and older than every listed leaf, relists it, and evicts it next; one value a node. A
size is a number of nodes (a third of them parents). The tree is built untimed, then
``evict(300, f)`` is called until the tree is empty, each call timed; ``f`` is a
server's free list's ``append``. The report gives microseconds per evicted node at each
size for the reference (``impl/radix.py``) and the second tree (the passing example's, a heap
of stamps) side by side, and each tree's growth: its time per node at the largest size
over the smallest (goal for the reference: at most 1.5). A size runs ``--repeats`` times
on fresh trees, the best kept, but never more than a million nodes' worth (one run at
1,000,000). A tree stops at ``--budget`` seconds of eviction (default 10) and is
reported on the nodes it evicted by then, flagged "partial": those are the first nodes,
where a walk over the list is at its longest, and a partial run is not repeated.

Per value. A small cache at granule 1: 200,000 values in leaves of ``--leaf-values``
values each (distinct first tokens, so every leaf hangs from the root), evicted whole by
one ``evict(len(tree), f)``. Its time per value is set against the floor, measured in the
same process right next to it: ``f`` called over a list of the same values from C
(``exhaust(map(f, values))``, ``exhaust`` a shared ``deque(maxlen=0).extend``, as the
reference's own), appending to a fresh free list as evict does. The goal for the
reference is within 1.3 times the floor at leaves of request size (1,000 values and up);
short leaves show the tree's per-leaf work. Each figure is the best of
``--repeats`` runs (default 5), each on a freshly built tree.

Steady state. The cache as a server keeps it: a large tree, and each call frees a
little. At granule 1, every node holds ``--steady-values`` values (k): parents of k
tokens, each over two leaves of k tokens, up to 30,000 nodes or 1,000,000 values. A
round inserts fresh parents with their leaves (untimed), as many values as it then
evicts (about 12,800), so the tree keeps its size, then times calls of ``evict(n, f)``,
n being 64 values or one node's k, whichever is more: the oldest leaves go, and each
parent they empty rejoins the head of the list and goes next. After every twenty calls,
the floor of those twenty: ``exhaust(map(f, values))`` over exactly the values
each call freed, once per call, ``f`` a fresh list's ``append`` in both. Before each
block and each floor, 64 MiB are written over, so both start with cold caches, as an
evict of old values does in a server (timed right after the tree, the floor would find
the freed values warm). A round's
ratio is the tree's time over the floor's; the report gives the minimum and the median
over ``--rounds`` rounds (default 40), the trees' rounds interleaved. The goal for the
reference: within 1.5 times the floor.

Timing. Every timed region is measured in CPU time of this thread (``time.thread_time()``,
the budget too), so other processes on a shared machine count only through the caches
and memory bandwidth they share; best-of runs take out the rest of the noise. Garbage
collection stays on; each timed eviction starts after a full collection.

Before and after. ``--old REV`` adds the reference as it was at git revision REV (its
``impl/radix.py`` from ``git show``, loaded as a module without writing a file) to both
tables, with its ratio to the current reference. Only ratios measured in one run are
meant to be compared; absolute times depend on the machine. Standard library only.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import re
import statistics
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefix_bench import ints_from, second_tree  # beside this file

REPO = Path(__file__).resolve().parent.parent

SIZES = (10_000, 100_000, 1_000_000)
LEAF_VALUES = (100, 1_000, 4_000)
CACHE_VALUES = 200_000  # values in the per-value cache, however they are split in leaves
CHUNK = 300  # values asked of one evict call: the budget is checked between calls
BUDGET = 10.0  # CPU seconds of eviction a tree may spend at one size
REPEATS = 5
RUN_NODES = 1_000_000  # the repeats of one size evict at most this many nodes in all
GROWTH_GOAL = 1.5  # the reference's time per node, largest size over smallest, at most
FLOOR_GOAL = 1.3  # the reference's time per value over the floor's, at request-sized leaves
FILLER = 200_000  # first token of the filler after a per-value leaf's distinct first token
STEADY_VALUES = (1, 16, 100, 1_000)
STEADY_NODES = 30_000  # nodes in a steady-state tree, at most
STEADY_TOTAL = 1_000_000  # values in a steady-state tree, at most
STEADY_CALL = 64  # values asked of one steady-state evict call, at least a node's
STEADY_ROUND_VALUES = 12_800  # values a round evicts, about (at least one block's worth)
STEADY_BLOCK = 20  # evict calls timed in a row before their floor
ROUNDS = 40
exhaust = deque(maxlen=0).extend  # runs an iterator to its end from C, keeping nothing
CHILL = bytearray(64 << 20)  # larger than this machine's last-level cache, to write over
CHILL_FILL = bytes(range(256)) * (len(CHILL) // 256)
PARTS = ("emptied", "per-value", "steady")
STEADY_GOAL = 1.5  # the reference's steady-state time over the floor's, at most

Make = Callable[[int], Any]


# ---------------------------------------------------------------------- trees


@dataclass(frozen=True)
class Tree:
    """One implementation under test: a name for the report and its constructor."""

    name: str
    make: Make


class BenchError(Exception):
    """A benchmark that cannot run as asked: the message says why."""


def load_at_revision(rev: str) -> Make:
    """RadixTree of ``impl/radix.py`` at git revision ``rev``, loaded without a file."""
    done = subprocess.run(["git", "show", f"{rev}:impl/radix.py"], cwd=REPO,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"git show {rev}:impl/radix.py failed: {done.stderr.strip()}")
    name = "radix_at_" + re.sub(r"\W", "_", rev)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    sys.modules[name] = module
    exec(compile(done.stdout, f"{rev}:impl/radix.py", "exec"), module.__dict__)
    return module.RadixTree


def trees(old: str | None) -> list[Tree]:
    """The reference and the second tree, and the reference at ``old`` when asked."""
    SecondTree = second_tree()  # puts the repo root on sys.path
    from impl.radix import RadixTree

    chosen = [Tree("reference", RadixTree), Tree("second", SecondTree)]
    if old is not None:
        chosen.append(Tree(f"old {old}", load_at_revision(old)))
    return chosen


# ---------------------------------------------------------------------- emptied parents


def emptied_parents(make: Make, size: int) -> Any:
    """A granule-1 tree of ``ceil(size / 3)`` parents over two one-token leaves each."""
    tree = make(1)
    for parent in range(-(-size // 3)):
        block = 3 * parent
        tree.insert([parent, 0], [block, block + 1])
        tree.insert([parent, 1], [block, block + 2])
    return tree


@dataclass(frozen=True)
class Evicted:
    """What one timed eviction did: seconds, nodes evicted, nodes there were."""

    seconds: float
    nodes: int
    of: int

    @property
    def partial(self) -> bool:
        return self.nodes < self.of

    @property
    def per_node(self) -> float:
        return self.seconds / self.nodes if self.nodes else math.nan


def evict_everything(tree: Any, budget: float) -> Evicted:
    """Time ``evict(CHUNK, f)`` calls until the tree is empty or ``budget`` s are spent."""
    free: list[int] = []
    of = tree.node_count()
    gc.collect()
    seconds = 0.0
    while len(tree) and seconds <= budget:
        start = time.thread_time()
        tree.evict(CHUNK, free.append)
        seconds += time.thread_time() - start
    return Evicted(seconds, of - tree.node_count(), of)


def bench_emptied_parents(chosen: list[Tree], sizes: Sequence[int], budget: float,
                          repeats: int) -> dict[str, list[Evicted]]:
    """Every tree at every size, best of its runs, one tree built at a time."""
    results: dict[str, list[Evicted]] = {tree.name: [] for tree in chosen}
    for size in sizes:
        runs = max(1, min(repeats, RUN_NODES // size))
        for tree in chosen:
            best: Evicted | None = None
            for _ in range(runs):
                built = emptied_parents(tree.make, size)
                evicted = evict_everything(built, budget)
                del built
                if best is None or evicted.per_node < best.per_node:
                    best = evicted
                if evicted.partial:
                    break
            results[tree.name].append(best)
            note = f", partial: the first {best.nodes:,}" if best.partial else ""
            print(f"  ... {tree.name}: {best.of:,} nodes, best {best.seconds:.2f} s{note}",
                  file=sys.stderr)
    return results


# ---------------------------------------------------------------------- per value


def small_cache(make: Make, leaf_values: int, blocks: list[int]) -> Any:
    """A granule-1 tree holding ``blocks`` in leaves of ``leaf_values`` under the root."""
    tree = make(1)
    filler = list(range(FILLER, FILLER + leaf_values - 1))
    for leaf, start in enumerate(range(0, len(blocks), leaf_values)):
        tree.insert([leaf, *filler], blocks[start:start + leaf_values])
    return tree


def floor_seconds(values: list[int]) -> float:
    """Seconds to call a free list's ``append`` on every value from C."""
    free: list[int] = []
    gc.collect()
    start = time.thread_time()
    exhaust(map(free.append, values))
    return time.thread_time() - start


def evict_all_seconds(tree: Any) -> float:
    """Seconds of one ``evict(len(tree), f)``, ``f`` a free list's ``append``."""
    free: list[int] = []
    gc.collect()
    start = time.thread_time()
    tree.evict(len(tree), free.append)
    return time.thread_time() - start


def bench_per_value(chosen: list[Tree], leaf_values: int,
                    repeats: int) -> tuple[float, dict[str, float]]:
    """(floor, {tree: seconds}) per value, each the best of ``repeats`` interleaved runs."""
    blocks = list(range(CACHE_VALUES - CACHE_VALUES % leaf_values))
    best_floor = math.inf
    best = dict.fromkeys((tree.name for tree in chosen), math.inf)
    for _ in range(repeats):
        for tree in chosen:
            built = small_cache(tree.make, leaf_values, blocks)
            best_floor = min(best_floor, floor_seconds(blocks))
            best[tree.name] = min(best[tree.name], evict_all_seconds(built))
    return best_floor / len(blocks), {name: s / len(blocks) for name, s in best.items()}


# ---------------------------------------------------------------------- steady state


class Steady:
    """A granule-1 tree of parents over two leaves, every node holding ``k`` values."""

    def __init__(self, make: Make, k: int) -> None:
        self.tree = make(1)
        self.k = k
        self.parents = 0
        for _ in range(min(STEADY_NODES, STEADY_TOTAL // k) // 3):
            self.grow()

    def grow(self) -> None:
        """Add the next parent, stamped with its newer leaf, over its two leaves."""
        k = self.k
        base = 3 * k * self.parents
        self.parents += 1
        upper = list(range(base, base + k))
        lower = list(range(base + k, base + 3 * k))
        self.tree.insert(upper + lower[:k], upper + lower[:k])
        self.tree.insert(upper + lower[k:], upper + lower[k:])


def chill() -> None:
    """Write over more memory than the processor caches hold, so the timed region after it
    starts with cold caches: the values an evict frees are old (the least recently used),
    and cold in a server; the floor after the tree's calls must not find them warm."""
    CHILL[:] = CHILL_FILL


def steady_round(steady: Steady, n: int, calls: int) -> tuple[float, float]:
    """(tree seconds, floor seconds) of ``calls`` calls of ``evict(n, f)`` and their floor.

    The calls run in blocks of STEADY_BLOCK, each followed at once by its floor, so the
    two share the machine's state as closely as they can.
    """
    for _ in range(-(-calls * n // (3 * steady.k))):
        steady.grow()
    evict = steady.tree.evict
    seconds = floor = 0.0
    gc.collect()
    for _ in range(0, calls, STEADY_BLOCK):
        free: list[int] = []
        append = free.append
        ends: list[int] = []  # values freed after each call
        chill()
        start = time.thread_time()
        for _ in range(STEADY_BLOCK):
            evict(n, append)
            ends.append(len(free))
        seconds += time.thread_time() - start
        batches = [free[a:b] for a, b in zip([0, *ends], ends, strict=False)]
        append = [].append
        chill()
        start = time.thread_time()
        for values in batches:
            exhaust(map(append, values))
        floor += time.thread_time() - start
    return seconds, floor


def bench_steady(chosen: list[Tree], k: int, rounds: int) -> dict[str, list[float]]:
    """{tree: its ratio to the floor in every round}, the trees' rounds interleaved."""
    built = [(tree.name, Steady(tree.make, k)) for tree in chosen]
    n = max(STEADY_CALL, k)
    calls = STEADY_BLOCK * max(1, STEADY_ROUND_VALUES // (n * STEADY_BLOCK))
    ratios: dict[str, list[float]] = {name: [] for name, _ in built}
    for _ in range(rounds):
        for name, steady in built:
            seconds, floor = steady_round(steady, n, calls)
            ratios[name].append(seconds / floor)
    return ratios


# ---------------------------------------------------------------------- report


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print rows in aligned columns, the first left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [cell.ljust(width) if i == 0 else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(row, widths, strict=True))]
        print("  " + "  ".join(cells).rstrip())


def _x(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:.2f}x"


def _per_node(evicted: Evicted) -> str:
    return f"{evicted.per_node * 1e6:.2f}" + (" (partial)" if evicted.partial else "")


def report_emptied_parents(chosen: list[Tree], results: dict[str, list[Evicted]]) -> None:
    reference = results["reference"]
    others = [tree.name for tree in chosen[1:]]
    header = ["nodes", "reference us/node"]
    for name in others:
        header += [f"{name} us/node", f"{name}/reference"]
    rows = []
    for index, base in enumerate(reference):
        row = [f"{base.of:,}", _per_node(base)]
        for name in others:
            other = results[name][index]
            row += [_per_node(other), _x(other.per_node / base.per_node)]
        rows.append(row)
    _table(header, rows)
    if len(reference) < 2:
        return
    print(f"  growth, time per node at {reference[-1].of:,} nodes over {reference[0].of:,} "
          f"(goal for the reference: at most {GROWTH_GOAL}):")
    rows = []
    for tree in chosen:
        first, last = results[tree.name][0], results[tree.name][-1]
        partial = " (partial)" if first.partial or last.partial else ""
        verdict = ""
        if tree.name == "reference":
            verdict = "meets the goal" if last.per_node <= GROWTH_GOAL * first.per_node \
                else "MISSES the goal"
        rows.append([tree.name, _x(last.per_node / first.per_node) + partial, verdict])
    _table(["tree", "growth", ""], rows)


def report_per_value(chosen: list[Tree],
                     measured: list[tuple[int, float, dict[str, float]]]) -> None:
    header = ["values/leaf", "floor ns/value"]
    for tree in chosen:
        header += [f"{tree.name} ns/value", f"{tree.name}/floor"]
    rows = []
    for leaf_values, floor, per_value in measured:
        row = [f"{leaf_values:,}", f"{floor * 1e9:.1f}"]
        for tree in chosen:
            row += [f"{per_value[tree.name] * 1e9:.1f}", _x(per_value[tree.name] / floor)]
        rows.append(row)
    _table(header, rows)
    sized = [(floor, per_value) for leaf_values, floor, per_value in measured
             if leaf_values >= 1_000]
    if sized:
        worst = max(per_value["reference"] / floor for floor, per_value in sized)
        verdict = "meets" if worst <= FLOOR_GOAL else "MISSES"
        print(f"  reference at leaves of 1,000 values and up: at most {worst:.2f}x the floor, "
              f"{verdict} the goal of {FLOOR_GOAL}x")


def report_steady(chosen: list[Tree], measured: list[tuple[int, dict[str, list[float]]]]) -> None:
    header = ["values/node"]
    for tree in chosen:
        header += [f"{tree.name} min", f"{tree.name} median"]
    rows = []
    for k, ratios in measured:
        row = [f"{k:,}"]
        for tree in chosen:
            row += [_x(min(ratios[tree.name])), _x(statistics.median(ratios[tree.name]))]
        rows.append(row)
    _table(header, rows)


# ---------------------------------------------------------------------- main


def _parts(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated names of measurements, each one of PARTS."""
    parts = tuple(part.strip() for part in text.split(","))
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown parts {', '.join(unknown)}; "
                                         f"choose from {', '.join(PARTS)}")
    return parts


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark eviction as the cache grows, and evict's cost per value."
    )
    parser.add_argument("--sizes", type=ints_from(3), default=SIZES,
                        help="nodes per emptied-parents run, comma-separated "
                             "(default 10000,100000,1000000)")
    parser.add_argument("--leaf-values", type=ints_from(1), default=LEAF_VALUES,
                        help="values per leaf of the per-value cache, comma-separated "
                             "(default 100,1000,4000)")
    parser.add_argument("--old", metavar="REV",
                        help="also run impl/radix.py as it was at git revision REV")
    parser.add_argument("--budget", type=float, default=BUDGET,
                        help=f"CPU seconds of eviction a run may spend (default {BUDGET:g}); "
                             f"past it the run is partial")
    parser.add_argument("--steady-values", type=ints_from(1), default=STEADY_VALUES,
                        help="values per node of the steady-state trees, comma-separated "
                             "(default 1,16,100,1000)")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"steady-state rounds per tree, each against its floor "
                             f"(default {ROUNDS})")
    parser.add_argument("--parts", type=_parts, default=PARTS,
                        help="which measurements to run, comma-separated, from "
                             f"{','.join(PARTS)} (default all)")
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help=f"runs of each figure, the best kept (default {REPEATS})")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen measurements on every tree and print their tables; 0 on success."""
    args = _parse(argv)
    sizes = tuple(sorted(set(args.sizes)))
    try:
        chosen = trees(args.old)
    except BenchError as error:
        print(f"evict_bench: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    print(f"evict_bench: Python {sys.version.split()[0]}; trees: "
          f"{', '.join(tree.name for tree in chosen)}; ratios are measured in this run",
          flush=True)

    repeats = max(1, args.repeats)
    if "emptied" in args.parts:
        results = bench_emptied_parents(chosen, sizes, args.budget, repeats)
        print(f"\nemptied parents: each parent's two leaves evicted, then the parent; "
              f"evict({CHUNK:,}, f) until empty; best of up to {repeats} runs, at most "
              f"{args.budget:g} CPU s a run")
        report_emptied_parents(chosen, results)

    if "per-value" in args.parts:
        measured = []
        for leaf_values in sorted(set(args.leaf_values)):
            floor, per_value = bench_per_value(chosen, leaf_values, repeats)
            measured.append((leaf_values, floor, per_value))
        print(f"\nper value: {CACHE_VALUES:,} values at granule 1, evict(len(tree), f) of "
              f"all; floor: f over the values from C; best of {repeats}")
        report_per_value(chosen, measured)

    if "steady" in args.parts:
        report_steady_state(chosen, args.steady_values, max(1, args.rounds))
    print(f"\ntotal {time.perf_counter() - started:.1f} s of wall time")
    return 0


def report_steady_state(chosen: list[Tree], values: Sequence[int], rounds: int) -> None:
    """Run the steady state at every node size and print its table."""
    steady = [(k, bench_steady(chosen, k, rounds)) for k in sorted(set(values))]
    print(f"\nsteady state: a large granule-1 tree, a fresh parent and its leaves inserted per "
          f"evicted; evict(n, f) with n = max({STEADY_CALL}, values/node), "
          f"{STEADY_ROUND_VALUES:,} values a round, over the floor exhaust(map(f, values)) "
          f"of each call's values; min and median of {rounds} rounds (goal for the reference: "
          f"within {STEADY_GOAL}x)")
    report_steady(chosen, steady)


if __name__ == "__main__":
    sys.exit(main())
