"""Formatting for notebook output: fixed-precision Markdown tables.

Notebook outputs are compared by nbval, so numbers are formatted here at a fixed precision
instead of relying on object reprs (which change between NumPy versions).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np


def format_value(value, precision: int = 3) -> str:
    """Format one cell: floats at fixed precision (scientific when tiny or huge), else ``str``."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if not np.isfinite(v):
            return str(v)
        if v != 0 and (abs(v) < 10 ** (-precision) or abs(v) >= 1e6):
            return f"{v:.{precision}e}"
        return f"{v:.{precision}f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows, columns: Sequence[str] | None = None, precision: int = 3) -> str:
    """Render rows (a list of mappings, or a pandas DataFrame) as a Markdown table.

    Parameters
    ----------
    rows : list of dict or DataFrame
    columns : sequence of str, optional
        Column order; defaults to the keys of the first row.
    precision : int
        Digits after the decimal point for floats.
    """
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        rows = rows.to_dict(orient="records")
    rows = list(rows)
    if not rows:
        raise ValueError("markdown_table needs at least one row")
    if not all(isinstance(r, Mapping) for r in rows):
        raise ValueError("rows must be mappings (dicts) or a DataFrame")
    columns = list(columns if columns is not None else rows[0].keys())
    missing = [c for r in rows for c in columns if c not in r]
    if missing:
        raise ValueError(f"rows lack column(s) {sorted(set(missing))}")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(format_value(r[c], precision) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def show_markdown(text: str) -> None:
    """Display Markdown in a notebook (falls back to printing outside IPython)."""
    try:
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython is a dependency
        print(text)
        return
    display(Markdown(text))


def use_style(figsize=(6.4, 3.4)) -> None:
    """The collection's figure style: seaborn's white-grid theme, 100 dpi, legible legends.

    Every notebook calls it once after its imports, so figures look alike across chapters and
    stay small enough to commit.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    if len(figsize) != 2 or not all(isinstance(v, (int, float)) and v > 0 for v in figsize):
        raise ValueError(f"figsize must be (width, height) in inches, got {figsize!r}")
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.85)
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "figure.figsize": tuple(figsize),
            "legend.fontsize": 8,
            "legend.framealpha": 0.9,
            "axes.titlesize": 10,
        }
    )
