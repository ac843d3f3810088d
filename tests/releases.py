"""What a fitted dpnb estimator publishes, as one array: shared by the estimator contract and the property suite."""

import numpy as np

RELEASE_ATTRIBUTES = (
    "embedding_",
    "scores_",
    "components_",
    "covariance_",
    "class_covariances_",
    "second_moment_",
    "marginals_",
)


def release_array(est) -> np.ndarray:
    """The first release attribute ``est`` has and set (not None), flattened (a dict of arrays concatenated).

    ``PCAGauss`` with a data-derived basis sets ``components_ = None`` (the basis is not released).
    """
    for attr in RELEASE_ATTRIBUTES:
        value = getattr(est, attr, None)
        if value is not None:
            if isinstance(value, dict):
                return np.concatenate([np.ravel(v) for v in value.values()])
            return np.asarray(value, dtype=float)
    raise AssertionError(f"{type(est).__name__} exposes none of the known release attributes")
