"""What a radix tree over token ids does, said as plainly as possible.

The model keeps a dict from every stored prefix (a tuple of tokens, a non-empty multiple
of the granule g long) to the value of its last run of g tokens. Because a stored key
stores all of its prefixes, "the longest stored prefix of a key" is a loop that grows a
prefix one run at a time while it is in the dict.

A tree's observable behaviour also depends on history the dict alone does not hold, so
the model keeps that too, keyed by prefix:

- ``ends``: the stored prefixes that end a node (an insert ends one at its key, a walk
  that stops inside an edge ends one where it stops);
- ``stamp``: for each of those, the clock of the last walk that passed it;
- ``own``: for each of those, the locks taken on it.

Everything else (a node's parent, children, label, values, lock count, the LRU order)
is recomputed from these by looping over every prefix. The model names a node by the
prefix it ends, the root by ``()``: it does not model node ids, which the tree chooses,
nor memory or speed. Its methods have the tree's names and return shapes, with prefixes
where the tree has ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Prefix = tuple[int, ...]
ROOT: Prefix = ()


class PrefixModel:
    """A map of every stored prefix, plus node ends, stamps and own locks."""

    def __init__(self, granule: int) -> None:
        if granule < 1:
            raise ValueError(f"granule must be at least 1, got {granule}")
        self.granule = granule
        self.stored: dict[Prefix, Any] = {}
        self.ends: set[Prefix] = set()
        self.stamp: dict[Prefix, int] = {}
        self.own: dict[Prefix, int] = {}
        self.clock = 0

    # ------------------------------------------------------------------ derived views

    def __len__(self) -> int:
        return len(self.stored)

    def node_count(self) -> int:
        return len(self.ends)

    def parent(self, prefix: Prefix) -> Prefix | None:
        """The longest node end that is a proper prefix of ``prefix``; None for the root."""
        if prefix == ROOT:
            return None
        above = [end for end in self.ends if len(end) < len(prefix) and prefix[:len(end)] == end]
        return max(above, key=len, default=ROOT)

    def children(self, prefix: Prefix) -> list[Prefix]:
        return sorted(end for end in self.ends if self.parent(end) == prefix)

    def key(self, prefix: Prefix) -> Prefix:
        """The edge label: the tokens from the parent's end to this end."""
        if prefix == ROOT:
            return ROOT
        return prefix[len(self.parent(prefix)):]

    def values(self, prefix: Prefix) -> list[Any]:
        """The value of every run on the edge, in label order."""
        if prefix == ROOT:
            return []
        start = len(self.parent(prefix))
        g = self.granule
        return [self.stored[prefix[:end]] for end in range(start + g, len(prefix) + 1, g)]

    def lock_count(self, prefix: Prefix) -> int:
        """Own locks of this node and of every node below it."""
        if prefix == ROOT:
            return 0
        return sum(self.own[end] for end in self.ends if end[:len(prefix)] == prefix)

    def is_leaf(self, prefix: Prefix) -> bool:
        """True when no other node end extends this one."""
        return not any(len(end) > len(prefix) and end[:len(prefix)] == prefix for end in self.ends)

    def lru_order(self) -> list[Prefix]:
        """Unlocked leaves, oldest stamp first."""
        leaves = [end for end in self.ends if self.is_leaf(end) and self.lock_count(end) == 0]
        return sorted(leaves, key=lambda end: self.stamp[end])

    # ------------------------------------------------------------------ operations

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[Prefix]]:
        """(tokens matched, the node ends on the way): the longest stored prefix in runs."""
        self.clock += 1
        key = tuple(key)
        g = self.granule
        matched = 0
        while matched + g <= len(key) and key[:matched + g] in self.stored:
            matched += g
        end = key[:matched]
        if matched and end not in self.ends:  # the walk stops inside an edge: split it
            self.ends.add(end)
            self.own[end] = 0
        path = sorted((e for e in self.ends if end[:len(e)] == e), key=len)
        for e in path:
            self.stamp[e] = self.clock
        return matched, path

    def insert(self, key: Sequence[int], values: Sequence[Any]) -> tuple[Prefix, list[Any]]:
        """Store every run-prefix of ``key``; hand back the caller's values for the stored part."""
        key = tuple(key)
        values = list(values)
        g = self.granule
        if len(values) * g != len(key):
            raise ValueError(f"{len(values)} values do not fit {len(key)} tokens at granule {g}")
        if not key:
            return ROOT, []
        matched, _ = self.match_prefix(key)
        for end in range(matched + g, len(key) + 1, g):
            self.stored[key[:end]] = values[end // g - 1]
        if matched < len(key):
            self.ends.add(key)
            self.own[key] = 0
            self.stamp[key] = self.clock
        return key, values[:matched // g]

    def lock(self, prefix: Prefix) -> None:
        if prefix != ROOT:
            self.own[prefix] += 1

    def unlock(self, prefix: Prefix) -> None:
        if prefix == ROOT:
            return
        if self.own[prefix] == 0:
            raise RuntimeError(f"unlock of {prefix}, which is not locked")
        self.own[prefix] -= 1

    def evict(self, n: int, f: Callable[[Any], None]) -> int:
        """Remove the oldest unlocked leaf, whole, until at least n values are gone."""
        freed = 0
        while freed < n and self.lru_order():
            leaf = self.lru_order()[0]
            gone = self.values(leaf)
            start = len(self.parent(leaf))
            for end in range(start + self.granule, len(leaf) + 1, self.granule):
                del self.stored[leaf[:end]]
            self.ends.remove(leaf)
            del self.stamp[leaf], self.own[leaf]
            freed += len(gone)
            for value in gone:
                f(value)
        return freed
