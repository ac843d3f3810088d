import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from dpnb.numerics.linalg import (
    BLOCK_VALUES,
    MIN_BLOCK_ROWS,
    block_rows,
    gram_block_rows,
    one_blas_thread,
    project_psd,
    row_blocks,
    symmetrize_upper,
    top_eigenvectors,
)


def test_symmetrize_upper_keeps_upper_triangle():
    A = np.arange(9.0).reshape(3, 3)
    S = symmetrize_upper(A)
    assert np.array_equal(S, S.T)
    assert np.array_equal(np.triu(S), np.triu(A))


def test_project_psd_is_nearest_psd():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(5, 5))
    A = (B + B.T) / 2
    P = project_psd(A)
    assert np.linalg.eigvalsh(P).min() >= -1e-12
    # nearest in Frobenius norm: no random PSD matrix is closer
    for _ in range(200):
        C = rng.normal(size=(5, 5))
        Q = P + 0.1 * C @ C.T
        assert np.linalg.norm(A - P) <= np.linalg.norm(A - Q) + 1e-12
    # a PSD matrix is left unchanged
    assert np.allclose(project_psd(P), P)


def test_project_psd_min_eigenvalue_and_bad_input():
    assert np.linalg.eigvalsh(project_psd(-np.eye(3), 0.5)).min() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="min_eigenvalue"):
        project_psd(np.eye(2), -1)
    with pytest.raises(ValueError, match="square"):
        project_psd(np.ones((2, 3)))


def test_top_eigenvectors():
    A = np.diag([1.0, 3.0, 2.0])
    w, V = top_eigenvectors(A, 2)
    assert np.allclose(w, [3, 2])
    assert np.allclose(np.abs(V), [[0, 0], [1, 0], [0, 1]])
    assert np.all(V.max(axis=0) > 0)  # sign convention
    with pytest.raises(ValueError, match="n_components"):
        top_eigenvectors(A, 4)


def test_top_eigenvectors_partial_and_full_decompositions_agree():
    # k <= d / 2 takes LAPACK's subset driver, k > d / 2 the full eigh: the same top pairs and signs
    G = np.random.default_rng(3).standard_normal((40, 40))
    A = G + G.T
    w_few, V_few = top_eigenvectors(A, 5)
    w_all, V_all = top_eigenvectors(A, 40)
    np.testing.assert_allclose(w_few, w_all[:5], rtol=1e-12)
    np.testing.assert_allclose(V_few, V_all[:, :5], atol=1e-10)
    np.testing.assert_allclose(V_few.T @ V_few, np.eye(5), atol=1e-12)


def test_symmetrize_upper_on_a_stack_and_bad_shape():
    A = np.arange(18.0).reshape(2, 3, 3)
    S = symmetrize_upper(A)
    assert np.array_equal(S, np.swapaxes(S, 1, 2))
    assert all(np.array_equal(S[i], symmetrize_upper(A[i])) for i in range(2))
    with pytest.raises(ValueError, match="square"):
        symmetrize_upper(np.zeros((2, 3)))


def test_triangle_parts():
    from dpnb.numerics.linalg import triangle

    A = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(triangle(A), [0, 1, 2, 4, 5, 8])
    np.testing.assert_array_equal(triangle(A, part="full"), np.arange(9.0))
    assert triangle(np.stack([A, A, A])).shape == (3, 6)
    with pytest.raises(ValueError, match=r"part must be one of \('upper', 'full'\)"):
        triangle(A, part="lower")
    with pytest.raises(TypeError, match="part"):
        triangle(A, part=None)
    with pytest.raises(ValueError, match="square"):
        triangle(np.zeros((2, 3)))


@pytest.mark.parametrize("d", [1, 2, 5, 40])
def test_triangle_reads_numpys_upper_indices_and_a_result_never_shares_them(d):
    """The indices are formed once per size and shared: the result is a copy, and the shared indices are read-only."""
    from dpnb.numerics.linalg import _upper_indices, triangle

    A = np.random.default_rng(d).standard_normal((3, d, d))
    upper = triangle(A)
    np.testing.assert_array_equal(upper, A[..., *np.triu_indices(d)])
    upper[...] = 0.0
    np.testing.assert_array_equal(triangle(A), A[..., *np.triu_indices(d)])
    assert not any(index.flags.writeable for index in _upper_indices(d))


