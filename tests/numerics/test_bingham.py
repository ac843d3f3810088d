"""Tests for dpnb.numerics.bingham: exact references, the Gibbs sampler's statistics, diagnostics, bad input."""

import itertools

import numba
import numpy as np
import pytest
from scipy import stats

from dpnb.numerics import bingham
from dpnb.numerics.bingham import (
    _acg_draw,
    _canonical_signs,
    _complement_acg_draw,
    _complement_eigh,
    _compression_top,
    _sample_theta,
    acg_shape,
    autocorrelation,
    bingham_gibbs,
    circle_angle_density,
    effective_sample_size,
    sphere_second_moments,
    vector_bingham_exact,
)
from dpnb.numerics.stats import mean_ci

LEVEL = 0.999  # per-check confidence; every test makes only a few checks


def _theta_exact_mean(kappa, a):
    """E[theta] for density theta^{-1/2} (1-theta)^{kappa-1} e^{a theta}, via s = sqrt(theta) on a fine grid."""
    s = np.linspace(0, 1, 400001)[1:-1]
    logw = (kappa - 1) * np.log1p(-s * s) + a * s * s
    w = np.exp(logw - logw.max())
    return np.sum(w * s * s) / np.sum(w)


@pytest.mark.parametrize(
    "kappa,a",
    [
        (0.5, -40.0),
        (0.5, 3.0),
        (1.0, -3.0),
        (4.0, -0.5),
        (4.0, 3.0),
        (4.0, 400.0),
        (50.0, 50.0),
        (50.0, -500.0),
        (50.0, 5000.0),
    ],
)
def test_theta_conditional_matches_quadrature(kappa, a):
    # covers every envelope: Beta grid, truncated Gamma (a < 0), Gamma mixture (a >> kappa), reflection (kappa = 1/2)
    theta, phi = _sample_theta(np.full(40000, a), kappa, np.random.default_rng(1))
    assert np.all((theta >= 0) & (theta <= 1))
    np.testing.assert_allclose(theta + phi, 1.0, atol=1e-12)
    m, lo, hi = mean_ci(theta, LEVEL)
    assert lo <= _theta_exact_mean(kappa, a) <= hi


def test_sphere_second_moments_limits():
    np.testing.assert_allclose(sphere_second_moments(np.zeros((3, 3))), np.eye(3) / 3, atol=1e-10)
    np.testing.assert_allclose(sphere_second_moments(np.zeros((2, 2))), np.eye(2) / 2, atol=1e-10)
    M = sphere_second_moments(np.diag([200.0, 0.0, 0.0]))
    assert M[0, 0] > 0.99  # concentrated on +-e_1
    np.testing.assert_allclose(np.trace(M), 1.0, atol=1e-10)


def test_circle_density_integrates_to_one():
    B = np.array([[2.0, 0.7], [0.7, -1.0]])
    t = np.linspace(0, 2 * np.pi, 5000, endpoint=False)
    assert np.mean(circle_angle_density(B, t)) * 2 * np.pi == pytest.approx(1.0, abs=1e-8)


def test_gibbs_d2_angles_ks():
    B = np.array([[3.0, 1.0], [1.0, 0.0]])
    v = bingham_gibbs(B, 1, n_chains=4000, n_iter=5, random_state=2)[:, :, 0]
    ang = np.mod(np.arctan2(v[:, 1], v[:, 0]), 2 * np.pi)
    grid = np.linspace(0, 2 * np.pi, 4001)
    dens = circle_angle_density(B, grid)
    cdf = np.concatenate([[0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid))])
    assert stats.kstest(ang, lambda x: np.interp(x, grid, cdf / cdf[-1])).pvalue > 1 - LEVEL


@pytest.mark.parametrize("column", ["scan", "exact"])
# slow: k = 2; make check runs k = 1 and test_gibbs_output_orthonormal_and_trace (several columns)
@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_gibbs_d3_moments(k, column):
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    B = Q @ np.diag([2.5, 0.5, -1.5]) @ Q.T
    V = bingham_gibbs(B, k, n_chains=6000, n_iter=10, column=column, random_state=rng)
    # k = 2: the unit normal w of span(V) is vector Bingham(-B) and V V^T = I - w w^T
    exact = np.diag(sphere_second_moments(B)) if k == 1 else 1 - np.diag(sphere_second_moments(-B))
    P = np.einsum("mik,mik->mi", V, V)
    for i in range(3):
        _, lo, hi = mean_ci(P[:, i], LEVEL)
        assert lo <= exact[i] <= hi


