"""The ds.07 state machine: a radix tree against the naive dict-of-prefixes model.

Rules are named after the tree's API. Keys come from a bundle, or from the prefixes the
tree holds now, cut and extended with a three-token alphabet, so prefixes recur and
edges split often; node ids come from the paths ``match_prefix`` returns (so locks,
unlocks and accessors reach nodes that later split, get evicted, or have their slot
reused) or from the nodes the tree holds now (so locks and unlocks reach live leaves and
inner nodes often). Each example starts from a short scripted tree (a fan of leaves of
different ages under one parent, a locked leaf among older and newer ones, a chain split
twice, a locked inner node emptied by eviction and then unlocked, an inner node locked
and unlocked while it has children) and draws its tokens
from small ids, from the ends of the 32-bit range, or anywhere in it: a token beside the
ones that differ from it in bit 24 or bit 31 alone, or a small id beside two large ones.
Four rules build what the chapter's pitfalls need in one step: a lock held around an
eviction; a parent emptied by eviction while every other leaf is locked, after which all
rejoin the list by stamp; the same with the parent itself locked until it is empty; a
parent matched, then emptied among older and newer leaves. Ids that name no node (dead,
negative ones that count back into the slots, those just past the last used, and ids that
are not ints) must raise KeyError; False may raise it or answer as ROOT.
Hypothesis switches some rules off in each example (swarm testing), so the others run
more often.

Each rule is one step (``@step``): it begins by taking in the last reading of the tree,
makes its calls to the tree and the model, and ends by reading the tree back through
``ds07_observe.view``, the one door to the grader's proxy (``start``, which builds the
scripted tree, ends with a reading too). Through the proxy, the step's last call brings
that reading along (``ends_step``): one round trip, not two, and the same reading, which
crosses as its changes since the last. The reading also changes every list a view handed
out and reads again: a tree that shares its own lists with its caller is caught there,
beside the tree, where the proxy's copies cannot hide it. The invariant then compares that
reading with the model: the structure as the prefixes its nodes end, keys, values,
lock counts, children, ``len``, ``node_count`` and the LRU order; then the tree's own
``_check()`` when it has one. The invariant only judges; everything the machine keeps
between steps is updated by the rules. The tree is judged through its public interface
alone: the one ``tl_ds.radix`` yields, at the granule of the subclass
(``RadixMachineGranule1``, ``RadixMachineGranule2``), which takes no arguments, so the
script Hypothesis prints for a failure runs as printed.

Every call to the tree is noted, so a failure can be replayed: a disagreement with the
model is raised as a ``Disagreement`` that says how the replay ends, and ``replay()``
writes the failing example as a standalone pytest function that makes the same calls
through the tree's API and ends with the first assertion that differs from the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NoReturn

from ds07_observe import along, view
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
from tl_ds.radix import ROOT, RadixTree

from model import PrefixModel

TOKENS = st.integers(min_value=0, max_value=2)  # an index into the example's alphabet
CUTS = st.integers(min_value=0, max_value=4)
TAILS = st.lists(TOKENS, max_size=6)
PICKS = st.integers(min_value=0, max_value=255)  # which of the tree's nodes a rule takes
# the tokens of an example: small ids, or the ends of the 32-bit range and one past 16 bits
ALPHABETS = ((1, 2, 3), (0, 65_536, 2**32 - 1))
TOKEN = st.integers(min_value=0, max_value=2**32 - 1)
# or drawn anywhere in the 32-bit range: a token and the two that differ from it in bit 24
# or bit 31 alone, or a small id beside two large ones that differ in one high bit (each
# of the three kinds of alphabet in a third of the examples)
DRAWN_ALPHABETS = st.one_of(
    TOKEN.map(lambda token: (token, token ^ 2**24, token ^ 2**31)),
    st.tuples(st.integers(min_value=0, max_value=9), TOKEN.filter(lambda token: token > 9),
              st.sampled_from((16, 24, 31)))
    .map(lambda drawn: (drawn[0], drawn[1], drawn[1] ^ 2**drawn[2]))
    .filter(lambda alphabet: len(set(alphabet)) == 3))
# scripted starts, in runs of the alphabet: (call, runs) with call insert, match, lock or
# empty (evict_a_parent_among_locked_leaves on the parent that ends runs)
SCRIPTS = (
    (),
    (("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("insert", (0, 1)), ("insert", (0, 0, 2)),
     ("insert", (1,)), ("match", (0, 0, 1))),
    (("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("insert", (0, 1)), ("insert", (0, 0, 2)),
     ("insert", (1,)), ("match", (0, 0, 1)), ("empty", (0, 0))),
    (("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("insert", (1,)), ("match", (0, 0)),
     ("insert", (2,)), ("empty", (0, 0))),
    (("insert", (0, 1, 2)), ("insert", (0, 1, 0)), ("insert", (1, 1)), ("lock", (0, 1, 2)),
     ("insert", (0, 2)), ("match", (1, 1)), ("insert", (2,))),
    (("insert", (0, 1, 2, 0)), ("match", (0, 1, 1)), ("match", (0, 2)),
     ("insert", (0, 1, 2, 1)), ("lock", (0, 1, 2, 0)), ("insert", (1, 0))),
    (("insert", (2, 0)), ("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("match", (0, 0)),
     ("insert", (1,)), ("insert", (2, 1))),
    # a locked inner node that eviction empties, then unlocked: it joins the list then
    (("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("insert", (1,)), ("lock", (0, 0)),
     ("insert", (2,)), ("empty", (0, 0)), ("unlock", (0, 0)), ("insert", (0, 1))),
    # an inner node locked and unlocked while it has children: it never joins the list
    (("insert", (0, 0, 0)), ("insert", (0, 0, 1)), ("insert", (1,)), ("lock", (0, 0)),
     ("unlock", (0, 0))),
)
DEAD_ID_ACCESSORS = ("key", "values", "parent", "children", "child_count", "lock_count",
                     "lock", "unlock")
# ids that name no live node, beyond the dead, the negative and those just past the last
# used: KeyError for each
NOT_IDS = ("huge", "none", "float", "string")
# granules the constructor refuses: ValueError below 1, ValueError or TypeError for a
# granule that is not an integer
BAD_GRANULES = (0, -1, -16, 1.5, 2.0, "2", None)
LONG_TAILS = st.lists(TOKENS, min_size=40, max_size=240)  # keys of hundreds of tokens
HELPERS = '''\
    def nodes(id=ROOT):  # every node below id, through children()
        for child in tree.children(id):
            yield child
            yield from nodes(child)

    def prefix(id):  # the tokens from the root to the end of node id, through parent() and key()
        return [] if id == ROOT else prefix(tree.parent(id)) + list(tree.key(id))

    def node(tokens):  # the node that ends tokens
        return next(id for id in nodes() if prefix(id) == tokens)
'''


# a call as the replay writes it: the text, or what makes it, only when a replay is written
# (a key of thousands of 32-bit tokens is long to format at every step)
Source = str | Callable[[], str]


def written(source: Source) -> str:
    return source if isinstance(source, str) else source()


def prefixes(seen: dict) -> dict[int, tuple[int, ...]]:
    """The prefix each node of a reading of the tree ends, by id."""
    return {node["id"]: tuple(node["prefix"]) for node in seen["nodes"]}


def step(body: Callable) -> Callable:
    """A rule's body as one step of the example. Before the body, the machine counts the
    step and takes in the reading the invariant accepted; after it, the tree is read back
    for the invariant to judge."""

    @functools.wraps(body)
    def run(machine: RadixMachine, **arguments):
        machine.begin_step()
        result = body(machine, **arguments)
        machine.read_back()
        return result

    return run


class Disagreement(AssertionError):
    """The tree disagrees with the model. Besides the message, it carries how the replay
    ends: the assert lines, and the noted call whose result they read with the name that
    result is kept under (or None)."""

    def __init__(self, message: str, asserts: list[str],
                 capture: tuple[int, str] | None) -> None:
        super().__init__(message)
        self.asserts = asserts
        self.capture = capture


class RadixMachine(RuleBasedStateMachine):
    """Drives one tree and one model with the same calls and compares them after each.

    A subclass per granule sets ``granule``; it takes no arguments, so the script
    Hypothesis prints for a failure (``state = RadixMachineGranule1()``, ...) runs as printed.
    """

    granule: int
    keys = Bundle("keys")
    nodes = Bundle("nodes")
    locked = Bundle("locked")

    def __init__(self) -> None:
        super().__init__()
        self.tree = RadixTree(self.granule)
        self.model = PrefixModel(self.granule)
        # live id -> the prefix it ends, as the last reading the invariant accepted saw it
        self.where: dict[int, tuple[int, ...]] = {ROOT: ()}
        self.seen: dict | Exception | None = None  # the last reading, or what it raised
        self.peak = 0  # the most nodes ever live at once
        self.used: set[int] = set()  # every id a node has had, up to the last reading
        self.next_value = 0
        self.pool = 0  # when positive, values repeat: drawn from this many equal kinds
        self.steps = 0  # the rules run, not counting the two that start an example
        self.alphabet = ALPHABETS[0]
        # (call, node, its prefix, the noted call that returned it, its path's prefixes)
        self.expected: list[tuple[str, int, tuple[int, ...], int, list | None]] = []
        self.log: list[list] = []  # the calls made: [source, result, expected error]
        self.crash: BaseException | None = None
        self.step_start = 0  # the first noted call of the current step

    # ------------------------------------------------------------------ helpers

    def fresh_values(self, count: int) -> list:
        """Values never used before, so every hand-back and eviction is traceable; or, in an
        example that repeats values, equal values that are distinct objects (a tree must
        keep values by position, never find them by equality)."""
        start = self.next_value
        self.next_value += count
        if self.pool:
            return [["r", i % self.pool] for i in range(start, start + count)]
        return [f"v{i}" for i in range(start, start + count)]

    def whole_runs(self, key: tuple[int, ...]) -> tuple[int, ...]:
        return key[:len(key) - len(key) % self.granule]

    def tokens(self, indices) -> tuple[int, ...]:
        """The tokens a list of alphabet indices stands for. At granules above 4 each index
        is a whole run, all the first letter but for the index's letter in the middle, so
        runs that differ inside (not at an end) meet often."""
        if self.granule <= 4:
            return tuple(self.alphabet[i] for i in indices)
        first, middle = self.alphabet[0], self.granule // 2
        return tuple(self.alphabet[i] if at == middle else first
                     for i in indices for at in range(self.granule))

    def live(self, pick: int, leaves: bool = False) -> tuple[int, tuple[int, ...]] | None:
        """The ``pick``-th of the tree's nodes now (of its leaves), as (id, prefix)."""
        found = sorted((prefix, id) for id, prefix in self.where.items() if id != ROOT
                       and (not leaves or self.model.is_leaf(prefix)))
        if not found:
            return None
        prefix, id = found[pick % len(found)]
        return id, prefix

    def name(self, id: int) -> str:
        """How the replay names node ``id``: ROOT, the node that ends a prefix, or the id."""
        if id == ROOT:
            return "ROOT"
        if id in self.where:
            return f"node({list(self.where[id])})"
        return repr(id)

    @staticmethod
    def name_in(where: dict[int, tuple[int, ...]]) -> Callable[[int], str]:
        """How the replay names a node of the reading ``where``."""
        return lambda id: "ROOT" if id == ROOT else f"node({list(where[id])})"

    def begin_step(self) -> None:
        """Count the step and take in the last reading, which the invariant accepted: the
        nodes' prefixes now, and no call's result left to check."""
        self.steps += 1
        self.step_start = len(self.log)
        self.where = prefixes(self.seen)
        self.used |= set(self.where) - {ROOT}
        self.expected = []

    def observe(self) -> dict:
        """Everything observable of the tree, as plain data (``ds07_observe.observe``)."""
        return view(self.tree, "observe", ROOT)

    def ends_step(self, last: bool) -> None:
        """Before the step's ``last`` call: have it bring the reading ``read_back`` takes
        (one round trip through the grader's proxy instead of two). Only a matter of
        speed: the reading is what a reading right after the call answers, and a call
        marked last that is not is followed by a reading of its own."""
        if last:
            along(self.tree, "observe", ROOT)

    def read_back(self) -> None:
        """Read the tree at the end of a step, for the invariant to judge; a read that
        raises is kept to be judged too."""
        try:
            self.seen = self.observe()
        except Exception as error:
            self.seen = error

    def call(self, source: Source, method, *args, last: bool = False):
        """``method(*args)``, noted for the replay as ``source``. ``last``: the step's last
        call, which brings the step's reading along (see ``ends_step``)."""
        self.log.append([source, None, None])
        self.ends_step(last)
        try:
            result = method(*args)
        except Exception as error:
            self.crash = error
            raise
        self.log[-1][1] = result
        self.peak = max(self.peak, self.model.node_count())  # the model went first
        return result

    def raises(self, kind, source: Source, method, *args, last: bool = False) -> None:
        """Call the tree and fail unless it raises ``kind`` (a class, or a tuple of them);
        noted as a pytest.raises block. ``last`` as for ``call``."""
        named = (kind.__name__ if isinstance(kind, type) else
                 "(" + ", ".join(each.__name__ for each in kind) + ")")
        said = named.strip("()").replace(", ", " or ")
        self.log.append([source, None, named])
        self.ends_step(last)
        try:
            method(*args)
        except kind:
            return
        except Exception as error:
            self.fail(f"{written(source).removeprefix('tree.')} raised {type(error).__name__}: "
                      f"{error}, "
                      f"expected {said}")
        self.fail(f"{written(source).removeprefix('tree.')} did not raise {said}")

    @staticmethod
    def fail(message: str, asserts: tuple[str, ...] = (),
             capture: tuple[int, str] | None = None) -> NoReturn:
        """Fail the step with ``message``: a Disagreement whose replay ends with ``asserts``,
        after the noted call ``capture[0]`` assigned to ``capture[1]`` when given."""
        said = [f"{line}, {message!r}" if line.startswith("assert ") else line
                for line in asserts]
        raise Disagreement(message, said, capture)

    # ------------------------------------------------------------------ rules

    @initialize(target=keys, alphabet=st.one_of(*map(st.just, ALPHABETS), DRAWN_ALPHABETS),
                script=st.sampled_from(SCRIPTS), pool=st.sampled_from((0, 0, 1, 2)),
                bad=st.sampled_from(BAD_GRANULES))
    def start(self, alphabet, script, pool, bad):
        """The example's alphabet, whether its values repeat, a scripted start; a bad
        granule refused; the granule read-only."""
        self.alphabet = alphabet
        self.pool = pool
        self.step_start = len(self.log)
        kinds = ValueError if isinstance(bad, int) else (ValueError, TypeError)
        self.raises(kinds, f"RadixTree({bad!r})", RadixTree, bad)
        self.log.pop()  # it raised as it should: the tree under test is untouched
        assigned = view(self.tree, "read_only")
        if assigned["raised"] is None or "AttributeError" not in assigned["raised"] \
                or assigned["granule"] != self.granule:
            self.log.append([f"tree.granule = {self.granule + 1}", None, "AttributeError"])
            self.fail("granule is read-only, but assigning it " + (
                "did not raise AttributeError" if assigned["raised"] is None or
                "AttributeError" not in assigned["raised"] else "changed it")
                + f" (granule is now {assigned['granule']!r})",
                (f"assert tree.granule == {self.granule}",))
        keys = [()]
        for call, runs in script:
            key = tuple(alphabet[run] for run in runs for _ in range(self.granule))
            if call == "insert":
                keys.append(self.insert_key(key))
            elif call == "match":
                self.match_key(key)
            elif call == "empty":  # the nodes so far must be right before some go
                self.model_node(key)
                self.check_expected(self.where)
                self.expected = []
                self.empty(key, 0)
            elif call == "unlock":
                id = self.model_node(key)
                self.model.unlock(key)
                self.call(f"tree.unlock({self.name(id)})", self.tree.unlock, id)
            else:
                id = self.model_node(key)
                self.model.lock(key)
                self.call(f"tree.lock({self.name(id)})", self.tree.lock, id)
        self.read_back()
        return multiple(*keys)

    def model_node(self, key: tuple[int, ...]) -> int:
        """The tree's id of the node that ends ``key``, read off the tree now."""
        self.where = prefixes(self.observe())
        return next(id for id, prefix in self.where.items() if prefix == key)

    @initialize(target=nodes)
    def the_root(self) -> int:
        return ROOT

    def insert_key(self, key: tuple[int, ...], last: bool = False) -> tuple[int, ...]:
        values = self.fresh_values(len(key) // self.granule)
        want_end, want_back = self.model.insert(key, values)
        source = lambda: f"tree.insert({list(key)}, {values})"  # noqa: E731
        node, handed_back = self.call(source, self.tree.insert, list(key), list(values),
                                      last=last)
        at = len(self.log) - 1
        self.expected.append((f"insert({list(key)}) returned node", node, want_end, at, None))
        if list(handed_back) != want_back:
            self.fail(f"insert({list(key)}) handed back {list(handed_back)}, expected "
                      f"{want_back}", (f"assert back == {want_back}",),
                      (at, "end, back"))
        return key

    def match_key(self, key: tuple[int, ...], last: bool = False) -> list[int]:
        want_tokens, want_path = self.model.match_prefix(key)
        source = lambda: f"tree.match_prefix({list(key)})"  # noqa: E731
        tokens, path = self.call(source, self.tree.match_prefix, list(key), last=last)
        at = len(self.log) - 1
        if type(tokens) is not int or tokens != want_tokens:
            self.fail(f"match_prefix({list(key)}) matched {tokens!r} tokens, expected "
                      f"{want_tokens}{'' if type(tokens) is int else ' as an int'}",
                      (f"assert type(tokens) is int and tokens == {want_tokens}",),
                      (at, "tokens, path"))
        wanted = [list(prefix) for prefix in want_path]
        path = list(path)
        if len(path) != len(want_path):
            self.fail(f"match_prefix({list(key)}) returned a path of {len(path)} nodes, "
                      f"expected {len(want_path)}: {wanted}",
                      (f"assert [prefix(id) for id in path] == {wanted}",),
                      capture=(at, "tokens, path"))
        call = f"match_prefix({list(key)}) returned a path with node"
        self.expected.extend((call, id, prefix, at, wanted)
                             for id, prefix in zip(path, want_path, strict=True))
        return path

    @rule(target=keys, base=keys, cut=CUTS, tail=TAILS)
    @step
    def insert(self, base, cut, tail):
        return self.insert_key(self.whole_runs(base[:cut * self.granule] + self.tokens(tail)),
                               last=True)

    def near(self, pick: int, cut: int | None, twist: bool) -> tuple[int, ...]:
        """A prefix the tree holds now: whole or cut by ``cut`` runs, its last token changed
        when ``twist`` (so at granule 2 a key can differ from a stored run in its second
        token only)."""
        found = self.live(pick)
        base = found[1] if found else ()
        if cut is not None:
            base = base[:len(base) - cut * self.granule]
        if twist and base:
            base = (*base[:-1], self.alphabet[(self.alphabet.index(base[-1]) + 1) % 3])
        return base

    @rule(target=keys, pick=PICKS, cut=st.none() | CUTS, twist=st.booleans(), tail=TAILS)
    @step
    def insert_below(self, pick, cut, twist, tail):
        """Insert next to a prefix the tree holds now: whole, or cut inside its edges."""
        return self.insert_key(self.whole_runs(self.near(pick, cut, twist) + self.tokens(tail)),
                               last=True)

    @rule(target=keys, base=keys, cut=CUTS, tail=LONG_TAILS)
    @step
    def insert_a_long_key(self, base, cut, tail):
        """A key of hundreds of tokens (a long prompt), below a stored one."""
        return self.insert_key(self.whole_runs(base[:cut * self.granule] + self.tokens(tail)),
                               last=True)

    @rule(target=nodes, base=keys, cut=CUTS, tail=TAILS)
    @step
    def match_prefix(self, base, cut, tail):
        return multiple(*self.match_key(base[:cut * self.granule] + self.tokens(tail),
                                        last=True))

    @rule(target=nodes, pick=PICKS, cut=st.none() | CUTS, twist=st.booleans(), tail=TAILS)
    @step
    def match_below(self, pick, cut, twist, tail):
        """Match a prefix the tree holds now: whole, cut inside its edges, or extended."""
        return multiple(*self.match_key(self.near(pick, cut, twist) + self.tokens(tail),
                                        last=True))

    @rule(target=locked, node=nodes)
    @step
    def lock(self, node):
        prefix = self.where.get(node)
        if prefix is None:
            self.raises(KeyError, f"tree.lock({node})", self.tree.lock, node, last=True)
            return multiple()
        self.model.lock(prefix)
        self.call(f"tree.lock({self.name(node)})", self.tree.lock, node, last=True)
        return multiple() if node == ROOT else node

    @rule(target=locked, pick=PICKS, leaf=st.booleans())
    @step
    def lock_a_node(self, pick, leaf):
        """Lock one of the tree's nodes now, a leaf or any."""
        found = self.live(pick, leaves=leaf)
        if found is None:
            return multiple()
        node, prefix = found
        self.model.lock(prefix)
        self.call(f"tree.lock({self.name(node)})", self.tree.lock, node, last=True)
        return node

    @rule(node=consumes(locked))
    @step
    def unlock(self, node):
        self.model.unlock(self.where[node])
        self.call(f"tree.unlock({self.name(node)})", self.tree.unlock, node, last=True)

    @rule(node=nodes)
    @step
    def unlock_without_a_lock(self, node):
        prefix = self.where.get(node)
        if prefix is None:
            self.raises(KeyError, f"tree.unlock({node})", self.tree.unlock, node, last=True)
        elif node == ROOT:
            self.call("tree.unlock(ROOT)", self.tree.unlock, node, last=True)
        elif self.model.lock_count(prefix) == 0:
            self.raises(RuntimeError, f"tree.unlock({self.name(node)})", self.tree.unlock,
                        node, last=True)

    @rule(n=st.integers(min_value=-1, max_value=8))
    @step
    def evict(self, n):
        self.evict_n(n, last=True)

    @rule(pick=PICKS, n=st.integers(min_value=1, max_value=8))
    @step
    def evict_around_a_lock(self, pick, n):
        """Lock a leaf, evict, unlock it: it rejoins among older and newer leaves, next to
        parents the eviction emptied."""
        found = self.live(pick, leaves=True)
        if found is None:
            return
        node, prefix = found
        self.model.lock(prefix)
        self.call(f"tree.lock({self.name(node)})", self.tree.lock, node)
        self.evict_n(n)
        self.model.unlock(prefix)
        self.call(f"tree.unlock({self.name(node)})", self.tree.unlock, node, last=True)

    def parents_of_listed_leaves(self) -> list:
        """The parents (not the root) whose children are all unlocked leaves, sorted."""
        listed = self.model.lru_order()
        parents = sorted({self.model.parent(leaf) for leaf in listed} - {()})
        return [parent for parent in parents
                if all(child in listed for child in self.model.children(parent))]

    @rule(pick=PICKS)
    @step
    def evict_a_parent_among_locked_leaves(self, pick):
        """Empty one parent of unlocked leaves while every other listed leaf is locked, then
        unlock those: the parent rejoins the list by its own stamp among older and newer
        leaves, each of which rejoins by its stamp in turn."""
        parents = self.parents_of_listed_leaves()
        if parents:
            self.empty(parents[pick % len(parents)], pick)

    @rule(pick=PICKS)
    @step
    def evict_below_a_locked_parent(self, pick):
        """Lock a parent of unlocked leaves, empty it by eviction (it stays off the list,
        locked), then unlock it: a leaf now, it joins the list at its own stamp."""
        parents = self.parents_of_listed_leaves()
        if not parents:
            return
        parent = parents[pick % len(parents)]
        id = next(id for id, prefix in self.where.items() if prefix == parent)
        self.model.lock(parent)
        self.call(f"tree.lock({self.name(id)})", self.tree.lock, id)
        self.empty(parent, pick)
        self.model.unlock(parent)
        self.call(f"tree.unlock({self.name(id)})", self.tree.unlock, id, last=True)

    @rule(pick=PICKS)
    @step
    def evict_until_a_parent_empties(self, pick):
        """Match a parent of unlocked leaves, the newest use of all, then evict the oldest
        leaf until the parent has no child: it joins the list at the newest end, after
        leaves that are older than it but newer than its children."""
        parents = self.parents_of_listed_leaves()
        if not parents:
            return
        parent = parents[pick % len(parents)]
        self.match_key(parent)
        while self.model.children(parent):
            self.evict_n(1)

    def empty(self, parent: tuple[int, ...], turn: int) -> None:
        """Lock every listed leaf outside ``parent``, evict its leaves one at a time, and
        unlock the others, starting at the ``turn``-th."""
        model = self.model
        ids = {prefix: id for id, prefix in self.where.items()}
        held = [leaf for leaf in model.lru_order() if model.parent(leaf) != parent]
        for leaf in held:
            model.lock(leaf)
            self.call(f"tree.lock({self.name(ids[leaf])})", self.tree.lock, ids[leaf])
        for _ in model.children(parent):
            self.evict_n(1)
        turn %= len(held) or 1
        for leaf in held[turn:] + held[:turn]:
            model.unlock(leaf)
            self.call(f"tree.unlock({self.name(ids[leaf])})", self.tree.unlock, ids[leaf])

    def evict_n(self, n: int, last: bool = False) -> None:
        want = []
        want_freed = self.model.evict(n, want.append)
        got = []

        def append(value) -> None:  # f as a function of the caller's, not a list's method
            got.append(value)

        freed = self.call(f"tree.evict({n}, gone.append)", self.tree.evict, n, append,
                          last=last)
        at = len(self.log) - 1
        if got != want:
            self.fail(f"evict({n}) freed the values {got}, expected {want}",
                      (f"assert gone == {want}",), (at, "gone = []\n    freed"))
        if type(freed) is not int or freed != want_freed:
            self.fail(f"evict({n}) returned {freed!r}, expected {want_freed}",
                      (f"assert type(freed) is int and freed == {want_freed}",),
                      (at, "gone = []\n    freed"))

    @rule(base=keys, cut=CUTS, tail=TAILS, off=st.sampled_from([-1, 1, 2]))
    @step
    def insert_with_a_wrong_value_count(self, base, cut, tail, off):
        key = self.whole_runs(base[:cut * self.granule] + self.tokens(tail))
        count = len(key) // self.granule + off
        values = self.fresh_values(count if count >= 0 else 1)
        self.raises(ValueError, lambda: f"tree.insert({list(key)}, {values})", self.tree.insert,
                    list(key), values, last=True)

    @precondition(lambda self: self.granule > 1)
    @rule(base=keys, cut=CUTS, tail=st.lists(TOKENS, min_size=1, max_size=6))
    @step
    def insert_a_key_of_partial_runs(self, base, cut, tail):
        key = base[:cut * self.granule] + self.tokens(tail)
        if len(key) % self.granule == 0:
            key = (*key, self.alphabet[0])
        for count in (len(key) // self.granule, len(key) // self.granule + 1):
            values = self.fresh_values(count)
            self.raises(ValueError, lambda values=values: f"tree.insert({list(key)}, {values})",
                        self.tree.insert, list(key), values)

    @rule(node=nodes, kind=st.sampled_from(("dead", "negative", "past", *NOT_IDS)),
          way=st.integers(min_value=0, max_value=3))
    @step
    def accessors_on_a_dead_id(self, node, kind, way):
        """Every accessor given an id that names no live node: a dead one; a negative one
        (-1, the one that counts back to a live slot, the one that counts back to the
        first, or a huge one); one to three past the last id ever used; one past any id,
        None (what parent(ROOT) returns), a float or a string. Then False, which a tree
        may refuse or take as the int it equals, ROOT."""
        top = max(self.used | set(self.where))  # the last id used, as far as was seen
        node = {"negative": (-1, node - top - 1, -top - 1, -2**63)[way],
                "past": top + 1 + way % 3, "huge": 2**64 + top, "none": None,
                "float": float(top), "string": str(top)}.get(kind, node)
        if kind == "dead" and node in self.where:
            node = top + 1
        if type(node) is not int or node not in self.where:  # a tree's ids may be negative
            self.no_accessor_takes(node)
        self.a_bool_is_refused_or_the_int_it_equals()

    def no_accessor_takes(self, node) -> None:
        """Every accessor raises KeyError for ``node``, which names no live node."""
        outcomes = view(self.tree, "raised", node, list(DEAD_ID_ACCESSORS))
        for name, raised in zip(DEAD_ID_ACCESSORS, outcomes, strict=True):
            self.log.append([f"tree.{name}({node!r})", None, "KeyError"])
            if raised is None:
                self.fail(f"{name}({node!r}), which names no live node, did not raise KeyError")
            if "KeyError" not in raised:
                self.fail(f"{name}({node!r}), which names no live node, raised {raised[0]}, "
                          "expected KeyError")

    def a_bool_is_refused_or_the_int_it_equals(self) -> None:
        """Every accessor given False answers as it does for ROOT (0, which False equals),
        or raises KeyError: the contract's ids are ints, and Python's own sequences take
        a bool as one; a tree may also refuse it."""
        as_false, as_root = (view(self.tree, "answers", id, list(DEAD_ID_ACCESSORS))
                             for id in (False, ROOT))
        for name, said, want in zip(DEAD_ID_ACCESSORS, as_false, as_root, strict=True):
            if said == want or "KeyError" in said.get("raised", ()):
                continue
            answer = f"returned {said['returned']!r}" if "returned" in said else \
                f"raised {said['raised'][0]}"
            root = f"returned {want['returned']!r}" if "returned" in want else \
                f"raised {want['raised'][0]}"
            self.fail(f"{name}(False) {answer}, but {name}(ROOT) {root}: a bool id must "
                      "raise KeyError or be taken as the int it equals",
                      (f"assert tree.{name}(False) == tree.{name}(ROOT)",))

    # ------------------------------------------------------------------ the comparison

    def check_expected(self, where: dict[int, tuple[int, ...]]) -> None:
        """The nodes the step's calls returned end the prefixes the model says."""
        for call, id, prefix, at, path in self.expected:
            if where.get(id) != prefix:
                self.fail(f"{call} {id}, which " + (
                    f"ends {list(where[id])}, expected {list(prefix)}" if id in where else
                    "is not a node of the tree"),
                    (f"assert prefix(end) == {list(prefix)}",) if path is None else
                    (f"assert [prefix(id) for id in path] == {path}",),
                    (at, "end, back" if path is None else "tokens, path"))

    @invariant()
    def agrees_with_the_model(self) -> None:
        """The step's reading of the tree agrees with the model: the nodes the step's calls
        returned, every observable, the prefixes the nodes ended at the last reading, and
        the tree's own ``_check()``. It judges and changes nothing."""
        model = self.model
        seen = self.seen
        if isinstance(seen, Exception):
            self.fail(f"reading the tree raised {type(seen).__name__}: {seen}", (
                "for id in [ROOT, *nodes()]:",
                "    tree.key(id), tree.values(id), tree.parent(id), tree.lock_count(id)",
                "    tree.children(id), tree.child_count(id)",
                "tree.lru_order(), len(tree), tree.is_empty(), tree.node_count()"))
        if seen["broken"]:
            self.fail(seen["broken"], (
                "seen = [ROOT, *nodes()]",
                "assert len(seen) == len(set(seen))",
                "assert all(tree.parent(child) == id for id in seen "
                "for child in tree.children(id))"))
        where = prefixes(seen)
        if seen["shared"]:
            name, *args = seen["shared"]
            call = f"tree.{name}({', '.join(map(self.name_in(where), args))})"
            self.fail(f"{call[5:]} handed out a list the tree keeps: the caller changed it, "
                      f"and the next {name}() answered differently; a view must return a "
                      "copy", (f"handed = {call}", "want = list(handed)",
                               "handed.clear() if handed else handed.append(0)",
                               f"assert list({call}) == want"))
        self.check_expected(where)
        ends = {prefix for id, prefix in where.items() if id != ROOT}
        if ends != model.ends:
            self.fail(f"the tree's nodes end {sorted(ends)}, the model's {sorted(model.ends)}",
                      ("assert sorted(prefix(id) for id in nodes()) == "
                       f"{sorted(list(prefix) for prefix in model.ends)}",))
        ids = set(where) - {ROOT}
        if len(self.used | ids) > self.peak:
            self.fail(f"{len(self.used | ids)} node ids have been used, but at most "
                      f"{self.peak} nodes were ever live at once: freed slots are not reused",
                      (f"assert len(set(nodes()) | {sorted(self.used) or 'set()'}) <= "
                       f"{self.peak}".replace("[", "{").replace("]", "}"),))
        for node in seen["nodes"]:
            id, prefix = node["id"], where[node["id"]]
            here = "ROOT" if id == ROOT else f"node({list(prefix)})"
            want = model.values(prefix)
            if node["values"] != want:
                self.fail(f"node {id} ({list(prefix)}) holds {node['values']}, expected {want}",
                          (f"assert list(tree.values({here})) == {want}",))
            want = model.lock_count(prefix)
            if node["lock_count"] != want:
                self.fail(f"node {id} ({list(prefix)}) has lock count {node['lock_count']}, "
                          f"expected {want}", (f"assert tree.lock_count({here}) == {want}",))
            children = node["children"]
            if children != sorted(children):
                self.fail(f"children({id}) is not in id order",
                          (f"assert tree.children({here}) == sorted(tree.children({here}))",))
            if node["child_count"] != len(children):
                self.fail(f"child_count({id}) != len(children)",
                          (f"assert tree.child_count({here}) == len(tree.children({here}))",))
            before = self.where.get(id)
            if before is not None and before != prefix:
                self.fail(f"node {id} ended {list(before)} and now ends {list(prefix)}",
                          (f"assert prefix(held) == {list(before)}",),
                          (-1, f"held = node({list(before)})"))
        lru = seen["lru"]
        want = [list(prefix) for prefix in model.lru_order()]
        if [list(where[id]) if id in where else id for id in lru] != want:
            self.fail(f"lru_order ends {[list(where[id]) if id in where else id for id in lru]}"
                      f", expected {want}" + ("" if all(id in where for id in lru) else
                                              " (a number: an id that is not in the tree)"),
                      (f"assert [prefix(id) for id in tree.lru_order()] == {want}",))
        totals = (("len", len(model), "len(tree) == {}"),
                  ("is_empty", len(model) == 0, "tree.is_empty() is {}"),
                  ("node_count", model.node_count(), "tree.node_count() == {}"),
                  ("granule", self.granule, "tree.granule == {}"),
                  ("root_parent", None, "tree.parent(ROOT) is {}"),
                  ("root_key", [], "list(tree.key(ROOT)) == {}"))
        for name, want, holds in totals:
            if seen[name] != want:
                self.fail(f"{name.replace('root_', '')}{'(ROOT)' if 'root' in name else ''} "
                          f"is {seen[name]!r}, expected {want!r}",
                          (f"assert {holds.format(want)}",))
        root = next(node for node in seen["nodes"] if node["id"] == ROOT)
        if root["lock_count"] != 0:
            self.fail("the root has a lock count", ("assert tree.lock_count(ROOT) == 0",))
        if seen["self_check"] is not None:
            self.fail(f"the tree's own _check() failed: {seen['self_check']}",
                      ("tree._check()  # your tree's own self-check",))

    # ------------------------------------------------------------------ the replay

    def failure_message(self, error: Exception) -> str:
        """What went wrong: the disagreement's message, or what the tree raised."""
        if isinstance(error, Disagreement):
            return str(error)
        return f"{type(self.crash).__name__}: {self.crash}"

    def replay(self, error: Exception) -> str | None:
        """The example that ended in ``error`` as a standalone pytest function, or None if
        ``error`` is neither a disagreement with the model nor raised by the tree in one of
        this machine's calls."""
        disagreed = isinstance(error, Disagreement)
        if not disagreed and self.crash is None:
            return None
        asserts, capture = (error.asserts, error.capture) if disagreed else ([], None)
        body = [f"    tree = RadixTree({self.granule})", "    gone = []  # what evict frees"]
        at, target = capture if capture else (None, "")
        hold = None
        if at == -1:  # before the last step's calls
            hold, at, target = target, None, ""
        if hold is not None and self.step_start >= len(self.log):
            body.append(f"    {hold}")
        for index, (source, result, error_kind) in enumerate(self.log):
            source = written(source)
            if hold is not None and index == self.step_start:
                body.append(f"    {hold}")
            dead = error_kind == "KeyError" and source.rstrip(")").split("(")[-1].isdigit()
            indent = "    "
            if dead:
                id = source.rstrip(")").split("(")[-1]
                body.append(f"    if {id} not in [ROOT, *nodes()]:  # {id} is no node now")
                indent = "        "
            if error_kind:
                body.append(f"{indent}with pytest.raises({error_kind}):")
                body.append(f"{indent}    {source}")
            elif index == at:
                body.append(f"{indent}{target} = {source}")
            elif index == len(self.log) - 1 and not disagreed:
                body.append(f"{indent}{source}  # raises {type(self.crash).__name__}")
            else:
                body.append(f"{indent}{source}  # -> {result!r}")
        body.extend(f"    {line}" for line in asserts)
        text = "\n".join(body)
        uses = "    import pytest\n" if "pytest." in text else ""
        return (f"def test_replay_of_the_model_test():\n"
                f"    \"\"\"The course's model test, shrunk, at granule {self.granule}.\"\"\"\n"
                f"{uses}    from tl_ds.radix import ROOT, RadixTree\n\n"
                f"{HELPERS}\n{text}\n")


class RadixMachineGranule1(RadixMachine):
    """The machine at granule 1: every token is a run of its own."""

    granule = 1


class RadixMachineGranule2(RadixMachine):
    """The machine at granule 2: runs of two tokens, matched whole."""

    granule = 2


class RadixMachineGranule3(RadixMachine):
    """The machine at granule 3: a run can differ from another in its middle token only."""

    granule = 3


class RadixMachineGranule4(RadixMachine):
    """The machine at granule 4."""

    granule = 4


class RadixMachineGranule16(RadixMachine):
    """The machine at granule 16, a block of a production cache: each run differs from
    another in its middle token."""

    granule = 16
