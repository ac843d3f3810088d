"""Fits on Dask arrays and float32 input (dpnb.numerics.blocks): the in-memory release, to the round-off of summation.

The statistics of a Dask fit are the sums of its chunks' sums; the in-memory fit sums the same terms in
another order. For ``m`` terms, any order of summation is within ``(m - 1) u sum |terms|`` of the exact sum
(``u = 2^-53``; the products add ``u |term|`` each), so the two results differ by at most
``2 m u sum |terms|``: that is the tolerance, entry by entry, of every comparison below. RONGauss and
PCAGauss add the conditions of their statistics (``ron_gauss_tolerances``, ``pca_gauss_tolerance``).
"""

import functools

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dpnb.numerics.blocks import check_rows, float64_blocks, is_dask_array, map_rows, project_rows, row_sums  # noqa: E402
from dpnb.numerics.linalg import haar_stiefel  # noqa: E402
from dpnb.papers.component_analysis import DPPCAPublisher  # noqa: E402
from dpnb.papers.dppro import DPPro  # noqa: E402
from dpnb.papers.lda_publishing import DPLDAPublisher  # noqa: E402
from dpnb.papers.onehot import checked_moments  # noqa: E402
from dpnb.papers.pca_gauss import PCAGauss  # noqa: E402
from dpnb.papers.private_pca import PPCA, ModSULQ, second_moment  # noqa: E402
from dpnb.papers.ron_gauss import RONGauss  # noqa: E402
from dpnb.papers.ron_gauss import unit_rows as ron_unit_rows  # noqa: E402

U = 2.0**-53
CHUNKS = 173  # rows per Dask chunk: several chunks, the last one short


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def unit_rows(n=2000, d=9, seed=0):
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True) * 0.99


def onehot_rows(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, (n, 3)), np.eye(3)[rng.integers(0, 3, n)]])
    return X, rng.integers(0, 2, n)


def summation_bound(X):
    """``2 n u |X|^T |X|``: the entrywise bound on the difference of two summation orders of ``X^T X``."""
    A = np.abs(X)
    return 2 * len(X) * U * (A.T @ A)


