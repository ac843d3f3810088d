"""Tests for dpnb.papers.library_pca: the exact privacy loss of the libraries' whole PCA releases."""

import numpy as np
import pytest
from diffprivlib.mechanisms import LaplaceBoundedDomain
from diffprivlib.models.utils import covariance_eig
from scipy import stats

from dpnb.ground.streams import stream
from dpnb.papers.library_pca import (
    LIBRARIES,
    bounded_laplace_scale,
    centred_release_loss,
    eigenvalue_loss,
    release_budgets,
    release_log_ratio,
    release_loss,
    release_loss_query,
    sample_release,
    vector_loss,
)
from dpnb.papers.library_samplers import log_density

C_PAIR, C_PAIR_PRIME = np.diag([51.0, 47.0, 19.0]), np.diag([50.0, 48.0, 19.0])


def _worked_rows():
    X = np.eye(3)[np.repeat([0, 1, 2], [51, 47, 19])]
    X_prime = X.copy()
    X_prime[0] = [0.0, 1.0, 0.0]
    return X, X_prime


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 4.0])
def test_bounded_laplace_scale_is_diffprivlibs(epsilon):
    # diffprivlib bisects to the last representable interval; our root is exact to ~1e-15
    ours = bounded_laplace_scale(epsilon, 2.0)
    theirs = LaplaceBoundedDomain(epsilon=epsilon, lower=0, upper=float("inf"), sensitivity=2)._find_scale()
    assert ours == pytest.approx(theirs, rel=1e-10)
    assert ours > 2.0 / epsilon  # the truncation costs budget


def test_diffprivlib_eigenvalue_noise_has_the_modelled_law():
    # covariance_eig(eigvals_only=True) spends all of epsilon on the eigenvalues: each is the bounded Laplace
    # law on [0, inf) with our scale. Eigenvalue 0 of a rank-2 C: |noise| is Exponential(scale) there.
    X = np.eye(3)[np.repeat([0, 1], [3, 2])]
    rng = stream(7, "covariance-eig-law")
    draws = np.array(
        [
            covariance_eig(X, epsilon=1.0, norm=1.0, eigvals_only=True, random_state=int(s))
            for s in rng.integers(2**31, size=2000)
        ]
    )
    scale = bounded_laplace_scale(1.0, 2.0)
    assert stats.kstest(draws[:, 2], stats.expon(scale=scale).cdf).pvalue > 1e-3  # eigenvalue 0 (sorted last)
    # eigenvalue 3: truncation at 0 is 3/scale = 0.93 scales away, so P(y < 1) differs from plain Laplace's
    below = np.mean(draws[:, 0] < 1.0)
    z = 2 - np.exp(-3.0 / scale)
    expected = (np.exp(-2.0 / scale) - np.exp(-3.0 / scale)) / 2 / (z / 2)
    assert abs(below - expected) < 4 * np.sqrt(expected * (1 - expected) / draws.shape[0])


def test_eigenvalue_loss_matches_a_brute_force_sup():
    lam, lam_prime, s = np.array([0.0, 0.7, 2.0]), np.array([0.4, 0.3, 2.0]), 1.3
    y = np.linspace(0.0, 10.0, 100_001)

    def log_p(y, lam_i):
        return -np.abs(y - lam_i) / s - np.log(s * (2 - np.exp(-lam_i / s)))

    forward = sum(np.max(log_p(y, a) - log_p(y, b)) for a, b in zip(lam, lam_prime))
    backward = sum(np.max(log_p(y, b) - log_p(y, a)) for a, b in zip(lam, lam_prime))
    assert eigenvalue_loss(lam, lam_prime, s, truncated=True) == pytest.approx((forward, backward), abs=1e-9)
    assert eigenvalue_loss(lam, lam_prime, s) == pytest.approx((0.8 / s, 0.8 / s))


def test_budgets_follow_the_sources():
    dpl = release_budgets(2.0, "diffprivlib", 3)
    assert dpl["vector_epsilon"] == 1.0 and dpl["truncated"] and dpl["mean_epsilon"] is None
    odp = release_budgets(3.0, "opendp", 3, centre_known=False)
    assert odp["vector_epsilon"] == pytest.approx(1.0) and odp["eigenvalue_scale"] == pytest.approx(2.0)


def test_worked_pair_whole_release():
    # OpenDP: eigenvalues shift by 1 + 1 = 2 (L1), its plain Laplace spends exactly eps/2; the sampler's
    # ratio at e2 adds 1.164 at unit_epsilon 1: the eps = 2 release has loss 2.164 > 2.
    odp = release_loss(C_PAIR, C_PAIR_PRIME, 2.0, "opendp", n_nodes=60)
    assert odp["eigenvalues"] == pytest.approx(1.0, abs=1e-12)
    assert odp["total"] > 2.0
    # diffprivlib: its bounded-domain scale leaves slack that absorbs the sampler's excess here
    assert release_loss(C_PAIR, C_PAIR_PRIME, 2.0, "diffprivlib", n_nodes=60)["total"] < 2.0
    # the corrected sampler substituted: within the stated budget for both
    for library in LIBRARIES:
        assert release_loss(C_PAIR, C_PAIR_PRIME, 2.0, library, rule="kgm", n_nodes=60)["total"] < 2.0


