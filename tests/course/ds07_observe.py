"""What the state machine reads off a tree after each step, through its public interface.

The machine calls these functions on the tree it drives. When the tree lives in another
process (a student's tree behind the grader's proxy), the proxy runs the same functions
next to the tree and hands back their plain result; either way the machine judges the
result against the model, so a tree that answers falsely is caught the same way.
"""

from __future__ import annotations

import marshal


def raised(tree, id: int, names: list[str]) -> list[list[str] | None]:
    """Call each method in ``names`` with ``id``: the classes (with their bases) each raised,
    or None where it returned."""
    outcomes = []
    for name in names:
        try:
            getattr(tree, name)(id)
        except Exception as error:
            outcomes.append([kind.__name__ for kind in type(error).__mro__])
        else:
            outcomes.append(None)
    return outcomes


def answers(tree, id, names: list[str]) -> list[dict]:
    """Call each method in ``names`` with ``id``: what each returned, as plain data
    (``{"returned": ...}``), or the classes (with their bases) it raised (``{"raised":
    [...]}``)."""
    said = []
    for name in names:
        try:
            returned = getattr(tree, name)(id)
        except Exception as error:
            said.append({"raised": [kind.__name__ for kind in type(error).__mro__]})
        else:
            plain = returned if returned is None or type(returned) is int else list(returned)
            said.append({"returned": plain})
    return said


def changed(returned) -> bool:
    """Change a sequence a view returned, as its caller may: False when it cannot be
    changed (a tuple), so the tree cannot have shared it."""
    try:
        if len(returned):
            del returned[:]
        else:
            returned.append(0)
    except Exception:
        return False
    return True


def shared(tree, handed: list) -> list | None:
    """The first answer in ``handed`` ((name, args, the sequence returned, a copy)) that is
    a sequence the tree keeps: changed by its caller, the next call's answer changes too.
    It is [name, *args]; None when every view handed out its own copy."""
    for name, args, returned, copy in handed:
        if changed(returned) and list(getattr(tree, name)(*args)) != copy:
            return [name, *args]
    return None


def observe(tree, root: int) -> dict:
    """Everything observable, as plain data: the nodes reached from ``root`` (in the order
    they are reached) and the totals.

    Also what the tree's own ``_check()`` says, when it has one: None, or its complaint
    (the machine judges the public interface first). A walk that meets a node twice, or a
    child that names another parent, stops and is reported under ``broken``.
    """
    said = None
    check = getattr(tree, "_check", None)
    if callable(check):
        try:
            check()
        except AssertionError as error:
            said = str(error) or "AssertionError"
    nodes = []
    prefixes = {root: []}
    stack = [root]
    broken = None
    handed = []  # every sequence a view returned, with a copy: changed at the end
    while stack and broken is None:
        id = stack.pop()
        kids, values = tree.children(id), tree.values(id)
        children = list(kids)
        nodes.append({"id": id, "prefix": prefixes[id], "values": list(values),
                      "lock_count": tree.lock_count(id), "children": children,
                      "child_count": tree.child_count(id)})
        handed += (("children", (id,), kids, children),
                   ("values", (id,), values, nodes[-1]["values"]))
        for child in children:
            if child in prefixes:
                broken = f"node {child} is reached twice (again from {id})"
                break
            if tree.parent(child) != id:
                broken = (f"node {child} is a child of {id} but names {tree.parent(child)} "
                          "as parent")
                break
            label = tree.key(child)
            copy = list(label)
            handed.append(("key", (child,), label, copy))
            prefixes[child] = prefixes[id] + copy
            stack.append(child)
    lru = tree.lru_order()
    seen = {"nodes": nodes, "lru": list(lru), "len": len(tree),
            "is_empty": tree.is_empty(), "node_count": tree.node_count(),
            "granule": tree.granule, "root_parent": tree.parent(root),
            "root_key": list(tree.key(root)), "self_check": said, "broken": broken}
    # what a caller does to the views' answers must not reach the tree: each is changed
    # after the reading above (which a tree that shares still passes), then read again
    handed.append(("lru_order", (), lru, seen["lru"]))
    # the root's, the last node's and lru_order: a tree that shares its lists shares them
    # for every node, and across a test's thousands of readings each kind of node is last
    seen["shared"] = shared(tree, handed[:2] + handed[-4:]) if broken is None else None
    return seen


