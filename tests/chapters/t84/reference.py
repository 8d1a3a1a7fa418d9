"""A prefix cache of token ids over ds.07's RadixTree (granule 1): the t8.4 reference."""

from tl_ds.radix import RadixTree


class PrefixCache:
    """Holds at most ``capacity`` tokens: the prefixes put into it, least recently used
    leaves evicted first."""

    def __init__(self, capacity: int) -> None:
        self._tree = RadixTree(1)
        self._capacity = capacity

    def __len__(self) -> int:
        return len(self._tree)

    def put(self, tokens: list[int]) -> int:
        """Cache ``tokens``; how many of them were not cached before."""
        _, back = self._tree.insert(list(tokens), list(tokens))
        if len(self._tree) > self._capacity:
            self._tree.evict(len(self._tree) - self._capacity, lambda value: None)
        return len(tokens) - len(back)

    def hit(self, tokens: list[int]) -> int:
        """How many leading tokens of ``tokens`` are cached."""
        matched, _ = self._tree.match_prefix(list(tokens))
        return matched
