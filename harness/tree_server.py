"""The far side of the course runs' proxy: a student's tree in a process of its own.

Started by ``tree_proxy.py`` as ``python -s -P tree_server.py STUDENT_DIR`` with the
student's package in STUDENT_DIR and ``ds07_observe.py`` beside this file. It imports
nothing of the harness. One JSON request per line on stdin, one answer per line on a
private copy of stdout (the student's prints go to stderr):

    {"new": granule}                      -> {"ok": handle}
    {"tree": h, "call": name, "args": []} -> {"ok": result} or {"raise": [class names], "text": ...}
    {"tree": h, "view": name, "args": []} -> the same, for a function of ds07_observe
    {"root": true}                        -> {"ok": ROOT}

A value is plain JSON, a tuple tagged as {"tuple": [...]}. ``evict``'s callback collects
the values it is given; the answer carries them, in order, as ``{"freed": n, "values": [...]}``.
"""

import json
import os
import select
import sys
import time
import traceback

SPIN = 0.0002

OUTPUT_LIMIT = 64_000  # characters of the student's prints passed on to stderr


class Capped:
    """sys.stdout and sys.stderr of the tree: the first OUTPUT_LIMIT characters, then none."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.left = OUTPUT_LIMIT

    def write(self, text: str) -> int:
        if self.left > 0:
            self.stream.write(text[:self.left])
            self.left -= len(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


CHANNEL = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr = Capped(sys.stderr)
sys.path[:0] = [sys.argv[1], os.path.dirname(os.path.abspath(__file__))]

from tree_wire import decode, encode  # noqa: E402 - beside this file, once the path is set


def answer(request, trees, module, views):
    if "new" in request:
        trees.append(module.RadixTree(request["new"]))
        return len(trees) - 1
    if "root" in request:
        return module.ROOT
    tree = trees[request["tree"]]
    args = [decode(arg) for arg in request["args"]]
    if "view" in request:
        return views.VIEWS[request["view"]](tree, *args)
    name = request["call"]
    if name == "evict":
        freed = []
        count = tree.evict(args[0], freed.append)
        return {"freed": count, "values": freed}
    if name == "granule":
        return tree.granule
    result = getattr(tree, name)(*args)
    if name in ("key", "values", "children", "lru_order"):
        return list(result)
    if name in ("match_prefix", "insert"):
        first, second = result
        return [first, list(second)]
    return result


def requests():
    """Lines from stdin. After each answer the next request usually follows within
    microseconds, so the read spins for up to SPIN seconds before it sleeps in select."""
    os.set_blocking(0, False)
    pending = b""
    while True:
        while b"\n" not in pending:
            end = time.perf_counter() + SPIN
            while True:
                try:
                    chunk = os.read(0, 1 << 20)
                    break
                except BlockingIOError:
                    if time.perf_counter() > end:
                        select.select([0], [], [])
            if not chunk:
                return
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        yield line


def main() -> None:
    trees = []
    module = views = None
    for line in requests():
        request = json.loads(line)
        try:
            if module is None:
                import ds07_observe as views
                import tl_ds.radix as module
            reply = {"ok": encode(answer(request, trees, module, views))}
            text = json.dumps(reply)
        except BaseException as error:  # every failure is the caller's to judge
            names = [kind.__name__ for kind in type(error).__mro__]
            said = "".join(traceback.format_exception_only(type(error), error)).strip()
            text = json.dumps({"raise": names, "text": said[-2000:]})
        CHANNEL.write(text + "\n")
        CHANNEL.flush()


if __name__ == "__main__":
    main()
