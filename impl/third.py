"""A third correct radix tree over token ids, written apart from the other two.

It keeps the contract (the README's "The chapter") and makes each choice the contract
leaves open differently from ``impl/radix.py`` and the passing example's tree, so that a
student's test that passes on those two only because of such a choice fails here:

- ids: the first node is 2, not 1 (slot 1 is never used), and a freed id is reused
  oldest first (first in, first out), where the reference reuses the newest and the
  second tree the smallest;
- on a split, the new middle node takes its id before the new leaf does;
- an unlock of a node pinned only from below raises RuntimeError, as the reference does
  (the second tree releases it); the message is its own.

Layout: columns, one list per field, indexed by id (a struct of arrays)::

    label[id]   tuple of tokens          up[id]     parent id (None for ROOT)
    vals[id]    list of values           kids[id]   {first run of a child's label: child}
    own[id]     locks taken on it        pins[id]   own locks of it and all below
    stamp[id]   clock of its last use    alive[id]  False for a free slot

The unlocked leaves are kept in ``listed``, a list of (stamp, id) sorted by stamp,
bisected on every change: simple and plainly right, O(leaves) per change. Speed is the
reference's concern, not this tree's.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

NodeId = int
ROOT: NodeId = 0
FIRST = 2  # the first id a node gets: slot 1 is never used


class RadixTree:
    """A radix tree from token sequences to one value per run of ``granule`` tokens."""

    def __init__(self, granule: int) -> None:
        if type(granule) is not int:
            raise TypeError(f"granule must be an integer, got {granule!r}")
        if granule < 1:
            raise ValueError(f"granule must be at least 1, got {granule}")
        self._g = granule
        self._label: list[tuple[int, ...]] = [(), ()]
        self._vals: list[list[Any]] = [[], []]
        self._up: list[NodeId | None] = [None, None]
        self._kids: list[dict[tuple[int, ...], NodeId]] = [{}, {}]
        self._own = [0, 0]
        self._pins = [0, 0]
        self._stamp = [0, 0]
        self._alive = [True, False]
        self._free: deque[NodeId] = deque()
        self._listed: list[tuple[int, NodeId]] = []
        self._clock = 0
        self._count = 0
        self._stored = 0

    # ------------------------------------------------------------------ reading

    @property
    def granule(self) -> int:
        """The run length: labels, matches and splits come in multiples of it."""
        return self._g

    def __len__(self) -> int:
        """How many values are stored."""
        return self._stored

    def is_empty(self) -> bool:
        """True when no value is stored."""
        return self._stored == 0

    def node_count(self) -> int:
        """How many nodes there are, the root not counted."""
        return self._count

    def key(self, id: NodeId) -> list[int]:
        """The edge label of node ``id``. KeyError unless it is a live node."""
        return list(self._label[self._id(id)])

    def values(self, id: NodeId) -> list[Any]:
        """The values of node ``id``, one per run of its label. KeyError on a dead id."""
        return list(self._vals[self._id(id)])

    def parent(self, id: NodeId) -> NodeId | None:
        """The parent of node ``id``, None for ROOT. KeyError on a dead id."""
        return self._up[self._id(id)]

    def children(self, id: NodeId) -> list[NodeId]:
        """The children of node ``id``, in increasing id order. KeyError on a dead id."""
        return sorted(self._kids[self._id(id)].values())

    def child_count(self, id: NodeId) -> int:
        """How many children node ``id`` has. KeyError on a dead id."""
        return len(self._kids[self._id(id)])

    def lock_count(self, id: NodeId) -> int:
        """The locks on node ``id`` and below it; 0 for ROOT. KeyError on a dead id."""
        return 0 if self._id(id) == ROOT else self._pins[id]

    def lru_order(self) -> list[NodeId]:
        """The unlocked leaves, least recently used first."""
        return [id for _, id in self._listed]

    # ------------------------------------------------------------------ changing

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        """(tokens matched, the nodes passed): the longest stored prefix of ``key`` in whole
        runs. A match that ends inside an edge splits it. Marks the path used."""
        key = tuple(key)
        matched, path = self._descend(key)
        self._use(path)
        return matched, path

    def insert(self, key: Sequence[int], values: Sequence[Any]) -> tuple[NodeId, list[Any]]:
        """Store ``key`` with one value per run: (the node that ends it, the caller's values
        for the part already stored). ValueError, the tree unchanged, unless
        ``len(values) * granule == len(key)``."""
        key, values = tuple(key), list(values)
        if len(values) * self._g != len(key):
            raise ValueError(f"{len(key)} tokens at granule {self._g} take "
                             f"{len(key) / self._g:g} values, not {len(values)}")
        if not key:
            return ROOT, []
        matched, path = self._descend(key)
        self._use(path)
        end = path[-1] if path else ROOT
        runs = matched // self._g
        if matched < len(key):
            end = self._leaf(end, key[matched:], values[runs:])
            self._stored += len(values) - runs
        return end, values[:runs]

    def lock(self, id: NodeId) -> None:
        """Pin node ``id`` and every node above it; locks nest. KeyError on a dead id."""
        if self._id(id) == ROOT:
            return
        self._unlist(id)
        self._own[id] += 1
        while id != ROOT:
            self._pins[id] += 1
            id = self._up[id]

    def unlock(self, id: NodeId) -> None:
        """Release one lock taken on node ``id``. KeyError on a dead id; RuntimeError, the
        tree unchanged, when no lock was taken on it (locks below do not count)."""
        if self._id(id) == ROOT:
            return
        if self._own[id] == 0:
            raise RuntimeError(f"node {id} holds no lock of its own to release")
        self._own[id] -= 1
        node = id
        while node != ROOT:
            self._pins[node] -= 1
            node = self._up[node]
        self._list_if_free(id)

    def evict(self, n: int, f: Callable[[Any], None]) -> int:
        """Free least recently used unlocked leaves, whole, until ``n`` values are gone:
        ``f`` on each value, in label order. The number of values freed."""
        freed = 0
        while freed < n and self._listed:
            _, leaf = self._listed.pop(0)
            gone = self._vals[leaf]
            up = self._up[leaf]
            del self._kids[up][self._label[leaf][:self._g]]
            self._drop(leaf)
            self._stored -= len(gone)
            freed += len(gone)
            if up != ROOT:
                self._list_if_free(up)
            for value in gone:
                f(value)
        return freed

    # ------------------------------------------------------------------ inside

    def _id(self, id: object) -> NodeId:
        if type(id) is int and 0 <= id < len(self._alive) and self._alive[id]:
            return id
        raise KeyError(id)

    def _descend(self, key: tuple[int, ...]) -> tuple[int, list[NodeId]]:
        """Walk ``key`` in whole runs from ROOT; split the edge the walk stops inside."""
        g, at, node, path = self._g, 0, ROOT, []
        whole = len(key) - len(key) % g
        while at < whole:
            child = self._kids[node].get(key[at:at + g])
            if child is None:
                break
            label = self._label[child]
            same = g
            while same < len(label) and at + same < whole \
                    and label[same:same + g] == key[at + same:at + same + g]:
                same += g
            if same < len(label):
                path.append(self._split(child, same))
                return at + same, path
            at += same
            path.append(child)
            node = child
        return at, path

    def _split(self, child: NodeId, cut: int) -> NodeId:
        """Cut the edge above ``child`` after ``cut`` tokens: a new middle node above it."""
        g, up, label = self._g, self._up[child], self._label[child]
        middle = self._new(label[:cut], self._vals[child][:cut // g], up)
        self._pins[middle] = self._pins[child]
        self._stamp[middle] = self._stamp[child]
        self._kids[up][label[:g]] = middle
        self._label[child] = label[cut:]
        self._vals[child] = self._vals[child][cut // g:]
        self._up[child] = middle
        self._kids[middle][label[cut:cut + g]] = child
        return middle

    def _leaf(self, up: NodeId, label: tuple[int, ...], values: list[Any]) -> NodeId:
        """A new leaf under ``up``, used now; ``up`` leaves the list if it was there."""
        if up != ROOT:
            self._unlist(up)
        leaf = self._new(label, values, up)
        self._stamp[leaf] = self._clock
        self._kids[up][label[:self._g]] = leaf
        self._list_if_free(leaf)
        return leaf

    def _new(self, label: tuple[int, ...], values: list[Any], up: NodeId) -> NodeId:
        """A node in the oldest freed slot, or a new one."""
        if self._free:
            id = self._free.popleft()
        else:
            id = len(self._alive)
            for column in (self._label, self._vals, self._up, self._kids, self._own,
                           self._pins, self._stamp, self._alive):
                column.append(None)
        self._label[id], self._vals[id], self._up[id], self._kids[id] = label, values, up, {}
        self._own[id] = self._pins[id] = self._stamp[id] = 0
        self._alive[id] = True
        self._count += 1
        return id

    def _drop(self, id: NodeId) -> None:
        self._alive[id] = False
        self._label[id], self._vals[id], self._kids[id], self._up[id] = (), [], {}, None
        self._free.append(id)
        self._count -= 1

    def _use(self, path: list[NodeId]) -> None:
        """A new clock tick on every node of ``path``; a leaf ending it moves to newest."""
        self._clock += 1
        for id in path:
            listed = self._unlist(id)
            self._stamp[id] = self._clock
            if listed:
                self._list_if_free(id)

    def _unlist(self, id: NodeId) -> bool:
        """Take ``id`` off the list of unlocked leaves; whether it was there."""
        at = bisect.bisect_left(self._listed, (self._stamp[id], id))
        if at < len(self._listed) and self._listed[at][1] == id:
            del self._listed[at]
            return True
        return False

    def _list_if_free(self, id: NodeId) -> None:
        """Put ``id`` on the list, by its stamp, if it is an unlocked leaf."""
        if not self._kids[id] and self._pins[id] == 0:
            bisect.insort(self._listed, (self._stamp[id], id))
