import numpy as np
import pytest

from dpnb.chapters.library_samplers import (
    audit_whole_release,
    axis_names,
    moment_intervals,
    tied_top_pair,
    worked_pair,
)
from dpnb.ground.streams import stream
from dpnb.papers.library_samplers import bingham_mechanism, compare_sampler


def test_worked_pair_is_one_replaced_record():
    C, C_prime = worked_pair(5)
    assert C.shape == (5, 5) and np.allclose(np.diag(C), [51, 47, 19, 0, 0])
    diff = C_prime - C
    assert np.allclose(diff, np.diag([-1.0, 1.0, 0, 0, 0]))  # e1 e1^T replaced by e2 e2^T


def test_tied_top_pair():
    X, X_prime = tied_top_pair(4, 2)
    assert np.allclose(X.T @ X, 2 * np.eye(2))  # two tied eigenvalues
    assert np.allclose(X_prime[0], [0.0, 1.0]) and np.allclose(X[1:], X_prime[1:])


def test_axis_names():
    pts = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]])
    assert axis_names(pts) == "(0.600, 0.800, 0.000), e1, e2"


def test_moment_intervals_match_compare_sampler():
    C = np.diag([5.0, 2.0, 0.0])
    rng = stream(0, "m")
    r = compare_sampler(lambda C_: bingham_mechanism(C_, 1.0, 500, random_state=rng), C, 1.0, 500, confidence=0.99)
    ivs = moment_intervals(r, 500, 0.99)
    assert len(ivs) == 3
    assert all(iv.low == lo and iv.high == hi for iv, lo, hi in zip(ivs, r["low"], r["high"]))
    assert np.isclose(ivs[0].confidence, 1 - 0.01 / 3)
    assert all(iv.contains(ref) for iv, ref in zip(ivs, r["intended"]))


def test_audit_whole_release_flags_the_control_only():
    kw = dict(n_samples=4000, confidence=0.99)
    loose = audit_whole_release(3, "opendp", 2.0, **kw, random_state=stream(0, "a"), noise_factor=0.1)
    assert loose.violates
    fair = audit_whole_release(3, "opendp", 50.0, **kw, random_state=stream(0, "b"))
    assert not fair.violates


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: worked_pair(2), ValueError),
        (lambda: tied_top_pair(0, 3), ValueError),
        (lambda: axis_names(np.ones(3)), ValueError),
        (lambda: moment_intervals({"mean": [0.5]}, 10, 0.9), ValueError),
        (lambda: moment_intervals({"mean": [0.5], "low": [0.4], "high": [0.6]}, 1, 0.9), ValueError),
        (lambda: audit_whole_release(3, "sklearn", 1.0, n_samples=100, confidence=0.9, random_state=0), ValueError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
