"""What the state machine reads off a tree after each step, through its public interface.

The machine calls these functions on the tree it drives. When the tree lives in another
process (a student's tree behind the grader's proxy), the proxy runs the same functions
next to the tree and hands back their plain result; either way the machine judges the
result against the model, so a tree that answers falsely is caught the same way.
"""

from __future__ import annotations


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
    while stack and broken is None:
        id = stack.pop()
        children = list(tree.children(id))
        nodes.append({"id": id, "prefix": prefixes[id], "values": list(tree.values(id)),
                      "lock_count": tree.lock_count(id), "children": children,
                      "child_count": tree.child_count(id)})
        for child in children:
            if child in prefixes:
                broken = f"node {child} is reached twice (again from {id})"
                break
            if tree.parent(child) != id:
                broken = (f"node {child} is a child of {id} but names {tree.parent(child)} "
                          "as parent")
                break
            prefixes[child] = prefixes[id] + list(tree.key(child))
            stack.append(child)
    return {"nodes": nodes, "lru": list(tree.lru_order()), "len": len(tree),
            "is_empty": tree.is_empty(), "node_count": tree.node_count(),
            "granule": tree.granule, "root_parent": tree.parent(root),
            "root_key": list(tree.key(root)), "self_check": said, "broken": broken}


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


VIEWS = {"raised": raised, "observe": observe, "read_only": read_only}


def view(tree, name: str, *args):
    """Run view ``name`` next to the tree: in place, or through the tree's proxy."""
    remote = getattr(type(tree), "_ol_view", None)
    if remote is not None:
        return tree._ol_view(name, *args)
    return VIEWS[name](tree, *args)