def test_vector_loss_directions_bound_the_symmetric_loss():
    forward, backward = vector_loss(C_PAIR, C_PAIR_PRIME, 1.0, n_nodes=60)
    assert backward == pytest.approx(1.1638, abs=1e-3) and forward < backward  # p_C' is larger at e2


def test_query_distance_is_the_release_loss():
    X, X_prime = _worked_rows()
    for library in LIBRARIES:
        query = release_loss_query(2.0, library, d=3, n_nodes=60)
        found = np.max(np.abs(query(X) - query(X_prime)))
        exact = release_loss(C_PAIR, C_PAIR_PRIME, 2.0, library, n_nodes=60)["total"]
        # the query evaluates the sampler's ratio on the nodes only; release_loss adds the eigenvectors (where the
        # maximum sits): equal eigenvalue parts, node maximum slightly below
        assert exact - 0.01 < found <= exact + 1e-9
        stacked = query(np.stack([X, X_prime]))
        # a stack goes through batched eigvalsh/einsum kernels, which may reduce in another order: a few ulp
        assert np.allclose(stacked[0], query(X), rtol=1e-12, atol=1e-10)


def test_centred_release_includes_the_mean_step():
    X, X_prime = _worked_rows()
    result = centred_release_loss(X, X_prime, 3.0, n_nodes=40)
    assert result["mean"] == pytest.approx(1.0)  # ||e1 - e2||_1 / n over a scale 2 / (n eps/3): all of eps/3
    assert result["total"] >= result["mean"] + max(result["rest"]) - 1e-12


def test_bad_input_raises():
    with pytest.raises(ValueError, match="library"):
        release_budgets(1.0, "sklearn", 3)
    with pytest.raises(ValueError, match="rule"):
        release_loss(C_PAIR, C_PAIR_PRIME, 1.0, "opendp", rule="nosuch")
    with pytest.raises(ValueError, match="same length"):
        eigenvalue_loss([1.0, 2.0], [1.0], 1.0)
    X, X_prime = _worked_rows()
    with pytest.raises(ValueError, match="exactly one row"):
        centred_release_loss(X, X, 1.0)
    with pytest.raises(ValueError, match="L1 ball"):
        centred_release_loss(2 * X, 2 * X_prime, 1.0)
    with pytest.raises(ValueError, match="shape"):
        release_loss_query(1.0, "opendp", d=3)(np.ones((4, 2)))


def test_sampled_eigenvalues_follow_each_librarys_law():
    rng = stream(11, "sample-release")
    C = np.diag([3.0, 0.0, 0.0])
    for library, truncated in (("opendp", False), ("diffprivlib", True)):
        rows = sample_release(C, 2.0, library, 4000, rule="kgm", random_state=rng)
        scale = release_budgets(2.0, library, 3)["eigenvalue_scale"]
        zero = rows[:, 0]  # eigenvalue 0 (ascending order): Laplace, or |Laplace| after diffprivlib's redraws
        law = stats.expon(scale=scale) if truncated else stats.laplace(scale=scale)
        assert stats.kstest(zero, law.cdf).pvalue > 1e-3
        assert np.allclose(np.linalg.norm(rows[:, 3:], axis=1), 1.0)


def test_log_ratio_statistic_is_the_exact_ratio_up_to_a_constant():
    # at d = 3 the exact normalised densities exist: statistic differences equal exact log-ratio differences
    stat = release_log_ratio(C_PAIR, C_PAIR_PRIME, 2.0, "opendp")
    rng = stream(12, "log-ratio")
    u = rng.standard_normal((50, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    y = np.array([19.0, 47.0, 51.0]) + rng.laplace(0, 2.0, (50, 3))
    vec = log_density(u, C_PAIR, 1.0, rule="library", n_nodes=60) - log_density(
        u, C_PAIR_PRIME, 1.0, rule="library", n_nodes=60
    )
    eig = (np.abs(y - [19.0, 48.0, 50.0]) - np.abs(y - [19.0, 47.0, 51.0])).sum(axis=1) / 2.0
    gap = stat(np.hstack([y, u])) - (vec + eig)
    assert np.ptp(gap) < 1e-9  # a constant: the normalisers' ratio
    with pytest.raises(ValueError, match="rows"):
        stat(np.ones((3, 5)))
