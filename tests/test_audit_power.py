"""Tests of dpnb.audit_power: the smallest violation an epsilon audit can detect."""

import numpy as np
import pytest

from dpnb.audit import audit_epsilon
from dpnb.audit_power import detectable_epsilon
from dpnb.mechanisms import laplace_mechanism
from dpnb.streams import stream


def _flag_rate(epsilon_true, n_samples, claimed, n_audits, key):
    """Share of independent audits of a Laplace shift with loss epsilon_true that flag `claimed`."""

    def mechanism(value, rng, size):
        return laplace_mechanism(value, 1.0, epsilon_true, random_state=rng, size=size)

    return np.mean(
        [
            audit_epsilon(
                mechanism,
                0.0,
                1.0,
                n_samples=n_samples,
                claimed=claimed,
                batched=True,
                random_state=stream(2024, (key, i)),
            ).violates
            for i in range(n_audits)
        ]
    )


def test_detectable_epsilon_is_above_the_claim_and_shrinks_with_the_sample_size():
    sizes = [200, 1000, 5000, 50000]
    found = [detectable_epsilon(n, 1.0) for n in sizes]
    assert all(e > 1.0 for e in found)
    assert all(a > b for a, b in zip(found, found[1:]))
    assert detectable_epsilon(3000, 1.0, power=0.5) < detectable_epsilon(3000, 1.0, power=0.9)


def test_a_violation_of_the_detectable_size_is_flagged_with_the_stated_power():
    # 60 audits at power 0.8: a binomial share below 0.6 has probability < 0.001 if the power is 0.8;
    # the selection half picks its threshold from data, so a rate far below 0.8 would show the model wrong.
    n = 2000
    eps = detectable_epsilon(n, 1.0, power=0.8)
    assert _flag_rate(eps, n, 1.0, 60, "at-detectable") >= 0.6


def test_no_violation_is_flagged_at_the_claimed_epsilon():
    # audit_epsilon's bound has confidence 0.95: among 60 honest audits, more than 10 flags has probability < 1e-3.
    assert _flag_rate(1.0, 2000, 1.0, 60, "honest") <= 10 / 60


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"n_samples": 10, "claimed": 1.0}, ValueError),
        ({"n_samples": 1000, "claimed": -1.0}, ValueError),
        ({"n_samples": 1000, "claimed": float("inf")}, ValueError),
        ({"n_samples": 1000, "claimed": "1"}, TypeError),
        ({"n_samples": 1000, "claimed": 1.0, "power": 1.0}, ValueError),
        ({"n_samples": 1000, "claimed": 1.0, "alpha": 0.0}, ValueError),
        ({"n_samples": 1000, "claimed": 1.0, "tol": 0.0}, ValueError),
    ],
)
def test_bad_input_is_refused(kwargs, error):
    with pytest.raises(error):
        detectable_epsilon(**kwargs)
