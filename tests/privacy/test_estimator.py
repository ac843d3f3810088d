import math

import numpy as np
import pytest

from dpnb.privacy.estimator import PrivateEstimator, budget_total, split_budget


def test_split_budget_adds_up_exactly():
    parts = split_budget(0.7, 1e-5, {"mean": 0.3, "covariance": 0.7})
    assert list(parts) == ["mean", "covariance"]
    assert parts["mean"] == pytest.approx((0.21, 3e-6))
    assert budget_total(parts) == (0.7, 1e-5)
    thirds = split_budget(1.0, 1e-6, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    assert budget_total(thirds) == (1.0, 1e-6)


def test_split_budget_pure_epsilon_parts_and_infinity():
    parts = split_budget(1.0, 1e-5, {"counts": (0.1, 0.0), "moments": (0.9, 1.0)})
    assert parts["counts"] == (0.1, 0.0) and parts["moments"][1] == 1e-5
    assert budget_total(parts) == pytest.approx((1.0, 1e-5))
    inf = split_budget(np.inf, 0.0, {"a": 0.5, "b": 0.5})
    assert all(math.isinf(e) for e, _ in inf.values())


@pytest.mark.parametrize(
    "fractions, error",
    [
        ({}, TypeError),
        ([0.5], TypeError),
        ({"a": "0.5"}, TypeError),
        ({"a": 1.5}, ValueError),
        ({"a": 0.5, "b": 0.4}, ValueError),
        ({"a": (0.5, 0.2), "b": (0.5, 0.2)}, ValueError),
    ],
)
def test_split_budget_rejects(fractions, error):
    with pytest.raises(error):
        split_budget(1.0, 1e-5, fractions)


class Toy(PrivateEstimator):
    def __init__(self, epsilon=1.0, delta=1e-5, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def fit(self, X, y=None):
        self.privacy_ = self._check_privacy()
        self.draw_ = self._make_rng().random()
        return self


def test_private_estimator_checks_in_fit_and_reseeds_per_fit():
    est = Toy(random_state=4)
    assert est.fit(None).draw_ == est.fit(None).draw_
    assert est.privacy_ == (1.0, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        Toy(epsilon=-1).fit(None)
    with pytest.raises(TypeError, match="delta"):
        Toy(delta="x").fit(None)
    with pytest.raises(TypeError, match="random_state"):
        Toy(random_state="x").fit(None)
    assert Toy(epsilon=np.inf).fit(None).privacy_[0] == np.inf
    assert "Toy(epsilon=2)" == repr(Toy(epsilon=2))
