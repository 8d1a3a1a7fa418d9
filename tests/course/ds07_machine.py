"""The ds.07 state machine: a radix tree against the naive dict-of-prefixes model.

Rules are named after the tree's API, so a shrunk failure reads as a script to replay.
Keys come from a bundle, cut and extended with a three-token alphabet, so prefixes recur
and edges split often; node ids come from the paths ``match_prefix`` returns, so locks,
unlocks and accessors reach nodes that later split, get evicted, or have their slot
reused. After every step the invariant compares every observable of the tree with the
model: the structure as the prefixes its nodes end, keys, values, lock counts, children,
``len``, ``node_count`` and the LRU order; and calls the tree's ``_check()`` when it has
one. The tree is judged through its public interface alone.
"""

from __future__ import annotations

from ds07_observe import view
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from model import PrefixModel

TOKENS = st.integers(min_value=1, max_value=3)
CUTS = st.integers(min_value=0, max_value=4)
TAILS = st.lists(TOKENS, max_size=6)
DEAD_ID_ACCESSORS = ("key", "values", "parent", "children", "child_count", "lock_count",
                     "lock", "unlock")


def raises(kind: type[BaseException], call, *args) -> None:
    """Call ``call(*args)`` and fail unless it raises ``kind``."""
    try:
        call(*args)
    except kind:
        return
    except Exception as error:
        raise AssertionError(
            f"{getattr(call, '__name__', call)}{args} raised {type(error).__name__}: {error}, "
            f"expected {kind.__name__}"
        ) from error
    raise AssertionError(f"{getattr(call, '__name__', call)}{args} did not raise {kind.__name__}")