def lazy(X, chunks=CHUNKS):
    return da.from_array(X, chunks=(chunks, max(1, X.shape[1] // 2)))  # split columns too: rechunked inside


def test_row_sums_adds_the_chunks_statistics_in_row_order():
    X = unit_rows()
    seen = []

    def statistic(rows):
        seen.append(len(rows))
        return (rows.sum(axis=0), np.array(len(rows)))

    total, count = row_sums(statistic, lazy(X))
    assert count == len(X) and sorted(seen) == sorted([CHUNKS] * (len(X) // CHUNKS) + [len(X) % CHUNKS])
    assert np.all(np.abs(total - X.sum(axis=0)) <= 2 * len(X) * U * np.abs(X).sum(axis=0))
    assert row_sums(statistic, X)[1] == len(X)  # NumPy: one call on the whole array


def test_float32_and_memmaps_are_read_in_blocks_without_a_float64_copy(tmp_path):
    X = unit_rows(5000).astype(np.float32)
    path = tmp_path / "rows.f32"
    X.tofile(path)
    M = np.memmap(path, dtype=np.float32, mode="r", shape=X.shape)
    assert check_rows(M) is M and check_rows(X) is X
    blocks = list(float64_blocks(M, chunk=700))
    assert all(b.dtype == np.float64 for _, b in blocks) and blocks[0][1].base is blocks[-1][1].base  # one buffer
    X64 = X.astype(np.float64)
    assert np.all(np.abs(second_moment(M) - X64.T @ X64 / len(X)) <= summation_bound(X64) / len(X))


def test_second_moment_and_mod_sulq_agree_with_the_in_memory_fit():
    X = unit_rows()
    A, B = second_moment(X), second_moment(lazy(X))
    bound = summation_bound(X) / len(X) + 2 * U * np.abs(A)
    assert np.all(np.abs(A - B) <= bound)
    fits = [ModSULQ(3, 1.0, delta=1e-5, random_state=7).fit(data) for data in (X, lazy(X))]
    assert fits[0].sigma_ == fits[1].sigma_
    # Davis-Kahan: the two releases are the top-3 eigenvectors of A + N and B + N, the same noise N
    noise = np.random.default_rng(7).normal(0.0, fits[0].sigma_, (len(A), len(A)))
    noisy = A + np.triu(noise) + np.triu(noise, 1).T
    eig = np.linalg.eigvalsh(noisy)[::-1]
    sine_bound = 2 * np.linalg.norm(bound) / (eig[2] - eig[3])
    V, W = fits[0].components_.T, fits[1].components_.T
    assert np.linalg.norm(V - W @ (W.T @ V), 2) <= sine_bound


def test_ppca_runs_on_the_same_statistic():
    X = unit_rows()
    fits = [PPCA(2, 5.0, n_iter=20, random_state=3).fit(data) for data in (X, lazy(X))]
    # a Gibbs chain has no round-off bound; the statistic above does, and the chains stay together
    assert np.allclose(fits[0].components_, fits[1].components_, rtol=0, atol=1e-9)


def test_dp_pca_publisher_agrees_with_the_in_memory_fit():
    X, _ = onehot_rows()
    sums = [checked_moments(data, 3, (3,)) for data in (X, lazy(X))]
    assert np.all(np.abs(sums[0][0] - sums[1][0]) <= 2 * len(X) * U * X.sum(axis=0))
    assert np.all(np.abs(sums[0][1] - sums[1][1]) <= summation_bound(X))
    fits = [DPPCAPublisher(2, 1.0, group_sizes=(3,), random_state=5).fit(data) for data in (X, lazy(X))]
    n = len(X)
    mean_bound = 2 * U * X.sum(axis=0) + 2 * U * np.abs(fits[0].mean_)
    cov_bound = (
        summation_bound(X) / n + 2 * np.outer(mean_bound, np.abs(fits[0].mean_)) + 4 * U * np.abs(fits[0].covariance_)
    )
    assert np.all(np.abs(fits[0].mean_ - fits[1].mean_) <= mean_bound)
    assert np.all(np.abs(fits[0].covariance_ - fits[1].covariance_) <= cov_bound)
    # the scores: the same noise on projections by components within Davis-Kahan of each other
    V, W = fits[0].components_.T, fits[1].components_.T
    eig = np.linalg.eigvalsh(fits[0].covariance_)[::-1]
    sine = 2 * np.linalg.norm(cov_bound) / (eig[1] - eig[2])
    signs = np.sign(np.sum(V * W, axis=0))
    assert np.all(signs == 1)  # same eigen-solver on nearly the same matrix: same signs
    rows = np.linalg.norm(X - fits[0].mean_, axis=1, keepdims=True)
    assert np.all(np.abs(fits[0].scores_ - fits[1].scores_) <= 2 * sine * rows + 4 * X.shape[1] * U * (rows + 1))


def test_dp_lda_publisher_is_bit_identical_on_the_grid():
    X, y = onehot_rows()
    fits = [DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(data, y) for data in (X, lazy(X))]
    for name in ("means_", "second_moment_", "class_counts_"):
        assert np.array_equal(getattr(fits[0], name), getattr(fits[1], name))
    as32 = [DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(data, y) for data in (X.astype(np.float32),) * 2]
    assert np.array_equal(
        as32[0].means_, DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(lazy(X.astype(np.float32)), y).means_
    )
    assert as32[0].means_.dtype == np.float64


def test_dppro_transform_maps_blocks_and_checks_each():
    X, _ = onehot_rows()
    fit = DPPro(2, 1.0, delta=1e-5, bounds=(0.0, 1.0), random_state=1).fit(X)
    mapped = fit.transform(lazy(X))
    assert is_dask_array(mapped) and np.array_equal(mapped.compute(), fit.transform(X))
    bad = X.copy()
    bad[CHUNKS * 3 + 5, 0] = 1.5
    lazy_bad = fit.transform(lazy(bad))  # lazy: nothing is read yet
    with pytest.raises(ValueError, match="outside the declared bounds"):
        lazy_bad.compute()


ESTIMATORS = {
    "ModSULQ": (lambda: ModSULQ(3, 1.0, delta=1e-5, random_state=0), "components_"),
    "PPCA": (lambda: PPCA(2, 1.0, n_iter=2, random_state=0), "components_"),
    "DPPCAPublisher": (lambda: DPPCAPublisher(2, 1.0, group_sizes=(3,), random_state=0), "scores_"),
    "DPLDAPublisher": (lambda: DPLDAPublisher(1.0, group_sizes=(3,), random_state=0), "means_"),
    "RONGauss": (lambda: RONGauss(2, 1.0, mode="gmm", random_state=0), "class_means_"),
    "PCAGauss": (lambda: PCAGauss(2, 1.0, bounds=(0.0, 1.0), random_state=0), "covariance_"),
}


def _raise_on_chunk(rows, block_info=None, *, chunk):
    if block_info[0]["chunk-location"][0] == chunk:
        raise OSError("chunk 4 could not be read")
    return rows


@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_bad_or_failing_chunk_fails_the_fit_with_nothing_released(name):
    make, attribute = ESTIMATORS[name]
    X, y = onehot_rows()
    if name in ("ModSULQ", "PPCA"):  # rows in the unit ball (data_norm 1), so only chunk 4's failure can stop the fit
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    args = (y,) if name in ("DPLDAPublisher", "RONGauss") else ()
    bad = X.copy()
    bad[CHUNKS * 4 + 2, 1] = np.nan if name == "RONGauss" else 7.0  # RONGauss has no bounds: a NaN; else outside
    estimator = make()  # [0, 1] and outside the unit ball
    with pytest.raises(ValueError):
        estimator.fit(lazy(bad), *args)
    assert not any(hasattr(estimator, a) for a in (attribute, "n_features_in_", "budget_"))
    failing = lazy(X).map_blocks(functools.partial(_raise_on_chunk, chunk=4), dtype=X.dtype)
    with pytest.raises(OSError, match="could not be read"):
        estimator.fit(failing, *args)
    assert not any(hasattr(estimator, a) for a in (attribute, "n_features_in_", "budget_"))


def test_input_checks():
    with pytest.raises(TypeError, match="float32 or float64"):
        check_rows(da.zeros((4, 2), dtype=np.int64, chunks=2))
    with pytest.raises(ValueError, match="2-dimensional"):
        check_rows(da.zeros(4, chunks=2))
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        check_rows(da.zeros((4, 2), chunks=2)[da.zeros(4, chunks=2) == 0])
    assert not is_dask_array(np.zeros((2, 2))) and check_rows([[1, 2]]).dtype == np.float64
    assert np.array_equal(map_rows(lambda r: r + 1, np.zeros((2, 1)), 1), np.ones((2, 1)))
    assert np.array_equal(project_rows(lazy(np.ones((400, 2))), np.ones((2, 1))), np.full((400, 1), 2.0))


DISTRIBUTED_FITS = (  # RONGauss's two passes and PCAGauss's one, gmm: every per-class statistic
    (lambda: RONGauss(3, 1.0, mode="gmm", random_state=2), (np.arange(4000) % 3,)),
    (
        lambda: PCAGauss(3, 1.0, mode="gmm", basis=haar_stiefel(9, 3, random_state=1), n_classes=3, random_state=2),
        (np.arange(4000) % 3,),
    ),
)


@pytest.mark.slow
def test_a_fit_on_a_distributed_cluster_matches_the_in_memory_fit():
    distributed = pytest.importorskip("distributed")
    X = unit_rows(4000)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            remote = ModSULQ(3, 1.0, delta=1e-5, random_state=7).fit(lazy(X, 1000))
            published = DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(
                lazy(onehot_rows()[0]), onehot_rows()[1]
            )
            ron, pca = (make().fit(lazy(X, 1000), *args) for make, args in DISTRIBUTED_FITS)
    local = ModSULQ(3, 1.0, delta=1e-5, random_state=7).fit(lazy(X, 1000))  # the same chunks, synchronously
    assert np.array_equal(remote.components_, local.components_)
    for fit, (make, args) in zip((ron, pca), DISTRIBUTED_FITS, strict=True):
        here = make().fit(lazy(X, 1000), *args)  # the same chunks, summed in the same order: bit-identical
        assert all(np.array_equal(getattr(fit, a), getattr(here, a)) for a in ("class_means_", "class_covariances_"))
    assert np.array_equal(
        published.means_, DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(*onehot_rows()).means_
    )


# ---------------------------------------------------------------------------------------------------------
# RONGauss (two passes) and PCAGauss (one pass)
# ---------------------------------------------------------------------------------------------------------
def ron_data(n=2000, d=9, seed=4):
    """Rows of very different norms (a zero row, rows whose squared norm over- and underflows) and labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, (n, 1))
    X[3], X[CHUNKS + 1], X[2 * CHUNKS + 7] = 0.0, X[CHUNKS + 1] * 1e200, X[2 * CHUNKS + 7] * 1e-200
    return X, rng.integers(0, 3, n), rng.normal(size=n) * 2


def ron_gauss_tolerances(fit, X, y, n_sigmas=50.0):
    """Per class: (bound on |mean_dask - mean_numpy| entrywise, bound on ||cov_dask - cov_numpy||_F), from the
    in-memory fit ``fit`` of ``X`` (float64), and a check of the means against the first.

    Mean of class ``c``: ``n_c`` unit rows ``u_i`` summed (each formed in ``m + 2`` roundings, which may differ
    with the rows' place in memory), divided by ``n_c``, plus the same noise: ``2 (n_c + m + 2) u mean_i |u_ij|
    + 4 u |mu_j|``. Pass 2's row ``z_i = W^T (u_i - mu) / r_i``, ``r_i = ||u_i - mu||``, moves by at most
    ``e = (||d mu||_2 + 4 (m + p) u (1 + ||mu||)) / min_i r_i`` (a change of the released mean, and the
    per-row arithmetic's rounding): ``1 / r_i`` is the statistic's condition. With ``|z|^2 <= s`` (``s = 1 +
    a^2`` with the clipped label), each entry of the Gram matrix over ``n_c`` moves by ``2 (n_c + 4) u s + 2 e
    sqrt(s)``, the noisy ``S`` by ``4 u |S|`` more; the PSD projection is nonexpansive in the Frobenius norm
    and the symmetric eigensolver adds a backward error ``8 q u ||S||_2`` on each side, with ``||S||_2 <= q s +
    q n_sigmas b`` (``b`` the Laplace scale: a draw beyond 50 scales has probability ``e^-50``).
    """
    m, p = X.shape[1], fit.components_.shape[0]
    U_rows = ron_unit_rows(X)
    a = None if fit.mode != "supervised" else float(fit.label_bound)
    s = 1.0 if a is None else 1.0 + a * a
    if fit.mode == "gmm":
        groups = [y == c for c in fit.classes_]
        means, covs = fit.class_means_, fit.class_covariances_
        cov_sens = fit.sensitivity_["covariance"]
    else:
        groups, means, covs, cov_sens = (
            [np.ones(len(X), bool)],
            [fit.mean_],
            [fit.covariance_],
            [fit.sensitivity_["covariance"]],
        )
    out = []
    for rows, mu, cov, sens in zip(groups, means, covs, cov_sens, strict=True):
        n_c, q = rows.sum(), cov.shape[0]
        mean_bound = 2 * (n_c + m + 2) * U * np.abs(U_rows[rows]).mean(axis=0) + 4 * U * np.abs(mu)
        r_min = np.linalg.norm(U_rows[rows] - mu, axis=1).min()
        b = sens / fit.budget_["covariance"][0]
        S_norm = q * s + q * n_sigmas * b
        out.append((mean_bound, (r_min, np.linalg.norm(mu), m, p, q, n_c, s, S_norm)))
    return out


def ron_gauss_cov_bound(dmu, parts):
    r_min, mu_norm, m, p, q, n_c, s, S_norm = parts
    e = (dmu + 4 * (m + p) * U * (1 + mu_norm)) / r_min
    entry = 2 * (n_c + 4) * U * s + 2 * e * np.sqrt(s) + 4 * U * S_norm
    return q * entry + 16 * q * U * S_norm


RON_MODES = {
    "unsupervised": ({}, lambda y, labels: ()),
    "supervised": ({"label_bound": 1.5}, lambda y, labels: (labels,)),
    "gmm": ({}, lambda y, labels: (y,)),
}


def assert_ron_gauss_agrees(reference, other, X, y):
    bounds = ron_gauss_tolerances(reference, X, y)
    pairs = (
        [
            (
                reference.class_means_[c],
                other.class_means_[c],
                reference.class_covariances_[c],
                other.class_covariances_[c],
            )
            for c in range(len(bounds))
        ]
        if reference.mode == "gmm"
        else [(reference.mean_, other.mean_, reference.covariance_, other.covariance_)]
    )
    assert np.array_equal(reference.components_, other.components_)  # drawn from the seed alone
    for (mu_a, mu_b, cov_a, cov_b), (mean_bound, parts) in zip(pairs, bounds, strict=True):
        assert np.all(np.abs(mu_a - mu_b) <= mean_bound)
        assert np.linalg.norm(cov_a - cov_b) <= ron_gauss_cov_bound(np.linalg.norm(mu_a - mu_b), parts)


@pytest.mark.parametrize("mode", RON_MODES)
def test_ron_gauss_agrees_with_the_in_memory_fit_in_every_mode(mode):
    X, y, labels = ron_data()
    kw, args = RON_MODES[mode][0], RON_MODES[mode][1](y, labels)
    make = functools.partial(RONGauss, 3, 1.0, mode=mode, random_state=11, **kw)
    reference = make().fit(X, *args)
    lazy_fit = make().fit(lazy(X), *args)
    assert_ron_gauss_agrees(reference, lazy_fit, X, y)
    assert lazy_fit.budget_ == reference.budget_ and lazy_fit.sensitivity_.keys() == reference.sensitivity_.keys()
    drawn = lazy_fit.sample(7)  # from the released model alone: NumPy, no Dask
    assert all(isinstance(part, np.ndarray) for part in (drawn if isinstance(drawn, tuple) else (drawn,)))


@pytest.mark.parametrize("mode", RON_MODES)
def test_ron_gauss_reads_float32_in_float32_and_sums_in_float64(mode):
    X, y, labels = ron_data()
    X[CHUNKS + 1], X[2 * CHUNKS + 7] = X[CHUNKS + 1] * 1e-200, X[2 * CHUNKS + 7] * 1e200  # float32's range
    X32 = X.astype(np.float32)
    kw, args = RON_MODES[mode][0], RON_MODES[mode][1](y, labels)
    make = functools.partial(RONGauss, 3, 1.0, mode=mode, random_state=11, **kw)
    reference = make().fit(X32.astype(np.float64), *args)  # the same values, in float64
    for data in (X32, lazy(X32)):  # NumPy float32 and a float32 Dask array: neither is copied to float64 in full
        assert_ron_gauss_agrees(reference, make().fit(data, *args), X32.astype(np.float64), y)


def test_ron_gauss_exact_noise_agrees_to_one_grid_step():
    X, y, _ = ron_data()
    fits = [RONGauss(3, 1.0, noise="exact", random_state=11).fit(data) for data in (X, lazy(X))]
    ((mean_bound, parts),) = ron_gauss_tolerances(fits[0], X, y)
    step = fits[0].sensitivity_["mean"] * 2.0**-20  # the grid is finer than this: rounding to it may flip once
    assert np.all(np.abs(fits[0].mean_ - fits[1].mean_) <= mean_bound + step)
    step_cov = fits[0].sensitivity_["covariance"] * 2.0**-20 * parts[4]
    dmu = np.linalg.norm(fits[0].mean_ - fits[1].mean_)
    assert np.linalg.norm(fits[0].covariance_ - fits[1].covariance_) <= ron_gauss_cov_bound(dmu, parts) + step_cov


def test_ron_gauss_refuses_a_bad_label_in_a_chunk_and_a_chunk_failing_in_pass_2():
    X, y, labels = ron_data()
    labels[CHUNKS * 5] = np.inf
    model = RONGauss(2, 1.0, mode="supervised", label_bound=1.0, random_state=0)
    with pytest.raises(ValueError, match="y contains NaN or infinite"):
        model.fit(lazy(X), labels)
    assert not any(hasattr(model, a) for a in ("budget_", "components_", "mean_"))
    reads = {}

    def second_read_fails(rows, block_info=None):
        chunk = block_info[0]["chunk-location"][0]
        reads[chunk] = reads.get(chunk, 0) + 1
        if chunk == 3 and reads[chunk] == 2:
            raise OSError("chunk 3 could not be read again")
        return rows

    model = RONGauss(2, 1.0, random_state=0)
    with pytest.raises(OSError, match="could not be read again"):  # after pass 1 and the mean's noise
        model.fit(lazy(X).map_blocks(second_read_fails, dtype=X.dtype))
    assert reads[3] == 2 and not any(hasattr(model, a) for a in ("budget_", "components_", "mean_", "_rng"))


def box_data(n=2000, d=9, seed=6):
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(size=(n, d)) / 2, -1, 1), rng.integers(0, 3, n), np.clip(rng.normal(size=n), -1, 1)


PCA_CASES = {  # (PCAGauss keywords, n_components, the fit's arguments from (y, labels))
    "data-derived basis": ({}, 3, lambda y, labels: ()),
    "basis, 2K < M": ({"basis": haar_stiefel(9, 3, random_state=1), "mean_fraction": 0.2}, 3, lambda y, labels: ()),
    "basis, 2K >= M": ({"basis": haar_stiefel(9, 5, random_state=1), "mean_fraction": 0.2}, 5, lambda y, labels: ()),
    "supervised": (
        {"mode": "supervised", "basis": haar_stiefel(9, 3, random_state=1), "mean_fraction": 0.1},
        3,
        lambda y, labels: (labels,),
    ),
    "gmm": ({"mode": "gmm", "basis": haar_stiefel(9, 3, random_state=1), "n_classes": 3}, 3, lambda y, labels: (y,)),
    "gmm, paper": (
        {"mode": "gmm", "basis": haar_stiefel(9, 3, random_state=1), "n_classes": 3, "noise_scale": "paper"},
        3,
        lambda y, labels: (y,),
    ),
}


def pca_gauss_tolerance(fit, n, m, n_sigmas=50.0):
    """Bounds ``(entrywise for means, Frobenius for covariances)`` on a PCAGauss release's change by round-off.

    The reduced rows lie in ``[-a, a]^q`` (``a = 1`` here, the label's bound too), so every statistic is a sum
    over at most ``n`` rows of terms of size ``a`` or ``a^2``, each formed in at most ``3 m`` roundings (the
    product with the basis, and ``W^T G W`` for ``2 K >= M``): two orders differ by ``T_2 = 2 (n + 3 m + 8) u
    a^2`` per entry over ``n`` (``T_1`` with ``a``); centring (``mu mu^T``, or the paper's class covariances in
    one pass against two) and the counts' division at most quadruple that. The clip and the PSD projection are
    nonexpansive; the eigensolver adds ``8 q u ||S||_2`` on each side, ``||S||_2 <= q a^2 + q n_sigmas b``.
    """
    a, q = 1.0, (fit.covariance_ if hasattr(fit, "covariance_") else fit.class_covariances_[0]).shape[0]
    t1, t2 = 8 * (n + 3 * m + 8) * U * a, 8 * (n + 3 * m + 8) * U * a * a
    b = max(np.max(v) for v in fit.sensitivity_.values()) / min(e for e, _ in fit.budget_.values())
    S_norm = q * a * a + q * n_sigmas * b
    return t1, q * (t2 + 2 * a * t1) + 16 * q * U * S_norm


def assert_pca_gauss_agrees(reference, other, n, m):
    t_mean, t_cov = pca_gauss_tolerance(reference, n, m)
    names = (
        ("class_means_", "class_covariances_", "class_weights_")
        if reference.mode == "gmm"
        else ("mean_", "covariance_")
    )
    for name in names:
        A, B = getattr(reference, name), getattr(other, name)
        if name.endswith("covariances_") or name == "covariance_":
            assert np.linalg.norm(A - B) <= t_cov * (len(A) if A.ndim == 3 else 1)
        else:
            assert np.all(np.abs(A - B) <= t_mean)


@pytest.mark.parametrize("case", PCA_CASES)
def test_pca_gauss_agrees_with_the_in_memory_fit_in_every_mode(case):
    X, y, labels = box_data()
    kw, k, args = PCA_CASES[case]
    make = functools.partial(PCAGauss, k, 1.0, bounds=(-1.0, 1.0), random_state=8, **kw)
    reference = make().fit(X, *args(y, labels))
    for data, values in ((lazy(X), X), (X.astype(np.float32), None), (lazy(X.astype(np.float32)), None)):
        other = make().fit(data, *args(y, labels))
        if values is None:  # float32: against the in-memory fit of the same values
            reference32 = make().fit(X.astype(np.float32).astype(np.float64), *args(y, labels))
            assert_pca_gauss_agrees(reference32, other, *X.shape)
        else:
            assert_pca_gauss_agrees(reference, other, *X.shape)
        assert other.budget_ == reference.budget_
    drawn = other.sample(5)
    assert all(isinstance(part, np.ndarray) for part in (drawn if isinstance(drawn, tuple) else (drawn,)))
