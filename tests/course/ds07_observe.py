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

    Calls the tree's ``_check()`` first when it has one.
    """
    check = getattr(tree, "_check", None)
    if callable(check):
        check()
    nodes = []
    prefixes = {root: []}
    stack = [root]
    while stack:
        id = stack.pop()
        children = list(tree.children(id))
        nodes.append({"id": id, "prefix": prefixes[id], "values": list(tree.values(id)),
                      "lock_count": tree.lock_count(id), "children": children,
                      "child_count": tree.child_count(id)})
        for child in children:
            assert child not in prefixes, f"node {child} is reached twice (again from {id})"
            assert tree.parent(child) == id, (
                f"node {child} is a child of {id} but names {tree.parent(child)} as parent")
            prefixes[child] = prefixes[id] + list(tree.key(child))
            stack.append(child)
    return {"nodes": nodes, "lru": list(tree.lru_order()), "len": len(tree),
            "is_empty": tree.is_empty(), "node_count": tree.node_count(),
            "granule": tree.granule, "root_parent": tree.parent(root),
            "root_key": list(tree.key(root))}


VIEWS = {"raised": raised, "observe": observe}


def view(tree, name: str, *args):
    """Run view ``name`` next to the tree: in place, or through the tree's proxy."""
    remote = getattr(type(tree), "_ol_view", None)
    if remote is not None:
        return tree._ol_view(name, *args)
    return VIEWS[name](tree, *args)
