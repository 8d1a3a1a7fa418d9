"""An independently written example solution of ds.07: a radix tree over token ids.

This is the "second correct implementation" of the grading harness: it satisfies the
contract (the README's "The chapter") but is written apart from ``impl/radix.py`` and makes other
choices wherever the contract leaves them open, so that a student's test which passes
on the reference only because of an unspecified detail fails here.

Layout::

    _nodes   {0: root, 1: node, 4: node, ...}   dict from id to a slotted _Node
    _free    [2, 3]                             heap of free ids; the SMALLEST is reused
    _listed  {4: 17, 1: 9}                      unlocked leaves -> their stamp
    _queue   [(9, 1), (12, 4), (17, 4)]         heap of (stamp, id), stale entries skipped

    node:  label (tuple of ints) . payload (tuple of values) . up (parent id)
           kids {first g tokens: child id} . pins (lock count) . touched (stamp)

Differences from a list-based tree with an index-linked LRU list: nodes are kept in a
dict rather than a list, labels and values are tuples, a freed id goes to a min-heap so
the smallest free id is reused first, the eviction order is a lazily cleaned heap of
(stamp, id) pairs instead of a doubly linked list, and a walk is surveyed first and its
split applied after, so an insert that splits an edge gives its new leaf the smaller id.
Ids stay dense: a fresh id is taken only when every smaller one is live.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")

NodeId = int
ROOT: NodeId = 0


class _Node(Generic[V]):
    """One node: its edge label, one value per granule of it, and its bookkeeping."""

    __slots__ = ("kids", "label", "payload", "pins", "touched", "up")

    def __init__(
        self,
        label: tuple[int, ...],
        payload: tuple[V, ...],
        up: NodeId | None,
        pins: int,
        touched: int,
    ) -> None:
        self.label = label
        self.payload = payload
        self.up = up
        self.kids: dict[tuple[int, ...], NodeId] = {}
        self.pins = pins
        self.touched = touched


class RadixTree(Generic[V]):
    """A radix tree whose labels, matches and splits come in runs of ``granule`` tokens."""

    def __init__(self, granule: int) -> None:
        """Make an empty tree (the root only).

        Raises ValueError unless ``granule`` is an int of at least 1.
        """
        if not isinstance(granule, int) or isinstance(granule, bool) or granule < 1:
            raise ValueError(f"granule must be an int >= 1, got {granule!r}")
        self._g = granule
        self._nodes: dict[NodeId, _Node[V]] = {ROOT: _Node((), (), None, 0, 0)}
        self._free: list[NodeId] = []
        self._fresh = ROOT + 1
        self._listed: dict[NodeId, int] = {}
        self._queue: list[tuple[int, NodeId]] = []
        self._clock = 0
        self._stored = 0

    # ------------------------------------------------------------------ observers

    @property
    def granule(self) -> int:
        """The number of tokens in one run."""
        return self._g

    def __len__(self) -> int:
        """The number of values stored. O(1)."""
        return self._stored

    def is_empty(self) -> bool:
        """True when no value is stored. O(1)."""
        return self._stored == 0

    def node_count(self) -> int:
        """The number of live nodes, the root excluded. O(1)."""
        return len(self._nodes) - 1

    def key(self, id: NodeId) -> Sequence[int]:
        """The edge label of node ``id`` (empty for ROOT). Raises KeyError on a dead id."""
        return self._node(id).label

    def values(self, id: NodeId) -> Sequence[V]:
        """The values of node ``id``, one per run of its label. Raises KeyError on a dead id."""
        return self._node(id).payload

    def parent(self, id: NodeId) -> NodeId | None:
        """The parent of node ``id``; None for ROOT. Raises KeyError on a dead id."""
        return self._node(id).up

    def children(self, id: NodeId) -> list[NodeId]:
        """The children of node ``id`` in increasing id order. Raises KeyError on a dead id."""
        return sorted(self._node(id).kids.values())

    def child_count(self, id: NodeId) -> int:
        """How many children node ``id`` has. Raises KeyError on a dead id."""
        return len(self._node(id).kids)

    def lock_count(self, id: NodeId) -> int:
        """How many locks pin node ``id`` (its own and its descendants'); 0 for ROOT.

        Raises KeyError on a dead id.
        """
        return self._node(id).pins

    def lru_order(self) -> list[NodeId]:
        """The unlocked leaves, oldest stamp first. The root is never listed.

        Cost O(L log L) for L listed leaves.
        """
        return sorted(self._listed, key=lambda nid: (self._listed[nid], nid))

    # ------------------------------------------------------------------ walks

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        """The longest stored prefix of ``key`` in whole runs: (tokens matched, path).

        The path lists the nodes walked, ROOT excluded; no match is ``(0, [])``.
        Side effects: advances the clock and stamps the walked path; splits an edge
        when the match ends inside it. Cost O(len(key)).
        """
        self._clock += 1
        matched, path, inside, cut = self._survey(tuple(key))
        if inside is not None:
            path.append(self._split(inside, cut))
        self._stamp(path)
        return matched, path

    def insert(self, key: Sequence[int], values: Sequence[V]) -> tuple[NodeId, list[V]]:
        """Store ``key`` with one value per run; return (node ending key, handed back).

        The part of ``key`` already stored keeps its stored values and the caller's
        values for it are handed back; the rest becomes a new leaf. Side effects:
        advances the clock, stamps the walked path and the new leaf, may split an
        edge. Cost O(len(key)). Raises ValueError, leaving the tree unchanged, when
        ``len(values) * granule != len(key)``.
        """
        tokens = tuple(key)
        given = tuple(values)
        if len(given) * self._g != len(tokens):
            raise ValueError(
                f"insert needs one value per {self._g} tokens: {len(tokens)} tokens"
                f" at granule {self._g}, got {len(given)} values"
            )
        self._clock += 1
        if not tokens:
            return ROOT, []
        matched, path, inside, cut = self._survey(tokens)
        leaf_id = self._reserve() if matched < len(tokens) else None
        if inside is not None:
            path.append(self._split(inside, cut))
        self._stamp(path)
        runs_matched = matched // self._g
        handed_back = list(given[:runs_matched])
        end = path[-1] if path else ROOT
        if leaf_id is None:
            return end, handed_back
        leaf = _Node(tokens[matched:], given[runs_matched:], end, 0, self._clock)
        self._nodes[leaf_id] = leaf
        host = self._nodes[end]
        host.kids[leaf.label[: self._g]] = leaf_id
        self._stored += len(leaf.payload)
        self._unlist(end)
        self._relist(leaf_id)
        return leaf_id, handed_back

    # ------------------------------------------------------------------ locks

    def lock(self, id: NodeId) -> None:
        """Pin node ``id`` and every ancestor (ROOT excluded): each count goes up by 1.

        Side effect: the pinned nodes leave the LRU order. Locking ROOT does nothing.
        Cost O(depth). Raises KeyError on a dead id.
        """
        self._node(id)
        for nid in self._lineage(id):
            self._nodes[nid].pins += 1
            self._unlist(nid)

    def unlock(self, id: NodeId) -> None:
        """Undo one lock on node ``id`` and every ancestor (ROOT excluded).

        Side effect: an unlocked childless node rejoins the LRU order at its stamp.
        Unlocking ROOT does nothing. Cost O(depth). Raises KeyError on a dead id and
        RuntimeError, leaving the tree unchanged, when a count on the way would drop
        below zero (in particular when ``lock_count(id) == 0``).
        """
        self._node(id)
        line = self._lineage(id)
        for nid in line:
            if self._nodes[nid].pins == 0:
                if nid == id:
                    raise RuntimeError(f"unlock of node {id}, which is not locked")
                raise RuntimeError(
                    f"unlock of node {id} would take the lock count of ancestor {nid} below 0"
                )
        for nid in line:
            self._nodes[nid].pins -= 1
            self._relist(nid)

    # ------------------------------------------------------------------ eviction

    def evict(self, n: int, f: Callable[[V], None]) -> int:
        """Free the oldest unlocked leaves until at least ``n`` values are gone.

        Each evicted leaf is detached from its parent, its id is freed for reuse, and
        ``f`` is called on each of its values in label order. A parent left childless
        and unlocked joins the LRU order at its own stamp. Stops early when no
        unlocked leaf is left; ``n <= 0`` frees nothing. Returns the number of values
        freed (may exceed ``n``: leaves go whole). Cost O(k log L) for k evicted leaves.
        """
        if n <= 0:
            return 0
        freed = 0
        while freed < n:
            victim = self._pop_oldest()
            if victim is None:
                break
            gone = self._nodes.pop(victim)
            up = gone.up
            assert up is not None
            host = self._nodes[up]
            del host.kids[gone.label[: self._g]]
            self._release(victim)
            self._stored -= len(gone.payload)
            freed += len(gone.payload)
            self._relist(up)
            for value in gone.payload:
                f(value)
        return freed

    # ------------------------------------------------------------------ internals

    def _node(self, id: object) -> _Node[V]:
        """The live node ``id``; KeyError(id) for anything else."""
        if isinstance(id, bool) or not isinstance(id, int):
            raise KeyError(id)
        found = self._nodes.get(id)
        if found is None:
            raise KeyError(id)
        return found

    def _lineage(self, id: NodeId) -> list[NodeId]:
        """Node ``id`` and its ancestors, nearest first, ROOT excluded."""
        line: list[NodeId] = []
        cursor: NodeId | None = id
        while cursor is not None and cursor != ROOT:
            line.append(cursor)
            cursor = self._nodes[cursor].up
        return line

    def _survey(self, tokens: tuple[int, ...]) -> tuple[int, list[NodeId], NodeId | None, int]:
        """Follow ``tokens`` down in whole runs without changing anything.

        Returns (tokens matched, the nodes passed whole, the child whose edge the walk
        ends inside or None, how many tokens of that edge matched). The caller applies
        the split, so an insert can take its new leaf's id first.
        """
        g = self._g
        here = ROOT
        pos = 0
        path: list[NodeId] = []
        while len(tokens) - pos >= g:
            nxt = self._nodes[here].kids.get(tokens[pos : pos + g])
            if nxt is None:
                break
            label = self._nodes[nxt].label
            same = 0
            while (
                same < len(label)
                and pos + same + g <= len(tokens)
                and label[same : same + g] == tokens[pos + same : pos + same + g]
            ):
                same += g
            pos += same
            if same < len(label):
                return pos, path, nxt, same
            path.append(nxt)
            here = nxt
        return pos, path, None, 0

    def _split(self, child_id: NodeId, cut: int) -> NodeId:
        """Cut the edge into ``child_id`` after ``cut`` tokens; return the new middle node.

        The middle node takes the upper part of the label and values and the child's
        lock count; the child keeps its id, its stamp and the lower part.
        """
        g = self._g
        child = self._nodes[child_id]
        up = child.up
        assert up is not None
        middle_id = self._reserve()
        middle = _Node(child.label[:cut], child.payload[: cut // g], up, child.pins, child.touched)
        child.label = child.label[cut:]
        child.payload = child.payload[cut // g :]
        child.up = middle_id
        middle.kids[child.label[:g]] = child_id
        self._nodes[middle_id] = middle
        self._nodes[up].kids[middle.label[:g]] = middle_id
        return middle_id

    def _stamp(self, path: list[NodeId]) -> None:
        """Stamp every node of ``path`` with the clock, moving listed leaves along."""
        for nid in path:
            self._nodes[nid].touched = self._clock
            if nid in self._listed:
                self._relist(nid)

    def _reserve(self) -> NodeId:
        """Take the smallest free id, or a fresh one when none is free."""
        if self._free:
            return heapq.heappop(self._free)
        self._fresh += 1
        return self._fresh - 1

    def _release(self, nid: NodeId) -> None:
        """Give ``nid`` back for reuse."""
        heapq.heappush(self._free, nid)

    def _unlist(self, nid: NodeId) -> None:
        """Take ``nid`` off the LRU order (its heap entry goes stale)."""
        self._listed.pop(nid, None)

    def _relist(self, nid: NodeId) -> None:
        """Put ``nid`` on the LRU order at its stamp if it is an unlocked leaf."""
        node = self._nodes[nid]
        if nid == ROOT or node.kids or node.pins != 0:
            self._listed.pop(nid, None)
            return
        if self._listed.get(nid) == node.touched:
            return
        self._listed[nid] = node.touched
        heapq.heappush(self._queue, (node.touched, nid))
        if len(self._queue) > 2 * len(self._listed) + 32:
            self._queue = [(stamp, leaf) for leaf, stamp in self._listed.items()]
            heapq.heapify(self._queue)

    def _pop_oldest(self) -> NodeId | None:
        """Remove and return the oldest unlocked leaf, or None when there is none."""
        while self._queue:
            stamp, nid = heapq.heappop(self._queue)
            if self._listed.get(nid) == stamp:
                del self._listed[nid]
                return nid
        return None

    def _check(self) -> None:
        """Raise AssertionError naming the node ids if any invariant is broken."""

        def fail(message: str) -> None:
            raise AssertionError(message)

        g = self._g
        root = self._nodes.get(ROOT)
        if root is None or root.up is not None or root.label or root.payload or root.pins:
            fail("root missing or not bare")
        # parent and child agree; sibling keys are the first run of each label
        for nid, node in self._nodes.items():
            for first, kid in node.kids.items():
                if kid not in self._nodes:
                    fail(f"node {nid} links dead child {kid}")
                if self._nodes[kid].up != nid:
                    fail(f"child {kid} of {nid} names parent {self._nodes[kid].up}")
                if self._nodes[kid].label[:g] != first:
                    fail(f"child {kid} of {nid} filed under {first}")
            if nid != ROOT:
                up = node.up
                if up not in self._nodes or self._nodes[up].kids.get(node.label[:g]) != nid:
                    fail(f"node {nid} is not a child of its parent {up}")
        # labels non-empty, a multiple of g, one value per run; counts not negative
        for nid, node in self._nodes.items():
            if nid == ROOT:
                continue
            if not node.label or len(node.label) % g or len(node.payload) * g != len(node.label):
                fail(f"node {nid} has label {node.label} and {len(node.payload)} values")
            if node.pins < 0:
                fail(f"node {nid} has lock count {node.pins}")
        # every live node is reachable from the root
        seen = {ROOT}
        stack = [ROOT]
        while stack:
            for kid in self._nodes[stack.pop()].kids.values():
                if kid in seen:
                    fail(f"node {kid} reached twice")
                seen.add(kid)
                stack.append(kid)
        if seen != set(self._nodes):
            fail(f"unreachable nodes {sorted(set(self._nodes) - seen)}")
        # the LRU order holds exactly the unlocked leaves at their stamps
        leaves = {
            nid: node.touched
            for nid, node in self._nodes.items()
            if nid != ROOT and not node.kids and node.pins == 0
        }
        if leaves != self._listed:
            fail(f"listed {sorted(self._listed)} but unlocked leaves are {sorted(leaves)}")
        queued = set(self._queue)
        for nid, stamp in self._listed.items():
            if (stamp, nid) not in queued:
                fail(f"listed leaf {nid} has no queue entry")
        # cached counts equal their recomputed sums
        if self._stored != sum(len(node.payload) for node in self._nodes.values()):
            fail(f"stored count {self._stored} is off")
        # no free id is live, and every id is below the fresh mark
        for nid in self._free:
            if nid in self._nodes:
                fail(f"free id {nid} is live")
        if len(set(self._free)) != len(self._free):
            fail("an id is free twice")
        if any(nid >= self._fresh for nid in list(self._nodes) + self._free):
            fail("an id at or past the fresh mark")
