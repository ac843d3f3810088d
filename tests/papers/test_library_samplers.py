"""Tests for dpnb.papers.library_samplers: exact densities, privacy loss, corrected sampler, library wrappers."""

import numpy as np
import pytest
from scipy import stats

from dpnb.numerics.bingham import vector_bingham_exact
from dpnb.numerics.stats import mean_ci
from dpnb.papers.library_samplers import (
    RULES,
    acceptance_rate,
    acg_envelope,
    acg_proposals,
    acg_rejection_sample,
    bingham_mechanism,
    bingham_parameter,
    compare_sampler,
    diffprivlib_sampler,
    library_rate_bounds,
    log_acceptance,
    log_density,
    log_density_query,
    opendp_sampler,
    privacy_loss,
    second_moments,
    sphere_quadrature,
)
from dpnb.privacy.audit import ReplaceRowL2Ball, search_sensitivity

C = np.diag([51.0, 47.0, 19.0])
C_PRIME = np.diag([50.0, 48.0, 19.0])  # replace one record e1 by e2


def test_bingham_parameter_is_psd_with_zero_minimum_and_scales():
    A = bingham_parameter(C, 1.0)
    np.testing.assert_allclose(A, np.diag([0.0, 1.0, 8.0]))
    np.testing.assert_allclose(bingham_parameter(C, 2.0, sensitivity=2.0), A)
    with pytest.raises(ValueError):
        bingham_parameter(np.array([[1.0, 2.0], [0.0, 1.0]]), 1.0)  # not symmetric
    with pytest.raises(ValueError):
        bingham_parameter(np.ones((1, 1)), 1.0)
    with pytest.raises(ValueError):
        bingham_parameter(C, np.inf)
    with pytest.raises(TypeError):
        bingham_parameter(C, "1")
    with pytest.raises(ValueError):
        bingham_parameter(C, 1.0, sensitivity=0.0)


def test_acg_envelope_root_and_dominates():
    A = bingham_parameter(C, 1.0)
    b, omega, _ = acg_envelope(A)
    assert np.isclose(np.sum(1 / (b + 2 * np.diag(A))), 1.0)
    np.testing.assert_allclose(omega, np.eye(3) + 2 * A / b)
    nodes, _ = sphere_quadrature(3, 40)
    assert np.all(log_acceptance(nodes, A, "kgm") <= 1e-12)  # KGM's envelope inequality
    assert np.all(log_acceptance(nodes, A, "library") <= 1e-12)
    assert acg_envelope(np.zeros((3, 3)))[0] == 3.0  # uniform target: b = q, Omega = I
    with pytest.raises(ValueError):
        acg_envelope(np.eye(3))  # smallest eigenvalue not 0
    with pytest.raises(ValueError):
        acg_envelope(np.ones((2, 3)))


def test_log_acceptance_rules_differ_by_the_envelope_factor():
    A = bingham_parameter(C, 1.0)
    _, omega, _ = acg_envelope(A)
    U = acg_proposals(A, 50, random_state=0)
    diff = log_acceptance(U, A, "kgm") - log_acceptance(U, A, "library")
    np.testing.assert_allclose(diff, 3 * np.log(np.einsum("pi,ij,pj->p", U, omega, U)))
    with pytest.raises(ValueError):
        log_acceptance(U, A, "other")
    with pytest.raises(TypeError):
        log_acceptance(U, A, 1)
    with pytest.raises(ValueError):
        log_acceptance(2 * U, A, "kgm")  # not unit vectors
    with pytest.raises(ValueError):
        log_acceptance(U[:, :2], A, "kgm")


def test_acg_proposals_unit_and_seeded():
    A = bingham_parameter(C, 1.0)
    U = acg_proposals(A, 100, random_state=3)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0)
    np.testing.assert_array_equal(U, acg_proposals(A, 100, random_state=3))
    with pytest.raises(ValueError):
        acg_proposals(A, 0)
    with pytest.raises(TypeError):
        acg_proposals(A, 10, random_state="x")


def test_quadrature_weights_and_moments():
    for d in (2, 3):
        points, weights = sphere_quadrature(d, 50)
        assert np.isclose(weights.sum(), 1.0)
        np.testing.assert_allclose(np.einsum("p,pi,pj->ij", weights, points, points), np.eye(d) / d, atol=1e-12)
    with pytest.raises(ValueError):
        sphere_quadrature(4)
    with pytest.raises(ValueError):
        sphere_quadrature(3, 4)
    with pytest.raises(TypeError):
        sphere_quadrature(3.0)


def test_log_density_normalised_and_second_moments_match_exact_sampler_reference():
    for rule in RULES:
        nodes, weights = sphere_quadrature(3, 120)
        assert np.isclose(weights @ np.exp(log_density(nodes, C, 1.0, rule=rule)), 1.0)
        assert np.isclose(np.trace(second_moments(C, 1.0, rule=rule)), 1.0)
    from dpnb.numerics.bingham import sphere_second_moments

    np.testing.assert_allclose(second_moments(C, 1.0), sphere_second_moments(C / 4), atol=1e-10)
    with pytest.raises(ValueError):
        second_moments(np.eye(4), 1.0)  # no quadrature for d = 4
    with pytest.raises(ValueError):
        log_density(np.ones((1, 3)), C, 1.0)