class RadixMachine(RuleBasedStateMachine):
    """Drives one tree and one model with the same calls and compares them after each."""

    keys = Bundle("keys")
    nodes = Bundle("nodes")
    locked = Bundle("locked")

    def __init__(self, tree_class: type, granule: int, root: int, steps: list[int]) -> None:
        super().__init__()
        self.granule = granule
        self.root = root
        self.tree = tree_class(granule)
        self.model = PrefixModel(granule)
        self.where: dict[int, tuple[int, ...]] = {root: ()}  # live id -> the prefix it ends
        self.peak = 0  # the most nodes ever live at once
        self.next_value = 0
        self.steps = steps
        self.expected: list[tuple[str, int, tuple[int, ...]]] = []  # (call, node, its prefix)

    # ------------------------------------------------------------------ helpers

    def fresh_values(self, count: int) -> list[str]:
        """Values never used before, so every hand-back and eviction is traceable."""
        start = self.next_value
        self.next_value += count
        return [f"v{i}" for i in range(start, start + count)]

    def whole_runs(self, key: tuple[int, ...]) -> tuple[int, ...]:
        return key[:len(key) - len(key) % self.granule]

    def expect(self, call: str, ids: list[int], prefixes: list[tuple[int, ...]]) -> None:
        """Note that nodes ``ids`` must end ``prefixes``: the invariant, which reads the
        whole tree after the step anyway, checks it."""
        assert len(ids) == len(prefixes), (
            f"{call}s {ids}: {len(ids)} nodes, expected {len(prefixes)}")
        self.expected.extend((call, id, prefix) for id, prefix in zip(ids, prefixes, strict=True))

    def step(self) -> None:
        self.steps[0] += 1

    # ------------------------------------------------------------------ rules

    @initialize(target=keys)
    def empty_key(self) -> tuple[int, ...]:
        return ()

    @initialize(target=nodes)
    def the_root(self) -> int:
        return self.root

    @rule(target=keys, base=keys, cut=CUTS, tail=TAILS)
    def insert(self, base, cut, tail):
        self.step()
        key = self.whole_runs(base[:cut * self.granule] + tuple(tail))
        values = self.fresh_values(len(key) // self.granule)
        want_end, want_back = self.model.insert(key, values)
        node, handed_back = self.tree.insert(list(key), list(values))
        self.expect(f"insert({list(key)}) returned node", [node], [want_end])
        assert list(handed_back) == want_back, (
            f"insert({list(key)}) handed back {list(handed_back)}, expected {want_back}")
        return key

    @rule(target=nodes, base=keys, cut=CUTS, tail=TAILS)
    def match_prefix(self, base, cut, tail):
        self.step()
        key = base[:cut * self.granule] + tuple(tail)
        want_tokens, want_path = self.model.match_prefix(key)
        tokens, path = self.tree.match_prefix(list(key))
        assert type(tokens) is int, (
            f"match_prefix({list(key)}) matched {tokens!r} tokens: the count must be an int")
        assert tokens == want_tokens, (
            f"match_prefix({list(key)}) matched {tokens} tokens, expected {want_tokens}")
        self.expect(f"match_prefix({list(key)}) returned a path with node", list(path),
                    want_path)
        return multiple(*path)

    @rule(target=locked, node=nodes)
    def lock(self, node):
        self.step()
        prefix = self.where.get(node)
        if prefix is None:
            raises(KeyError, self.tree.lock, node)
            return multiple()
        self.model.lock(prefix)
        self.tree.lock(node)
        return multiple() if node == self.root else node

    @rule(node=consumes(locked))
    def unlock(self, node):
        self.step()
        self.model.unlock(self.where[node])
        self.tree.unlock(node)

    @rule(node=nodes)
    def unlock_without_a_lock(self, node):
        self.step()
        prefix = self.where.get(node)
        if prefix is None:
            raises(KeyError, self.tree.unlock, node)
        elif node == self.root:
            self.tree.unlock(node)
        elif self.model.lock_count(prefix) == 0:
            raises(RuntimeError, self.tree.unlock, node)

    @rule(n=st.integers(min_value=-1, max_value=8))
    def evict(self, n):
        self.step()
        want = []
        want_freed = self.model.evict(n, want.append)
        got = []
        freed = self.tree.evict(n, got.append)
        assert got == want, f"evict({n}) freed the values {got}, expected {want}"
        assert type(freed) is int and freed == want_freed, (
            f"evict({n}) returned {freed!r}, expected {want_freed}")

    @rule(base=keys, cut=CUTS, tail=TAILS, off=st.sampled_from([-1, 1, 2]))
    def insert_with_a_wrong_value_count(self, base, cut, tail, off):
        self.step()
        key = self.whole_runs(base[:cut * self.granule] + tuple(tail))
        count = len(key) // self.granule + off
        values = self.fresh_values(count if count >= 0 else 1)
        raises(ValueError, self.tree.insert, list(key), values)

    @precondition(lambda self: self.granule > 1)
    @rule(base=keys, cut=CUTS, tail=st.lists(TOKENS, min_size=1, max_size=6))
    def insert_a_key_of_partial_runs(self, base, cut, tail):
        self.step()
        key = base[:cut * self.granule] + tuple(tail)
        if len(key) % self.granule == 0:
            key = (*key, 1)
        for count in (len(key) // self.granule, len(key) // self.granule + 1):
            raises(ValueError, self.tree.insert, list(key), self.fresh_values(count))

    @rule(node=nodes)
    def accessors_on_a_dead_id(self, node):
        self.step()
        if node in self.where:
            node = max(self.where) + 1
        outcomes = view(self.tree, "raised", node, list(DEAD_ID_ACCESSORS))
        for name, raised in zip(DEAD_ID_ACCESSORS, outcomes, strict=True):
            assert raised is not None, f"{name}({node}) on a dead id did not raise KeyError"
            assert "KeyError" in raised, (
                f"{name}({node}) on a dead id raised {raised[0]}, expected KeyError")

    # ------------------------------------------------------------------ the comparison

    @invariant()
    def agrees_with_the_model(self):
        model = self.model
        seen = view(self.tree, "observe", self.root)
        where = {node["id"]: tuple(node["prefix"]) for node in seen["nodes"]}
        for call, id, prefix in self.expected:
            assert id in where, f"{call} {id}, which is not a node of the tree"
            assert where[id] == prefix, (
                f"{call} {id}, which ends {list(where[id])}, expected {list(prefix)}")
        self.expected = []
        ends = {prefix for id, prefix in where.items() if id != self.root}
        assert ends == model.ends, (
            f"the tree's nodes end {sorted(ends)}, the model's {sorted(model.ends)}")
        self.peak = max(self.peak, model.node_count())
        for node in seen["nodes"]:
            id, prefix = node["id"], where[node["id"]]
            assert 0 <= id <= self.peak, (
                f"node {id} is live, but at most {self.peak} nodes were ever live at once: "
                "freed slots are not reused")
            before = self.where.get(id)
            assert before is None or before == prefix, (
                f"node {id} ended {list(before)} and now ends {list(prefix)}")
            assert node["values"] == model.values(prefix), (
                f"node {id} ({list(prefix)}) holds {node['values']}, "
                f"expected {model.values(prefix)}")
            assert node["lock_count"] == model.lock_count(prefix), (
                f"node {id} ({list(prefix)}) has lock count {node['lock_count']}, "
                f"expected {model.lock_count(prefix)}")
            children = node["children"]
            assert children == sorted(children), f"children({id}) is not in id order"
            assert node["child_count"] == len(children), f"child_count({id}) != len(children)"
        lru = seen["lru"]
        for id in lru:
            assert id in where, f"lru_order lists node {id}, which is not in the tree"
        assert [where[id] for id in lru] == model.lru_order(), (
            f"lru_order ends {[list(where[id]) for id in lru]}, "
            f"expected {[list(p) for p in model.lru_order()]}")
        assert seen["len"] == len(model), f"len is {seen['len']}, expected {len(model)}"
        assert seen["is_empty"] == (len(model) == 0), "is_empty disagrees with len"
        assert seen["node_count"] == model.node_count(), (
            f"node_count is {seen['node_count']}, expected {model.node_count()}")
        assert seen["granule"] == self.granule, f"granule is {seen['granule']}"
        assert seen["root_parent"] is None, "the root has a parent"
        assert seen["root_key"] == [], f"key(ROOT) is {seen['root_key']}, expected []"
        root = next(node for node in seen["nodes"] if node["id"] == self.root)
        assert root["lock_count"] == 0, "the root has a lock count"
        self.where = where
