import pytest

from dpnb.reporting.curves import curve_table


def test_curve_table():
    text = curve_table({"a": [1.23456, 20.0], "b": [0.001234, 5]}, [4, 8], label="setting", x_name="k")
    assert text.splitlines() == [
        "| setting | k=4 | k=8 |",
        "|---|---|---|",
        "| a | 1.23 | 20 |",
        "| b | 0.00123 | 5 |",
    ]
    assert "| a | 1.2 | 20 |" in curve_table({"a": [1.23456, 20.0]}, [1, 2], digits=2)


@pytest.mark.parametrize(
    "curves, xs, kw, error",
    [
        ({}, [1], {}, TypeError),
        ([1, 2], [1], {}, TypeError),
        ({"a": [1.0]}, [1, 2], {}, ValueError),
        ({"a": [1.0]}, [1], {"digits": 0}, ValueError),
    ],
)
def test_bad_input(curves, xs, kw, error):
    with pytest.raises(error):
        curve_table(curves, xs, **kw)