def test_gibbs_k1_matches_exact_sampler():
    B = np.diag([8.0, 5.0, 1.0, 0.0, -2.0])
    g = np.abs(bingham_gibbs(B, 1, n_chains=5000, n_iter=10, random_state=4)[:, 0, 0])
    e = np.abs(vector_bingham_exact(B, 5000, random_state=5)[:, 0])
    assert stats.ks_2samp(g, e).pvalue > 1 - LEVEL


def test_vector_bingham_exact_moments():
    B = np.diag([3.0, 1.0, -2.0])
    x = vector_bingham_exact(B, 20000, random_state=6)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-12)
    exact = np.diag(sphere_second_moments(B))
    for i in range(3):
        _, lo, hi = mean_ci(x[:, i] ** 2, LEVEL)
        assert lo <= exact[i] <= hi


def test_gibbs_output_orthonormal_and_trace():
    B = np.diag(np.arange(6.0)) * 20
    V, trace = bingham_gibbs(B, 3, n_chains=7, n_iter=25, return_trace=True, random_state=7)
    assert V.shape == (7, 6, 3) and trace.shape == (25, 7)
    np.testing.assert_allclose(np.einsum("mdi,mdj->mij", V, V), np.broadcast_to(np.eye(3), (7, 3, 3)), atol=1e-8)
    np.testing.assert_allclose(trace[-1], np.einsum("mdk,de,mek->m", V, B, V), rtol=1e-10)
    # concentrated target: the chains sit near the top-3 energy 5 + 4 + 3 = 12 (times 20) within a few scans
    assert np.all(trace[-1] > 0.9 * 240)


def test_seeded_runs_are_reproducible():
    B = np.diag([4.0, 1.0, 0.0, 0.0])
    a = bingham_gibbs(B, 2, n_chains=3, n_iter=5, random_state=11)
    b = bingham_gibbs(B, 2, n_chains=3, n_iter=5, random_state=11)
    np.testing.assert_array_equal(a, b)


def test_autocorrelation_and_ess_on_ar1():
    rng = np.random.default_rng(9)
    phi, n, m = 0.5, 4000, 50
    x = np.zeros((n, m))
    eps = rng.standard_normal((n, m))
    for t in range(1, n):
        x[t] = phi * x[t - 1] + eps[t]
    acf = autocorrelation(x, 3)
    se = np.sqrt((1 - phi**2) / (n * m))  # Bartlett's standard error of the lag-1 estimate, pooled
    assert abs(acf[1] - phi) < 4 * se and acf[0] == 1.0
    per_chain = np.array([effective_sample_size(x[:, j]) / n for j in range(m)])
    _, lo, hi = mean_ci(per_chain, LEVEL)
    truth = (1 - phi) / (1 + phi)
    assert lo - 0.02 <= truth <= hi + 0.02  # 0.02: O(1/sqrt(n)) truncation bias of the initial positive sequence
    iid = effective_sample_size(rng.standard_normal((2000, 4)))
    assert 0.8 * 8000 < iid < 1.25 * 8000


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: bingham_gibbs(np.array([[1.0, 2.0], [0.0, 1.0]])), "symmetric"),
        (lambda: bingham_gibbs(np.eye(3), 3), "n_components|k must satisfy"),
        (lambda: bingham_gibbs(np.eye(1)), "d >= 2"),
        (lambda: bingham_gibbs(np.eye(3), 1, n_chains=0), "n_chains"),
        (lambda: bingham_gibbs(np.eye(3), 1, n_iter=-1), "n_iter"),
        (lambda: bingham_gibbs(np.full((3, 3), np.nan)), "NaN"),
        (lambda: bingham_gibbs(np.eye(3), 1, n_chains=2, initial=np.ones((2, 3, 1))), "orthonormal"),
        (lambda: bingham_gibbs(np.eye(3), 1, n_chains=2, initial=np.ones((1, 3, 1))), "shape"),
        (lambda: sphere_second_moments(np.eye(4)), "d = 2 or 3"),
        (lambda: circle_angle_density(np.eye(3), [0.0]), "2 x 2"),
        (lambda: autocorrelation(np.zeros((5, 2)), 5), "max_lag"),
        (lambda: vector_bingham_exact(np.eye(1)), "d >= 2"),
        (lambda: vector_bingham_exact(np.eye(2), 0), "size"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: bingham_gibbs(np.eye(3), random_state="x"),
        lambda: bingham_gibbs(np.eye(3), 1, n_chains=2.5),
        lambda: vector_bingham_exact(np.eye(3), random_state="x"),
    ],
)
def test_bad_types(call):
    with pytest.raises(TypeError):
        call()


