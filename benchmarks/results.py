"""Where ``make benchmark`` writes its measurements: ``benchmarks/results/<name>.json``, one file per benchmark.

Each file holds the machine (CPU model, BLAS kernels, threads), the UTC date, the Python and NumPy versions and
the rows the benchmark printed, so a timing quoted anywhere can be traced to the machine and day it was measured
on. Docstrings state passes and complexity, never these numbers. The folder is not committed (results are per
machine).
"""

from __future__ import annotations

import datetime
import json
import platform
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).parent / "results"


def write(name: str, rows, *, machine: str, **settings) -> Path:
    """Write ``rows`` (a list of dicts) with ``machine``, the date and ``settings`` to ``FOLDER / f"{name}.json"``."""
    FOLDER.mkdir(exist_ok=True)
    path = FOLDER / f"{name}.json"
    record = {
        "benchmark": name,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "settings": settings,
        "rows": rows,
    }
    path.write_text(json.dumps(record, indent=1, default=_plain) + "\n")
    print(f"written to {path}")
    return path


def _plain(value):
    """NumPy scalars and arrays as JSON numbers and lists."""
    return value.tolist() if hasattr(value, "tolist") else str(value)
