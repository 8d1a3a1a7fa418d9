"""The wire format between a tree proxy and its tree: JSON lines of plain data only.

Copied beside both ends of the channel; it imports nothing of the harness. No pickle and
no eval: what crosses is data, so a request can never run code in the tree's process.

A value is plain data: None, bool, int, float, str, and bytes, tuples, lists and dicts of
plain data. JSON itself carries None, bool, int, float, str and lists; the others travel
tagged, as one-key objects: ``{"t": [...]}`` a tuple, ``{"b": "hex"}`` bytes, ``{"s":
{...}}`` a dict whose keys are all str, ``{"d": [[key, value], ...]}`` any other dict (so
keys keep their types). Anything else is refused with a TypeError that names the rule.

Both ends also read their channel the same way here (``spin_recv``).
"""

import json as _json
import os as _os
import socket as _socket
import time as _time
from json import decoder as _decoder
from json import encoder as _encoder
from json import scanner as _scanner

DEPTH = 64  # nesting a value may have
SCALARS = frozenset({type(None), bool, int, float, str})  # what JSON carries as it is
STR = frozenset({str})

RULE = ("a value that crosses to a graded tree must be plain data: None, bool, int, float, "
        "str, bytes, or tuples, lists and dicts of them")


def encode(value, depth: int = 0):
    """``value`` as JSON-ready data; TypeError when it is not plain data."""
    if depth > DEPTH:
        raise TypeError(f"{RULE} (nested at most {DEPTH} deep)")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        if SCALARS.issuperset(map(type, value)):  # the usual case, checked from C
            return value
        return [item if type(item) in SCALARS else encode(item, depth + 1) for item in value]
    if kind is tuple:
        if SCALARS.issuperset(map(type, value)):
            return {"t": list(value)}
        return {"t": [encode(item, depth + 1) for item in value]}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is dict:
        if STR.issuperset(map(type, value)):  # the usual keys: JSON's own
            return {"s": {key: item if type(item) in SCALARS else encode(item, depth + 1)
                          for key, item in value.items()}}
        return {"d": [[encode(key, depth + 1), encode(item, depth + 1)]
                      for key, item in value.items()]}
    raise TypeError(f"{RULE}; got {kind.__name__}")


def decode(value, depth: int = 0):
    """The plain data ``encode`` made; ValueError on anything else."""
    if depth > DEPTH:
        raise ValueError("the value is nested too deep")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        if SCALARS.issuperset(map(type, value)):  # a fresh list from json.loads
            return value
        return [item if type(item) in SCALARS else decode(item, depth + 1) for item in value]
    if kind is dict and len(value) == 1:
        (tag, inner), = value.items()
        if tag == "t" and type(inner) is list:
            if SCALARS.issuperset(map(type, inner)):
                return tuple(inner)
            return tuple(decode(item, depth + 1) for item in inner)
        if tag == "s" and type(inner) is dict:
            return {key: item if type(item) in SCALARS else decode(item, depth + 1)
                    for key, item in inner.items()}
        if tag == "b" and type(inner) is str:
            return bytes.fromhex(inner)
        if tag == "d" and type(inner) is list and all(
                type(pair) is list and len(pair) == 2 for pair in inner):
            return {_key(decode(key, depth + 1)): decode(item, depth + 1) for key, item in inner}
    raise ValueError("the value is not in the wire format")


def _key(key):
    try:
        hash(key)
    except TypeError:
        raise ValueError("a dict key must be hashable plain data") from None
    return key


def _refuse(value):
    raise TypeError(f"{RULE}; got {type(value).__name__}")


def _line_writer():
    """JSON text of a message as one ASCII line. json.dumps builds a new C encoder on every
    call, which costs more than encoding a call's message; this builds it once."""
    make = _encoder.c_make_encoder
    if make is None:  # a Python without the C accelerator
        return lambda message: (_json.dumps(message, separators=(",", ":")) + "\n").encode()
    encoder = make({}, _refuse, _encoder.encode_basestring_ascii, None, ":", ",", False, False,
                   True)
    return lambda message: ("".join(encoder(message, 0)) + "\n").encode("ascii")


def _line_reader():
    """The message of one line of JSON text; ValueError when it is anything else. The
    scanner is json.loads's own, without its search for a byte encoding and whitespace."""
    scan = _scanner.make_scanner(_decoder.JSONDecoder())

    def read(line: bytes):
        text = line.decode()
        try:
            message, end = scan(text, 0)
        except StopIteration:
            raise ValueError("not JSON") from None
        if end != len(text):
            raise ValueError("more than one JSON value on the line")
        return message

    return read


dumps = _line_writer()  # message -> its line, newline included
loads = _line_reader()  # a line without its newline -> the message


def spin_recv(channel: _socket.socket, seconds: float) -> bytes | None:
    """What ``channel`` holds, polled for up to ``seconds``; None when nothing came. The
    other side usually answers within microseconds, and a sleep and wake-up cost far more
    than the poll; each miss yields the core, which the other side may be waiting for."""
    end = _time.perf_counter() + seconds
    while True:
        try:
            return channel.recv(1 << 20, _socket.MSG_DONTWAIT)
        except BlockingIOError:
            if _time.perf_counter() > end:
                return None
            _os.sched_yield()
