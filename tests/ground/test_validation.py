import numpy as np
import pytest

from dpnb.ground.validation import (
    check_array,
    check_bool,
    check_bounds,
    check_choice,
    check_data_in_bounds,
    check_delta,
    check_epsilon,
    check_fraction,
    check_in_box,
    check_n_components,
    check_nonnegative,
    check_per_feature,
    check_positive,
    check_random_state,
    check_row_norms,
    check_square,
    check_symmetric,
    first_few,
)


@pytest.mark.parametrize("bad", [0, -1.0, -np.inf, np.nan])
def test_check_epsilon_rejects_values(bad):
    with pytest.raises(ValueError, match="epsilon"):
        check_epsilon(bad)


@pytest.mark.parametrize("bad", ["1", True, None])
def test_check_epsilon_rejects_types(bad):
    with pytest.raises(TypeError, match="epsilon"):
        check_epsilon(bad)


def test_check_epsilon_infinity_means_no_noise_unless_refused():
    assert check_epsilon(np.inf) == np.inf
    with pytest.raises(ValueError, match="finite"):
        check_epsilon(np.inf, allow_infinite=False)


def test_check_epsilon_accepts_numpy_scalars():
    assert check_epsilon(np.float32(0.5)) == pytest.approx(0.5)
    assert isinstance(check_epsilon(2), float)


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, np.nan])
def test_check_delta_rejects(bad):
    with pytest.raises(ValueError, match="delta"):
        check_delta(bad)


@pytest.mark.parametrize("bad", ["0.1", False])
def test_check_delta_rejects_types(bad):
    with pytest.raises(TypeError, match="delta"):
        check_delta(bad)


def test_check_delta_accepts():
    assert check_delta(1e-5) == 1e-5


@pytest.mark.parametrize("bad", [0, -2, np.inf])
def test_check_positive(bad):
    with pytest.raises(ValueError, match="radius"):
        check_positive(bad, "radius")
    with pytest.raises(TypeError, match="radius"):
        check_positive(None, "radius")
    assert check_positive(3, "radius") == 3.0


def test_check_array():
    assert check_array([[1, 2]]).dtype == np.float64
    with pytest.raises(ValueError, match="2-dimensional"):
        check_array([1, 2])
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_array([[1, np.nan]])
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_array([[1, np.inf]])
    with pytest.raises(ValueError, match="at least 2 row"):
        check_array(np.zeros((1, 3)), min_rows=2)
    with pytest.raises(TypeError, match="X must be a numeric"):
        check_array([["a", "b"]])
    with pytest.raises(TypeError, match="X must be real-valued"):
        check_array([[1j, 2]])
    with pytest.raises(ValueError, match="X must be a rectangular"):
        check_array([[1.0, 2.0], [3.0]])
    assert check_array(3.0, ndim=None).shape == ()


def test_check_array_refuses_sparse_matrices_with_advice():
    import scipy.sparse

    with pytest.raises(TypeError, match=r"X must be a dense array.*toarray"):
        check_array(scipy.sparse.csr_matrix(np.eye(2)))


def test_check_bounds():
    low, high = check_bounds((0, [1.0, 2.0]))
    np.testing.assert_array_equal(low, [0.0, 0.0])
    np.testing.assert_array_equal(high, [1.0, 2.0])
    assert check_bounds((-1, 1), 3)[0].shape == (3,)
    for bad, error, match in [
        ((-np.inf, np.inf), ValueError, "bounds must be finite numbers: declare"),
        ((np.nan, 1.0), ValueError, "bounds must be finite"),
        ((1.0, 1.0), ValueError, "low < high"),
        ((-1e308, 1e308), ValueError, "too wide"),
        ((0.0, 1.0, 2.0), TypeError, "bounds must be a pair"),
        ("ab", TypeError, "bounds must be a pair"),
        (("a", 1.0), TypeError, "bounds low must be a numeric"),
        (([0, 0], [1, 1, 1]), ValueError, "one entry per feature"),
    ]:
        with pytest.raises(error, match=match):
            check_bounds(bad)
    with pytest.raises(ValueError, match="one entry per feature"):
        check_bounds(([0, 0], [1, 1]), 3)


def test_check_symmetric():
    A = np.array([[1.0, 2.0], [2.0, 3.0]])
    assert check_symmetric(A) is not None
    with pytest.raises(ValueError, match="M must be symmetric"):
        check_symmetric(np.array([[0.0, 5.0], [2.0, 0.0]]), name="M")
    W = np.random.default_rng(0).standard_normal((5, 3))
    check_symmetric(W.T @ np.diag([1.0, 2.0, 3.0, 4.0, 5.0]) @ W)  # rounding asymmetry passes


