"""``tl_ds.radix`` as a run's tests import it when the tree lives elsewhere.

Each method is one call across the process boundary (ol's ``tree_proxy.Remote``): the
arguments cross as plain data, and so does the answer, which the method returns in the
shapes the contract names (pairs as tuples). ``evict``'s ``f`` runs here, once per value,
in the order the tree handed them over.
"""

from tree_proxy import Remote as _Remote
from tree_proxy import constant as _constant

__all__ = ["ROOT", "NodeId", "RadixTree"]

NodeId = int
ROOT: NodeId = _constant("ROOT")


class RadixTree(_Remote):
    """The RadixTree under test, called across a process boundary."""

    def __init__(self, granule: int) -> None:
        super().__init__(granule)

    @property
    def granule(self) -> int:
        return self._call("granule")

    def __len__(self) -> int:
        return self._call("__len__")

    def __repr__(self) -> str:
        return f"RadixTree(proxy of tree {self._handle})"

    def is_empty(self) -> bool:
        return self._call("is_empty")

    def node_count(self) -> int:
        return self._call("node_count")

    def key(self, id):
        return self._call("key", id)

    def values(self, id):
        return self._call("values", id)

    def parent(self, id):
        return self._call("parent", id)

    def children(self, id):
        return self._call("children", id)

    def child_count(self, id):
        return self._call("child_count", id)

    def lock_count(self, id):
        return self._call("lock_count", id)

    def lru_order(self):
        return self._call("lru_order")

    def match_prefix(self, key):
        tokens, path = self._call("match_prefix", list(key))
        return tokens, path

    def insert(self, key, values):
        node, back = self._call("insert", list(key), list(values))
        return node, back

    def lock(self, id) -> None:
        return self._call("lock", id)

    def unlock(self, id) -> None:
        return self._call("unlock", id)

    def evict(self, n, f) -> int:
        answer = self._call("evict", n)
        for value in answer["values"]:
            f(value)
        return answer["freed"]

