"""What the reference tree promises beyond the course tests: errors, accessors, _check."""

from __future__ import annotations

import pytest

from impl.radix import ROOT, RadixTree


def test_errors_name_the_values_involved():
    tree = RadixTree(2)
    with pytest.raises(ValueError, match="insert needs 2 values for 4 tokens at granule 2, got 1"):
        tree.insert([1, 2, 3, 4], ["a"])
    with pytest.raises(ValueError, match="3 tokens is not a multiple of granule 2"):
        tree.insert([1, 2, 3], ["a"])
    node, _ = tree.insert([1, 2], ["a"])
    with pytest.raises(RuntimeError, match=f"unlock of node {node}, which is not locked"):
        tree.unlock(node)
    with pytest.raises(ValueError, match="granule must be at least 1"):
        RadixTree(0)


def test_every_accessor_refuses_an_id_that_is_not_a_live_node():
    tree = RadixTree(1)
    node, _ = tree.insert([1], ["a"])
    tree.evict(1, lambda value: None)
    for id in (node, -1, 99, "1", None):
        for accessor in (tree.key, tree.values, tree.parent, tree.children, tree.child_count,
                         tree.lock_count, tree.lock, tree.unlock):
            with pytest.raises(KeyError):
                accessor(id)


def test_an_unlock_of_a_count_that_comes_only_from_below_is_refused():
    tree = RadixTree(1)
    held, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    _, (middle,) = tree.match_prefix([1, 9])
    tree.lock(held)
    with pytest.raises(RuntimeError, match="holds no lock of its own"):
        tree.unlock(middle)
    assert tree.lock_count(middle) == 1 and tree.lock_count(held) == 1
    tree._check()


def test_tokens_outside_32_bits_are_refused_and_change_nothing():
    tree = RadixTree(1)
    for key in ([-1], [2**32]):
        with pytest.raises(OverflowError):
            tree.insert(key, ["a"])
    assert tree.is_empty() and tree.node_count() == 0


def test_a_value_raising_in_the_eviction_callback_leaves_a_consistent_tree():
    tree = RadixTree(1)
    tree.insert([1, 2], ["a", "b"])

    def refuse(value):
        raise LookupError(value)

    with pytest.raises(LookupError):
        tree.evict(1, refuse)
    tree._check()
    assert tree.is_empty() and tree.children(ROOT) == []


def test_evict_calls_f_once_every_leaf_it_frees_is_gone():
    tree = RadixTree(1)
    tree.insert([1, 2], ["a", "b"])
    tree.insert([1, 3], ["x", "c"])
    kept, _ = tree.insert([4], ["d"])
    seen = []
    assert tree.evict(3, lambda value: seen.append((value, len(tree), tree.lru_order()))) == 3
    assert seen == [("b", 1, [kept]), ("c", 1, [kept]), ("a", 1, [kept])]
    tree._check()


def test_a_callback_that_raises_stops_the_calls_and_the_leaves_stay_removed():
    tree = RadixTree(1)
    tree.insert([1], ["a"])
    tree.insert([2], ["b"])
    kept, _ = tree.insert([3], ["c"])
    seen = []

    def refuse_a(value):
        seen.append(value)
        if value == "a":
            raise LookupError(value)

    with pytest.raises(LookupError):
        tree.evict(2, refuse_a)
    assert seen == ["a"]
    tree._check()
    assert tree.lru_order() == [kept] and len(tree) == 1


def test_check_names_the_node_whose_lock_count_is_corrupt():
    tree = RadixTree(1)
    node, _ = tree.insert([1, 2], ["a", "b"])
    tree._check()
    tree._nodes[node].lock = 3
    with pytest.raises(AssertionError, match=f"node {node} has lock count 3"):
        tree._check()


def test_check_finds_an_lru_list_out_of_stamp_order():
    tree = RadixTree(1)
    first, _ = tree.insert([1], ["a"])
    second, _ = tree.insert([2], ["b"])
    tree._nodes[first].stamp, tree._nodes[second].stamp = 2, 1
    with pytest.raises(AssertionError, match="not in strictly increasing stamp order"):
        tree._check()


def test_a_tuple_or_an_array_key_works_like_a_list():
    from array import array

    tree = RadixTree(1)
    node, _ = tree.insert((1, 2), ["a", "b"])
    assert tree.match_prefix(array("I", [1, 2, 3])) == (2, [node])
    assert tree.key(node) == [1, 2] and tree.values(node) == ["a", "b"]


def test_evicting_into_a_lists_append_hands_over_what_any_callback_gets_in_the_same_order():
    def filled() -> RadixTree:
        tree = RadixTree(2)
        for run in range(40):
            tree.insert([run % 5, run, run + 1, 9], [f"a{run}", f"b{run}"])
        return tree

    for n in (1, 3, 17, 200):
        fast, called = [], []

        def call(value, into=called):
            into.append(value)

        assert filled().evict(n, fast.append) == filled().evict(n, call)
        assert fast == called and fast

    class Kept(list):  # a subclass's append may be its own: it is called, value by value
        def append(self, value):
            super().append(("kept", value))

    kept = Kept()
    filled().evict(3, kept.append)
    assert kept and all(value[0] == "kept" for value in kept)
