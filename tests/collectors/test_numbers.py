import math

import pytest

from deskscore.collectors.numbers import finite_float


@pytest.mark.parametrize("value", [0, -7, 2**53 + 1, 2**63, 10**308, 1.5, -0.0, 1e308])
def test_an_int_or_float_a_float_holds_is_that_float(value):
    got = finite_float(value)
    assert type(got) is float and got == float(value)


@pytest.mark.parametrize(
    "value", [10**400, -(10**400), math.inf, -math.inf, math.nan, True, False, "3", None, [1]]
)
def test_a_bool_a_string_a_non_finite_float_or_an_int_beyond_a_float_is_none(value):
    assert finite_float(value) is None
