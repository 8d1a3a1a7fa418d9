"""Benchmark of the ds.07 radix tree as an LLM server's prefix cache.

Run from the repo root (the script puts the root on ``sys.path`` itself)::

    python bench/prefix_bench.py [--capacities 1,10,100] [--requests N] [--granules 1,16]
                                 [--sizes 1000,10000,100000] [--seed N] [--quick]

By default it runs the comparison with the baselines alone (under a minute on two cores);
``--sizes`` or ``--quick`` adds the tree's own report below.

Baselines. The trace's first ``--requests`` requests (default 1,000) are replayed, as
below, on three caches one after another, at every granule and at capacities of 1x,
10x and 100x 20,000 tokens (``--capacities``): the reference, the chapter's second tree
(the passing example's, a heap of stamps), and ``NaiveCache``, a plain dict from
(parent, run) to node with the nodes' fields in lists, which evicts as a simple server
does (a heap of every evictable node, built per call). The table gives the reference's
time of all its calls, and of evict alone, over each baseline's; below 1 the reference
is faster. Ratios come from one process; absolute seconds are never a pass/fail.

Traffic. A seeded ``random.Random`` generates the whole trace before anything is timed:
a few shared system prompts of 1,000 to 2,000 tokens; multi-turn conversations whose
every request resends all earlier turns (user message and reply) after a system prompt;
agent loops whose every step resends a system prompt, the same tool descriptions and
every earlier tool call and result; and unique prompts that share nothing. Token ids are
below 128,000. The mix: 55% conversation turns (24 conversations in flight, 2 to 12
turns each, four system prompts of skewed popularity), 33% agent steps (8 loops in
flight, 3 to 16 steps, three tool descriptions of 800 to 2,500 tokens), 12% unique
prompts of 100 to 3,000 tokens. The sessions in flight interleave, as on a busy server;
a request averages about 4,000 tokens. A request is its full token sequence (everything
resent plus what it adds), kept as a tuple of shared segments and assembled into a list
just before its operations, outside the timed region. Every size runs a prefix of the
same trace, and every granule runs the same requests.

Replay. A request's sequence is truncated to a multiple of the granule g, then it is
``match_prefix(key)`` and ``insert(key, values)`` with one value per g tokens: an int
KV-block id taken from a free list of block ids for the runs the match did not cover
(a placeholder for the runs it did, which insert hands back). The inserted node is
locked while the request "runs" and unlocked four requests later, so four requests are
always running and their locks overlap evictions. The capacity is a fixed number of
stored values, 200,000 tokens' worth (200,000 values at g = 1, 12,500 at g = 16), so
eviction runs regularly at every size: when ``len(tree)`` exceeds it, the replay calls
``evict(len(tree) - capacity, f)`` where ``f`` returns the block ids to the free list.

Timing. Only the cache's own calls are timed, each kind apart: ``time.perf_counter()``
deltas summed per match_prefix, insert, lock, unlock and evict; throughput is calls per
second. Garbage collection stays on, as in a server, but the trace is frozen out of it
(``gc.freeze``) so collections see only the cache. Each size runs once, on a fresh tree.

Floor. Right after each tree run, in the same process, the same requests' keys are cut
into runs of g tokens (a run key is the int token at g = 1, a tuple of g ints otherwise),
precomputed in batches of 500,000 run keys (to bound memory), and each batch is looked
up in a plain ``for k in keys: d.get(k)`` loop against a dict holding those run keys (at
g = 1, a dict of every token id). The summed loop time is the floor of both match_prefix
and insert: one bare dict lookup per run, what a walk that looks up every run pays at
least. The tree's ratio to it is tree time / floor time (below 1: the tree beats one
Python-level lookup per run). Ratios within one process are what this script reports;
absolute seconds are never a pass/fail.

Model. The naive ``model.PrefixModel`` replays the smallest size only, capped at about
20 s of wall time in all (2 s with --quick), split evenly between the granules: it runs
the longest prefix of the trace that fits (checked between requests) and the report says
how many requests that was. The tree replays the same requests right after it, and the
speed-up is the tree's throughput over the model's.

Growth. The tree's time at 100,000 requests over its time at 10,000, per operation (near
10 means linear); skipped unless both sizes run.

Memory. A separate, untimed replay of the largest size run (1,000 requests with --quick)
under ``tracemalloc``: the bytes allocated during it and still held once everything but
the tree is dropped, over ``len(tree)``, and over the tokens cached (per value / g). The
block ids are ints owned by the free list and allocated before tracing, as a server's KV
block ids are, so the figure is the tree's own cost: nodes, labels, value lists, dicts.

``--quick`` runs sizes 1,000 and 10,000 only, as a smoke test. Standard library only.
With ``--sizes`` and without ``--quick``, the report below covers those sizes.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import importlib.util
import itertools
import math
import sys
import time
import tracemalloc
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any, Protocol

REPO = Path(__file__).resolve().parent.parent

VOCAB = 128_000
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
GRANULES = (1, 16)
GROWTH_SIZES = (10_000, 100_000)
OPERATIONS = ("match_prefix", "insert", "lock", "unlock", "evict")
FLOORED = ("match_prefix", "insert")

CAPACITY_TOKENS = 200_000  # values stored before eviction: this many tokens' worth
BASE_CAPACITY_TOKENS = 20_000  # the comparison's 1x capacity, in tokens
CAPACITIES = (1, 10, 100)  # the comparison's capacities, as multiples of its 1x
CAPACITY_REQUESTS = 1_000  # requests the comparison replays at every capacity
RUNNING = 4  # requests holding a lock at once
UNUSED = -1  # the value passed for a run the cache already holds (it is handed back)
FLOOR_BATCH = 500_000  # run keys precomputed and looked up per floor loop
MODEL_SECONDS = 20.0  # the model's wall-time budget, split between the granules
QUICK_MODEL_SECONDS = 2.0
QUICK_MEMORY_SIZE = 1_000

SYSTEM_PROMPTS = 4
SYSTEM_TOKENS = (1_000, 2_000)
SYSTEM_WEIGHTS = (4, 3, 2, 1)  # the first system prompt is the most used
TOOL_SETS = 3
TOOL_TOKENS = (800, 2_500)
UNIQUE_TOKENS = (100, 3_000)
ACTIVE_CONVERSATIONS = 24
ACTIVE_AGENTS = 8
KINDS = ("conversation", "agent", "unique")
KIND_WEIGHTS = (55, 33, 12)


# ---------------------------------------------------------------------- traffic


@dataclass(frozen=True)
class Shape:
    """One kind of session: how long it lasts and what each of its requests adds."""

    steps: tuple[int, int]  # requests per session (inclusive range)
    ask: tuple[int, int]  # tokens the client adds: a user message, a tool result
    answer: tuple[int, int]  # tokens generated: the reply, the next tool call


CONVERSATION = Shape(steps=(2, 12), ask=(10, 300), answer=(50, 600))
AGENT = Shape(steps=(3, 16), ask=(30, 500), answer=(20, 150))


@dataclass
class Session:
    """A conversation or an agent loop in progress: everything it resends, and steps left."""

    shape: Shape
    segments: tuple[list[int], ...]
    left: int


@dataclass(frozen=True)
class Trace:
    """Requests as tuples of shared token segments, with what kind each one is."""

    requests: list[tuple[list[int], ...]]
    kinds: list[str]
    fresh_tokens: int  # tokens generated for the trace, each segment counted once
    longest: int  # tokens of the longest request
    vocabulary: list[int]  # the int object of every token id, shared by all segments

    def tokens(self, count: int) -> int:
        """Tokens sent by the first ``count`` requests, before truncation."""
        return sum(sum(map(len, r)) for r in itertools.islice(self.requests, count))


class Traffic:
    """A seeded source of interleaved chat, agent and one-off requests."""

    def __init__(self, rng: Random) -> None:
        self.rng = rng
        self.vocabulary = list(range(VOCAB))  # one shared int object per token id
        self.fresh_tokens = 0
        self.systems = [self.text(SYSTEM_TOKENS) for _ in range(SYSTEM_PROMPTS)]
        self.tools = [self.text(TOOL_TOKENS) for _ in range(TOOL_SETS)]
        self.sessions = {
            "conversation": [self.conversation() for _ in range(ACTIVE_CONVERSATIONS)],
            "agent": [self.agent() for _ in range(ACTIVE_AGENTS)],
        }

    def text(self, lengths: tuple[int, int]) -> list[int]:
        """Fresh random tokens, as many as a uniform draw from ``lengths``."""
        tokens = self.rng.choices(self.vocabulary, k=self.rng.randint(*lengths))
        self.fresh_tokens += len(tokens)
        return tokens

    def conversation(self) -> Session:
        """A new chat after one of the shared system prompts."""
        system = self.rng.choices(self.systems, weights=SYSTEM_WEIGHTS)[0]
        return Session(CONVERSATION, (system,), self.rng.randint(*CONVERSATION.steps))

    def agent(self) -> Session:
        """A new agent loop: a system prompt, then one of the shared tool descriptions."""
        start = (self.rng.choice(self.systems), self.rng.choice(self.tools))
        return Session(AGENT, start, self.rng.randint(*AGENT.steps))

    def request(self) -> tuple[str, tuple[list[int], ...]]:
        """The next request: its kind and the segments of its full token sequence."""
        kind = self.rng.choices(KINDS, weights=KIND_WEIGHTS)[0]
        if kind == "unique":
            return kind, (self.text(UNIQUE_TOKENS),)
        sessions = self.sessions[kind]
        index = self.rng.randrange(len(sessions))
        session = sessions[index]
        shape = session.shape
        session.segments += (self.text(shape.ask), self.text(shape.answer))
        session.left -= 1
        if session.left == 0:
            sessions[index] = self.conversation() if kind == "conversation" else self.agent()
        return kind, session.segments


def generate_trace(seed: int, count: int) -> Trace:
    """``count`` requests of seeded traffic, generated whole before any timing."""
    traffic = Traffic(Random(seed))
    kinds: list[str] = []
    requests: list[tuple[list[int], ...]] = []
    longest = 0
    for _ in range(count):
        kind, request = traffic.request()
        kinds.append(kind)
        requests.append(request)
        longest = max(longest, sum(map(len, request)))
    return Trace(requests, kinds, traffic.fresh_tokens, longest, traffic.vocabulary)


def tokens_of(request: Iterable[list[int]], granule: int) -> list[int]:
    """The request's token sequence as one list, truncated to a multiple of ``granule``."""
    key: list[int] = []
    for segment in request:
        key += segment
    del key[len(key) - len(key) % granule:]
    return key


