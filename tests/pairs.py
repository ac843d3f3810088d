"""Shared by the chapters' worst-case pair tests: what a replace-one-row neighbour pair must look like."""

import numpy as np


def assert_differ_in_row0(X, X_prime):
    """``X`` and ``X_prime`` have one shape and differ in row 0 only (replace-one neighbours at row 0)."""
    assert X.shape == X_prime.shape
    assert not np.array_equal(X[0], X_prime[0])
    np.testing.assert_array_equal(X[1:], X_prime[1:])
