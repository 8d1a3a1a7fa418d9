"""The JSON wire format between the tree proxy and the tree server (one copy beside each).

JSON has no tuples: a tuple travels as ``{"tuple": [...]}`` and comes back a tuple; dict
keys travel as strings; everything else is plain JSON.
"""


def encode(value):
    if isinstance(value, tuple):
        return {"tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    return value


def decode(value):
    if isinstance(value, dict):
        if set(value) == {"tuple"}:
            return tuple(decode(item) for item in value["tuple"])
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value
