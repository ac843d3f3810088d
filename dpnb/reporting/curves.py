"""Curves as tables: one row per curve, one column per point on the x axis.

A figure's curves are also printed as a table, so that nbval compares the numbers and a reader
can quote them; values are shown to a fixed number of significant digits.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpnb.ground.validation import check_integer
from dpnb.reporting.report import markdown_table


def curve_table(curves, xs, *, label: str = "curve", x_name: str = "x", digits: int = 3) -> str:
    """A Markdown table of ``{curve label: values at xs}``, values to ``digits`` significant digits.

    Parameters
    ----------
    curves : mapping of str to sequence of float
        Each curve's values, one per entry of ``xs``.
    xs : sequence
        The x values; column ``f"{x_name}={x}"`` each.
    label : str
        Header of the first column (the curves' labels).
    x_name : str
    digits : int
        Significant digits, >= 1.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError("curves must be a non-empty mapping of label -> values")
    digits = check_integer(digits, "digits")
    xs = list(xs)
    rows = []
    for name, values in curves.items():
        values = list(values)
        if len(values) != len(xs):
            raise ValueError(f"curve {name!r} has {len(values)} values for {len(xs)} x values; give one per x")
        rows.append({label: name, **{f"{x_name}={x}": f"{v:.{digits}g}" for x, v in zip(xs, values, strict=True)}})
    return markdown_table(rows)