def test_initial_states_are_haar():
    # zero parameter: the Bingham law is the Haar law, so a chain from the (Haar) start stays uniform
    V = bingham_gibbs(np.zeros((5, 5)), 2, n_chains=8000, n_iter=1, random_state=8)
    P = np.einsum("mik,mik->mi", V, V)  # E[(V V^T)_ii] = k / d
    _, lo, hi = mean_ci(P[:, 0], LEVEL)
    assert lo <= 2 / 5 <= hi


def test_canonical_signs_fix_each_column():
    rng = np.random.default_rng(17)
    W = rng.standard_normal((3, 6, 4))
    C = _canonical_signs(W)
    np.testing.assert_array_equal(np.abs(C), np.abs(W))
    top = np.take_along_axis(C, np.argmax(np.abs(C), axis=-2)[..., None, :], axis=-2)
    assert np.all(top > 0)
    np.testing.assert_array_equal(_canonical_signs(-W), C)  # either sign of an eigenvector gives the same basis


def test_acg_shape_solves_the_envelope_equation():
    t = np.array([[0.0, 0.5, 3.0, 40.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1e4, 1e4, 1e4]])
    b, log_m = acg_shape(t)
    np.testing.assert_allclose(np.sum(1 / (b[:, None] + 2 * t), axis=1), 1.0, rtol=1e-12)
    assert b[1] == 4.0 and np.all((b >= 1) & (b <= 4))
    np.testing.assert_allclose(log_m, -(4 - b) / 2 + 2 * np.log(4 / b))


def test_acg_draw_matches_exact_sampler():
    lam = np.array([0.0, 1.0, 4.0, 9.0])  # exp(sum lam y^2): t = 9 - lam
    y = _acg_draw(np.tile(lam[-1] - lam, (20000, 1)), np.random.default_rng(12))
    x = vector_bingham_exact(np.diag(lam), 20000, random_state=13)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0)
    for i in range(4):
        assert stats.ks_2samp(y[:, i] ** 2, x[:, i] ** 2).pvalue > 1 - LEVEL


def test_complement_eigh_matches_an_explicit_basis():
    rng = np.random.default_rng(14)
    M = rng.standard_normal((6, 6))
    B = M + M.T
    U = np.linalg.qr(rng.standard_normal((2, 6, 2)))[0]
    lam_B = np.linalg.eigvalsh(B)
    lam, W = _complement_eigh(B, U, lam_B[0] - (lam_B[-1] - lam_B[0]) - 1)
    for j in range(2):
        N = np.linalg.qr(U[j], mode="complete")[0][:, 2:]
        np.testing.assert_allclose(lam[j], np.linalg.eigvalsh(N.T @ B @ N), atol=1e-10)
        np.testing.assert_allclose(U[j].T @ W[j], 0.0, atol=1e-10)
        np.testing.assert_allclose(W[j].T @ B @ W[j], np.diag(lam[j]), atol=1e-9)


def test_compression_top_is_the_largest_compressed_eigenvalue():
    rng = np.random.default_rng(15)
    M = rng.standard_normal((7, 7))
    l_B, E_B = np.linalg.eigh(M + M.T)
    U = np.linalg.qr(rng.standard_normal((3, 7, 3)))[0]
    top = _compression_top(l_B, E_B, U)
    for j in range(3):
        N = np.linalg.qr(U[j], mode="complete")[0][:, 3:]
        np.testing.assert_allclose(top[j], np.linalg.eigvalsh(N.T @ (M + M.T) @ N)[-1], rtol=1e-12, atol=1e-12)


def test_compression_top_with_tied_eigenvalues_and_eigenvector_columns():
    l_B, E_B = np.linalg.eigh(np.diag([5.0, 5.0, 2.0, 2.0, 2.0]))
    U = np.stack([np.eye(5)[:, :1], np.eye(5)[:, 2:3]])  # the compression's top is 5 either way, on a tie
    np.testing.assert_allclose(_compression_top(l_B, E_B, U), [5.0, 5.0], rtol=1e-14)