def read_only(tree) -> dict:
    """Assign ``granule`` a new value: the classes (with their bases) the assignment raised,
    or None where it did not, and the granule afterwards."""
    before = tree.granule
    try:
        tree.granule = before + 1
    except Exception as error:
        said = [kind.__name__ for kind in type(error).__mro__]
    else:
        said = None
    return {"raised": said, "granule": tree.granule}


# the last reading each tree side sent of each tree: id(tree) -> (tree, its number, {the
# fingerprint of each of its rows: the row's place in it}); a few trees, the newest last
SENT: dict[int, tuple[object, int, dict[bytes, int]]] = {}
KEPT = 8  # trees whose last reading either side keeps


def keep(table: dict, tree, entry: tuple) -> None:
    """``entry`` as ``tree``'s newest in ``table``, which keeps the KEPT newest trees."""
    table[id(tree)] = entry
    while len(table) > KEPT:
        del table[next(iter(table))]


def fingerprint(row: dict) -> bytes | None:
    """The row's bytes in marshal's format, which tells every type of plain data apart (a
    list from a tuple, 1 from True and 1.0, a str from a subclass of it); None when it is
    not plain data, so that it crosses whole and the proxy refuses it there."""
    try:
        return marshal.dumps(row)
    except ValueError:
        return None


def observe_since(tree, root: int, since) -> dict:
    """``observe(tree, root)`` as it crosses the proxy: each node that is as it was in
    reading number ``since`` of this tree (the same plain data: the same fingerprint) as
    its place in that reading, and the others whole; every node whole when this side holds
    no such reading. The reading's own number is under ``number``."""
    seen = observe(tree, root)
    kept = SENT.pop(id(tree), None)
    places = kept[2] if kept is not None and kept[1] == since else {}
    number = (kept[1] if kept is not None else 0) + 1
    prints = [fingerprint(row) for row in seen["nodes"]]
    seen["nodes"] = [row if mark is None else places.get(mark, row)
                     for mark, row in zip(prints, seen["nodes"], strict=True)]
    keep(SENT, tree, (tree, number, {mark: place for place, mark in enumerate(prints)
                                     if mark is not None}))
    seen["number"] = number
    return seen


VIEWS = {"raised": raised, "answers": answers, "observe": observe, "read_only": read_only,
         "observe_since": observe_since}

# the last reading the tests took of each proxied tree: id(tree) -> (tree, its number,
# its nodes); a few trees, the newest last
TAKEN: dict[int, tuple[object, int, list]] = {}


def crossing(tree, name: str, args: tuple) -> tuple:
    """The view the proxy asks the tree side for, with its arguments: ``observe`` as the
    changes since the last reading the tests took of this tree."""
    if name != "observe":
        return (name, *args)
    kept = TAKEN.get(id(tree))
    return ("observe_since", *args, kept[1] if kept is not None else None)


def taken(tree, name: str, said):
    """The answer of view ``name`` from what crossed: a reading whole again, each node that
    crossed as its place in the last reading taken from there (a place that is not there
    raises IndexError, judged as the reading's)."""
    if name != "observe":
        return said
    kept = TAKEN.pop(id(tree), None)
    before = kept[2] if kept is not None else []
    said["nodes"] = [before[item] if type(item) is int else item for item in said["nodes"]]
    keep(TAKEN, tree, (tree, said.pop("number"), said["nodes"]))
    return said


def along(tree, name: str, *args) -> None:
    """Have the tree's next call bring the reading of view ``name`` along: through the
    tree's proxy the call and the reading then cross in one round trip, and the next
    ``view(tree, name, *args)`` takes it (it is what that view would answer then); in
    place, nothing."""
    remote = getattr(type(tree), "_ol_along", None)
    if remote is not None:
        tree._ol_along(*crossing(tree, name, args))


def view(tree, name: str, *args):
    """Run view ``name`` next to the tree: in place, or through the tree's proxy, where a
    reading crosses as its changes since the last one taken (the same reading again once
    taken)."""
    remote = getattr(type(tree), "_ol_view", None)
    if remote is not None:
        return taken(tree, name, tree._ol_view(*crossing(tree, name, args)))
    return VIEWS[name](tree, *args)
