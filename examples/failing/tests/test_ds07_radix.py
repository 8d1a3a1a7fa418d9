"""A student's tests that `ol check` does not pass, each for a reason worth seeing.

- three of the six required tests are missing (insert_hands_back_the_stored_part,
  locks_pin_ancestors, parent_becomes_evictable), so s11 survives and the kill rate is low;
- test_new_nodes_take_the_next_ids asserts which id a new node gets, which the contract
  leaves open: it passes on the reference and fails on the second correct tree, so it is
  invalid and the grade is refused.
"""

from tl_ds.radix import ROOT, RadixTree


def test_split_by_hand():
    tree = RadixTree(1)
    tree.insert([1, 2, 3], ["a", "b", "c"])
    leaf, back = tree.insert([1, 2, 4], ["x", "y", "d"])
    assert back == ["x", "y"]
    middle = tree.parent(leaf)
    assert list(tree.key(middle)) == [1, 2] and list(tree.values(middle)) == ["a", "b"]
    assert tree.parent(middle) == ROOT and tree.child_count(middle) == 2


def test_match_splits_inside_an_edge():
    tree = RadixTree(1)
    tree.insert([1, 2, 3, 4], ["a", "b", "c", "d"])
    matched, path = tree.match_prefix([1, 2, 9])
    assert matched == 2 and list(tree.key(path[-1])) == [1, 2]


def test_oldest_leaf_goes_first():
    tree = RadixTree(1)
    old, _ = tree.insert([1], ["a"])
    new, _ = tree.insert([2], ["b"])
    assert tree.lru_order() == [old, new]
    freed = []
    assert tree.evict(1, freed.append) == 1 and freed == ["a"]


def test_new_nodes_take_the_next_ids():
    tree = RadixTree(1)
    first, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    second, _ = tree.insert([1, 2, 4], ["a", "b", "d"])
    assert (first, second) == (1, 3)
