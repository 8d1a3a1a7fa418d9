"""A second correct t8.4 cache, written apart from the reference: it counts what is new
before it inserts, and trims to capacity one value at a time."""

from tl_ds.radix import RadixTree


class PrefixCache:
    def __init__(self, capacity: int) -> None:
        self.tree, self.capacity = RadixTree(1), capacity

    def __len__(self) -> int:
        return len(self.tree)

    def put(self, tokens: list[int]) -> int:
        new = len(tokens) - self.hit(tokens)
        self.tree.insert(list(tokens), list(tokens))
        while len(self.tree) > self.capacity and self.tree.evict(1, lambda value: None):
            pass
        return new

    def hit(self, tokens: list[int]) -> int:
        return self.tree.match_prefix(list(tokens))[0]