# ---------------------------------------------------------------------- replay


class Cache(Protocol):
    """What the replay needs of a prefix cache: the tree (node ids) or the model (prefixes)."""

    def __len__(self) -> int: ...

    def node_count(self) -> int: ...

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[Any]]: ...

    def insert(self, key: Sequence[int], values: Sequence[int]) -> tuple[Any, list[int]]: ...

    def lock(self, handle: Any) -> None: ...

    def unlock(self, handle: Any) -> None: ...

    def evict(self, n: int, f: Callable[[int], None]) -> int: ...


class Blocks:
    """A server's KV block ids: a free list, refilled by eviction and by handed-back values."""

    def __init__(self, count: int) -> None:
        self.free = list(range(count))
        self.minted = count

    def take(self, n: int) -> list[int]:
        """``n`` free block ids; new ones are minted only if the free list runs dry."""
        if n <= 0:
            return []
        free = self.free
        if len(free) < n:
            short = n - len(free)
            free += range(self.minted, self.minted + short)
            self.minted += short
        taken = free[-n:]
        del free[-n:]
        return taken

    def give(self, values: list[int]) -> None:
        """Return block ids to the free list."""
        self.free += values


@dataclass
class Run:
    """What one replay did, and the seconds each kind of operation took."""

    requests: int = 0
    tokens: int = 0
    matched: int = 0
    freed: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(OPERATIONS, 0.0))
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPERATIONS, 0))

    def rate(self, operation: str) -> float:
        """Calls of ``operation`` per second (nan when it never ran)."""
        seconds = self.seconds[operation]
        return self.calls[operation] / seconds if seconds > 0 else math.nan


