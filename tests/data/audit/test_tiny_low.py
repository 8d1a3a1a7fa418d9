from tl_ds.radix import clamp


def test_a_value_below_the_range_becomes_its_low_end():
    assert clamp(-3, 0, 10) == 0
    assert clamp(4, 0, 10) == 4
