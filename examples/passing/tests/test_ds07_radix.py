"""My tests of tl_ds.radix (ds.07, rung R3): the six the course names, and one per pitfall.

Each test builds a small tree by hand and checks what a caller can see: keys, values,
paths, lock counts, the eviction list, and what `evict` hands to its callback. None
depends on which id a new node gets.
"""

import pytest
from tl_ds.radix import ROOT, RadixTree


def shape(tree, node=ROOT):
    """The subtree under ``node`` as {label: (values, subtree)}."""
    return {tuple(tree.key(child)): (list(tree.values(child)), shape(tree, child))
            for child in tree.children(node)}


def evict(tree, n):
    freed = []
    count = tree.evict(n, freed.append)
    assert count == len(freed)
    return freed


def test_split_by_hand():
    tree = RadixTree(1)
    first, back = tree.insert([1, 2, 3], ["a", "b", "c"])
    assert back == []
    second, back = tree.insert([1, 2, 4], ["x", "y", "d"])
    assert back == ["x", "y"]
    assert shape(tree) == {(1, 2): (["a", "b"], {(3,): (["c"], {}), (4,): (["d"], {})})}
    middle = tree.parent(first)
    assert tree.parent(second) == middle and tree.parent(middle) == ROOT
    assert list(tree.key(first)) == [3] and list(tree.values(first)) == ["c"]
    assert len(tree) == 4 and tree.node_count() == 3


def test_match_splits_inside_an_edge():
    tree = RadixTree(1)
    leaf, _ = tree.insert([1, 2, 3, 4], ["a", "b", "c", "d"])
    matched, path = tree.match_prefix([1, 2, 9])
    assert matched == 2 and len(path) == 1
    assert list(tree.key(path[0])) == [1, 2] and list(tree.values(path[0])) == ["a", "b"]
    assert tree.parent(leaf) == path[0] and list(tree.key(leaf)) == [3, 4]
    assert tree.node_count() == 2 and len(tree) == 4
    assert tree.match_prefix([7]) == (0, [])


def test_insert_hands_back_the_stored_part():
    tree = RadixTree(1)
    node, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    again, back = tree.insert([1, 2, 3], ["x", "y", "z"])
    assert again == node and back == ["x", "y", "z"] and len(tree) == 3
    longer, back = tree.insert([1, 2, 3, 4], ["p", "q", "r", "s"])
    assert back == ["p", "q", "r"] and tree.parent(longer) == node
    assert list(tree.values(longer)) == ["s"] and len(tree) == 4
    assert shape(tree) == {(1, 2, 3): (["a", "b", "c"], {(4,): (["s"], {})})}


def test_oldest_leaf_goes_first():
    tree = RadixTree(1)
    a, _ = tree.insert([1, 1], ["a1", "a2"])
    b, _ = tree.insert([2], ["b"])
    c, _ = tree.insert([3], ["c"])
    assert tree.lru_order() == [a, b, c]
    tree.match_prefix([1, 1])
    assert tree.lru_order() == [b, c, a]
    assert evict(tree, 1) == ["b"]
    assert tree.lru_order() == [c, a] and len(tree) == 3
    assert evict(tree, 2) == ["c", "a1", "a2"]
    assert tree.is_empty() and tree.node_count() == 0


def test_locks_pin_ancestors():
    tree = RadixTree(1)
    top, _ = tree.insert([1, 2], ["a", "b"])
    leaf, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    other, _ = tree.insert([9], ["z"])
    tree.lock(leaf)
    tree.lock(leaf)
    assert tree.lock_count(leaf) == 2 and tree.lock_count(top) == 2
    assert tree.lru_order() == [other]
    assert evict(tree, 10) == ["z"]
    assert len(tree) == 3 and tree.lru_order() == []
    tree.unlock(leaf)
    assert tree.lock_count(top) == 1 and evict(tree, 10) == []
    tree.unlock(leaf)
    assert tree.lock_count(top) == 0 and tree.lru_order() == [leaf]
    assert evict(tree, 10) == ["c", "a", "b"]


def test_parent_becomes_evictable():
    tree = RadixTree(1)
    parent, _ = tree.insert([1, 2], ["a", "b"])
    child, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    newer, _ = tree.insert([7], ["n"])
    assert tree.lru_order() == [child, newer]
    assert evict(tree, 1) == ["c"]
    assert tree.child_count(parent) == 0 and tree.children(parent) == []
    assert tree.lru_order() == [parent, newer]
    assert tree.match_prefix([1, 2, 3]) == (2, [parent])


def test_granule_two_compares_whole_runs():
    tree = RadixTree(2)
    tree.insert([1, 2, 3, 4], ["a", "b"])
    matched, path = tree.match_prefix([1, 2, 3, 9])
    assert matched == 2 and list(tree.key(path[-1])) == [1, 2]
    assert tree.match_prefix([1]) == (0, [])


def test_a_split_keeps_the_lock_below_it():
    tree = RadixTree(1)
    leaf, _ = tree.insert([1, 2, 3, 4], ["a", "b", "c", "d"])
    tree.lock(leaf)
    _, path = tree.match_prefix([1, 2])
    assert tree.lock_count(path[-1]) == 1 and tree.lru_order() == []
    assert evict(tree, 10) == []


def test_unlock_without_a_lock_raises_and_keeps_other_locks():
    tree = RadixTree(1)
    leaf, _ = tree.insert([1], ["a"])
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    tree.lock(leaf)
    tree.unlock(leaf)
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    assert tree.lock_count(leaf) == 0 and tree.lru_order() == [leaf]


def test_insert_rejects_a_wrong_number_of_values():
    tree = RadixTree(2)
    with pytest.raises(ValueError):
        tree.insert([1, 2, 3, 4], ["a"])
    with pytest.raises(ValueError):
        tree.insert([1, 2], ["a", "b"])
    assert tree.is_empty() and tree.node_count() == 0


def test_len_counts_every_stored_value():
    tree = RadixTree(1)
    tree.insert([1, 2], ["a", "b"])
    tree.insert([1, 3], ["a", "c"])
    assert len(tree) == 3 and not tree.is_empty()


def test_evicted_slots_are_reused():
    tree = RadixTree(1)
    for round in range(200):
        node, _ = tree.insert([round, round + 1], ["a", "b"])
        assert node < 5
        assert evict(tree, 2) == ["a", "b"]
