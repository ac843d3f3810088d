"""Fits on Dask arrays and float32 input (dpnb.numerics.blocks): the in-memory release, to the round-off of summation.

The statistics of a Dask fit are the sums of its chunks' sums; the in-memory fit sums the same terms in
another order. For ``m`` terms, any order of summation is within ``(m - 1) u sum |terms|`` of the exact sum
(``u = 2^-53``; the products add ``u |term|`` each), so the two results differ by at most
``2 m u sum |terms|``: that is the tolerance, entry by entry, of every comparison below.
"""

import functools

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dpnb.numerics.blocks import check_rows, float64_blocks, is_dask_array, map_rows, project_rows, row_sums  # noqa: E402
from dpnb.papers.component_analysis import DPPCAPublisher  # noqa: E402
from dpnb.papers.dppro import DPPro  # noqa: E402
from dpnb.papers.lda_publishing import DPLDAPublisher  # noqa: E402
from dpnb.papers.onehot import checked_moments  # noqa: E402
from dpnb.papers.private_pca import PPCA, ModSULQ, second_moment  # noqa: E402

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
    args = (y,) if name == "DPLDAPublisher" else ()
    bad = X.copy()
    bad[CHUNKS * 4 + 2, 1] = 7.0  # outside [0, 1] and outside the unit ball
    estimator = make()
    with pytest.raises(ValueError):
        estimator.fit(lazy(bad), *args)
    assert not hasattr(estimator, attribute) and not hasattr(estimator, "n_features_in_")
    failing = lazy(X).map_blocks(functools.partial(_raise_on_chunk, chunk=4), dtype=X.dtype)
    with pytest.raises(OSError, match="could not be read"):
        estimator.fit(failing, *args)
    assert not hasattr(estimator, attribute) and not hasattr(estimator, "n_features_in_")


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
    local = ModSULQ(3, 1.0, delta=1e-5, random_state=7).fit(lazy(X, 1000))  # the same chunks, synchronously
    assert np.array_equal(remote.components_, local.components_)
    assert np.array_equal(
        published.means_, DPLDAPublisher(1.0, group_sizes=(3,), random_state=5).fit(*onehot_rows()).means_
    )


def test_estimators_without_a_block_reduction_refuse_dask_input():
    from dpnb.papers.pca_gauss import PCAGauss
    from dpnb.papers.ron_gauss import RONGauss

    X = lazy(unit_rows())
    with pytest.raises(TypeError, match="RONGauss does not reduce Dask arrays"):
        RONGauss(2, 1.0).fit(X)
    with pytest.raises(TypeError, match="PCAGauss does not reduce Dask arrays"):
        PCAGauss(2, 1.0, bounds=(-1.0, 1.0)).fit(X)
