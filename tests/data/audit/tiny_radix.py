"""A purpose-made module for the tests of `ol audit`: small enough to mutate in seconds."""


def clamp(value, low, high):
    """``value`` limited to ``low``..``high``."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def width(low, high):
    """How many values ``low``..``high`` holds."""
    return high - low + 1
