"""A radix tree over token ids: the prefix cache of an LLM server (course module ds.07).

Every node but the root holds a label (its edge: the tokens from its parent to it, a
multiple of the granule g long) and one value per g tokens of it. The path from the root
to a node spells the prefix that node ends. Nodes live in one list and point at each
other by index; a node id is its index and ``ROOT = 0``::

    _nodes   [ root | n1 | None | n3 | n4 ]        a freed slot holds None
    _free    [ 2 ]                                 the next allocation reuses slot 2
    children root.children = {run(1 2): 1}         keyed by the first g tokens of a label
             n1.children   = {run(3): 3, run(4): 4}

    LRU list of unlocked leaves, oldest first, linked through ids (NIL = -1):

             _head -> n4 <-> n3 <- _tail           n4.prev = NIL, n4.next = 3,
                                                   n3.prev = 4,   n3.next = NIL

Labels are packed as 32-bit unsigned token bytes, so a whole edge is compared by one
C-level ``bytes.startswith`` and a child key is a slice of the packed request: a walk
costs one dict lookup and one compare per node, never a Python loop over tokens.

A clock advances on every ``match_prefix`` and ``insert``; the walk stamps every node on
its path. The LRU list holds exactly the unlocked leaves sorted by stamp: a touched
leaf moves to the newest end in O(1); a node that rejoins (a parent left childless, an
unlocked node) walks in from both ends at once, so it pays its distance from the nearer
end: O(1) for the usual parent that eviction empties, which is older than every listed
leaf. ``lock`` pins a node and its ancestors; ``evict`` removes whole leaves from the
oldest end, and a parent left childless joins the list in its turn.
"""

from __future__ import annotations

import operator
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Generic, TypeVar

V = TypeVar("V")
NodeId = int

ROOT: NodeId = 0
NIL = -1

_TYPECODE = "I"
# runs an iterator to its end from C, keeping nothing: evict hands its values to f through it
_exhaust = deque(maxlen=0).extend
_chain = chain.from_iterable
_BOUND_BUILTIN = type([].append)  # a method of a built-in object, bound to it
_TOKEN_BYTES = array(_TYPECODE).itemsize


def _pack(key: Sequence[int]) -> bytes:
    """The tokens of ``key`` as packed 32-bit unsigned bytes; array's OverflowError out of range."""
    if type(key) is list:
        packed = array(_TYPECODE)
        packed.fromlist(key)
    else:
        packed = array(_TYPECODE, key)
    return packed.tobytes()


def _unpack(label: bytes) -> list[int]:
    return array(_TYPECODE, label).tolist()


class _Node:
    """One slot of the node list: an edge and its values, links by id, lock and stamp."""

    __slots__ = ("children", "label", "lock", "next", "own", "parent", "prev", "stamp", "values")

    def __init__(self, label: bytes, values: list, parent: NodeId, lock: int, stamp: int) -> None:
        self.label = label          # packed tokens of the edge from the parent
        self.values = values        # one value per g tokens of the label
        self.parent = parent        # NIL for the root
        self.children: dict[bytes, NodeId] = {}  # first g tokens of a child's label -> id
        self.lock = lock            # locks pinning this node: its own and its descendants'
        self.own = 0                # locks taken on this node itself
        self.stamp = stamp          # clock of the last walk through this node
        self.prev = NIL             # LRU neighbours, while the node is an unlocked leaf
        self.next = NIL


