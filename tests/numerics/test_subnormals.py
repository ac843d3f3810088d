import numpy as np
import pytest
import scipy.linalg

from dpnb.numerics import subnormals
from dpnb.numerics.subnormals import flushed_subnormals

pytestmark = pytest.mark.skipif(not subnormals.supported(), reason="flushes only on x86-64")

TINY32 = np.float32(1e-40)  # subnormal in float32


def test_subnormal_inputs_and_results_are_zero_inside_the_block_only():
    assert TINY32 * np.float32(2) > 0 and np.finfo(np.float32).tiny * np.float32(0.25) > 0
    with flushed_subnormals():
        assert TINY32 * np.float32(2) == 0  # subnormal input read as zero
        assert np.finfo(np.float32).tiny * np.float32(0.25) == 0  # subnormal result rounded to zero
        assert np.float64(1e-310) * 1.0 == 0  # float64 too
        with flushed_subnormals():  # nested
            assert TINY32 + TINY32 == 0
        assert TINY32 * np.float32(2) == 0  # still inside the outer block
    assert TINY32 * np.float32(2) > 0


def test_the_previous_setting_is_restored_after_an_exception():
    get = subnormals._mxcsr_access()[0]
    before = get() & subnormals.FTZ_DAZ
    with pytest.raises(RuntimeError), flushed_subnormals():
        assert get() & subnormals.FTZ_DAZ == subnormals.FTZ_DAZ
        raise RuntimeError
    assert get() & subnormals.FTZ_DAZ == before
    assert TINY32 * np.float32(2) > 0


def test_a_float32_factor_of_a_nearly_diagonal_kernel_makes_no_subnormals_inside():
    """Far-apart points: the factor fills in with tiny products, which the block rounds to zero."""
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((300, 2)) * 40
    K = np.exp(-0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)) + 0.1 * np.eye(300)
    A = K.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    plain = np.tril(scipy.linalg.cho_factor(A, lower=True)[0])
    with flushed_subnormals():
        flushed = np.tril(scipy.linalg.cho_factor(A, lower=True)[0])
    assert np.count_nonzero((plain != 0) & (np.abs(plain) < tiny)) > 0  # the case the block is for
    assert np.count_nonzero((flushed != 0) & (np.abs(flushed) < tiny)) == 0
    assert np.abs(flushed - plain).max() < 1e-30  # only values near the smallest normal number changed
    assert np.abs(flushed @ flushed.T - A).max() <= 1e-6  # still a factor of A to float32 accuracy