def _no_clock() -> float:
    return 0.0


class Replay:
    """Serves requests against one cache as an LLM server would, timing each call kind."""

    def __init__(
        self,
        cache: Cache,
        granule: int,
        capacity: int,
        blocks: Blocks,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.cache = cache
        self.granule = granule
        self.capacity = capacity
        self.blocks = blocks
        self.clock = clock
        self.running: deque[Any] = deque()
        self.run = Run()

    def _timed(self, operation: str, method: Callable[..., Any], *args: Any) -> Any:
        start = self.clock()
        result = method(*args)
        self.run.seconds[operation] += self.clock() - start
        self.run.calls[operation] += 1
        return result

    def serve(self, request: Iterable[list[int]]) -> None:
        """Match, insert, lock; unlock the request that finished; evict down to capacity."""
        cache, run = self.cache, self.run
        key = tokens_of(request, self.granule)
        matched, _ = self._timed("match_prefix", cache.match_prefix, key)
        hit = matched // self.granule
        values = [UNUSED] * hit + self.blocks.take(len(key) // self.granule - hit)
        handle, back = self._timed("insert", cache.insert, key, values)
        self.blocks.give(back[hit:])
        self._timed("lock", cache.lock, handle)
        self.running.append(handle)
        if len(self.running) > RUNNING:
            self._timed("unlock", cache.unlock, self.running.popleft())
        excess = len(cache) - self.capacity
        if excess > 0:
            run.freed += self._timed("evict", cache.evict, excess, self.blocks.free.append)
        run.requests += 1
        run.tokens += len(key)
        run.matched += matched

    def finish(self) -> Run:
        """Unlock the requests still running; the run's record."""
        while self.running:
            self._timed("unlock", self.cache.unlock, self.running.popleft())
        return self.run


def _blocks_for(trace: Trace, granule: int, capacity: int) -> Blocks:
    """A free list with room for the capacity and the requests running over it."""
    return Blocks(capacity + (RUNNING + 2) * (trace.longest // granule + 1))


def replay(
    make: Callable[[int], Cache],
    trace: Trace,
    count: int,
    granule: int,
    capacity: int,
    budget: float = math.inf,
) -> Run:
    """Serve the first ``count`` requests on a fresh cache; stop early past ``budget`` s."""
    gc.collect()
    server = Replay(make(granule), granule, capacity, _blocks_for(trace, granule, capacity))
    stop = time.perf_counter() + budget
    for request in itertools.islice(trace.requests, count):
        if time.perf_counter() > stop:
            break
        server.serve(request)
    return server.finish()


# ---------------------------------------------------------------------- naive cache


class NaiveCache:
    """The naive baseline: runs of g tokens in a plain dict, the nodes' fields in lists.

    ``index`` maps (parent id, run) to a node id, so a walk is one dict lookup per run
    in a Python loop; a node's value, parent, children count, locks and stamp are list
    entries at its id. ``evict`` gathers every unlocked childless node, heapifies them
    by stamp and pops the oldest, pushing a parent that becomes childless, as a simple
    server's cache does. Handles are node ids; 0 is the root.
    """

    def __init__(self, granule: int) -> None:
        self.granule = granule
        self.index: dict[tuple[int, Any], int] = {}
        self.run: list[Any] = [None]  # the run that leads to each node, for unlinking
        self.value: list[Any] = [None]
        self.parent: list[int] = [-1]
        self.kids: list[int] = [0]
        self.locks: list[int] = [0]
        self.stamp: list[int] = [0]
        self.leaves: set[int] = set()
        self.clock = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def node_count(self) -> int:
        return len(self.index)

    def _runs(self, key: Sequence[int]) -> list[Any]:
        g = self.granule
        if g == 1:
            return list(key)
        return list(zip(*[iter(key)] * g, strict=False))

    def _walk(self, runs: list[Any]) -> list[int]:
        self.clock += 1
        clock, index, stamp = self.clock, self.index, self.stamp
        path = []
        node = 0
        for run in runs:
            node = index.get((node, run))
            if node is None:
                break
            stamp[node] = clock
            path.append(node)
        return path

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[int]]:
        path = self._walk(self._runs(key))
        return len(path) * self.granule, path

    def insert(self, key: Sequence[int], values: Sequence[int]) -> tuple[int, list[int]]:
        runs = self._runs(key)
        path = self._walk(runs)
        node = path[-1] if path else 0
        for run, value in zip(runs[len(path):], values[len(path):], strict=True):
            self.leaves.discard(node)
            self.kids[node] += 1
            child = len(self.value)
            self.index[(node, run)] = child
            self.run.append(run)
            self.value.append(value)
            self.parent.append(node)
            self.kids.append(0)
            self.locks.append(0)
            self.stamp.append(self.clock)
            node = child
        if len(runs) > len(path):
            self.leaves.add(node)
        self.size += len(runs) - len(path)
        return node, list(values[:len(path)])

    def lock(self, node: int) -> None:
        while node > 0:
            self.locks[node] += 1
            node = self.parent[node]

    def unlock(self, node: int) -> None:
        while node > 0:
            self.locks[node] -= 1
            node = self.parent[node]

    def evict(self, n: int, f: Callable[[int], None]) -> int:
        stamp, locks = self.stamp, self.locks
        heap = [(stamp[leaf], leaf) for leaf in self.leaves if not locks[leaf]]
        heapq.heapify(heap)
        freed = 0
        while freed < n and heap:
            _, node = heapq.heappop(heap)
            parent = self.parent[node]
            del self.index[(parent, self.run[node])]
            self.leaves.discard(node)
            f(self.value[node])
            self.value[node] = self.run[node] = None
            freed += 1
            self.kids[parent] -= 1
            if parent and not self.kids[parent]:
                self.leaves.add(parent)
                if not locks[parent]:
                    heapq.heappush(heap, (stamp[parent], parent))
        self.size -= freed
        return freed


# ---------------------------------------------------------------------- floor


def _bare_lookups(d: dict[Any, None], keys: list[Any]) -> float:
    """Seconds for one plain lookup per key in ``d``, which holds every key."""
    start = time.perf_counter()
    for k in keys:
        d.get(k)
    return time.perf_counter() - start


def _run_key_batches(trace: Trace, count: int, granule: int) -> Iterator[list[Any]]:
    """The run keys of the first ``count`` requests, in batches of about FLOOR_BATCH."""
    keys: list[Any] = []
    for request in itertools.islice(trace.requests, count):
        key = tokens_of(request, granule)
        if granule == 1:
            keys += key
        else:
            keys += zip(*[iter(key)] * granule, strict=True)
        if len(keys) >= FLOOR_BATCH:
            yield keys
            keys = []
    if keys:
        yield keys


def floor(trace: Trace, count: int, granule: int) -> tuple[float, int]:
    """(seconds, lookups) of one bare dict lookup per g-token run of the requests' keys.

    At g = 1 the dict holds every token id (built once); otherwise each batch's dict
    holds that batch's run keys.
    """
    every_token = dict.fromkeys(trace.vocabulary) if granule == 1 else None
    seconds = 0.0
    lookups = 0
    for keys in _run_key_batches(trace, count, granule):
        d = every_token if every_token is not None else dict.fromkeys(keys)
        seconds += _bare_lookups(d, keys)
        lookups += len(keys)
    return seconds, lookups


# ---------------------------------------------------------------------- memory


def held_bytes(
    make: Callable[[int], Cache], trace: Trace, count: int, granule: int, capacity: int
) -> tuple[int, Cache]:
    """Bytes still held after an untimed replay under tracemalloc, with the cache built."""
    blocks = _blocks_for(trace, granule, capacity)  # block ids exist before tracing
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        cache = make(granule)
        server = Replay(cache, granule, capacity, blocks, clock=_no_clock)
        for request in itertools.islice(trace.requests, count):
            server.serve(request)
        server.finish()
        del server
        blocks.free = []  # drop what the free list grew by while tracing
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    return held, cache


# ---------------------------------------------------------------------- report


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> None:
    """Print rows in aligned columns: the first ``left`` columns left-aligned, others right."""
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells).rstrip())


def _num(x: float) -> str:
    """A count or rate with thousands separators, three significant digits when small."""
    if math.isnan(x):
        return "-"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _ratio(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2f}"


def _times(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:,.0f}x" if x >= 10 else f"{x:.2g}x"


@dataclass
class Measured:
    """The tree's run at one size and the floor right next to it."""

    size: int
    run: Run
    floor_seconds: float
    lookups: int


def _run_line(m: Measured) -> str:
    run = m.run
    hit = 100 * run.matched / run.tokens if run.tokens else 0.0
    return (
        f"{run.requests:>9,} requests: {run.tokens:>13,} tokens, {hit:4.1f}% matched; "
        f"{run.calls['evict']:,} evictions freed {run.freed:,} values; "
        f"floor {m.lookups:,} lookups"
    )


def _throughput_table(results: list[Measured]) -> None:
    rows = []
    for operation in OPERATIONS:
        for m in results:
            tree = m.run.seconds[operation]
            floored = operation in FLOORED and m.floor_seconds > 0
            floor_rate = m.run.calls[operation] / m.floor_seconds if floored else math.nan
            ratio = tree / m.floor_seconds if floored else math.nan
            rows.append([
                operation if m is results[0] else "",
                f"{m.size:,}",
                f"{m.run.calls[operation]:,}",
                _num(m.run.rate(operation)),
                _num(floor_rate),
                _ratio(ratio),
            ])
    header = ["operation", "requests", "calls", "tree ops/s", "floor ops/s", "tree/floor"]
    _table(header, rows)


def _model_table(model: Run, tree: Run, size: int, seconds: float) -> None:
    print(
        f"  model: the first {model.requests:,} of {size:,} requests "
        f"in {seconds:.1f} s of wall time; the tree on the same requests:"
    )
    rows = []
    for operation in OPERATIONS:
        speedup = tree.rate(operation) / model.rate(operation)
        rows.append([
            operation,
            f"{model.calls[operation]:,}",
            _num(model.rate(operation)),
            _num(tree.rate(operation)),
            _times(speedup),
        ])
    _table(["operation", "calls", "model ops/s", "tree ops/s", "tree speed-up"], rows)
    if not model.calls["evict"]:
        print("  (the model never exceeded the capacity within its budget, so evict did not run)")


def _growth_table(results: list[Measured]) -> None:
    small, large = GROWTH_SIZES
    by_size = {m.size: m.run for m in results}
    if small not in by_size or large not in by_size:
        print(f"  growth: skipped (needs runs of {small:,} and {large:,} requests)")
        return
    print(f"  growth from {small:,} to {large:,} requests (tree time ratio; 10 is linear):")
    rows = []
    for operation in OPERATIONS:
        before, after = by_size[small].seconds[operation], by_size[large].seconds[operation]
        rows.append([operation, _ratio(after / before if before > 0 else math.nan)])
    _table(["operation", "growth"], rows)


def _memory_line(held: int, cache: Cache, count: int, granule: int) -> None:
    values = len(cache)
    per_value = held / values if values else math.nan
    print(
        f"  memory after {count:,} requests: {values:,} values in {cache.node_count():,} "
        f"nodes hold {held:,} bytes: {per_value:.1f} bytes per value, "
        f"{per_value / granule:.1f} bytes per cached token"
    )


# ---------------------------------------------------------------------- main


def _implementations() -> tuple[Callable[[int], Cache], Callable[[int], Cache]]:
    """RadixTree and PrefixModel, imported with the repo root on sys.path."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from impl.radix import RadixTree
    from model import PrefixModel

    return RadixTree, PrefixModel


def second_tree() -> Callable[[int], Cache]:
    """The chapter's second correct tree (the passing example's), loaded from its file."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from harness.chapter import find

    spec = importlib.util.spec_from_file_location("second_tree", find("ds.07").correct_trees[1][1])
    second = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(second)
    return second.RadixTree


