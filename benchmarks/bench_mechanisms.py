"""Shared mechanisms and audits at sizes the notebooks use."""

import numpy as np

from dpnb.privacy import audit, mechanisms

_rng = np.random.default_rng(0)
_C = np.cov(_rng.normal(size=(2000, 500)), rowvar=False)

CASES = {
    "symmetric Laplace, d=500": lambda: mechanisms.symmetric_laplace_mechanism(_C, 1.0, 1.0, random_state=0),
    "symmetric Gaussian (analytic), d=500": lambda: mechanisms.symmetric_gaussian_mechanism(
        _C, 1.0, 1.0, 1e-5, random_state=0
    ),
    "analytic sigma calibration": lambda: mechanisms.gaussian_sigma_analytic(1.0, 0.5, 1e-6),
    "sensitivity search, covariance n=20 d=10, 20x200 steps": lambda: audit.search_sensitivity(
        lambda X: X.T @ X / 20, audit.ReplaceRowL2Ball(1.0), 20, 10, random_state=0
    ),
    "epsilon audit, Laplace, 10k runs": lambda: audit.audit_epsilon(
        lambda D, r: mechanisms.laplace_mechanism(D, 1.0, 1.0, random_state=r),
        np.zeros(1),
        np.ones(1),
        n_samples=10_000,
        random_state=0,
    ),
}
