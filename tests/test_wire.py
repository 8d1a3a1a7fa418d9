"""The wire between a proxy and its tree (harness/run/payload/tree_wire.py): plain data as
one line of JSON each way, and nothing else read as a message."""

from __future__ import annotations

import importlib.util

import pytest
from support import CONTRACT, DS07, RUNS

from harness.run.layout import WIRE, Suite


def load_wire():
    spec = importlib.util.spec_from_file_location("tree_wire_under_test", WIRE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wire = load_wire()

PLAIN = [None, True, 3, -2**70, 2.5, "s", "é\u2028", b"\x00b", (1, (2,)), [1, [2, None]],
         {1: "a", "k": (3,), (1, 2): [b"x"]}, {"t": [1], "s": {"d": b"x", "b": None}},
         [1, (2,), {"k": [3, (4,)]}], [], (), {}]


def test_plain_data_comes_back_from_its_line_as_it_went():
    for value in PLAIN:
        line = wire.dumps({"ok": wire.encode(value)})
        assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
        back = wire.decode(wire.loads(line[:-1])["ok"])
        assert back == value and type(back) is type(value)


def test_a_line_that_is_not_exactly_one_json_value_is_refused():
    for line in (b"", b"{", b'{"ok": 1} {"ok": 2}', b'{"ok": 1}x', b" {}", b"\xff\xfe",
                 b"nonsense"):
        with pytest.raises(ValueError):
            wire.loads(line)


def test_what_is_not_plain_data_is_refused_naming_the_rule():
    for value in (object(), {1, 2}, [object()], {"k": print}, bytearray(b"x")):
        with pytest.raises(TypeError, match="plain data"):
            wire.dumps({"ok": wire.encode(value)})


# --- a reading brought along with a call -----------------------------------------------------

ALONG = '''
import pytest
from ds07_observe import along, view
from tl_ds.radix import ROOT, RadixTree


def lock_count(reading, node):
    return next(seen["lock_count"] for seen in reading["nodes"] if seen["id"] == node)


def test_a_reading_brought_along_is_the_one_asked_for_right_after_the_call():
    tree = RadixTree(1)
    tree._ol_along("observe", ROOT)
    node, _ = tree.insert([1, 2], ["a", "b"])
    along = tree._ol_view("observe", ROOT)
    assert along["len"] == 2 and along == tree._ol_view("observe", ROOT)


def test_a_request_between_the_call_and_the_reading_reads_past_the_one_brought_along():
    tree = RadixTree(1)
    tree._ol_along("observe", ROOT)
    node, _ = tree.insert([1, 3], ["a", "c"])
    tree.lock(node)
    assert lock_count(tree._ol_view("observe", ROOT), node) == 1


def test_a_reading_that_crosses_as_its_changes_is_the_whole_reading_again():
    tree = RadixTree(1)
    for step, key in enumerate(([1, 2, 3], [1, 2, 4], [1, 5], [6], [1, 2, 3, 7])):
        along(tree, "observe", ROOT)
        node, _ = tree.insert(key, [["r", step]] * len(key))
        assert view(tree, "observe", ROOT) == tree._ol_view("observe", ROOT)
        tree.lock(node)
        assert view(tree, "observe", ROOT) == tree._ol_view("observe", ROOT)
    tree.evict(10, lambda value: None)
    assert view(tree, "observe", ROOT) == tree._ol_view("observe", ROOT)


def test_a_reading_the_tree_side_no_longer_holds_crosses_whole():
    tree = RadixTree(1)
    tree.insert([1, 2], ["a", "b"])
    view(tree, "observe", ROOT)
    said = tree._ol_view("observe_since", ROOT, 12345)
    assert all(type(node) is dict for node in said["nodes"])


def test_a_node_whose_values_change_type_alone_crosses_whole_again():
    tree = RadixTree(1)
    node, _ = tree.insert([5], [["r", 1]])
    assert type(view(tree, "observe", ROOT)["nodes"][1]["values"][0][1]) is int
    tree.match_prefix([5])  # this tree then hands ["r", True] out: equal, not the same
    assert view(tree, "observe", ROOT)["nodes"][1]["values"][0][1] is True


def test_a_reading_that_stops_the_tree_is_judged_at_the_reading_not_at_the_call():
    tree = RadixTree(1)
    tree._ol_along("observe", ROOT)
    node, _ = tree.insert([7], ["x"])  # the call answered
    with pytest.raises(BaseException, match="did not answer within"):
        tree._ol_view("observe", ROOT)
'''

# a tree whose reading never ends once it holds the key [7]: lru_order hangs
HANGS_READING = "\n\n_order = RadixTree.lru_order\n\n\ndef lru_order(self):\n" \
    "    if any(list(self.key(child)) == [7] for child in self.children(ROOT)):\n" \
    "        import time\n        time.sleep(60)\n    return _order(self)\n\n\n" \
    "RadixTree.lru_order = lru_order\n"

# and whose values ["r", 1] turn into ["r", True] once a key is matched: equal, yet
# not the same plain data (a tree the course must fail)
BOOLS_AFTER_A_MATCH = "\n\n_values, _match = RadixTree.values, RadixTree.match_prefix\n" \
    "_MATCHED = set()\n\n\ndef values(self, node):\n    held = _values(self, node)\n" \
    "    return [[value[0], value[1] == 1] for value in held] if id(self) in _MATCHED else held\n" \
    "\n\ndef match_prefix(self, key):\n    _MATCHED.add(id(self))\n" \
    "    return _match(self, key)\n\n\nRadixTree.values, RadixTree.match_prefix = values, " \
    "match_prefix\n"


def test_a_reading_that_crosses_the_proxy_is_the_reading_a_request_right_then_would_get(
        tmp_path):
    """Brought along with the step's last call, and as its changes since the last reading."""
    test = tmp_path / "test_along.py"
    test.write_text(ALONG, encoding="utf-8")
    suite = Suite(contract=CONTRACT, files=(test, DS07.course_views),
                  proxy=(DS07.course_views,), ours=True, env={"OL_CALL_LIMIT": "2"})
    tree = DS07.reference_source() + HANGS_READING + BOOLS_AFTER_A_MATCH
    run = RUNS.run(suite, tree, timeout=120)
    assert run.all_passed, run.output
    assert len(run.records) == 6
