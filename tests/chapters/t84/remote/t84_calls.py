"""How the tree side answers the proxy's calls to a ``PrefixCache``: every answer is an int."""

CALLS = ("__len__", "put", "hit")


def call(cache, name: str, args: list):
    return getattr(cache, name)(*args)
