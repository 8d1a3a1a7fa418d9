from tl_ds.radix import clamp, width


def test_a_value_is_limited_to_the_range_at_both_ends():
    assert clamp(-3, 0, 10) == 0
    assert clamp(4, 0, 10) == 4
    assert clamp(13, 0, 10) == 10


def test_a_range_holds_both_ends():
    assert width(3, 5) == 3