def test_check_choice_and_fraction():
    assert check_choice("a", "mode", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="mode must be one of"):
        check_choice("c", "mode", ("a", "b"))
    with pytest.raises(TypeError, match="mode must be one of"):
        check_choice(None, "mode", ("a", "b"))
    assert check_fraction(0, "f") == 0.0
    for bad in (1.0, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"f must be a number in \[0, 1\)"):
            check_fraction(bad, "f")
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        check_fraction(0.0, "f", low_open=True)
    with pytest.raises(TypeError, match="f must be"):
        check_fraction("0.5", "f")


def test_check_square():
    with pytest.raises(ValueError, match="square"):
        check_square(np.zeros((2, 3)))


@pytest.mark.parametrize("k", [0, 4])
def test_check_n_components_rejects(k):
    with pytest.raises(ValueError, match="n_components"):
        check_n_components(k, 3)


@pytest.mark.parametrize("k", [1.5, True])
def test_check_n_components_rejects_types(k):
    with pytest.raises(TypeError, match="n_components"):
        check_n_components(k, 3)


def test_check_n_components_accepts():
    assert check_n_components(np.int64(3), 3) == 3


def test_check_in_box():
    X = np.array([[0.0, 1.0]])
    assert check_in_box(X, 0, 1) is not None
    with pytest.raises(ValueError, match="outside the declared bounds"):
        check_in_box(X, 0, 0.5)
    with pytest.raises(ValueError, match="low < high"):
        check_in_box(X, 1, 1)
    # per-column bounds broadcast
    check_in_box(X, [0, 1], [0.5, 2])


def test_check_row_norms():
    X = np.array([[0.6, 0.8], [0.3, 0.0]])
    check_row_norms(X, 1.0)
    with pytest.raises(ValueError, match="L2 norm"):
        check_row_norms(X * 2, 1.0)


def test_check_random_state():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    a = check_random_state(5).random()
    assert a == check_random_state(5).random()
    assert isinstance(check_random_state(None), np.random.Generator)
    assert isinstance(check_random_state(np.random.SeedSequence(1)), np.random.Generator)
    for bad in (np.random.RandomState(0), "seed", 1.5, True):
        with pytest.raises(TypeError, match="random_state"):
            check_random_state(bad)
    with pytest.raises(ValueError, match="random_state must be a non-negative int"):
        check_random_state(-1)


def test_check_integer():
    from dpnb.ground.validation import check_integer

    assert check_integer(np.int64(3), "k") == 3
    assert check_integer(0, "steps", minimum=0) == 0
    for bad in (0, -1):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            check_integer(bad, "k")
    for bad in (2.0, True, "3", None):
        with pytest.raises(TypeError, match="k must be an integer >= 1"):
            check_integer(bad, "k")


def test_check_array_can_leave_finiteness_to_the_caller():
    X = np.array([[0.0, np.nan], [np.inf, 1.0]])
    assert np.array_equal(check_array(X, finite=False), X, equal_nan=True)
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_array(X)
    with pytest.raises(ValueError, match="2-dimensional"):
        check_array(np.zeros(3), finite=False)


@pytest.mark.parametrize("value", [-0.5, 2.5, np.nan, np.inf, -np.inf])
def test_check_matrix_in_box_agrees_with_check_in_box(value):
    from dpnb.ground.validation import check_matrix_in_box

    rng = np.random.default_rng(9)
    low, high = np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0])
    X = rng.uniform(low, high, size=(1000, 3))
    assert check_matrix_in_box(X, low, high) is X
    X[[0, 1], [0, 1]] = low[:2]  # the bounds themselves are inside
    X[[2, 3], [1, 2]] = high[1:]
    check_matrix_in_box(X, low, high)
    for row in (0, 63, 64, 999):  # first and last rows of the compiled loop's groups
        bad = X.copy()
        bad[row, 2] = value
        match = "NaN or infinite" if not np.isfinite(value) else "outside the declared bounds"
        with pytest.raises(ValueError, match=match):
            check_matrix_in_box(bad, low, high)
        with pytest.raises(ValueError, match=match):
            check_in_box(bad, low, high)


def test_check_sensitivity_refuses_underflow_and_overflow_naming_the_parameter():
    from dpnb.ground.validation import check_sensitivity

    assert check_sensitivity(1e-300) == 1e-300
    for value, word in ((0.0, "narrow"), (1e-310, "narrow"), (np.inf, "wide")):
        with pytest.raises(ValueError, match=f"bounds are too {word}"):
            check_sensitivity(value)


def test_check_release_range_refuses_a_release_that_can_overflow():
    from dpnb.ground.validation import check_release_range

    check_release_range(1e300, 1e300)  # 1e300 + 1024e300 is finite
    check_release_range(np.array([1.0, 2.0]), np.array([0.0, 1.0]))  # scale 0: no noise
    for magnitude, scale in ((1.7e308, 1e305), (1.0, 1e306), (1.0, 2e300)):
        with pytest.raises(ValueError, match="bounds and epsilon"):
            check_release_range(magnitude, scale)
    with pytest.raises(ValueError, match="narrow"):
        check_release_range(1.0, 1e-310)


