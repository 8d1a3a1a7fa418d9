"""``tl_ds.prefix_cache`` as a run's tests import it when the cache lives elsewhere."""

from tree_proxy import Remote as _Remote

__all__ = ["PrefixCache"]


class PrefixCache(_Remote):
    """The PrefixCache under test, called across a process boundary."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)

    def __len__(self) -> int:
        return self._call("__len__")

    def put(self, tokens) -> int:
        return self._call("put", list(tokens))

    def hit(self, tokens) -> int:
        return self._call("hit", list(tokens))
