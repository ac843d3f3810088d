"""Tests of dpnb.privacy.audit_power: the smallest violation an epsilon audit can detect, and the tail audit."""

import numpy as np
import pytest

from dpnb.ground.streams import stream
from dpnb.privacy.audit import audit_epsilon
from dpnb.privacy.audit_power import audit_epsilon_tails, detectable_epsilon
from dpnb.privacy.mechanisms import gaussian_epsilon, laplace_mechanism


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


# slow: 60 audits; make check flags a violation in test_audit.py's negative control and the half-noise control below
@pytest.mark.slow
def test_a_violation_of_the_detectable_size_is_flagged_with_the_stated_power():
    # 60 audits at power 0.8: a binomial share below 0.6 has probability < 0.001 if the power is 0.8;
    # the selection half picks its threshold from data, so a rate far below 0.8 would show the model wrong.
    n = 2000
    eps = detectable_epsilon(n, 1.0, power=0.8)
    assert _flag_rate(eps, n, 1.0, 60, "at-detectable") >= 0.6


# slow: 60 audits; make check keeps an honest audit unflagged in test_audit_epsilon_consistent_for_correct_laplace
@pytest.mark.slow
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
def test_detectable_epsilon_refuses_bad_input(kwargs, error):
    with pytest.raises(error):
        detectable_epsilon(**kwargs)


DELTA = 1e-5


def gaussian_scores(shift, n, seed):
    """Runs of the one-dimensional Gaussian mechanism (sigma 1) on a pair whose outputs differ by ``shift``."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n) + shift


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"scores": np.zeros(100), "scores_prime": np.zeros(99)}, ValueError),
        ({"scores": np.zeros(50), "scores_prime": np.zeros(50)}, ValueError),  # fewer than 4 * min_count
        ({"scores": np.zeros((100, 2)), "scores_prime": np.zeros((100, 2))}, ValueError),
        ({"scores": np.full(100, np.nan), "scores_prime": np.zeros(100)}, ValueError),
        ({"scores": np.zeros(100), "scores_prime": np.zeros(100), "alpha": 1.5}, ValueError),
        ({"scores": np.zeros(100), "scores_prime": np.zeros(100), "delta": 2.0}, ValueError),
        ({"scores": np.zeros(100), "scores_prime": np.zeros(100), "min_count": 0}, ValueError),
        ({"scores": np.zeros(100), "scores_prime": np.zeros(100), "n_thresholds": 2.5}, TypeError),
    ],
)
def test_tail_audit_refuses_bad_input(kwargs, error):
    with pytest.raises(error):
        audit_epsilon_tails(**kwargs)


def test_identical_laws_give_no_violation():
    # both datasets give the same law: the true epsilon is 0; the 95% bound exceeds 0.1 with probability < 5%
    rng = np.random.default_rng(11)
    res = audit_epsilon_tails(rng.standard_normal(100_000), rng.standard_normal(100_000), claimed=0.1)
    assert not res.violates


def test_bound_stays_below_the_exact_epsilon_of_a_gaussian_pair():
    # Gaussian mechanism, shift 0.5: exact epsilon at delta from the Balle-Wang curve; a valid 95% lower
    # bound lies below it (seeded: one draw of an event of probability >= 95%)
    shift = 0.5
    exact = gaussian_epsilon(DELTA, 1.0, shift)
    res = audit_epsilon_tails(*gaussian_scores(shift, 400_000, 5), delta=DELTA, claimed=exact)
    assert not res.violates
    assert res.epsilon_lower > 0.5 * exact  # and it is not trivially small


def test_half_noise_gaussian_control_is_flagged_at_a_million_runs():
    # Theorem 2-style calibration at eps = 1, delta = 1e-5 (shift/sigma = 0.206); half the noise doubles the
    # shift and gives exact epsilon 1.6: the tail audit flags it at 10^6 runs, the 1%-99% quantile events cannot
    mu = 1 / np.sqrt(2 * (np.log(1 / (2 * DELTA)) + 1))
    assert gaussian_epsilon(DELTA, 0.5 / mu, 1.0) > 1.5
    res = audit_epsilon_tails(*gaussian_scores(2 * mu, 1_000_000, 7), delta=DELTA, claimed=1.0)
    assert res.violates
    calibrated = audit_epsilon_tails(*gaussian_scores(mu, 1_000_000, 8), delta=DELTA, claimed=1.0)
    assert not calibrated.violates


def test_pure_laplace_pair_bound_approaches_its_epsilon():
    # Laplace mechanism with scale 1 on a pair at distance 1: epsilon = 1 exactly, attained on a tail event
    rng = np.random.default_rng(3)
    n = 400_000
    res = audit_epsilon_tails(rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n), claimed=1.0)
    assert not res.violates
    assert res.epsilon_lower > 0.8
    assert res.n_samples == n
