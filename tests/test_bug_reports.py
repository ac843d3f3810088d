"""The bug-report scripts in notebooks/bug_reports/ print the loss the package computes for their pair."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpnb.papers.library_pca import release_loss

SCRIPTS = Path(__file__).resolve().parents[1] / "notebooks" / "bug_reports"


# slow: each runs its script in a fresh interpreter that imports the library (about 5 CPU seconds); make check
# keeps the package's side, the whole-release losses of tests/papers/test_library_pca.py
@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "library", "pair", "epsilon"),
    [
        ("opendp_make_private_pca.py", "opendp", (51, 47, 19), 2.0),
        ("diffprivlib_pca.py", "diffprivlib", (11, 9, 1), 8.0),
    ],
)
def test_script_line_matches_the_package(script, library, pair, epsilon):
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / script)], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    lines = out.splitlines()
    assert len(lines) == 1  # one line, for a bug report
    c1, c2, c3 = pair
    assert f"pair diag({c1},{c2},{c3}) -> diag({c1 - 1},{c2 + 1},{c3})" in lines[0]
    stated = float(re.search(r"stated eps ([0-9.]+)", lines[0]).group(1))
    loss = float(re.search(r"exact loss ([0-9.]+)", lines[0]).group(1))
    C, C_prime = np.diag([c1, c2, c3]).astype(float), np.diag([c1 - 1, c2 + 1, c3]).astype(float)
    ours = release_loss(C, C_prime, epsilon, library, n_nodes=200)
    assert stated == ours["stated"] == epsilon
    assert f"{loss:.3f}" == f"{ours['total']:.3f}"