def test_check_data_in_bounds_checks_the_box_and_the_data():
    from dpnb.ground.validation import check_data_in_bounds

    X = np.array([[0.0, 1.0], [0.5, -1.0]])
    out, low, high = check_data_in_bounds(X, (-1.0, (1.0, 2.0)))
    assert out is X and np.array_equal(low, [-1.0, -1.0]) and np.array_equal(high, [1.0, 2.0])
    with pytest.raises(ValueError, match="X"):
        check_data_in_bounds(X, (-1.0, 0.5))
    with pytest.raises(ValueError, match="NaN"):
        check_data_in_bounds(np.array([[np.nan, 0.0]]), (-1.0, 1.0))
    with pytest.raises(ValueError, match="bounds must be finite"):
        check_data_in_bounds(X, (-np.inf, np.inf))
    with pytest.raises(ValueError, match="at least 2"):
        check_data_in_bounds(X[:1], (-1.0, 1.0), min_rows=2)


def test_check_nonnegative():
    assert check_nonnegative(0, "sigma") == 0.0 and check_nonnegative(np.float64(2.5), "sigma") == 2.5
    for bad in (-1e-300, np.inf, np.nan):
        with pytest.raises(ValueError, match="sigma must be finite and >= 0"):
            check_nonnegative(bad, "sigma")
    for bad in ("1", True, None):
        with pytest.raises(TypeError, match="sigma must be a real number >= 0"):
            check_nonnegative(bad, "sigma")


def test_check_per_feature():
    assert np.array_equal(check_per_feature(2, 3, "weights"), [2.0, 2.0, 2.0])
    v = np.array([1.0, 2.0])
    out = check_per_feature(v, 2, "weights")
    assert np.array_equal(out, v) and out.dtype == np.float64 and out is not v
    with pytest.raises(ValueError, match=r"weights must be a scalar or have one entry per feature \(3\)"):
        check_per_feature([1.0, 2.0], 3, "weights")
    with pytest.raises(ValueError, match="weights"):
        check_per_feature([[1.0]], 1, "weights")
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_per_feature([1.0, np.nan], 2, "weights")
    with pytest.raises(TypeError, match="weights"):
        check_per_feature(["a"], 1, "weights")


def test_check_bool():
    assert check_bool(True, "flag") is True and check_bool(np.bool_(False), "flag") is False
    for bad in (0, 1, "yes", None):
        with pytest.raises(TypeError, match="flag must be True or False"):
            check_bool(bad, "flag")


def test_check_bounds_strict_and_not():
    with pytest.raises(ValueError, match="low < high"):
        check_bounds((1.0, 1.0))
    low, high = check_bounds((1.0, [1.0, 2.0]), strict=False)
    assert np.array_equal(low, [1.0, 1.0]) and np.array_equal(high, [1.0, 2.0])
    with pytest.raises(ValueError, match="low <= high"):
        check_bounds((2.0, 1.0), strict=False)


@pytest.mark.parametrize(
    "y, expected",
    [
        (np.array([3, -2, 7, 0]), (-2, 7)),
        (np.array([5], dtype=np.uint8), (5, 5)),
        (np.array([2**63 + 1, 4], dtype=np.uint64), (4, 2**63 + 1)),
        (np.array([0.5, -1.5, 2.0]), (-1.5, 2.0)),
    ],
)
def test_value_range_is_min_and_max_in_one_pass(y, expected):
    from dpnb.ground.compiled import value_range

    low, high = value_range(y)
    assert (low, high) == expected and (low, high) == (y.min(), y.max())


D_MNIST = 784  # an MNIST row: error messages must stay short however many features offend


@pytest.mark.parametrize(
    "call",
    [
        lambda X: check_data_in_bounds(2 * X, (-1.0, 1.0)),
        lambda X: check_data_in_bounds(2 * X, (-np.ones(D_MNIST), np.ones(D_MNIST))),
        lambda X: check_bounds((np.ones(D_MNIST), np.zeros(D_MNIST)), D_MNIST),
        lambda X: check_bounds((np.full(D_MNIST, -np.inf), np.linspace(1, 2, D_MNIST)), D_MNIST),
    ],
)
def test_an_error_on_784_features_is_short_and_names_the_count(call):
    X = np.random.default_rng(0).uniform(0.6, 1, (5, D_MNIST))  # every feature offends
    with pytest.raises(ValueError) as info:
        call(X)
    message = str(info.value)
    assert len(message) < 300, message
    assert str(D_MNIST) in message and "..." in message, message


def test_an_error_names_the_offending_feature():
    X = np.zeros((3, 10))
    X[1, 7] = 2.0
    with pytest.raises(ValueError, match=r"\[-1, 1\] in 1 feature \(7\)"):
        check_data_in_bounds(X, (-1.0, 1.0))
    assert first_few(range(784)) == "784 features (0, 1, 2, 3, 4, ...)"