def test_privacy_loss_intended_within_half_epsilon_library_above_epsilon():
    loss_kgm, _ = privacy_loss(C, C_PRIME, 1.0, rule="kgm")
    loss_lib, at_lib = privacy_loss(C, C_PRIME, 1.0, rule="library")
    assert loss_kgm <= 0.5
    assert 1.16 < loss_lib < 1.17
    np.testing.assert_allclose(np.abs(at_lib), [0.0, 1.0, 0.0])
    # the same loss at e2 by hand
    e2 = np.array([[0.0, 1.0, 0.0]])
    by_hand = abs(log_density(e2, C, 1.0, rule="library") - log_density(e2, C_PRIME, 1.0, rule="library"))[0]
    assert np.isclose(by_hand, loss_lib)
    with pytest.raises(ValueError):
        privacy_loss(C, np.eye(2), 1.0)


def test_search_with_log_density_query_finds_library_violation():
    query = log_density_query(1.0, rule="library", n_nodes=30)
    X = np.zeros((117, 3))
    X[:51, 0], X[51:98, 1], X[98:, 2] = 1.0, 1.0, 1.0
    Xp = X.copy()
    Xp[0] = [0.0, 1.0, 0.0]
    found = search_sensitivity(
        query,
        ReplaceRowL2Ball(1.0),
        117,
        3,
        norm="inf",
        claimed=1.0,
        n_starts=1,
        n_steps=2,
        starts=[(X, Xp)],
        random_state=0,
    )
    assert found.exceeds
    with pytest.raises(ValueError):
        log_density_query(1.0, rule="wrong")
    with pytest.raises(ValueError):
        log_density_query(1.0, d=5)


def test_rejection_sampler_kgm_matches_exact_sampler_library_matches_implied_density():
    A = bingham_parameter(C, 1.0)
    kgm, n_kgm = acg_rejection_sample(A, 4000, rule="kgm", random_state=1)
    exact = vector_bingham_exact(C / 4, 4000, random_state=2)
    assert stats.ks_2samp(kgm[:, 0] ** 2, exact[:, 0] ** 2).pvalue > 1e-3
    assert n_kgm >= 4000
    lib, n_lib = acg_rejection_sample(A, 4000, rule="library", random_state=3)
    _, lo, hi = mean_ci(lib[:, 0] ** 2, 0.999)
    assert lo <= second_moments(C, 1.0, rule="library")[0, 0] <= hi
    assert n_lib > n_kgm  # the inverted rule accepts less often
    with pytest.raises(ValueError):
        acg_rejection_sample(A, 0)
    with pytest.raises(ValueError):
        acg_rejection_sample(A, 2, rule="x")


def test_acceptance_rate_quadrature_and_monte_carlo_agree():
    for rule in RULES:
        exact = acceptance_rate(C, 1.0, rule=rule)
        mc = acceptance_rate(C, 1.0, rule=rule, n_proposals=40000, random_state=0)
        assert abs(exact - mc) < 0.02
    assert acceptance_rate(C, 1.0, rule="library") < acceptance_rate(C, 1.0, rule="kgm")
    with pytest.raises(ValueError):
        acceptance_rate(np.eye(4) + np.diag([1.0, 0, 0, 0]), 1.0)  # d > 3 needs n_proposals
    assert 0 < acceptance_rate(np.diag([2.0, 1, 1, 1]), 1.0, n_proposals=100, random_state=0) <= 1


def test_library_rate_bounds_bracket_the_exact_and_monte_carlo_rates():
    # d = 3: the quadrature rate lies between the bounds, at a mild and a sharp epsilon
    for C_, eps in ((C, 1.0), (C, 8.0), (np.diag([3.0, 2.0, 0.0]), 0.3)):
        low, high = library_rate_bounds(bingham_parameter(C_, eps))
        assert low <= np.log(acceptance_rate(C_, eps, rule="library")) <= high
    # d = 20: a Monte Carlo rate well above 1e-3 (small relative error) lies between them too
    C20 = np.diag(np.linspace(4.0, 0.4, 20))
    low, high = library_rate_bounds(bingham_parameter(C20, 1.0))
    mc = acceptance_rate(C20, 1.0, rule="library", n_proposals=20_000, random_state=3)
    assert low <= np.log(mc) <= high
    assert high - low < 0.5  # tight when the rate is not tiny
    # A = 0: every proposal is accepted under either bound
    np.testing.assert_allclose(library_rate_bounds(np.zeros((4, 4))), (0.0, 0.0), atol=1e-6)  # trapezoid error
    with pytest.raises(ValueError, match="PSD"):
        library_rate_bounds(np.diag([1.0, 2.0]))


