"""The 11 course tests of ds.07, the radix tree over token ids, one per row of the chapter's table.

They import ``tl_ds.radix`` and nothing else of the tree; the grader decides which
implementation that import yields. Each test pins one row of the chapter's table and
names, in its docstring, the planted mutants it exists to catch.
"""

from __future__ import annotations

import os

import pytest
from ds07_machine import (
    RadixMachine,
    RadixMachineGranule1,
    RadixMachineGranule2,
    RadixMachineGranule3,
    RadixMachineGranule4,
    RadixMachineGranule16,
)
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test
from tl_ds.radix import ROOT, RadixTree

PROFILES = {
    # what every student's run sees: fixed, derandomized, no database, no deadline
    "course": {"max_examples": 72, "stateful_step_count": 50,
               "phases": (Phase.explicit, Phase.generate, Phase.shrink),
               "report_multiple_bugs": False},
    # the same steps, without shrinking a failure: for kill matrices, where only the verdict counts
    "verdict": {"max_examples": 72, "stateful_step_count": 50,
                "phases": (Phase.explicit, Phase.generate)},
    # the project's CI: the same machine, longer
    "long": {"max_examples": 600, "stateful_step_count": 80},
}
MIN_STEPS = 2_500
# every example runs at least this many steps, so each one builds a tree worth probing
# (Hypothesis otherwise ends many examples after a few steps)
MIN_EXAMPLE_STEPS = 20
# the examples every run sees, a seed per granule: the ones Hypothesis once derived from
# the source of the test's machine factory (derandomize), pinned so that editing that code
# never changes the examples, and so never a grade
COURSE_SEEDS = {
    1: int("23870fff71f854f53dd5e180b1b4a4eee7bf2257fef35916"
           "fc2475d86413120cf820039f87439b7cd7e4e2c8e0411aad", 16),
    2: int("fdbdbd548dde5cf4f510806f49ac8ef451c192af8c004087"
           "0b5f66bff619fe7cc6d2741e47d2bd872b9e2c2a87d797ae", 16),
    3: 3_070_907_2026,
    4: 4_070_907_2026,
    16: 16_070_907_2026,
}
# granules 1 and 2 carry the chapter's floor of steps; the wider ones run a quarter of the
# examples each, so runs compared by some of their tokens, not all, meet every example
MACHINES = ((RadixMachineGranule1, 1), (RadixMachineGranule2, 1), (RadixMachineGranule3, 4),
            (RadixMachineGranule4, 4), (RadixMachineGranule16, 4))


def profile(name: str) -> settings:
    """The named Hypothesis profile, loaded explicitly so no outside default leaks in."""
    return settings(
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
        **PROFILES[name],
    )


def shape(tree: RadixTree, id: int = ROOT) -> dict:
    """The subtree under ``id`` as {tuple(label): (values, subtree)}, for whole-tree asserts."""
    return {
        tuple(tree.key(child)): (list(tree.values(child)), shape(tree, child))
        for child in tree.children(id)
    }


def evict_all(tree: RadixTree, n: int) -> tuple[int, list]:
    gone: list = []
    return tree.evict(n, gone.append), gone


DEEP = 1_100  # nodes on one path: deeper than Python's default recursion limit (1,000)
WIDE = 1_100  # listed leaves, as a server's cache holds one per request: more than that too


def chain(tree: RadixTree, depth: int = DEEP) -> list[int]:
    """A path of ``depth`` nodes, one run each, as a long conversation leaves it; its ids
    from the top down. Built longest key first, so each insert splits the path's end."""
    g = tree.granule
    key = [token % 7 + 1 for token in range(depth * g)]
    tree.insert(key, [f"t{run}" for run in range(depth)])
    for runs in range(depth - 1, 0, -1):
        tree.insert(key[:runs * g], [f"t{run}" for run in range(runs)])
    tokens, path = tree.match_prefix(key)
    assert tokens == depth * g and len(path) == depth
    return path


def stands(tree: RadixTree, path: list[int]) -> None:
    """Every view of a tree that is the chain ``path``, read while it stands."""
    g, last = tree.granule, len(path) - 1
    assert len(tree) == len(path) and tree.node_count() == len(path) and not tree.is_empty()
    assert tree.lru_order() == [path[-1]] and tree.children(ROOT) == [path[0]]
    assert list(tree.key(path[-1])) == [token % 7 + 1 for token in range(last * g, len(path) * g)]
    assert list(tree.values(path[-1])) == [f"t{last}"] and tree.parent(path[0]) == ROOT
    assert tree.children(path[-2]) == [path[-1]] and tree.child_count(path[-1]) == 0
    assert tree.parent(path[-1]) == path[-2] and tree.lock_count(path[-1]) == 0


