"""The wire between a proxy and its tree (harness/run/payload/tree_wire.py): plain data as
one line of JSON each way, and nothing else read as a message."""

from __future__ import annotations

import importlib.util

import pytest

from harness.run.layout import WIRE


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
