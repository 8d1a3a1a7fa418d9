"""ds.07: a radix tree over token ids, with an LRU list of evictable leaves.

Staff note: this is the bundled *failing* example (examples/failing). It reads like an
honest student attempt and passes most of the course tests, but it contains two of the
chapter's pitfalls: "Locking only the node itself" (s10) and "Not putting a
childless parent on the list" (s08). The code carries no marker at either spot, on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

V = TypeVar("V")
NodeId = int
ROOT: NodeId = 0


@dataclass(slots=True)
class _Node(Generic[V]):
    key: tuple[int, ...]
    values: list[V]
    parent: NodeId | None
    children: dict[tuple[int, ...], NodeId] = field(default_factory=dict)
    locks: int = 0
    stamp: int = 0
    prev: NodeId | None = None  # towards the oldest end of the LRU list
    next: NodeId | None = None  # towards the newest end
    listed: bool = False


class RadixTree(Generic[V]):
    """Edges labelled with runs of `granule` tokens, one value per run."""

    def __init__(self, granule: int) -> None:
        if granule < 1:
            raise ValueError(f"granule must be >= 1, not {granule}")
        self._g = granule
        self._nodes: list[_Node[V] | None] = [_Node((), [], None)]
        self._free: list[NodeId] = []
        self._head: NodeId | None = None  # oldest unlocked leaf
        self._tail: NodeId | None = None  # newest unlocked leaf
        self._clock = 0
        self._len = 0

    # ---- read-only views -------------------------------------------------
    @property
    def granule(self) -> int:
        return self._g

    def __len__(self) -> int:
        return self._len

    def is_empty(self) -> bool:
        return self._len == 0

    def node_count(self) -> int:
        return len(self._nodes) - 1 - len(self._free)

    def key(self, id: NodeId) -> Sequence[int]:
        return self._get(id).key

    def values(self, id: NodeId) -> Sequence[V]:
        return list(self._get(id).values)

    def parent(self, id: NodeId) -> NodeId | None:
        return self._get(id).parent

    def children(self, id: NodeId) -> list[NodeId]:
        return sorted(self._get(id).children.values())

    def child_count(self, id: NodeId) -> int:
        return len(self._get(id).children)

    def lock_count(self, id: NodeId) -> int:
        return self._get(id).locks

    def lru_order(self) -> list[NodeId]:
        order, id = [], self._head
        while id is not None:
            order.append(id)
            id = self._nodes[id].next
        return order

    # ---- matching and inserting ------------------------------------------
    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        key, g = tuple(key), self._g
        self._clock += 1
        at, pos, path = ROOT, 0, []
        while pos + g <= len(key):
            child = self._nodes[at].children.get(key[pos:pos + g])
            if child is None:
                break
            label = self._nodes[child].key
            same = g
            while same < len(label) and label[same:same + g] == key[pos + same:pos + same + g]:
                same += g
            inside = same < len(label)
            if inside:
                child = self._split(child, same)
            path.append(child)
            pos, at = pos + same, child
            if inside:
                break
        for id in path:
            self._nodes[id].stamp = self._clock
        if path and self._nodes[path[-1]].listed:
            self._unlink(path[-1])
            self._link(path[-1])
        return pos, path

    def insert(self, key: Sequence[int], values: Sequence[V]) -> tuple[NodeId, list[V]]:
        key, values, g = tuple(key), list(values), self._g
        if len(values) * g != len(key):
            raise ValueError(f"{len(values)} values for {len(key)} tokens at granule {g}")
        if not key:
            return ROOT, []
        matched, path = self.match_prefix(key)
        end = path[-1] if path else ROOT
        handed_back = values[:matched // g]
        if matched == len(key):
            return end, handed_back
        leaf = self._new(_Node(key[matched:], values[matched // g:], end, stamp=self._clock))
        parent = self._nodes[end]
        if parent.listed:
            self._unlink(end)
        parent.children[key[matched:matched + g]] = leaf
        self._len += len(values) - len(handed_back)
        self._link(leaf)
        return leaf, handed_back

    # ---- locks and eviction ----------------------------------------------
    def lock(self, id: NodeId) -> None:
        node = self._get(id)
        if id == ROOT:
            return
        node.locks += 1
        if node.listed:
            self._unlink(id)

    def unlock(self, id: NodeId) -> None:
        node = self._get(id)
        if id == ROOT:
            return
        if node.locks == 0:
            raise RuntimeError(f"unlock of node {id}, which is not locked")
        node.locks -= 1
        if node.locks == 0 and not node.children:
            self._link(id)

    def evict(self, n: int, f: Callable[[V], None]) -> int:
        freed = 0
        while freed < n and self._head is not None:
            id = self._head
            node = self._nodes[id]
            self._unlink(id)
            del self._nodes[node.parent].children[node.key[:self._g]]
            for value in node.values:
                f(value)
            freed += len(node.values)
            self._len -= len(node.values)
            self._nodes[id] = None
            self._free.append(id)
        return freed

    # ---- helpers -----------------------------------------------------------
    def _get(self, id: NodeId) -> _Node[V]:
        if not isinstance(id, int) or not 0 <= id < len(self._nodes) or self._nodes[id] is None:
            raise KeyError(id)
        return self._nodes[id]

    def _new(self, node: _Node[V]) -> NodeId:
        if self._free:
            id = self._free.pop()
            self._nodes[id] = node
        else:
            id = len(self._nodes)
            self._nodes.append(node)
        return id

    def _split(self, id: NodeId, at: int) -> NodeId:
        """Cut the edge into `id` after `at` tokens; `id` keeps the lower part."""
        child, g = self._nodes[id], self._g
        middle = self._new(_Node(child.key[:at], child.values[:at // g], child.parent,
                                 {child.key[at:at + g]: id}, child.locks, child.stamp))
        self._nodes[child.parent].children[child.key[:g]] = middle
        child.key, child.values = child.key[at:], child.values[at // g:]
        child.parent = middle
        return middle

    def _link(self, id: NodeId) -> None:
        """Put `id` on the LRU list at its stamp, walking in from the newest end."""
        node = self._nodes[id]
        after = self._tail
        while after is not None and self._nodes[after].stamp > node.stamp:
            after = self._nodes[after].prev
        before = self._head if after is None else self._nodes[after].next
        node.prev, node.next, node.listed = after, before, True
        if after is None:
            self._head = id
        else:
            self._nodes[after].next = id
        if before is None:
            self._tail = id
        else:
            self._nodes[before].prev = id

    def _unlink(self, id: NodeId) -> None:
        node = self._nodes[id]
        if node.prev is None:
            self._head = node.next
        else:
            self._nodes[node.prev].next = node.next
        if node.next is None:
            self._tail = node.prev
        else:
            self._nodes[node.next].prev = node.prev
        node.prev = node.next = None
        node.listed = False