def test_complement_acg_draw_matches_the_eigenbasis_draw():
    rng = np.random.default_rng(16)
    Q = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    B = Q @ np.diag([8.0, 5.0, 3.0, 1.0, 0.0]) @ Q.T
    l_B, E_B = np.linalg.eigh(B)
    shift = l_B[0] - (l_B[-1] - l_B[0]) - 1.0
    U = np.broadcast_to(np.linalg.qr(rng.standard_normal((5, 2)))[0], (20000, 5, 2)).copy()
    x = _complement_acg_draw(B, l_B, E_B, U, shift, rng)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)
    np.testing.assert_allclose(np.einsum("md,mdk->mk", x, U), 0.0, atol=1e-12)
    lam, W = _complement_eigh(B, U[:1], shift)
    ref = np.einsum("dq,mq->md", W[0], _acg_draw(np.tile(lam[0, -1] - lam[0], (20000, 1)), rng))
    for v in W[0].T:  # the squared coordinates along the compression's eigenvectors agree in law
        assert stats.ks_2samp((x @ v) ** 2, (ref @ v) ** 2).pvalue > 1 - LEVEL


def _acg_law_case(seed):
    """B (5 x 5), its eigenpairs, the shift, one U (2 columns) for 20000 chains, and the eigenbasis reference."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    B = Q @ np.diag([8.0, 5.0, 3.0, 1.0, 0.0]) @ Q.T
    l_B, E_B = np.linalg.eigh(B)
    shift = l_B[0] - (l_B[-1] - l_B[0]) - 1.0
    U = np.broadcast_to(np.linalg.qr(rng.standard_normal((5, 2)))[0], (20000, 5, 2)).copy()
    lam, W = _complement_eigh(B, U[:1], shift)
    ref = np.einsum("dq,mq->md", W[0], _acg_draw(np.tile(lam[0, -1] - lam[0], (20000, 1)), rng))
    return B, l_B, E_B, shift, U, lam[0, -1], W[0], ref, rng


@pytest.mark.parametrize("below", [0.0, 0.45])
def test_complement_acg_draw_is_exact_with_c_below_the_top(below, monkeypatch):
    # c anywhere above lambda - b / 2 (b >= 1 here) keeps the envelope dominating: the same law, no fallback
    B, l_B, E_B, shift, U, top, W, ref, rng = _acg_law_case(19)
    monkeypatch.setattr(bingham, "_ritz_top", lambda M, E, U: np.full(M.shape[0], top - below))
    monkeypatch.setattr(bingham, "_lapack_top", lambda M, scale: pytest.fail("fell back to LAPACK's top eigenvalue"))
    x = _complement_acg_draw(B, l_B, E_B, U, shift, rng)
    np.testing.assert_allclose(np.einsum("md,mdk->mk", x, U), 0.0, atol=1e-12)
    for v in W.T:
        assert stats.ks_2samp((x @ v) ** 2, (ref @ v) ** 2).pvalue > 1 - LEVEL


@pytest.mark.parametrize("top", ["bisection", "lapack"])
def test_complement_acg_draw_falls_back_when_the_estimate_is_far_below(top, monkeypatch):
    # an estimate below lambda - b / 2 leaves G indefinite: the Cholesky factorisation fails, c becomes an upper bound
    B, l_B, E_B, shift, U, exact_top, W, ref, rng = _acg_law_case(20)
    monkeypatch.setattr(bingham, "_ritz_top", lambda M, E, U: np.full(M.shape[0], exact_top - 50.0))
    calls = []
    if top == "bisection":
        monkeypatch.setattr(bingham, "_LAPACK_TOP_MAX_D", 0)
        bisect = bingham._compression_top
        monkeypatch.setattr(bingham, "_compression_top", lambda *a: calls.append(1) or bisect(*a))
    else:
        lapack = bingham._lapack_top
        monkeypatch.setattr(bingham, "_lapack_top", lambda *a: calls.append(1) or lapack(*a))
    x = _complement_acg_draw(B, l_B, E_B, U, shift, rng)
    assert calls == [1]
    for v in W.T:
        assert stats.ks_2samp((x @ v) ** 2, (ref @ v) ** 2).pvalue > 1 - LEVEL


def _symmetric_9(seed, scale):
    """A random symmetric 9 x 9 matrix of entries about ``scale``, its eigenpairs, the shift, and the generator."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((9, 9)) * scale
    B = A + A.T
    l_B, E_B = np.linalg.eigh(B)
    return B, l_B, E_B, l_B[0] - (l_B[-1] - l_B[0]) - 1.0, rng


