"""tl_ds.prefix_cache as `ol start t8.4` writes it: every method raises."""


class PrefixCache:
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity

    def __len__(self) -> int:
        raise NotImplementedError("PrefixCache.__len__")

    def put(self, tokens: list[int]) -> int:
        raise NotImplementedError("PrefixCache.put")

    def hit(self, tokens: list[int]) -> int:
        raise NotImplementedError("PrefixCache.hit")
