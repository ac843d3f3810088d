"""Exact noise (``noise="exact"``) against numpy's floating-point samplers, per draw.

``python -m benchmarks`` times each case and then prints :func:`summarize`: the cost of one exact
draw as a multiple of one numpy draw, measured in that run.
"""

import numpy as np

from dpnb.privacy import mechanisms

N_DRAWS = 100_000
_zeros = np.zeros(N_DRAWS)
_C = np.eye(300)  # 45,150 upper-triangle entries

CASES = {
    "Laplace, numpy, 100k draws": lambda: mechanisms.laplace_mechanism(_zeros, 1.0, 1.0, random_state=0),
    "Laplace, exact, 100k draws": lambda: mechanisms.laplace_mechanism(_zeros, 1.0, 1.0, random_state=0, noise="exact"),
    "Gaussian, numpy, 100k draws": lambda: mechanisms.gaussian_mechanism(_zeros, 1.0, 1.0, 1e-5, random_state=0),
    "Gaussian, exact, 100k draws": lambda: mechanisms.gaussian_mechanism(
        _zeros, 1.0, 1.0, 1e-5, random_state=0, noise="exact"
    ),
    "symmetric Laplace d=300, numpy": lambda: mechanisms.symmetric_laplace_mechanism(_C, 1.0, 1.0, random_state=0),
    "symmetric Laplace d=300, exact": lambda: mechanisms.symmetric_laplace_mechanism(
        _C, 1.0, 1.0, random_state=0, noise="exact"
    ),
}


def summarize(seconds: dict) -> list[str]:
    """Exact / numpy time ratios from one run's best times (keys: this module's case names)."""
    lines = []
    for kind in ("Laplace, {}, 100k draws", "Gaussian, {}, 100k draws", "symmetric Laplace d=300, {}"):
        exact, fast = seconds[kind.format("exact")], seconds[kind.format("numpy")]
        per_draw = f"{exact / N_DRAWS * 1e6:.1f} us per exact draw, " if "100k" in kind else ""
        ratio = f"{kind.format('exact / numpy')}: {exact / fast:.0f}x"
        lines.append(f"{ratio} ({per_draw}{exact:.3f} s against {fast:.4f} s)")
    return lines