def test_ritz_top_never_above_the_compressed_eigenvalue():
    B, l_B, E_B, shift, rng = _symmetric_9(21, 1e3)
    U = np.concatenate([np.linalg.qr(rng.standard_normal((40, 9, 3)))[0], E_B[None, :, -3:]])  # last: B's top three
    M = bingham._complement_matrix(B, U, shift)
    exact = np.linalg.eigvalsh(M)[:, -1]
    ritz = bingham._ritz_top(M, E_B[:, -5:], U)
    assert np.all(ritz <= exact * (1 + 1e-12) + 1e-9)
    np.testing.assert_allclose(ritz[-1], l_B[-4], rtol=1e-12)  # the top of the complement of B's top three
    assert np.median((exact - ritz) / (l_B[-1] - l_B[0])) < 0.05  # and close: the envelope's acceptance rate


def test_lapack_top_never_below_the_compressed_eigenvalue():
    B, l_B, E_B, shift, rng = _symmetric_9(18, 1e4)
    U = np.linalg.qr(rng.standard_normal((40, 9, 3)))[0]
    top = bingham._lapack_top(bingham._complement_matrix(B, U, shift), max(np.abs(l_B).max(), abs(shift)))
    bisected = _compression_top(l_B, E_B, U)  # the upper end of a one-ulp bracket
    assert np.all(top >= bisected)
    np.testing.assert_allclose(top, bisected, rtol=1e-11)


def test_exact_columns_lapack_top_matches_the_bisection(monkeypatch):
    A = np.random.default_rng(4).standard_normal((7, 7))
    B = 20 * (A + A.T)
    monkeypatch.setattr(bingham, "_ritz_top", lambda M, E, U: np.full(M.shape[0], -1e300))  # every c an upper bound
    lapack = bingham.bingham_gibbs(B, 3, n_chains=50, n_iter=4, column="exact", random_state=2)
    monkeypatch.setattr(bingham, "_LAPACK_TOP_MAX_D", 0)  # every top eigenvalue by bisection
    bisected = bingham.bingham_gibbs(B, 3, n_chains=50, n_iter=4, column="exact", random_state=2)
    np.testing.assert_allclose(lapack, bisected, rtol=0, atol=1e-9)


def test_gibbs_rejects_unknown_column_update():
    with pytest.raises(ValueError, match="column"):
        bingham_gibbs(np.eye(3), 2, column="gibbs")


def test_acg_proposals_match_a_numpy_round():
    rng = np.random.default_rng(22)
    m, d, k1, p = 6, 9, 3, 4
    A = rng.standard_normal((d, d))
    B = A + A.T
    U = np.linalg.qr(rng.standard_normal((m, d, k1)))[0]
    G = np.eye(d) + 0.1 * np.einsum("mij,mkj->mik", *(2 * [rng.standard_normal((m, d, d))]))
    R = np.swapaxes(np.linalg.cholesky(G), 1, 2)  # G = R^T R, R upper triangular
    e = rng.standard_normal((m, d, p))
    c, b, log_m = rng.uniform(5, 9, m), rng.uniform(1, 3, m), rng.uniform(0, 2, m)
    u = rng.random((m, p))
    u[:2] = np.inf  # the first two chains accept none
    log_u = np.log(u)
    z = np.linalg.solve(R, e)
    z -= U @ (np.swapaxes(U, 1, 2) @ z)
    y = z / np.linalg.norm(z, axis=1, keepdims=True)
    t = c[:, None] - np.sum(y * (B @ y), axis=1)
    accept = log_u < -t + (d - k1) / 2 * np.log1p(2 * t / b[:, None]) - log_m[:, None]
    assert accept.any(axis=1).any() and not accept.any(axis=1).all()
    out = np.zeros((m + 2, d))
    rows = np.arange(m) + 2  # the chains' rows in the full arrays
    pad = lambda x: np.concatenate([np.zeros((2,) + x.shape[1:]), x])  # noqa: E731 - two chains not pending
    upper = R + np.tril(rng.standard_normal((m, d, d)), -1)  # the kernel reads only the upper triangle
    pending = bingham._acg_proposals(pad(upper), pad(U), B, e, u, pad(c), pad(b), pad(log_m), out, rows)
    np.testing.assert_array_equal(pending, rows[~accept.any(axis=1)])
    for i in np.flatnonzero(accept.any(axis=1)):  # the first accepted proposal
        np.testing.assert_allclose(out[rows[i]], y[i, :, np.argmax(accept[i])], rtol=1e-10, atol=1e-12)
    assert not out[pending].any() and not out[:2].any()


