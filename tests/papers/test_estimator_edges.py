"""Extreme valid parameters found from outside the suite (issue 32): one ValueError naming it, no stray warning."""

import warnings

import numpy as np
import pytest

from dpnb.papers.pca_gauss import lap_pca, second_moment_l1_sensitivity


@pytest.mark.parametrize("part", ["upper", "full"])
def test_an_overflowing_second_moment_sensitivity_is_refused_without_a_runtime_warning(part):
    """A sensitivity that overflows (s1^2 at bounds 1e155; s1^2 + s2 = 2e308 at 1e154): ValueError naming bounds."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="bounds"):
            second_moment_l1_sensitivity((-1e155, 1e155), 1, n_features=1, part=part)
        with pytest.raises(ValueError, match="bounds"):
            lap_pca(np.array([[1e154], [-1e154]]), 1, 1e-10, bounds=(-1e154, 1e154), random_state=0, noise="exact")