def test_bingham_mechanism_distribution_inf_and_determinism():
    draws = bingham_mechanism(C, 1.0, 3000, random_state=4)
    assert draws.shape == (3000, 3)
    np.testing.assert_array_equal(draws, bingham_mechanism(C, 1.0, 3000, random_state=4))
    _, lo, hi = mean_ci(draws[:, 0] ** 2, 0.999)
    assert lo <= second_moments(C, 1.0)[0, 0] <= hi
    top = bingham_mechanism(C, np.inf, 2)
    np.testing.assert_allclose(np.abs(top), [[1.0, 0.0, 0.0]] * 2)
    with pytest.raises(ValueError):
        bingham_mechanism(C, 0.0)
    with pytest.raises(TypeError):
        bingham_mechanism(C, None)
    with pytest.raises(TypeError):
        bingham_mechanism(C, 1.0, 2.5)


def test_compare_sampler_accepts_batches_and_flags():
    rng = np.random.default_rng(7)
    result = compare_sampler(lambda M: bingham_mechanism(M, 1.0, 500, random_state=rng), C, 1.0, 2000)
    assert result["matches_intended"] and not result["matches_library"]
    assert np.all(result["low"] <= result["high"])
    with pytest.raises(TypeError):
        compare_sampler("not callable", C, 1.0, 10)
    with pytest.raises(ValueError):
        compare_sampler(lambda M: np.ones(2), C, 1.0, 10)
    with pytest.raises(ValueError):
        compare_sampler(lambda M: np.ones(3), C, 1.0, 10)  # not unit vectors
    with pytest.raises(ValueError):
        compare_sampler(lambda M: np.eye(3)[0], C, 1.0, 1)
    with pytest.raises(TypeError):
        compare_sampler(lambda M: np.eye(3)[0], C, 1.0, 10, confidence="high")


def test_diffprivlib_wrapper_seeded_and_on_library_density():
    pytest.importorskip("diffprivlib")
    sampler = diffprivlib_sampler(1.0, random_state=0)
    u = sampler(C)
    assert u.shape == (3,) and np.isclose(np.linalg.norm(u), 1.0)
    np.testing.assert_array_equal(u, diffprivlib_sampler(1.0, random_state=0)(C))
    result = compare_sampler(diffprivlib_sampler(1.0, random_state=1), C, 1.0, 300)
    assert result["matches_library"] and not result["matches_intended"]
    with pytest.raises(ValueError):
        diffprivlib_sampler(-1.0)
    with pytest.raises(TypeError):
        diffprivlib_sampler(1.0, sensitivity="1")


def test_opendp_wrapper_seeded_and_on_library_density():
    pytest.importorskip("opendp")
    pytest.importorskip("randomgen")
    u = opendp_sampler(3, 1.0, random_state=0)(C)
    assert u.shape == (3,) and np.isclose(np.linalg.norm(u), 1.0)
    np.testing.assert_array_equal(u, opendp_sampler(3, 1.0, random_state=0)(C))
    result = compare_sampler(opendp_sampler(3, 1.0, random_state=1), C, 1.0, 60)
    assert not result["matches_intended"]
    with pytest.raises(ValueError):
        opendp_sampler(1, 1.0)
    with pytest.raises(TypeError):
        opendp_sampler(3, "1")


@pytest.mark.parametrize("rule", ["kgm", "library"])
@pytest.mark.parametrize("d", [2, 3])
def test_log_density_query_batched_equals_log_density(rule, d):
    query = log_density_query(1.3, d=d, rule=rule, n_nodes=30)
    rng = np.random.default_rng(20)
    X = rng.standard_normal((3, 9, d)) / np.sqrt(2 * d)
    nodes, _ = sphere_quadrature(d, 30)
    stacked = query(X)
    assert stacked.shape == (3, nodes.shape[0])
    for j in range(3):
        expected = log_density(nodes, X[j].T @ X[j], 1.3, rule=rule, n_nodes=30)
        np.testing.assert_allclose(query(X[j]), expected, atol=1e-12)
        np.testing.assert_allclose(stacked[j], expected, atol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        query(np.ones((4, d + 1)))


def test_bingham_parameter_beyond_2_to_32_is_refused_naming_epsilon():
    """A concentration past 2^32 (or overflowing): refused naming epsilon, not non-unit points from the sampler."""
    C = np.diag([1.0, 0.25])
    for epsilon, sensitivity in ((1.7e308, 5e-324), (1e12, 1.0), (1.79e308, 33554432.0)):
        with pytest.raises(ValueError, match="epsilon=.* is too large for sensitivity"):
            bingham_mechanism(C, epsilon, sensitivity=sensitivity, random_state=0)
    released = bingham_mechanism(C, 1e9, random_state=0)
    assert np.all(np.isfinite(released)) and np.allclose(np.linalg.norm(released, axis=1), 1.0)
