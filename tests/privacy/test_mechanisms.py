import numpy as np
import pytest
from scipy import stats as st

from dpnb.numerics.stats import mean_ci, variance_ci
from dpnb.privacy.mechanisms import (
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mechanism,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    laplace_mechanism,
    symmetric_gaussian_mechanism,
    symmetric_laplace_mechanism,
)

N = 20_000


def test_laplace_shape_and_scalar():
    assert isinstance(laplace_mechanism(1.0, 1.0, 1.0, random_state=0), float)
    out = laplace_mechanism(np.zeros((3, 4)), 1.0, 1.0, random_state=0)
    assert out.shape == (3, 4)
    a = laplace_mechanism(np.zeros(5), 1.0, 1.0, random_state=7)
    assert np.array_equal(a, laplace_mechanism(np.zeros(5), 1.0, 1.0, random_state=7))


def test_laplace_noise_scale():
    noise = laplace_mechanism(np.zeros(N), 2.0, 0.5, random_state=1)  # b = 4, variance 2 b^2 = 32
    _, lo, hi = mean_ci(noise, 0.999)
    assert lo <= 0.0 <= hi
    # variance of Laplace samples: CLT interval on the squared noise (mean 0 is known)
    _, lo, hi = mean_ci(noise**2, 0.999)
    assert lo <= 32.0 <= hi


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(sensitivity=0, epsilon=1), "sensitivity"),
        (dict(sensitivity=1, epsilon=0), "epsilon"),
        (dict(sensitivity=1, epsilon=-1), "epsilon"),
        (dict(sensitivity=np.nan, epsilon=1), "sensitivity"),
    ],
)
def test_laplace_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplace_mechanism(np.zeros(2), random_state=0, **kwargs)
    with pytest.raises(ValueError, match="NaN"):
        laplace_mechanism(np.array([np.nan]), 1, 1)


def test_symmetric_laplace_is_symmetric_with_right_scale():
    d = 40
    out = symmetric_laplace_mechanism(np.zeros((d, d)), 1.0, 1.0, random_state=2)
    assert np.array_equal(out, out.T)
    upper = out[np.triu_indices(d)]  # the independent coordinates, b = 1
    _, lo, hi = mean_ci(upper**2, 0.999)
    assert lo <= 2.0 <= hi
    with pytest.raises(ValueError, match="square"):
        symmetric_laplace_mechanism(np.zeros((2, 3)), 1, 1)


def test_gaussian_delta_reference_values():
    # Balle & Wang: sigma = 3.7306 gives delta = 1e-5 at epsilon = 1, Delta = 1
    assert gaussian_delta(1.0, 3.730631634815945, 1.0) == pytest.approx(1e-5, rel=1e-6)
    # classic sigma at epsilon = 10 falls short: delta = 2.3e-5 (two significant figures) > 1e-5
    classic_sigma = np.sqrt(2 * np.log(1.25 / 1e-5)) / 10
    assert 2.25e-5 <= gaussian_delta(10.0, classic_sigma, 1.0) < 2.35e-5
    # epsilon = 0 gives the total-variation distance 2 Phi(Delta / (2 sigma)) - 1
    assert gaussian_delta(0.0, 2.0, 1.0) == pytest.approx(2 * st.norm.cdf(0.25) - 1)


def test_gaussian_delta_matches_privacy_loss_monte_carlo():
    # privacy loss L ~ N(mu, 2 mu), mu = Delta^2 / (2 sigma^2); delta(eps) = E[(1 - e^(eps - L))_+]
    rng = np.random.default_rng(3)
    sigma, eps = 0.8, 1.0
    mu = 1 / (2 * sigma**2)
    L = rng.normal(mu, np.sqrt(2 * mu), size=400_000)
    _, lo, hi = mean_ci(np.maximum(0.0, 1 - np.exp(eps - L)), 0.999)
    assert lo <= gaussian_delta(eps, sigma, 1.0) <= hi


def test_gaussian_delta_monotone_and_scale_free():
    eps = np.linspace(0, 5, 11)
    d = [gaussian_delta(e, 1.0, 1.0) for e in eps]
    assert all(a > b for a, b in zip(d, d[1:]))
    assert gaussian_delta(0.5, 2.0, 3.0) == pytest.approx(gaussian_delta(0.5, 2 / 3, 1.0))
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(-1, 1, 1)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_delta(1, 0, 1)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-3), (20.0, 1e-8)])
def test_analytic_sigma_is_tight(eps, delta):
    s = gaussian_sigma_analytic(2.0, eps, delta)
    assert gaussian_delta(eps, s, 2.0) == pytest.approx(delta, rel=1e-6)
    assert gaussian_delta(eps, 0.99 * s, 2.0) > delta  # any smaller sigma fails


