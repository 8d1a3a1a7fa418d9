"""The course test of t8.4: the cache against a naive model, then within its capacity."""

import random

from cache_model import PrefixModel
from tl_ds.prefix_cache import PrefixCache


def test_the_cache_agrees_with_a_list_of_prefixes():
    rng = random.Random(84)
    cache, model = PrefixCache(10_000), PrefixModel()
    for _ in range(300):
        tokens = [rng.randrange(4) for _ in range(rng.randrange(1, 9))]
        if rng.random() < 0.5:
            assert cache.put(tokens) == model.put(tokens)
        else:
            assert cache.hit(tokens) == model.hit(tokens)
        assert len(cache) == len(model)
    small = PrefixCache(5)
    for _ in range(100):
        small.put([rng.randrange(4) for _ in range(rng.randrange(1, 9))])
        assert len(small) <= 5
