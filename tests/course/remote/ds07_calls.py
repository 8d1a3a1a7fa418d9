"""How the tree side of a run answers the proxy's calls to a ``RadixTree``.

ol's tree server imports this beside the tree under test and hands it every call the
proxy (ds07_proxy.py) makes: ``CALLS`` are the only names it may call, and ``call`` turns
the tree's answer into plain data. ``evict``'s callback collects the values it is given;
the answer carries them, in order, as ``{"freed": n, "values": [...]}``.
"""

CALLS = ("granule", "__len__", "is_empty", "node_count", "key", "values", "parent", "children",
         "child_count", "lock_count", "lru_order", "match_prefix", "insert", "lock", "unlock",
         "evict")
SEQUENCES = ("key", "values", "children", "lru_order")
PAIRS = ("match_prefix", "insert")


def call(tree, name: str, args: list):
    if name == "evict":
        freed = []
        count = tree.evict(*args, freed.append)
        return {"freed": count, "values": freed}
    if name == "granule":
        return tree.granule
    result = getattr(tree, name)(*args)
    if name in SEQUENCES:
        return list(result)
    if name in PAIRS:
        first, second = result
        return [first, list(second)]
    return result
