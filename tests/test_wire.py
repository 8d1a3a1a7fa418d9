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


def test_a_reading_that_stops_the_tree_is_judged_at_the_reading_not_at_the_call():
    tree = RadixTree(1)
    tree._ol_along("observe", ROOT)
    node, _ = tree.insert([7], ["x"])  # the call answered
    with pytest.raises(BaseException, match="did not answer within"):
        tree._ol_view("observe", ROOT)
'''

# a tree whose reading after a key of 7 never ends: lru_order hangs once it is stored
HANGS_READING = "\n\n_order = RadixTree.lru_order\n\n\ndef lru_order(self):\n" \
    "    if self.match_prefix([7])[0]:\n        import time\n        time.sleep(60)\n" \
    "    return _order(self)\n\n\nRadixTree.lru_order = lru_order\n"


def test_a_reading_brought_along_with_a_call_is_the_reading_a_request_then_would_get(tmp_path):
    test = tmp_path / "test_along.py"
    test.write_text(ALONG, encoding="utf-8")
    suite = Suite(contract=CONTRACT, files=(test,), proxy=(DS07.course_views,), ours=True,
                  env={"OL_CALL_LIMIT": "2"})
    run = RUNS.run(suite, DS07.reference_source() + HANGS_READING, timeout=120)
    assert run.all_passed, run.output