def test_hand_example_split_and_match():
    """The chapter's worked example, step by step (s01, s02, s03)."""
    tree = RadixTree(1)
    first, back = tree.insert([1, 2, 3], ["a", "b", "c"])
    assert back == []
    assert shape(tree) == {(1, 2, 3): (["a", "b", "c"], {})}

    leaf, back = tree.insert([1, 2, 4, 5], ["x", "y", "d", "e"])
    assert back == ["x", "y"]
    assert shape(tree) == {(1, 2): (["a", "b"], {(3,): (["c"], {}), (4, 5): (["d", "e"], {})})}
    assert list(tree.key(first)) == [3] and list(tree.values(first)) == ["c"]
    assert list(tree.key(leaf)) == [4, 5] and list(tree.values(leaf)) == ["d", "e"]
    middle = tree.parent(first)
    assert tree.parent(leaf) == middle and tree.parent(middle) == ROOT
    assert len(tree) == 5 and tree.node_count() == 3

    assert tree.match_prefix([1, 2, 3, 9]) == (3, [middle, first])
    assert tree.match_prefix([1, 2, 7]) == (2, [middle])
    assert tree.node_count() == 3

    tokens, path = tree.match_prefix([1, 9])
    assert tokens == 1 and len(path) == 1
    top = path[0]
    assert list(tree.key(top)) == [1] and list(tree.values(top)) == ["a"]
    assert tree.parent(middle) == top
    assert list(tree.key(middle)) == [2] and list(tree.values(middle)) == ["b"]
    assert shape(tree) == {
        (1,): (["a"], {(2,): (["b"], {(3,): (["c"], {}), (4, 5): (["d", "e"], {})})})
    }
    assert tree.match_prefix([7, 1]) == (0, [])
    assert len(tree) == 5 and tree.node_count() == 4


def test_granule_matches_whole_runs_only():
    """Granule 2 compares runs whole and matches nothing shorter than a run (s04); so do
    granules 3, 4 and 16, where runs may differ in any one token, the middle ones too, and
    tokens anywhere in the 32-bit range, told apart by their high bits."""
    for g in (3, 4, 16):
        tree = RadixTree(g)
        run = list(range(1, g + 1))
        node, _ = tree.insert(run * 2, ["a", "b"])
        for at in range(g):
            other = [*run[:at], 99, *run[at + 1:]]
            assert tree.match_prefix(other + run) == (0, []), (g, at)
            tokens, path = tree.match_prefix(run + other)
            assert tokens == g and len(path) == 1 and tree.children(path[0]) == [node], (g, at)
        assert tree.match_prefix(run[:-1]) == (0, [])
        assert tree.match_prefix(run * 2 + run[:-1]) == (2 * g, [path[0], node])
    tree = RadixTree(2)
    leaf, _ = tree.insert([1, 2, 3, 4], [10, 11])
    tokens, path = tree.match_prefix([1, 2, 3, 9])
    assert tokens == 2 and len(path) == 1
    assert list(tree.key(path[0])) == [1, 2] and list(tree.values(path[0])) == [10]
    assert tree.children(path[0]) == [leaf]
    assert list(tree.key(leaf)) == [3, 4] and list(tree.values(leaf)) == [11]
    assert tree.match_prefix([1]) == (0, [])
    assert tree.match_prefix([1, 2, 3]) == (2, path)
    assert tree.match_prefix([1, 2, 3, 4, 5]) == (4, [path[0], leaf])
    top = 2**32 - 1  # token ids span the whole 32-bit range: a run differing in one high bit
    high = RadixTree(2)
    leaf, _ = high.insert([5, top], ["x"])
    for bit in (16, 24, 31):
        assert high.match_prefix([5, top ^ 2**bit]) == (0, []), bit
        other, _ = high.insert([5, top ^ 2**bit], [bit])
        assert other != leaf and list(high.key(other)) == [5, top ^ 2**bit]
    assert high.match_prefix([5, top, 0]) == (2, [leaf]) and len(high) == 4