class RadixTree(Generic[V]):
    """A radix tree from token sequences to one value per granule of tokens."""

    def __init__(self, granule: int) -> None:
        """An empty tree that compares and splits keys in runs of ``granule`` tokens.

        Raises TypeError when granule is not an integer, ValueError when it is below 1.
        """
        granule = operator.index(granule)
        if granule < 1:
            raise ValueError(f"granule must be at least 1, got {granule}")
        self._granule = granule
        self._run = granule * _TOKEN_BYTES
        self._nodes: list[_Node | None] = [_Node(b"", [], NIL, 0, 0)]
        self._free: list[NodeId] = []
        self._head = NIL
        self._tail = NIL
        self._clock = 0
        self._len = 0
        self._node_count = 0

    # ------------------------------------------------------------------ accessors

    @property
    def granule(self) -> int:
        """The run length g: labels, matches and splits come in multiples of it."""
        return self._granule

    def __len__(self) -> int:
        """The number of values stored. O(1)."""
        return self._len

    def is_empty(self) -> bool:
        """True when no value is stored. O(1)."""
        return self._len == 0

    def node_count(self) -> int:
        """The number of nodes, the root excluded. O(1)."""
        return self._node_count

    def key(self, id: NodeId) -> list[int]:
        """The edge label of node ``id`` (empty for ROOT). O(len(label)). KeyError on a dead id."""
        return _unpack(self._live(id).label)

    def values(self, id: NodeId) -> list[V]:
        """A copy of the values of node ``id``, one per granule. KeyError on a dead id."""
        return list(self._live(id).values)

    def parent(self, id: NodeId) -> NodeId | None:
        """The parent of node ``id``, None for ROOT. O(1). KeyError on a dead id."""
        parent = self._live(id).parent
        return None if parent == NIL else parent

    def children(self, id: NodeId) -> list[NodeId]:
        """The children of node ``id`` in increasing id order. KeyError on a dead id."""
        return sorted(self._live(id).children.values())

    def child_count(self, id: NodeId) -> int:
        """The number of children of node ``id``. O(1). KeyError on a dead id."""
        return len(self._live(id).children)

    def lock_count(self, id: NodeId) -> int:
        """Locks pinning node ``id``: its own and its descendants'. 0 for ROOT.

        O(1). KeyError on a dead id.
        """
        return self._live(id).lock

    def lru_order(self) -> list[NodeId]:
        """The unlocked leaves, least recently used first. O(leaves)."""
        order = []
        nodes = self._nodes
        id = self._head
        while id != NIL:
            order.append(id)
            id = nodes[id].next
        return order

    # ------------------------------------------------------------------ operations

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        """The longest stored prefix of ``key`` in whole runs: (tokens matched, path).

        The path lists the nodes from just below ROOT to the node that ends the match
        ((0, []) when nothing matches). Side effects: advances the clock and stamps the
        path (its leaf moves to the newest end of the LRU list); splits the edge where
        the match ends inside it. Cost O(len(key)) in C plus one dict lookup per node.
        Raises OverflowError for a token outside 0..2**32-1.
        """
        matched, path = self._walk(_pack(key))
        self._touch(path)
        return matched // _TOKEN_BYTES, path

    def insert(self, key: Sequence[int], values: Sequence[V]) -> tuple[NodeId, list[V]]:
        """Store ``key`` with one value per granule: (node that ends key, values handed back).

        The part of ``key`` already stored keeps its stored values; the caller's values
        for that part are handed back, and the rest becomes a new leaf. Side effects as
        ``match_prefix`` (clock, stamps, a split where the key diverges inside an edge).
        ``insert([], [])`` returns (ROOT, []). Cost O(len(key)).
        Raises ValueError, leaving the tree unchanged, unless
        ``len(values) * granule == len(key)``; OverflowError for a token outside 0..2**32-1.
        """
        packed = _pack(key)
        values = list(values)
        tokens = len(packed) // _TOKEN_BYTES
        granule = self._granule
        if tokens % granule:
            raise ValueError(
                f"insert needs a key of whole runs: {tokens} tokens is not a multiple "
                f"of granule {granule}"
            )
        if len(values) * granule != tokens:
            raise ValueError(
                f"insert needs {tokens // granule} values for {tokens} tokens at granule "
                f"{granule}, got {len(values)}"
            )
        if not packed:
            return ROOT, []
        matched, path = self._walk(packed)
        self._touch(path)
        runs = matched // self._run
        node_id = path[-1] if path else ROOT
        if matched < len(packed):
            node_id = self._add_leaf(node_id, packed[matched:], values[runs:])
        self._len += len(values) - runs
        return node_id, values[:runs]

    def lock(self, id: NodeId) -> None:
        """Pin node ``id`` and its ancestors against eviction; locks nest. O(depth).

        The node leaves the LRU list. ``lock(ROOT)`` does nothing. KeyError on a dead id.
        """
        node = self._live(id)
        if id == ROOT:
            return
        if node.lock == 0 and not node.children:
            self._unlink(id)
        node.own += 1
        nodes = self._nodes
        while id != ROOT:
            node = nodes[id]
            node.lock += 1
            id = node.parent

    def unlock(self, id: NodeId) -> None:
        """Undo one ``lock(id)``; an unlocked childless node rejoins the LRU list. O(depth).

        ``unlock(ROOT)`` does nothing. Raises KeyError on a dead id, and RuntimeError,
        leaving the tree unchanged, when the node holds no lock of its own.
        """
        node = self._live(id)
        if id == ROOT:
            return
        if node.own == 0:
            raise RuntimeError(f"unlock of node {id}, which is not locked: it holds no lock "
                               f"of its own (lock count {node.lock})")
        node.own -= 1
        nodes = self._nodes
        walk = id
        while walk != ROOT:
            up = nodes[walk]
            up.lock -= 1
            walk = up.parent
        if node.lock == 0 and not node.children:
            self._relist(id)

    def evict(self, n: int, f: Callable[[V], None]) -> int:
        """Remove least recently used unlocked leaves until at least ``n`` values are gone.

        Each leaf goes whole, so evict may free more than ``n``. A parent left childless
        joins the LRU list at its own stamp (see ``_relist``). Once the tree holds none
        of the removed leaves, ``f`` is called on their values: each leaf's in label
        order, the leaves in the order they left. If ``f`` raises, the exception
        propagates: the leaves stay removed, and the values after the one it raised on
        are not handed to ``f``. Returns the number of values freed (0 when n <= 0 or
        nothing is evictable). Cost O(1) per leaf in Python and ``f`` called from C over
        the freed values, plus the relisting walks: O(1) for a parent older than every
        listed leaf, the usual case; at worst its distance from the nearer end of the list.
        """
        nodes = self._nodes
        run = self._run
        free = self._free
        freed = evicted = 0
        gone: list[list] = []  # the removed leaves' values, a list per leaf in the order they left
        head = self._head
        while freed < n and head != NIL:
            # the oldest leaf leaves the head of the list, its slot, and its parent
            leaf = nodes[head]
            nodes[head] = None
            free.append(head)
            evicted += 1
            values = leaf.values
            gone.append(values)
            freed += len(values)
            parent_id = leaf.parent
            parent = nodes[parent_id]
            siblings = parent.children
            del siblings[leaf.label[:run]]
            head = leaf.next
            if siblings or parent_id == ROOT or parent.lock:
                continue
            # the parent rejoins at its stamp: at the head when older than every listed leaf
            if head == NIL:
                self._tail = parent_id
            elif parent.stamp < nodes[head].stamp:
                nodes[head].prev = parent_id
            else:
                nodes[head].prev = NIL
                self._head = head
                self._relist(parent_id)
                head = self._head
                continue
            parent.next = head
            head = parent_id
        self._head = head
        if head == NIL:
            self._tail = NIL
        else:
            nodes[head].prev = NIL
        self._len -= freed
        self._node_count -= evicted
        # the tree is whole again: f runs over the values from C, none of its results kept;
        # a list's own append (a server collecting freed blocks) is that list's extend, the
        # same calls in the same order without a Python-level call per value
        if type(f) is _BOUND_BUILTIN and f.__name__ == "append" and type(f.__self__) is list:
            f.__self__.extend(gone[0] if len(gone) == 1 else _chain(gone))
        else:
            _exhaust(map(f, gone[0] if len(gone) == 1 else _chain(gone)))
        return freed

    # ------------------------------------------------------------------ internals

    def _live(self, id: NodeId) -> _Node:
        """The node with id ``id``; KeyError(id) unless it is a live node."""
        if type(id) is int and 0 <= id < len(self._nodes):  # not a bool, a float, None
            node = self._nodes[id]
            if node is not None:
                return node
        raise KeyError(id)

    def _alloc(self, node: _Node) -> NodeId:
        """Put ``node`` in the most recently freed slot, or a new one; return its id."""
        self._node_count += 1
        if self._free:
            id = self._free.pop()
            self._nodes[id] = node
            return id
        self._nodes.append(node)
        return len(self._nodes) - 1

    def _walk(self, packed: bytes) -> tuple[int, list[NodeId]]:
        """Walk ``packed`` from ROOT in whole runs; split the edge the walk ends inside.

        Returns (bytes matched, path). Stamps nothing: see ``_touch``.
        """
        nodes = self._nodes
        run = self._run
        limit = len(packed) - len(packed) % run
        path: list[NodeId] = []
        node = nodes[ROOT]
        pos = 0
        while pos < limit:
            child_id = node.children.get(packed[pos:pos + run])
            if child_id is None:
                break
            child = nodes[child_id]
            label = child.label
            if packed.startswith(label, pos):
                pos += len(label)
                path.append(child_id)
                node = child
                continue
            runs = self._common_runs(packed, pos, limit, label)
            path.append(self._split(child_id, runs))
            return pos + runs * run, path
        return pos, path

    def _touch(self, path: list[NodeId]) -> None:
        """Advance the clock, stamp ROOT and ``path``; a leaf ending it goes to the newest end."""
        self._clock += 1
        clock = self._clock
        nodes = self._nodes
        nodes[ROOT].stamp = clock
        for id in path:
            nodes[id].stamp = clock
        if path:
            last = nodes[path[-1]]
            if not last.children and last.lock == 0:
                self._unlink(path[-1])
                self._append(path[-1])

    def _add_leaf(self, parent_id: NodeId, label: bytes, values: list) -> NodeId:
        """Hang a new leaf, stamped now, under ``parent_id``; it joins the newest end."""
        parent = self._nodes[parent_id]
        if parent_id != ROOT and not parent.children and parent.lock == 0:
            self._unlink(parent_id)
        leaf_id = self._alloc(_Node(label, values, parent_id, 0, self._clock))
        parent.children[label[:self._run]] = leaf_id
        self._append(leaf_id)
        return leaf_id

    def _common_runs(self, packed: bytes, pos: int, limit: int, label: bytes) -> int:
        """How many whole runs of ``label`` equal ``packed`` from ``pos``.

        The first run is known equal (it is the child's key) and the whole label is
        known not to be; bisect with slice compares, O(log runs) of them.
        """
        run = self._run
        low = 1
        high = min(len(label), limit - pos) // run
        if high == len(label) // run:
            high -= 1
        while low < high:
            mid = (low + high + 1) // 2
            if packed.startswith(label[:mid * run], pos):
                low = mid
            else:
                high = mid - 1
        return low

    def _split(self, child_id: NodeId, runs: int) -> NodeId:
        """Cut the edge above ``child_id`` after ``runs`` runs; return the new middle node.

        The middle node takes the upper part of the label and values and the child's
        lock count; the child keeps its id, its stamp, its place in the LRU list and
        the lower part.
        """
        nodes = self._nodes
        child = nodes[child_id]
        cut = runs * self._run
        label = child.label
        middle = _Node(label[:cut], child.values[:runs], child.parent, child.lock, child.stamp)
        middle_id = self._alloc(middle)
        nodes[child.parent].children[label[:self._run]] = middle_id
        child.label = label[cut:]
        child.values = child.values[runs:]
        child.parent = middle_id
        middle.children[child.label[:self._run]] = child_id
        return middle_id

    def _unlink(self, id: NodeId) -> None:
        """Take node ``id`` off the LRU list. O(1)."""
        nodes = self._nodes
        node = nodes[id]
        if node.prev == NIL:
            self._head = node.next
        else:
            nodes[node.prev].next = node.next
        if node.next == NIL:
            self._tail = node.prev
        else:
            nodes[node.next].prev = node.prev
        node.prev = node.next = NIL

    def _append(self, id: NodeId) -> None:
        """Put node ``id`` at the newest end of the LRU list. O(1)."""
        self._insert_after(self._tail, id)

    def _relist(self, id: NodeId) -> None:
        """Put node ``id`` on the LRU list at its stamp, walking in from both ends at once.

        Each step moves one walker in from the oldest end and one from the newest, so a
        node with ``k`` listed leaves older than it and ``m`` newer takes min(k, m) + 1
        steps. That is O(1) for a parent that eviction empties, whose stamp is that of
        its last child, the oldest leaf, unless a walk ended at the parent itself later;
        and for a node unlocked soon after its last use. Worst case, a stamp in the
        middle of the list: half the list's length.
        """
        nodes = self._nodes
        stamp = nodes[id].stamp
        front = self._head  # walks newer; every leaf before it is older than the node
        back = self._tail  # walks older; every leaf after it is newer than the node
        while front != NIL:  # NIL only when the list is empty: the walkers meet first
            first, last = nodes[front], nodes[back]
            if first.stamp > stamp:
                self._insert_after(first.prev, id)
                return
            if last.stamp < stamp:
                self._insert_after(back, id)
                return
            front, back = first.next, last.prev
        self._insert_after(NIL, id)

    def _insert_after(self, after: NodeId, id: NodeId) -> None:
        """Link node ``id`` into the LRU list right after ``after`` (NIL: at the head)."""
        nodes = self._nodes
        node = nodes[id]
        node.prev = after
        if after == NIL:
            node.next = self._head
            self._head = id
        else:
            node.next = nodes[after].next
            nodes[after].next = id
        if node.next == NIL:
            self._tail = id
        else:
            nodes[node.next].prev = id

    def _check(self) -> None:
        """Raise AssertionError, naming the node ids involved, unless every invariant holds."""

        def fail(message: str) -> None:
            raise AssertionError(message)

        nodes = self._nodes
        run = self._run
        root = nodes[ROOT]
        if root is None or root.parent != NIL or root.label or root.values:
            fail("the root must be live, parentless and hold no label or values")

        # every slot is live or on the free list, never both; the free list has no repeats
        free = set(self._free)
        if len(free) != len(self._free):
            fail(f"the free list repeats a slot: {self._free}")
        for id, node in enumerate(nodes):
            if (node is None) != (id in free):
                fail(f"slot {id} is {'empty' if node is None else 'live'} but "
                     f"{'' if id in free else 'not '}on the free list")

        # parent and child agree, sibling keys are each child's first run, no free slot
        # is reachable, and every live node is reached exactly once from the root
        reached = {ROOT}
        stack = [ROOT]
        while stack:
            id = stack.pop()
            for run_key, child_id in nodes[id].children.items():
                if child_id in free or not 0 <= child_id < len(nodes):
                    fail(f"node {id} has a child {child_id} that is not a live node")
                if child_id in reached:
                    fail(f"node {child_id} is reached twice (again from node {id})")
                child = nodes[child_id]
                if child.parent != id:
                    fail(f"node {child_id} is a child of {id} but names {child.parent} as parent")
                if child.label[:run] != run_key:
                    fail(f"node {child_id} is keyed under {id} by a run its label lacks")
                reached.add(child_id)
                stack.append(child_id)
        live = {id for id, node in enumerate(nodes) if node is not None}
        if reached != live:
            fail(f"live nodes not reachable from the root: {sorted(live - reached)}")

        # labels are non-empty whole runs, one value per run; stamps never exceed the parent's
        for id in live - {ROOT}:
            node = nodes[id]
            if not node.label or len(node.label) % run:
                fail(f"node {id} has a label of {len(node.label) // _TOKEN_BYTES} tokens, "
                     f"not a positive multiple of granule {self._granule}")
            if len(node.values) * run != len(node.label):
                fail(f"node {id} holds {len(node.values)} values for "
                     f"{len(node.label) // _TOKEN_BYTES} tokens")
            if node.stamp > nodes[node.parent].stamp:
                fail(f"node {id} is stamped {node.stamp}, after its parent {node.parent}")
            if node.stamp > self._clock:
                fail(f"node {id} is stamped {node.stamp}, after the clock {self._clock}")

        # lock counts equal own locks plus the children's counts; the root is never locked
        if root.lock or root.own:
            fail(f"the root has lock count {root.lock} and {root.own} own locks")
        for id in live - {ROOT}:
            node = nodes[id]
            below = sum(nodes[c].lock for c in node.children.values())
            if node.own < 0 or node.lock != node.own + below:
                fail(f"node {id} has lock count {node.lock} but {node.own} own locks "
                     f"and {below} below it")

        # the LRU list is symmetric and holds exactly the unlocked leaves in stamp order
        listed = []
        prev = NIL
        id = self._head
        while id != NIL:
            if id not in live or len(listed) > len(live):
                fail(f"the LRU list reaches node {id}, which is not live (or loops)")
            if nodes[id].prev != prev:
                fail(f"LRU node {id} names {nodes[id].prev} as prev, not {prev}")
            listed.append(id)
            prev = id
            id = nodes[id].next
        if self._tail != prev:
            fail(f"the LRU tail is {self._tail}, but the list ends at {prev}")
        leaves = {i for i in live - {ROOT} if not nodes[i].children and nodes[i].lock == 0}
        if set(listed) != leaves or len(listed) != len(leaves):
            fail(f"the LRU list holds {sorted(listed)}, the unlocked leaves are {sorted(leaves)}")
        stamps = [nodes[i].stamp for i in listed]
        if stamps != sorted(stamps) or len(set(stamps)) != len(stamps):
            fail(f"the LRU list {listed} is not in strictly increasing stamp order {stamps}")
        for id in live - leaves:
            if nodes[id].prev != NIL or nodes[id].next != NIL:
                fail(f"node {id} is not an unlocked leaf but keeps LRU links")

        # cached counts equal their recomputed sums
        total = sum(len(nodes[i].values) for i in live)
        if self._len != total:
            fail(f"len is {self._len} but the nodes hold {total} values")
        if self._node_count != len(live) - 1:
            fail(f"node_count is {self._node_count} but {len(live) - 1} nodes are live")
