import numpy as np
import pandas as pd
import pytest

from dpnb.reporting.report import format_value, markdown_table, show_markdown


@pytest.mark.parametrize(
    "value,expected",
    [
        (1.23456, "1.235"),
        (np.float32(0.5), "0.500"),
        (3, "3"),
        (np.int64(7), "7"),
        (True, "True"),
        (1e-7, "1.000e-07"),
        (2.5e8, "2.500e+08"),
        (0.0, "0.000"),
        (float("nan"), "nan"),
        ("a|b", "a\\|b"),
    ],
)
def test_format_value(value, expected):
    assert format_value(value) == expected


def test_markdown_table_from_dicts_and_frame():
    rows = [{"k": 1, "err": 0.12345}, {"k": 2, "err": 0.5}]
    md = markdown_table(rows, precision=2)
    assert md.splitlines() == ["| k | err |", "|---|---|", "| 1 | 0.12 |", "| 2 | 0.50 |"]
    assert markdown_table(pd.DataFrame(rows), precision=2) == md
    assert markdown_table(rows, columns=["err"], precision=1).splitlines()[2] == "| 0.1 |"


def test_markdown_table_bad_input():
    with pytest.raises(ValueError, match="at least one row"):
        markdown_table([])
    with pytest.raises(ValueError, match="lack column"):
        markdown_table([{"a": 1}], columns=["b"])
    with pytest.raises(ValueError, match="mappings"):
        markdown_table([1, 2])


def test_show_markdown_outside_notebook(capsys):
    show_markdown("**x**")  # IPython's display prints the repr outside a kernel
    assert capsys.readouterr().out.strip() != ""


def test_use_style_sets_a_legible_theme():
    import matplotlib.pyplot as plt
    import pytest

    from dpnb.reporting.report import use_style

    use_style((5, 3))
    assert plt.rcParams["figure.dpi"] == 100 and tuple(plt.rcParams["figure.figsize"]) == (5.0, 3.0)
    with pytest.raises(ValueError, match="figsize"):
        use_style((5,))