def test_the_gibbs_sampler_refuses_a_spread_beyond_max_concentration():
    """Above 2^32 the complement's c - y^T B y is lost to rounding (RuntimeError 'Omega is not positive definite'
    from about 1e16 on, before): a ValueError naming B. The exact k = 1 sampler takes spreads up to 1e300."""
    B = np.diag([1.0, 0.5, 0.0])
    bingham.bingham_gibbs(bingham.MAX_CONCENTRATION * B, 2, n_iter=2, column="exact", random_state=0)
    with pytest.raises(ValueError, match="B's eigenvalues spread"):
        bingham.bingham_gibbs(1e16 * B, 2, n_iter=2, column="exact", random_state=0)
    v = vector_bingham_exact(1e299 * B, 3, random_state=0)
    np.testing.assert_allclose(np.abs(v[:, 0]), 1.0)
    with pytest.raises(ValueError, match="B's eigenvalues spread"):
        vector_bingham_exact(1.7e308 * B, 3, random_state=0)


@numba.njit(cache=True)
def _numba_matmul(a, a_transposed, b, b_transposed):
    """numba's own ``@`` on the operands of ``bingham._product`` (``x.T`` of a C-ordered array is Fortran-ordered)."""
    if a_transposed and b_transposed:
        return a.T @ b.T
    if a_transposed:
        return a.T @ b
    if b_transposed:
        return a @ b.T
    return a @ b


def test_product_is_numbas_matmul_bit_for_bit():
    """The compiled kernels' BLAS product: ddot, dgemv on either side and dgemm, each operand as given or transposed.

    One test, not a parametrised one: numba compiles the reference's four products once (seconds) in one process.
    Read-only operands (a cached array, say) give the same.
    """
    shapes = [(1, 1, 1), (1, 1, 4), (4, 1, 1), (1, 7, 1), (5, 7, 1), (1, 7, 5), (5, 1, 4), (6, 7, 5), (9, 3, 9)]
    for (m, k, n), a_transposed, b_transposed in itertools.product(shapes, [False, True], [False, True]):
        rng = np.random.default_rng([m, k, n, a_transposed, b_transposed])
        a = rng.standard_normal((k, m) if a_transposed else (m, k))
        b = rng.standard_normal((n, k) if b_transposed else (k, n))
        got = bingham._product(a, a_transposed, b, b_transposed)
        case = f"m, k, n = {m}, {k}, {n}; transposed {a_transposed}, {b_transposed}"
        assert got.shape == (m, n) and got.flags.c_contiguous, case
        assert np.array_equal(got, _numba_matmul(a, a_transposed, b, b_transposed)), case
        want = (a.T if a_transposed else a) @ (b.T if b_transposed else b)
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=case)
        a.flags.writeable = b.flags.writeable = False
        assert np.array_equal(bingham._product(a, a_transposed, b, b_transposed), got), case


@pytest.mark.parametrize(("m", "k", "n"), [(3, 0, 2), (0, 3, 2), (3, 2, 0)])
def test_product_with_an_empty_dimension_is_zero(m, k, n):
    assert np.array_equal(bingham._product(np.ones((m, k)), False, np.ones((k, n)), False), np.zeros((m, n)))


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (np.ones((5, 4)), np.ones((3, 2)), "inner dimensions"),
        (np.ones((4, 6))[:, ::2], np.ones((3, 2)), "C-ordered"),
        (np.ones((4, 3)), np.asfortranarray(np.ones((3, 2))), "C-ordered"),
    ],
)
def test_product_refuses_operands_it_would_misread(a, b, match):
    with pytest.raises(ValueError, match=match):
        bingham._product(a, False, b, False)