def test_classic_sigma_formula_validity_and_refusal():
    s = gaussian_sigma_classic(1.0, 0.5, 1e-5)
    assert s == pytest.approx(np.sqrt(2 * np.log(1.25e5)) / 0.5)
    assert gaussian_delta(0.5, s, 1.0) <= 1e-5
    assert gaussian_sigma_analytic(1.0, 0.5, 1e-5) < s
    with pytest.raises(ValueError, match="only valid for epsilon < 1"):
        gaussian_sigma_classic(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="calibration"):
        gaussian_sigma(1.0, 0.5, 1e-5, calibration="exact")


def test_gaussian_epsilon_inverts_delta():
    assert gaussian_epsilon(1e-5, 3.730631634815945, 1.0) == pytest.approx(1.0, rel=1e-6)
    assert gaussian_epsilon(0.9, 10.0, 1.0) == 0.0  # delta above the TV distance: epsilon 0
    with pytest.raises(ValueError, match="delta"):
        gaussian_epsilon(0.0, 1.0)


def test_gaussian_mechanism_noise_and_calibrations():
    sigma = gaussian_sigma_analytic(1.0, 2.0, 1e-5)
    noise = gaussian_mechanism(np.zeros(N), 1.0, 2.0, 1e-5, random_state=4)
    _, lo, hi = variance_ci(noise, 0.999)
    assert lo <= sigma**2 <= hi
    with pytest.raises(ValueError, match="epsilon < 1"):
        gaussian_mechanism(np.zeros(2), 1.0, 2.0, 1e-5, calibration="classic")
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(np.zeros(2), 1.0, 0.5, 1.0)
    assert isinstance(gaussian_mechanism(0.0, 1.0, 0.5, 1e-5, calibration="classic", random_state=0), float)


def test_symmetric_gaussian():
    d = 30
    out = symmetric_gaussian_mechanism(np.zeros((d, d)), 1.0, 1.0, 1e-5, random_state=5)
    assert np.array_equal(out, out.T)
    sigma = gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    _, lo, hi = variance_ci(out[np.triu_indices(d)], 0.999)
    assert lo <= sigma**2 <= hi


def test_size_stacks_the_draws_of_separate_calls():
    value = np.array([1.0, -2.0, 0.5])
    for mechanism in (
        lambda v, **kw: laplace_mechanism(v, 1.0, 0.7, **kw),
        lambda v, **kw: gaussian_mechanism(v, 1.0, 0.7, 1e-5, **kw),
    ):
        rng = np.random.default_rng(4)
        separate = np.array([mechanism(value, random_state=rng) for _ in range(50)])
        stacked = mechanism(value, random_state=np.random.default_rng(4), size=50)
        assert stacked.shape == (50, 3) and np.array_equal(stacked, separate)
    assert laplace_mechanism(0.0, 1.0, 1.0, random_state=0, size=4).shape == (4,)
    with pytest.raises(ValueError, match="size"):
        laplace_mechanism(0.0, 1.0, 1.0, size=0)


def test_a_sigma_beyond_1e300_is_refused_naming_epsilon_and_delta():
    for calibration in ("analytic", "classic"):
        with pytest.raises(ValueError, match="epsilon=.* and delta=.* are too small"):
            gaussian_mechanism(np.zeros(2), 1e300, 1e-10, 1e-5, calibration=calibration, random_state=0)


@pytest.mark.parametrize("sensitivity", [5e-324, 1e-300])
def test_a_tiny_sensitivity_gets_a_positive_valid_sigma(sensitivity):
    """The bracket of the analytic calibration underflowed to sigma = 0 ('sigma must be finite and > 0')."""
    for calibration in ("analytic", "classic"):
        sigma = gaussian_sigma(sensitivity, 0.5, 1e-5, calibration)
        assert sigma >= sensitivity and sigma > 0
    assert gaussian_sigma(1e-300, 0.5, 1e-5) == pytest.approx(1e-300 * gaussian_sigma(1.0, 0.5, 1e-5), rel=1e-9)
