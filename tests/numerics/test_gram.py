"""dpnb.numerics.gram: the compiled one-pass check and Gram matrix of [x | class indicators]."""

import numpy as np
import pytest

from dpnb.numerics.gram import GRID, indicator_gram
from dpnb.numerics.linalg import block_rows

GROUPS = np.array([[2, 4], [4, 7]])  # two numeric columns, then one-hot groups of sizes 2 and 3


def rows(n, rng):
    numeric = rng.random((n, 2))
    return np.column_stack([numeric, np.eye(2)[rng.integers(2, size=n)], np.eye(3)[rng.integers(3, size=n)]])


def refuse(block):
    raise ValueError("bad block")


def test_blocks_of_the_gram_matrix_are_the_sums():
    rng = np.random.default_rng(0)
    X = rows(1000, rng)
    y = rng.integers(3, size=1000)
    G = indicator_gram(X, y, 3, GROUPS, grid=False, on_bad_rows=refuse, chunk=97)
    Z = np.column_stack([X, np.eye(3)[y]])
    assert np.allclose(G, Z.T @ Z, rtol=1e-13, atol=0)
    assert np.array_equal(np.diag(G)[7:], np.bincount(y, minlength=3))  # class counts
    ones = indicator_gram(X, np.empty(0, dtype=int), 1, GROUPS, grid=False, on_bad_rows=refuse)
    assert ones[7, 7] == 1000 and np.allclose(ones[7, :7], X.sum(axis=0), rtol=1e-13)


def test_grid_rounds_to_multiples_of_2_to_the_minus_16_and_is_exact():
    rng = np.random.default_rng(1)
    X = rows(500, rng)
    X[0, :2] = [2.0**-17, 3 * 2.0**-17]  # ties: to even, 0 and 2 * 2^-16
    y = rng.integers(2, size=500)
    G = indicator_gram(X, y, 2, GROUPS, grid=True, on_bad_rows=refuse, chunk=64)
    a = np.rint(X * GRID)
    assert a[0, 0] == 0 and a[0, 1] == 2
    Z = np.column_stack([a, GRID * np.eye(2)[y]])
    assert np.array_equal(G, Z.T @ Z)  # integers below 2^53: exact in any order
    shuffled = rng.permutation(500)
    assert np.array_equal(indicator_gram(X[shuffled], y[shuffled], 2, GROUPS, grid=True, on_bad_rows=refuse), G)


@pytest.mark.parametrize(
    "row, col, value",
    [(999, 0, -0.1), (0, 1, 1.5), (500, 0, np.nan), (3, 2, 0.5), (7, 4, 1.0), (9, 6, np.inf)],
)
def test_every_invalid_value_reaches_the_validator(row, col, value):
    rng = np.random.default_rng(2)
    X = rows(1000, rng)
    X[row, col] = value
    seen = []

    def validator(block):
        seen.append(block)
        raise ValueError("worded by the validator")

    with pytest.raises(ValueError, match="worded by the validator"):
        indicator_gram(X, np.empty(0, dtype=int), 1, GROUPS, grid=False, on_bad_rows=validator, chunk=128)
    assert len(seen) == 1 and np.shares_memory(seen[0], X) and seen[0].shape[0] == (128 if row < 896 else 1000 - 896)


def test_a_validator_that_does_not_raise_is_an_error_not_a_silent_pass():
    X = rows(10, np.random.default_rng(3))
    X[4, 0] = 2.0
    with pytest.raises(RuntimeError, match="row 4"):
        indicator_gram(X, np.empty(0, dtype=int), 1, GROUPS, grid=True, on_bad_rows=lambda block: None)


def test_negative_zero_is_in_the_box():
    X = rows(20, np.random.default_rng(4))
    X[5, 0] = -0.0
    G = indicator_gram(X, np.empty(0, dtype=int), 1, GROUPS, grid=False, on_bad_rows=refuse)
    assert np.isfinite(G).all()


def test_default_blocks_give_the_same_exact_grid_sums():
    rng = np.random.default_rng(5)
    X = rows(3 * block_rows(7) + 11, rng)  # several default blocks and a short last one
    y = rng.integers(2, size=X.shape[0])
    Z = np.column_stack([np.rint(X * GRID), GRID * np.eye(2)[y]])
    assert np.array_equal(indicator_gram(X, y, 2, GROUPS, grid=True, on_bad_rows=refuse), Z.T @ Z)
