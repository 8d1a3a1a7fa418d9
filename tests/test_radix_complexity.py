"""What the reference's eviction costs, pinned by counting steps instead of timing them.

The tree reaches every node through one list, ``_nodes``; a tree whose list counts its
reads counts every step its walks take, the relisting walk included. The bounds hold on
any machine and at any load, and a quadratic walk overshoots them by orders of magnitude.
"""

from __future__ import annotations

import pytest

from impl.radix import RadixTree

READS_PER_EVICTED_NODE = 8  # the reference takes about 6: leaf, parent, LRU links
READS_PER_EVICT = 16  # one evict(1) of a lone leaf, its parent relisted next to an end
READS_PER_RELIST_STEP = 4  # one step reads a node from each end: the reference reads 2


class CountingNodes(list):
    """A node list that counts how often a node is read from it."""

    reads = 0

    def __getitem__(self, index):
        self.reads += 1
        return super().__getitem__(index)


def counting(tree: RadixTree) -> CountingNodes:
    """Swap the tree's node list for one that counts its reads; return it."""
    tree._nodes = CountingNodes(tree._nodes)
    return tree._nodes


def parents_of_two_leaves(parents: int) -> RadixTree:
    """Parents 0..parents-1 with leaves 0 and 1 below each, the oldest parent first.

    A parent shares its stamp with its newer leaf, so eviction removes both leaves of
    a parent and leaves it childless and older than every listed leaf, then evicts it.
    """
    tree = RadixTree(1)
    for parent in range(parents):
        tree.insert([parent, 0], ["p", "a"])
        tree.insert([parent, 1], ["p", "b"])
    return tree


@pytest.mark.parametrize("parents", [200, 2_000])
def test_evicting_parents_emptied_one_by_one_takes_linear_steps(parents):
    tree = parents_of_two_leaves(parents)
    nodes = 3 * parents
    assert tree.node_count() == nodes
    counted = counting(tree)
    assert tree.evict(len(tree), lambda value: None) == nodes  # one value a node
    reads = counted.reads
    assert reads <= READS_PER_EVICTED_NODE * nodes, (
        f"evicting {nodes:,} nodes read a node {reads:,} times, {reads / nodes:.0f} per node"
    )
    assert tree.is_empty() and tree.node_count() == 0
    tree._check()


def a_parent_to_relist(older: int, newer: int) -> RadixTree:
    """A tree whose evict(1) relists parent [0] with ``older`` and ``newer`` leaves around it.

    The parent's only child is the oldest leaf, and a match that ends at the parent
    stamps it after ``older`` other leaves were inserted and before ``newer`` more.
    """
    tree = RadixTree(1)
    tree.insert([0], ["p"])
    tree.insert([0, 0], ["p", "c"])
    for token in range(1, older + 1):
        tree.insert([token], [token])
    tree.match_prefix([0])
    for token in range(older + 1, older + newer + 1):
        tree.insert([token], [token])
    return tree


@pytest.mark.parametrize(
    ("older", "newer"),
    [(0, 0), (0, 500), (3, 500), (500, 0), (500, 3), (100, 400), (250, 250)],
)
def test_a_relisted_node_walks_in_from_the_nearer_end(older, newer):
    tree = a_parent_to_relist(older, newer)
    parent = tree.parent(tree.lru_order()[0])
    counted = counting(tree)
    assert tree.evict(1, lambda value: None) == 1
    reads = counted.reads
    limit = READS_PER_EVICT + READS_PER_RELIST_STEP * min(older, newer)
    assert reads <= limit, (
        f"relisting between {older} older and {newer} newer leaves read a node "
        f"{reads} times, more than {limit}"
    )
    assert tree.lru_order().index(parent) == older
    tree._check()
