"""A radix tree over token ids: the prefix cache of an LLM server (course module ds.07).

This is your stub, written by `ol start ds.07`: the whole interface, nothing of the tree.
`__init__` keeps the granule and checks nothing; every other method raises
NotImplementedError until you write it. The chapter's text describes the tree;
`ol tests ds.07` lists what the course checks.

    NodeId = int, ROOT = 0
    RadixTree(granule)          ValueError unless granule >= 1
    insert(key, values)         -> (node, values handed back); ValueError unless
                                   len(values) * granule == len(key)
    match_prefix(key)           -> (tokens matched, path of node ids, ROOT excluded)
    lock(id) / unlock(id)       pin a node and its ancestors; RuntimeError on an unmatched unlock
    evict(n, f)                 free at least n values from the oldest unlocked leaves, calling f
                                on each; -> the number freed
    any id that is not a live node: KeyError

Beyond the chapter's text, the course tests require (`ol tests ds.07` says why):
- an id that is not an int (None, 2.0, "2") raises KeyError, even one equal to a live id
- a negative id, or one past every id used so far, raises KeyError
- key(), values(), children() and lru_order() hand out a copy: changing it changes
  nothing of the tree
- every method works on a path over a thousand nodes deep and among over a thousand
  listed leaves (no recursion)
- a token is any int from 0 to 2**32 - 1, told apart by every bit
- values are kept by position: equal values are each their own, compared with ==
and leave open: a bool id may be refused with KeyError or taken as the int it equals;
evict may call f during the eviction or after; an error may be a subclass of the one
named; which id a new node gets, and the order freed ids are reused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")
NodeId = int

ROOT: NodeId = 0


class RadixTree(Generic[V]):
    def __init__(self, granule: int) -> None:
        self._granule = granule  # checking it (ValueError below 1) is yours to write

    @property
    def granule(self) -> int:
        raise NotImplementedError("RadixTree.granule")

    def __len__(self) -> int:
        raise NotImplementedError("RadixTree.__len__")

    def is_empty(self) -> bool:
        raise NotImplementedError("RadixTree.is_empty")

    def node_count(self) -> int:
        raise NotImplementedError("RadixTree.node_count")

    def key(self, id: NodeId) -> Sequence[int]:
        raise NotImplementedError("RadixTree.key")

    def values(self, id: NodeId) -> Sequence[V]:
        raise NotImplementedError("RadixTree.values")

    def parent(self, id: NodeId) -> NodeId | None:
        raise NotImplementedError("RadixTree.parent")

    def children(self, id: NodeId) -> list[NodeId]:
        raise NotImplementedError("RadixTree.children")

    def child_count(self, id: NodeId) -> int:
        raise NotImplementedError("RadixTree.child_count")

    def lock_count(self, id: NodeId) -> int:
        raise NotImplementedError("RadixTree.lock_count")

    def lru_order(self) -> list[NodeId]:
        raise NotImplementedError("RadixTree.lru_order")

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        raise NotImplementedError("RadixTree.match_prefix")

    def insert(self, key: Sequence[int], values: Sequence[V]) -> tuple[NodeId, list[V]]:
        raise NotImplementedError("RadixTree.insert")

    def lock(self, id: NodeId) -> None:
        raise NotImplementedError("RadixTree.lock")

    def unlock(self, id: NodeId) -> None:
        raise NotImplementedError("RadixTree.unlock")

    def evict(self, n: int, f: Callable[[V], None]) -> int:
        raise NotImplementedError("RadixTree.evict")