def test_reinserting_hands_every_value_back():
    """A stored key keeps its values and hands all of the caller's back, a tuple key as a
    list (s05)."""
    tree = RadixTree(2)
    node, back = tree.insert([5, 6, 7, 8], ["p", "q"])
    assert back == []
    again, back = tree.insert([5, 6, 7, 8], ["P", "Q"])
    assert again == node and back == ["P", "Q"]
    assert list(tree.values(node)) == ["p", "q"]
    assert len(tree) == 2 and tree.node_count() == 1
    part, back = tree.insert([5, 6], ["R"])
    assert back == ["R"] and tree.parent(node) == part
    assert len(tree) == 2
    assert tree.insert((5, 6, 7, 8), ("S", "T")) == (node, ["S", "T"])
    assert tree.match_prefix((5, 6, 7)) == (2, [part])
    same = RadixTree(1)  # values are kept by position: equal values are still each their own
    end, _ = same.insert([1, 2, 3], [[0], [1], [0]])
    top, back = same.insert([1], [[5]])
    assert back == [[5]] and same.parent(end) == top
    assert list(same.values(top)) == [[0]] and list(same.values(end)) == [[1], [0]]
    leaf, back = same.insert([1, 2, 3, 4], [[0], [0], [0], [0]])
    assert back == [[0], [0], [0]] and same.parent(leaf) == end and len(same) == 4
    assert evict_all(same, 9) == (4, [[0], [1], [0], [0]])


def test_lru_order_follows_last_use():
    """A match moves a leaf to the newest end; evict(1) takes the oldest leaf whole (s07)."""
    tree = RadixTree(1)
    a, _ = tree.insert([1, 1], ["a1", "a2"])
    b, _ = tree.insert([2, 2], ["b1", "b2"])
    c, _ = tree.insert([3], ["c1"])
    assert tree.lru_order() == [a, b, c]
    tree.match_prefix([1, 1, 5])
    assert tree.lru_order() == [b, c, a]
    assert evict_all(tree, 1) == (2, ["b1", "b2"])
    assert tree.lru_order() == [c, a]
    assert len(tree) == 3
    kinds = RadixTree(1)  # f is any callable: it gets each freed value once, in order
    for token in range(4):
        kinds.insert([token], [f"k{token}"])
    seen, added, counted = [], set(), []
    assert kinds.evict(1, lambda value: seen.append(value)) == 1 and seen == ["k0"]
    assert kinds.evict(1, added.add) == 1 and added == {"k1"}
    assert kinds.evict(1, counted.count) == 1 and counted == []  # what f returns is dropped
    assert kinds.evict(1, seen.append) == 1 and seen == ["k0", "k3"]


def test_a_childless_parent_becomes_evictable():
    """Evicting the last child lists the parent at its own stamp (s06, s08, s09, m03), on a
    path deeper than the recursion limit and among a server's thousand leaves too."""
    tree = RadixTree(1)
    tree.insert([1, 2, 3], ["a", "b", "c"])
    tree.insert([1, 2, 4], ["x", "y", "d"])
    _, (parent,) = tree.match_prefix([1, 2])
    z, _ = tree.insert([5], ["z"])
    w, _ = tree.insert([6], ["w"])
    assert evict_all(tree, 1) == (1, ["c"])
    assert evict_all(tree, 1) == (1, ["d"])
    assert tree.child_count(parent) == 0 and tree.children(parent) == []
    assert tree.lru_order() == [parent, z, w]
    assert evict_all(tree, 2) == (2, ["a", "b"])
    assert tree.lru_order() == [z, w]
    assert tree.children(ROOT) == sorted([z, w])
    deep = RadixTree(2)  # on a path deeper than the recursion limit, each parent in turn
    path = chain(deep)
    stands(deep, path)
    for depth in range(DEEP - 1, DEEP - 4, -1):
        assert deep.lru_order() == [path[depth]]
        assert evict_all(deep, 1) == (1, [f"t{depth}"])
    assert evict_all(deep, DEEP) == (DEEP - 3, [f"t{run}" for run in range(DEEP - 4, -1, -1)])
    assert deep.is_empty() and deep.node_count() == 0
    wide = RadixTree(1)  # among a server's thousands of leaves, a parent rejoins mid-list
    wide.insert([0, 0], ["p", "a"])
    leaf, _ = wide.insert([0, 1], ["p", "b"])
    parent = wide.parent(leaf)
    older = [wide.insert([token], [f"o{token}"])[0] for token in range(1, 101)]
    assert wide.match_prefix([0]) == (1, [parent])  # newer than those, older than the rest
    newer = [wide.insert([token], [f"n{token}"])[0] for token in range(101, WIDE + 1)]
    assert evict_all(wide, 2) == (2, ["a", "b"])
    assert wide.lru_order() == [*older, parent, *newer]
    assert evict_all(wide, WIDE + 1) == (WIDE + 1, [*(f"o{token}" for token in range(1, 101)),
                                                    "p", *(f"n{token}" for token in
                                                           range(101, WIDE + 1))])
    assert wide.is_empty() and wide.lru_order() == []


