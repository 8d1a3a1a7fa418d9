"""The naive model on the chapter's worked example , at granules 1 and 2."""

from __future__ import annotations

import pytest

from model import ROOT, PrefixModel


def test_the_model_replays_the_worked_example_at_granule_1():
    model = PrefixModel(1)
    assert model.insert([1, 2, 3], ["a", "b", "c"]) == ((1, 2, 3), [])
    assert model.insert([1, 2, 4, 5], ["x", "y", "d", "e"]) == ((1, 2, 4, 5), ["x", "y"])
    assert model.children(ROOT) == [(1, 2)]
    assert model.children((1, 2)) == [(1, 2, 3), (1, 2, 4, 5)]
    assert model.values((1, 2)) == ["a", "b"] and model.key((1, 2, 4, 5)) == (4, 5)
    assert model.match_prefix([1, 2, 3, 9]) == (3, [(1, 2), (1, 2, 3)])
    assert model.match_prefix([1, 2, 7]) == (2, [(1, 2)])
    assert model.match_prefix([1, 9]) == (1, [(1,)])
    assert model.children((1,)) == [(1, 2)] and model.values((1, 2)) == ["b"]
    assert model.match_prefix([7, 1]) == (0, [])
    assert len(model) == 5 and model.node_count() == 4


def test_the_model_matches_whole_runs_only_at_granule_2():
    model = PrefixModel(2)
    model.insert([1, 2, 3, 4], [10, 11])
    assert model.match_prefix([1, 2, 3, 9]) == (2, [(1, 2)])
    assert model.values((1, 2)) == [10] and model.values((1, 2, 3, 4)) == [11]
    assert model.match_prefix([1]) == (0, [])


def test_the_model_evicts_the_oldest_unlocked_leaf_and_relists_its_parent():
    model = PrefixModel(1)
    model.insert([1, 2, 3], ["a", "b", "c"])
    model.insert([1, 2, 4], ["x", "y", "d"])
    model.insert([5], ["z"])
    model.lock((5,))
    gone = []
    assert model.evict(2, gone.append) == 2 and gone == ["c", "d"]
    assert model.lru_order() == [(1, 2)]
    assert model.lock_count((5,)) == 1
    with pytest.raises(RuntimeError):
        model.unlock((1, 2))


def test_the_model_refuses_a_wrong_value_count():
    with pytest.raises(ValueError):
        PrefixModel(2).insert([1, 2, 3], ["a"])