def bench_capacities(
    trace: Trace,
    count: int,
    granules: Sequence[int],
    capacities: Sequence[int],
    caches: dict[str, Callable[[int], Cache]],
) -> None:
    """Replay ``count`` requests on every cache at every granule and grown capacity.

    Each cell runs the caches one after another on the same requests, in this process;
    the table gives the reference's time of all its calls (and of evict alone) over
    each baseline's.
    """
    names = [name for name in caches if name != "reference"]
    print(f"\ncache grown: the first {count:,} requests at capacities of "
          f"{', '.join(f'{c:,}x' for c in capacities)} {BASE_CAPACITY_TOKENS:,} tokens; "
          f"reference time over each baseline's (below 1: the reference is faster)")
    header = ["granule", "capacity", "values", "evicted"]
    for name in names:
        header += [f"all/{name}", f"evict/{name}"]
    rows = []
    for granule in granules:
        for multiple in capacities:
            capacity = BASE_CAPACITY_TOKENS * multiple // granule
            runs = {name: replay(make, trace, count, granule, capacity)
                    for name, make in caches.items()}
            tree = runs["reference"]
            row = [str(granule), f"{multiple:,}x", f"{capacity:,}", f"{tree.freed:,}"]
            for name in names:
                base = runs[name]
                row += [_ratio(sum(tree.seconds.values()) / sum(base.seconds.values())),
                        _ratio(tree.seconds["evict"] / base.seconds["evict"])
                        if base.seconds["evict"] > 0 else "-"]
            rows.append(row)
    _table(header, rows, left=2)