def test_haar_stiefel_is_orthonormal_and_haar():
    from scipy import stats

    from dpnb.numerics.linalg import haar_stiefel

    W = haar_stiefel(6, 3, random_state=0)
    np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-12)
    frames = haar_stiefel(4, 2, size=4000, random_state=1)
    assert frames.shape == (4000, 4, 2)
    # Under Haar, each column is uniform on the sphere: its first coordinate has the law of
    # 2 B - 1 with B ~ Beta(3/2, 3/2) in d = 4. Without the sign fix the diagonal of R > 0 skews it.
    for col in range(2):
        p = stats.kstest((frames[:, 0, col] + 1) / 2, stats.beta(1.5, 1.5).cdf).pvalue
        assert p > 1e-3
    with pytest.raises(ValueError):
        haar_stiefel(3, 4)
    with pytest.raises(TypeError):
        haar_stiefel(3.0, 1)


def test_eigen_coordinate_draws_have_the_distances_of_gaussian_draws():
    from dpnb.numerics.linalg import eigen_coordinate_draws, gaussian_draws

    G = np.random.default_rng(4).standard_normal((6, 3))
    cov = G @ G.T  # rank 3 of 6: three eigenvalues are round-off and dropped
    Z = eigen_coordinate_draws(cov, 50, random_state=7)
    X = gaussian_draws(np.ones(6), cov, 50, random_state=7)
    assert Z.shape == (50, 3)
    dist = lambda A: np.linalg.norm(A[:, None] - A[None], axis=-1)  # noqa: E731
    np.testing.assert_allclose(dist(Z), dist(X), atol=1e-8)
    # the same number of draws is consumed whatever is kept
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    eigen_coordinate_draws(cov, 5, random_state=a)
    eigen_coordinate_draws(np.eye(6), 5, random_state=b)
    assert a.random() == b.random()
    assert eigen_coordinate_draws(np.zeros((2, 2)), 4, random_state=0).shape == (4, 0)  # every draw the same point
    with pytest.raises(ValueError, match="square"):
        eigen_coordinate_draws(np.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="n_samples"):
        eigen_coordinate_draws(np.eye(2), -1)


@pytest.mark.parametrize("n_rows, n_columns", [(0, 5), (1, 5), (1000, 3), (5000, 77), (2000, 1000), (10, 0)])
def test_row_blocks_cover_the_rows_in_order_with_the_block_size(n_rows, n_columns):
    blocks = list(row_blocks(n_rows, n_columns))
    covered = np.concatenate([np.arange(n_rows)[b] for b in blocks]) if blocks else np.empty(0, int)
    assert np.array_equal(covered, np.arange(n_rows))
    step = max(MIN_BLOCK_ROWS, BLOCK_VALUES // max(n_columns, 1))
    assert all(b.stop - b.start == step for b in blocks[:-1])
    assert all(0 < b.stop - b.start <= step for b in blocks)


def test_blocks_hold_a_fixed_number_of_values_and_at_least_256_rows():
    assert block_rows(20) == BLOCK_VALUES // 20 and block_rows(np.int64(77)) == BLOCK_VALUES // 77
    assert block_rows(10**6) == MIN_BLOCK_ROWS == 256 and block_rows(1) == block_rows(0) == BLOCK_VALUES
    with pytest.raises(ValueError, match="n_columns must be an integer >= 0"):
        block_rows(-1)
    with pytest.raises(TypeError, match="n_columns must be an integer"):
        block_rows(2.0)


def test_gram_blocks_are_cache_sized_while_narrow_and_hold_eight_rows_per_column_when_wide():
    assert [gram_block_rows(d) == block_rows(d) for d in (0, 1, 20, 77, 181)] == [True] * 5
    assert gram_block_rows(182) == 8 * 182 > block_rows(182) and gram_block_rows(10**6) == 8 * 10**6
    with pytest.raises(ValueError, match="n_columns must be an integer >= 0"):
        gram_block_rows(-1)
    with pytest.raises(TypeError, match="n_columns must be an integer"):
        gram_block_rows(2.0)


def test_row_blocks_bad_input():
    with pytest.raises(ValueError, match="n_rows"):
        list(row_blocks(-1, 3))
    with pytest.raises(TypeError, match="n_columns"):
        list(row_blocks(3, 2.5))


def test_one_blas_thread_limits_blas_inside_and_restores_it():
    def blas_threads():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    with threadpool_limits(2, user_api="blas"):  # a known number of threads outside, whatever the machine's default
        assert blas_threads() == {2}
        with one_blas_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {2}
