"""Cloning an estimator whose random_state is a Generator warns: the clone would draw the original's noise."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpnb.ground.datasets import PrivacyLeakWarning
from dpnb.papers.dppro import DPPro


def test_a_cloned_generator_draws_the_same_noise_and_clone_warns():
    X = np.random.default_rng(1).uniform(size=(40, 6))
    model = DPPro(3, 1.0, 1e-6, random_state=np.random.default_rng(7))
    with pytest.warns(PrivacyLeakWarning, match="clone and the original would add the same noise") as caught:
        twin = clone(model)
    assert caught[0].filename == __file__  # points at the caller of clone
    # the hazard itself: the same projection and the same noise, so two releases differ by the data alone
    np.testing.assert_array_equal(model.fit_transform(X), twin.fit_transform(X))


def test_ints_none_and_separate_generators_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        for state in (None, 0, np.random.SeedSequence(3)):
            clone(DPPro(3, 1.0, 1e-6, random_state=state))
        DPPro(3, 1.0, 1e-6, random_state=np.random.default_rng(0)).fit(np.eye(6))  # fitting never warns


def test_scikit_learn_tools_that_clone_warn_too():
    X = np.random.default_rng(2).uniform(size=(30, 6))
    search = GridSearchCV(
        DPPro(2, 1.0, 1e-6, random_state=np.random.default_rng(0)),
        {"n_components": [2, 3]},
        scoring=lambda est, X, y=None: 0.0,
        cv=2,
    )
    with pytest.warns(PrivacyLeakWarning):
        search.fit(X)