def test_locks_pin_the_path():
    """A lock pins the node and its ancestors; locks nest; unlocking frees them (s10, s11, s12),
    on a path deeper than the recursion limit and among a server's thousand leaves too."""
    tree = RadixTree(1)
    held, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    other, _ = tree.insert([1, 2, 4], ["x", "y", "d"])
    parent = tree.parent(held)
    tree.lock(held)
    assert (tree.lock_count(held), tree.lock_count(parent)) == (1, 1)
    assert tree.lru_order() == [other]
    tree.lock(held)
    assert (tree.lock_count(held), tree.lock_count(parent)) == (2, 2)
    assert evict_all(tree, 100) == (1, ["d"])
    assert tree.lru_order() == [] and len(tree) == 3
    tree.unlock(held)
    assert (tree.lock_count(held), tree.lock_count(parent)) == (1, 1)
    assert evict_all(tree, 100) == (0, [])
    tree.unlock(held)
    assert (tree.lock_count(held), tree.lock_count(parent)) == (0, 0)
    assert tree.lru_order() == [held]
    assert evict_all(tree, 100) == (3, ["c", "a", "b"])
    assert tree.is_empty() and tree.node_count() == 0
    deep = RadixTree(1)  # a path deeper than Python's recursion limit is pinned whole
    path = chain(deep)
    stands(deep, path)
    deep.lock(path[-1])
    assert [deep.lock_count(id) for id in (path[0], path[DEEP // 2], path[-1])] == [1, 1, 1]
    assert deep.lru_order() == [] and evict_all(deep, 1) == (0, [])
    deep.unlock(path[-1])
    assert deep.lock_count(path[0]) == 0 and deep.lru_order() == [path[-1]]
    wide = RadixTree(1)  # among thousands of leaves, an unlocked leaf rejoins at its stamp
    held, _ = wide.insert([0], ["h"])
    wide.lock(held)
    leaves = [wide.insert([token], [f"w{token}"])[0] for token in range(1, WIDE + 1)]
    middle = leaves[WIDE // 2]
    wide.lock(middle)
    assert len(wide.lru_order()) == WIDE - 1 and middle not in wide.lru_order()
    wide.unlock(held)  # older than every listed leaf: first
    wide.unlock(middle)  # between the leaves inserted before and after it
    assert wide.lru_order() == [held, *leaves]
    assert evict_all(wide, WIDE + 1) == (WIDE + 1, ["h", *(f"w{t}" for t in range(1, WIDE + 1))])


def test_a_split_inherits_the_locks_below_it():
    """A split under a locked node gives the new middle node the same count (s13)."""
    tree = RadixTree(1)
    held, _ = tree.insert([1, 2, 3, 4], ["a", "b", "c", "d"])
    tree.lock(held)
    tree.lock(held)
    tokens, (middle,) = tree.match_prefix([1, 2, 9])
    assert tokens == 2 and tree.parent(held) == middle
    assert tree.lock_count(middle) == 2 and tree.lock_count(held) == 2
    tree.insert([1, 2, 7], ["e", "f", "g"])
    assert evict_all(tree, 100) == (1, ["g"])
    tree.unlock(held)
    assert tree.lock_count(middle) == 1
    assert evict_all(tree, 100) == (0, [])
    tree.unlock(held)
    assert tree.lock_count(middle) == 0
    assert evict_all(tree, 100) == (4, ["c", "d", "a", "b"])


def test_unlock_without_a_lock_panics():
    """An unmatched unlock raises RuntimeError and changes nothing (s14)."""
    tree = RadixTree(1)
    node, _ = tree.insert([1, 2], ["a", "b"])
    with pytest.raises(RuntimeError):
        tree.unlock(node)
    assert tree.lock_count(node) == 0 and tree.lru_order() == [node]
    tree.lock(node)
    tree.unlock(node)
    with pytest.raises(RuntimeError):
        tree.unlock(node)
    assert tree.lock_count(node) == 0 and tree.lru_order() == [node]
    tree.unlock(ROOT)
    tree.lock(ROOT)
    assert tree.lock_count(ROOT) == 0


def test_insert_needs_one_value_per_granule():
    """A wrong number of values raises ValueError and leaves the tree unchanged (s15)."""
    tree = RadixTree(2)
    tree.insert([1, 2], ["a"])
    for key, values in [([1, 2, 3, 4], ["b"]), ([1, 2, 3, 4], ["b", "c", "d"]),
                        ([3, 4, 5], ["b", "c"]), ([3, 4, 5], ["b"]), ([7, 8], [])]:
        with pytest.raises(ValueError):
            tree.insert(key, values)
        assert shape(tree) == {(1, 2): (["a"], {})} and len(tree) == 1
    with pytest.raises(ValueError):
        RadixTree(1).insert([1, 2], ["a"])
    for granule in (0, -1, -16):
        with pytest.raises(ValueError):
            RadixTree(granule)
    for granule in (1.5, 2.0, "2", None):  # not an integer: either error says so
        with pytest.raises((ValueError, TypeError)):
            RadixTree(granule)


def test_freed_slots_are_reused():
    """1,000 insert-and-evict rounds use no more ids than nodes were ever live at once, 4
    (m02); which ids those are is the tree's choice."""
    tree = RadixTree(1)
    tree.insert([9, 9], ["s", "t"])
    seen = set()
    for round in range(1_000):
        node, _ = tree.insert([9, 9, round % 7, round], ["s", "t", "u", "v"])
        seen.add(node)
        seen.update(tree.match_prefix([9, 9, round % 7])[1])
        tree.evict(4, lambda value: None)
        seen.update(tree.lru_order())
    assert len(seen) <= 4 and ROOT not in seen


class Machines:
    """What ``run_state_machine_as_test`` calls for each example: a fresh machine of one
    granule. It keeps the last one made (on a failure, the shrunk run) and counts the
    steps of all of them."""

    def __init__(self, kind: type[RadixMachine]) -> None:
        self.kind = kind
        self.last: RadixMachine | None = None
        self.earlier_steps = 0  # the steps of the machines made before the last

    def __call__(self) -> RadixMachine:
        if self.last is not None:
            self.earlier_steps += self.last.steps
        self.last = self.kind()
        return self.last

    def steps(self) -> int:
        """The steps every machine made so far has run."""
        return self.earlier_steps + (self.last.steps if self.last else 0)


def test_model_based_against_a_naive_map():
    """Seeded inserts, matches, locks, unlocks and evictions against the dict-of-prefixes model.

    Every observable is compared after every step, at granules 1 and 2 (all mutants) and,
    with fewer examples, 3, 4 and 16. A failure is shown as a standalone test of the tree's
    API to paste and run.
    """
    chosen = profile(os.environ.get("OL_HYPOTHESIS_PROFILE", "course"))
    seeded = os.environ.get("OL_HYPOTHESIS_SEED")  # ol audit --seeds: one of many seeds
    for kind, share in MACHINES:
        machines = Machines(kind)
        run = seed(int(seeded) if seeded else COURSE_SEEDS[kind.granule])(machines)
        these = settings(chosen, max_examples=max(1, chosen.max_examples // share))
        try:
            run_state_machine_as_test(run, settings=these, _min_steps=MIN_EXAMPLE_STEPS)
        except Exception as error:
            failed = machines.last
            replay = failed.replay(error) if failed else None
            if replay is None:
                raise
            raise AssertionError(
                f"the model test fails at granule {kind.granule}: {failed.failure_message(error)}"
                "\n\nThis test makes the same calls and fails on your tree for the same "
                "reason; paste it into tests/test_ds07_radix.py to debug it:\n\n"
                f"{replay}") from None
        # the fixed profile's floor; a seeded run only measures which mutants it kills
        assert seeded or machines.steps() >= MIN_STEPS // share, (
            f"only {machines.steps()} steps ran at granule {kind.granule}")