def ints_from(minimum: int) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated integers, none below ``minimum``."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            numbers = tuple(int(part) for part in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated integers, got {text!r}"
            ) from None
        if not numbers or min(numbers) < minimum:
            raise argparse.ArgumentTypeError(
                f"expected integers of at least {minimum}, got {text!r}"
            )
        return numbers

    return parse


_positive_ints = ints_from(1)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark the radix tree as a prefix cache on seeded LLM traffic."
    )
    parser.add_argument("--capacities", type=_positive_ints, default=CAPACITIES,
                        help="capacities of the comparison with the baselines, as multiples "
                             f"of {BASE_CAPACITY_TOKENS:,} tokens, comma-separated "
                             "(default 1,10,100)")
    parser.add_argument("--requests", type=_positive_ints, default=(CAPACITY_REQUESTS,),
                        metavar="N",
                        help="requests the comparison replays at every capacity "
                             f"(default {CAPACITY_REQUESTS})")
    parser.add_argument("--sizes", type=_positive_ints,
                        help="also run the tree alone against the floor, the model, growth "
                             "and memory at these request counts, comma-separated "
                             "(1000,10000,100000 for the full run; minutes)")
    parser.add_argument("--granules", type=_positive_ints, default=GRANULES,
                        help="granules to run, comma-separated (default 1,16)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the traffic (default 0)")
    parser.add_argument("--quick", action="store_true",
                        help="sizes 1000,10000 only, a short model run: a smoke test")
    return parser.parse_args(argv)


def bench_granule(
    granule: int,
    trace: Trace,
    sizes: Sequence[int],
    tree: Callable[[int], Cache],
    model: Callable[[int], Cache],
    model_seconds: float,
    memory_size: int,
) -> None:
    """Run and report every size, the model, the growth and the memory at one granule."""
    capacity = CAPACITY_TOKENS // granule
    print(
        f"\ngranule {granule}: capacity {capacity:,} values ({capacity * granule:,} tokens), "
        f"{RUNNING} requests running at once"
    )
    results = []
    for size in sizes:
        run = replay(tree, trace, size, granule, capacity)
        floor_seconds, lookups = floor(trace, size, granule)
        results.append(Measured(size, run, floor_seconds, lookups))
        print("  " + _run_line(results[-1]))
    _throughput_table(results)

    started = time.perf_counter()
    model_run = replay(model, trace, sizes[0], granule, capacity, budget=model_seconds)
    wall = time.perf_counter() - started
    same = replay(tree, trace, model_run.requests, granule, capacity)
    _model_table(model_run, same, sizes[0], wall)

    _growth_table(results)
    held, cache = held_bytes(tree, trace, memory_size, granule, capacity)
    _memory_line(held, cache, memory_size, granule)


def main(argv: Sequence[str] | None = None) -> int:
    """Generate the trace, then benchmark every granule; 0 on success."""
    args = _parse(argv)
    sizes = QUICK_SIZES if args.quick else tuple(sorted(set(args.sizes or ())))
    requests = args.requests[-1]
    granules = tuple(dict.fromkeys(args.granules))
    model_seconds = (QUICK_MODEL_SECONDS if args.quick else MODEL_SECONDS) / len(granules)
    memory_size = QUICK_MEMORY_SIZE if args.quick or not sizes else sizes[-1]
    tree, model = _implementations()

    started = time.perf_counter()
    longest = max(requests, *sizes) if sizes else requests
    trace = generate_trace(args.seed, longest)
    gc.collect()
    gc.freeze()  # the trace lives for the whole run: keep it out of every collection
    generated = time.perf_counter() - started
    mix = Counter(trace.kinds)
    total = trace.tokens(longest)
    print(f"prefix_bench: Python {sys.version.split()[0]}, seed {args.seed}, "
          f"sizes {', '.join(f'{s:,}' for s in sizes) or 'none'}, "
          f"granules {', '.join(map(str, granules))}")
    print(
        f"trace: {longest:,} requests ("
        + ", ".join(f"{mix[kind]:,} {kind}" for kind in KINDS)
        + f"), {total:,} tokens, {total / longest:,.0f} per request, longest "
        f"{trace.longest:,}; {trace.fresh_tokens:,} tokens sent for the first time, "
        f"the rest resent; generated in {generated:.1f} s"
    )
    print(
        "ops/s: calls per second of the cache's own time. floor ops/s: requests per second "
        "at one bare\ndict lookup per g-token run of their keys; tree/floor: tree time over "
        "that loop's time\n(below 1: faster than the floor). One timed run per size, in "
        "this process; no pass/fail."
    )
    caches = {"reference": tree, "second": second_tree(), "naive": NaiveCache}
    bench_capacities(trace, requests, granules, tuple(args.capacities), caches)
    if not sizes:
        print(f"\ntotal {time.perf_counter() - started:.1f} s")
        return 0
    for granule in granules:
        bench_granule(granule, trace, sizes, tree, model, model_seconds, memory_size)
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
