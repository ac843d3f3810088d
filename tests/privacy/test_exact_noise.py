"""Exact noise and the floating-point attack (dpnb.privacy.exact_noise, noise= in dpnb.privacy.mechanisms).

Statistical tests are seeded; each states its level and, where it matters, its power.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as st

from dpnb.numerics.stats import clopper_pearson, mean_ci
from dpnb.privacy import exact_noise as en
from dpnb.privacy.audit import audit_epsilon
from dpnb.privacy.mechanisms import (
    gaussian_delta,
    gaussian_mechanism,
    laplace_mechanism,
    symmetric_gaussian_mechanism,
    symmetric_laplace_mechanism,
)

# --- numpy's textbook samplers, replicated ---------------------------------------------------


def test_laplace_replica_matches_numpy():
    rng = np.random.default_rng(11)
    raw_source = np.random.PCG64()
    raw_source.state = rng.bit_generator.state
    draws = rng.laplace(0.0, 1.7, size=20_000)
    raw = raw_source.random_raw(20_000)
    replica = [en.numpy_laplace_noise(int(r) >> 11, 1.7) for r in raw]
    assert np.array_equal(replica, draws)  # bit for bit, both halves of the uniform


def test_ziggurat_widths_reproduce_fast_path():
    widths = en.ziggurat_widths()
    assert widths.shape == (256,) and np.all(widths > 0)
    rng = np.random.default_rng(12)
    for idx, rabs, sign in zip(rng.integers(0, 256, 50), rng.integers(1, 2**40, 50), rng.integers(0, 2, 50)):
        z = en._generator_at((int(rabs) << 9) | (int(sign) << 8) | int(idx)).standard_normal()
        expected = float(rabs) * widths[idx]  # rabs < 2^40 is far below every layer's fast-path bound
        assert z == (-expected if sign else expected)


def test_laplace_reachable_own_releases_and_attack():
    rng = np.random.default_rng(13)
    ys = laplace_mechanism(np.zeros(1), 1.0, 1.0, random_state=rng, size=300)[:, 0]
    assert all(en.laplace_reachable(float(y), 0.0, 1.0) for y in ys)  # a test that excludes a real output is wrong
    ruled_out = sum(not en.laplace_reachable(float(y), 1.0, 1.0) for y in ys)
    # measured ~83% in the notebook; 99.9% Clopper-Pearson lower bound far from 0 decides the attack works
    assert clopper_pearson(ruled_out, ys.size, 0.999)[0] > 0.5


def test_laplace_reachable_against_brute_force():
    """From x' = 1 a release y in [0.01, 0.49] is 1 + t exactly (Sterbenz) with t = y - 1 in [-1, -1/2], so
    y is reachable iff y - 1 is a double (y has no bit below 2^-53) and some k' has N(k') = y - 1: brute force
    over k' within 200 of 2^52 exp(y - 1)."""

    def brute(y):
        if (y - 1.0) + 1.0 != y:
            return False
        centre = round(2**52 * math.exp(y - 1))
        return any(en.numpy_laplace_noise(k, 1.0) == y - 1 for k in range(centre - 200, centre + 201))

    rng = np.random.default_rng(31)
    k_from_zero = rng.integers(int(2**53 * 0.506), int(2**53 * 0.69), size=200)  # noise in [0.01, 0.49] from x = 0
    ys = [en.numpy_laplace_noise(int(k), 1.0) for k in k_from_zero]
    assert all(0.01 <= y <= 0.49 for y in ys)
    verdicts = [en.laplace_reachable(y, 1.0, 1.0) for y in ys]
    assert verdicts == [brute(y) for y in ys]
    assert 0 < sum(verdicts) < len(verdicts)  # both outcomes occur
    assert en.laplace_reachable(0.0, 0.0, 1.0)  # U = 1/2 gives noise 0
    assert not en.laplace_reachable(-40.0, 0.0, 1.0)  # below log(2^-52) = -36.04: no uniform reaches it


def test_gaussian_reachable_own_releases_and_attack():
    widths = en.ziggurat_widths()
    rng = np.random.default_rng(14)
    ys = 0.0 + rng.normal(0.0, 1.0, size=200)
    assert all(en.gaussian_reachable(float(y), 0.0, 1.0, widths) for y in ys)
    ruled_out = sum(not en.gaussian_reachable(float(y), 1.0, 1.0, widths) for y in ys)
    assert clopper_pearson(ruled_out, ys.size, 0.999)[0] > 0.2


# --- exact samplers against their exact laws -------------------------------------------------


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(3, 10), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_probability(gamma):
    # 20,000 draws: the 99.9% interval has half-width <= 0.012, so a sampler off by 0.02 in probability
    # (e.g. exp(-gamma) computed with gamma 5% off at gamma = 1) fails with probability > 0.95
    rng = np.random.default_rng(15)
    n = 20_000
    num = np.array([gamma.numerator] * n, dtype=object)
    hits = int(en.bernoulli_exp(num, gamma.denominator, rng).sum())
    lo, hi = clopper_pearson(hits, n, 0.999)
    assert lo <= math.exp(-float(gamma)) <= hi


def test_bernoulli_ratio_big_integers():
    rng = np.random.default_rng(16)
    den = 3 * 2**100 + 1  # beyond 64 bits: the lazy 63-bit comparison
    num = den // 3
    n = 20_000
    hits = int(en.bernoulli_ratio(np.array([num] * n, dtype=object), np.array([den] * n, dtype=object), rng).sum())
    lo, hi = clopper_pearson(hits, n, 0.999)
    assert lo <= num / den <= hi


class _FixedWords:
    """A stand-in generator whose ``integers`` returns given 64-bit words, in order (to reach the boundaries)."""

    def __init__(self, words):
        self.words = list(words)

    def integers(self, low, high, size, dtype):
        count = int(np.prod(size))
        return np.array([self.words.pop(0) for _ in range(count)], dtype=dtype).reshape(size)


def test_bernoulli_ratio_compares_two_words_with_the_exact_threshold():
    # num / den = 1/3 with big integers: the threshold floor(2^128 / 3) has both words c = floor(2^64 / 3)
    # (2^64 = 1 mod 3); the draw is [first word, second word] < (c, c) lexicographically, and always reads both
    num, den = np.array([2**70], dtype=object), np.array([3 * 2**70], dtype=object)
    c = 2**64 // 3
    assert en.bernoulli_ratio(num, den, _FixedWords([c, c - 1]))[0]
    assert not en.bernoulli_ratio(num, den, _FixedWords([c, c]))[0]
    assert en.bernoulli_ratio(num, den, _FixedWords([c - 1, 2**64 - 1]))[0]
    assert not en.bernoulli_ratio(num, den, _FixedWords([c + 1, 0]))[0]
    assert en.bernoulli_ratio(np.array([5]), np.array([5]), _FixedWords([2**64 - 1, 2**64 - 1]))[0]  # num >= den: 1


def test_discrete_laplace_huge_scale_object_path():
    # scale 2^70: uniforms beyond 2^62 are drawn word by word and kept as Python ints
    rng = np.random.default_rng(32)
    b = 2**70
    samples = en.sample_discrete_laplace(b, 4000, rng)
    assert samples.dtype == object
    m = int(b * math.log(5))
    exact = 2 * math.exp(-m / b) / (1 + math.exp(-1 / b))  # ~0.2
    lo, hi = clopper_pearson(int(sum(abs(v) >= m for v in samples)), samples.size, 0.999)
    assert lo <= exact <= hi


def test_discrete_laplace_rational_scale_with_big_terms():
    # scale t / s with t, s beyond 2^62 (about 3): Pr[|Y| >= 3] = 2 a^3 / (1 + a), a = exp(-s / t)
    scale = Fraction(3 * 2**70 + 1, 2**70)
    samples = en.sample_discrete_laplace(scale, 3000, np.random.default_rng(33))
    a = math.exp(-1 / float(scale))
    lo, hi = clopper_pearson(int(sum(abs(v) >= 3 for v in samples)), samples.size, 0.999)
    assert lo <= 2 * a**3 / (1 + a) <= hi


def _chi_square(samples, pmf, support_half):
    """Chi-square p-value of integer samples against ``pmf`` on |y| <= support_half, both tails lumped."""
    values = np.array(samples, dtype=float)
    grid = np.arange(-support_half, support_half + 1)
    inner = pmf(grid)
    probs = np.concatenate([[(1 - inner.sum()) / 2], inner, [(1 - inner.sum()) / 2]])
    counts = np.concatenate(
        [[np.sum(values < -support_half)], [np.sum(values == g) for g in grid], [np.sum(values > support_half)]]
    )
    return st.chisquare(counts, probs * values.size).pvalue, probs


@pytest.mark.parametrize("scale", [Fraction(3, 2), Fraction(4)])
def test_discrete_laplace_law(scale):
    # 40,000 draws, chi-square at level 1e-3 over |y| <= 3 scale with lumped tails. Power: a
    # discrete Laplace with a 5% larger scale is rejected with probability > 0.9 (noncentral
    # chi-square from the two pmfs; test_power_of_law_tests computes it).
    rng = np.random.default_rng(17)
    samples = en.sample_discrete_laplace(scale, 40_000, rng)
    p, _ = _chi_square(samples, lambda y: en.discrete_laplace_pmf(y, float(scale)), int(3 * scale))
    assert p > 1e-3


@pytest.mark.parametrize("sigma2", [Fraction(2), Fraction(10, 3)])
def test_discrete_gaussian_law(sigma2):
    # 40,000 draws, chi-square at level 1e-3 over |y| <= 3 sigma: a 5% error in sigma is rejected with
    # probability > 0.9 (test_power_of_law_tests)
    rng = np.random.default_rng(18)
    samples = en.sample_discrete_gaussian(sigma2, 40_000, rng)
    half = int(3 * math.sqrt(sigma2))
    p, _ = _chi_square(samples, lambda y: en.discrete_gaussian_pmf(y, float(sigma2)), half)
    assert p > 1e-3


def test_power_of_law_tests():
    """The chi-square tests above would catch a 5% scale error (noncentral chi-square power > 0.9)."""
    for pmf, good, bad, half in [
        (en.discrete_laplace_pmf, 1.5, 1.5 * 1.05, 4),
        (en.discrete_laplace_pmf, 4.0, 4.0 * 1.05, 12),
        (en.discrete_gaussian_pmf, 2.0, 2.0 * 1.05**2, 4),
        (en.discrete_gaussian_pmf, 10 / 3, 10 / 3 * 1.05**2, 5),
    ]:
        grid = np.arange(-half, half + 1)
        p0, p1 = pmf(grid, good), pmf(grid, bad)
        p0 = np.concatenate([[(1 - p0.sum()) / 2], p0, [(1 - p0.sum()) / 2]])
        p1 = np.concatenate([[(1 - p1.sum()) / 2], p1, [(1 - p1.sum()) / 2]])
        df = p0.size - 1
        noncentrality = 40_000 * np.sum((p1 - p0) ** 2 / p0)
        power = st.ncx2.sf(st.chi2.isf(1e-3, df), df, noncentrality)
        assert power > 0.9, (good, power)


def test_discrete_laplace_large_scale_tail():
    # scale 2^40 (the grid releases' size): Pr[|Y| >= m] = 2 a^m / (1 + a), a = exp(-1/b), exact
    rng = np.random.default_rng(19)
    b = 2**40
    samples = np.array(en.sample_discrete_laplace(b, 20_000, rng), dtype=float)
    m = int(b * math.log(5))
    a = math.exp(-1 / b)
    exact = 2 * a**m / (1 + a)  # ~0.2
    lo, hi = clopper_pearson(int(np.sum(np.abs(samples) >= m)), samples.size, 0.999)
    assert lo <= exact <= hi
    lo, hi = clopper_pearson(int(np.sum(samples > 0)), samples.size, 0.999)
    assert lo <= a / (1 + a) <= hi  # Pr[Y > 0]: symmetry


def test_samplers_reproducible_and_bad_input():
    a = en.sample_discrete_gaussian(Fraction(7, 2), 50, np.random.default_rng(3))
    b = en.sample_discrete_gaussian(Fraction(7, 2), 50, np.random.default_rng(3))
    assert list(a) == list(b)
    assert en.sample_discrete_laplace(2, 0, np.random.default_rng(0)).size == 0
    with pytest.raises(ValueError, match="scale"):
        en.sample_discrete_laplace(0, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sigma2"):
        en.sample_discrete_gaussian(-1, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="num >= 0"):
        en.bernoulli_exp(np.array([-1], dtype=object), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="noise must be one of"):
        en.check_noise("exact-ish")


# --- privacy of the discrete Gaussian ----------------------------------------------------------


def test_discrete_gaussian_delta_brute_force():
    # direct sum of (p0(y) - e^eps p1(y))_+ over the integers against the tail formula
    for sigma2, eps, shift in [(1.0, 0.5, 1), (4.0, 1.0, 1), (2.0, 1.0, 2)]:
        y = np.arange(-200, 201)
        p0 = en.discrete_gaussian_pmf(y, sigma2)
        p1 = en.discrete_gaussian_pmf(y - shift, sigma2)
        brute = np.maximum(0.0, p0 - math.exp(eps) * p1).sum()
        assert math.isclose(en.discrete_gaussian_delta(eps, sigma2, shift), brute, rel_tol=1e-9)


def test_discrete_gaussian_against_opendp():
    """Cross-check with OpenDP 0.16.0: its discrete Gaussian is rho = 1 / (2 scale^2)-zCDP and its
    zCDP -> approx-DP profile; our conversion matches it, and our exact curve lies below it."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    for scale in (1.0, 2.0, 5.0):
        meas = dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=scale)
        assert math.isclose(meas.map(1), 1 / (2 * scale**2), rel_tol=1e-12)
        profile = dp.c.make_zCDP_to_approxDP(meas).map(1)
        for eps in (0.5, 1.0, 2.0):
            theirs = profile.delta(eps)
            assert math.isclose(en.zcdp_delta(eps, 1 / (2 * scale**2)), theirs, rel_tol=1e-8)
            assert en.discrete_gaussian_delta(eps, scale**2, 1) <= theirs


def test_discrete_differs_from_continuous():
    # at sigma = 1 the discrete curve lies above the continuous one (0.141 vs 0.127 at eps = 1)
    assert en.discrete_gaussian_delta(1.0, 1.0, 1) > gaussian_delta(1.0, 1.0, 1.0) + 0.01
    # and converges to it as the grid gets fine against sigma and Delta (same ratio Delta / sigma = 1)
    gaps = [abs(en.discrete_gaussian_delta(1.0, s * s, s) / gaussian_delta(1.0, s, s) - 1) for s in (10, 30, 100)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-4


# --- grid releases ---------------------------------------------------------------------------


def test_grid_point_sensitivity():
    rng = np.random.default_rng(20)
    k = 5
    a = rng.uniform(-3, 3, 2000)
    for delta in (0.1, 1.0, 2**-5, 3 * 2**-5):  # grid multiples included (no extra step there)
        b = a + delta
        diff = np.abs(np.ldexp(en.grid_point(b, k) - en.grid_point(a, k), k))
        assert np.all(diff <= np.ceil(np.ldexp(b - a, k)))
        assert np.all(diff < np.ldexp(delta, k) + 1)
    assert list(np.ldexp(en.grid_point(np.array([0.5, 1.5, -0.5, -1.5]) * 2**-k, k), k)) == [1, 2, 0, -1]  # half up
    assert en.grid_point(np.array([1e308, -1e308]), 60).tolist() == [1e308, -1e308]  # on the grid already
    assert en.grid_point(np.array([1e-300, -1e-300, 5e301]), -1000).tolist() == [0.0, 0.0, math.ldexp(5, 1000)]


def test_exact_option_outputs_on_grid_and_attack_fails():
    """Every exact release is an integer multiple of 2^-k, a set that does not depend on the value,
    and every integer has positive probability: no release rules out a neighbour."""
    k, _ = en.laplace_scale_on_grid(1.0, 1.0, 1)
    for x in (0.0, 1.0, 1000.0):
        ys = laplace_mechanism(x, 1.0, 1.0, random_state=21, size=500, noise="exact")
        scaled = np.ldexp(ys, k)
        assert np.array_equal(scaled, np.round(scaled))
    k, _ = en.gaussian_sigma2_on_grid(1.0, 1.0, 1e-5, 1)
    ys = gaussian_mechanism(0.3, 1.0, 1.0, 1e-5, random_state=22, size=500, noise="exact")
    assert np.array_equal(np.ldexp(ys, k), np.round(np.ldexp(ys, k)))


def test_exact_option_audit():
    # the statistical epsilon audit on a pair at the sensitivity: no violation of the claimed epsilon = 1
    def mech(data, rng, m):
        return laplace_mechanism(data, 1.0, 1.0, random_state=rng, size=m, noise="exact")

    res = audit_epsilon(mech, np.zeros(1), np.ones(1), n_samples=10_000, claimed=1.0, batched=True, random_state=23)
    assert not res.violates


def test_exact_option_scale():
    # the exact Laplace release has the claimed scale: E[noise^2] = 2 b^2 = 8 (b = 2) inside a 99.9% interval
    noise = laplace_mechanism(np.zeros(20_000), 1.0, 0.5, random_state=24, noise="exact")
    _, lo, hi = mean_ci(noise**2, 0.999)
    assert lo <= 8.0 <= hi


def test_mechanism_option_defaults_and_errors():
    a = laplace_mechanism(np.zeros(4), 1.0, 1.0, random_state=5)
    assert np.array_equal(a, laplace_mechanism(np.zeros(4), 1.0, 1.0, random_state=5, noise="float"))
    e1 = laplace_mechanism(np.zeros(4), 1.0, 1.0, random_state=5, noise="exact")
    assert np.array_equal(e1, laplace_mechanism(np.zeros(4), 1.0, 1.0, random_state=5, noise="exact"))
    assert isinstance(gaussian_mechanism(0.0, 1.0, 1.0, 1e-5, random_state=0, noise="exact"), float)
    assert laplace_mechanism(2.5, 1.0, np.inf, random_state=0, noise="exact") == 2.5
    S = symmetric_laplace_mechanism(np.eye(4), 1.0, 1.0, random_state=0, noise="exact")
    G = symmetric_gaussian_mechanism(np.eye(4), 1.0, 1.0, 1e-5, random_state=0, noise="exact")
    assert np.array_equal(S, S.T) and np.array_equal(G, G.T)
    for call in (
        lambda: laplace_mechanism(0.0, 1.0, 1.0, noise="Exact"),
        lambda: gaussian_mechanism(0.0, 1.0, 1.0, 1e-5, noise="discrete"),
        lambda: symmetric_gaussian_mechanism(np.eye(2), 1.0, 1.0, 1e-5, noise="int"),
    ):
        with pytest.raises(ValueError, match="noise must be one of"):
            call()
    with pytest.raises(TypeError, match="noise must be one of"):  # a wrong type: TypeError, as check_choice
        symmetric_laplace_mechanism(np.eye(2), 1.0, 1.0, noise=None)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(0.0, -1.0, 1.0, noise="exact")


def test_grid_calibrations_meet_their_guarantees():
    k, scale = en.laplace_scale_on_grid(1.0, 0.7, 10)
    assert (Fraction(2) ** k + 10) / scale <= Fraction(0.7)  # L1 grid sensitivity / scale <= epsilon
    assert float(scale) / 2**k <= (1 / 0.7) * (1 + 2**-19)  # at most 1 + 2^-20 (and the 2^-8 rounding) more noise
    k, sigma2 = en.gaussian_sigma2_on_grid(1.0, 1.0, 1e-5, 9)
    d = 2**k + 3  # sqrt(9)
    assert en.zcdp_delta(1.0, d * d / (2 * float(sigma2))) <= 1e-5


def test_noise_too_wide_for_doubles_is_refused_naming_the_parameter():
    from dpnb.privacy.mechanisms import laplace_mechanism

    assert np.isfinite(laplace_mechanism(1.0, 1.0, 1e-300, noise="exact", random_state=0))  # scale 1e300 < 2^1000
    with pytest.raises(ValueError, match="epsilon=1e-300 gives exact noise wider than 2"):
        en.grid_laplace_release(1.0, 1e10, 1e-300, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"sigma=1e\+305 gives exact noise wider than 2"):
        en.grid_gaussian_release_sigma(1.0, 1.0, 1e305, np.random.default_rng(0))


# --- work that reveals nothing, and the releases' arithmetic --------------------------------------


class _Recording:
    """A generator that logs every ``integers`` call; the words come from a Generator or are all ``fill``."""

    def __init__(self, source=None, fill=None):
        self.source, self.fill, self.log = source, fill, []

    def integers(self, low, high, size, dtype):
        self.log.append((low, high, tuple(size), np.dtype(dtype).str))
        if self.fill is not None:
            return np.full(size, self.fill, dtype=dtype)
        return self.source.integers(low, high, size=size, dtype=dtype)


EXACT_DRAWS = {
    "grid_laplace_release": lambda rng: en.grid_laplace_release(0.0, 1.0, 1.0, rng),
    "grid_laplace_release, wide": lambda rng: en.grid_laplace_release(np.array([0.0, 1e300]), 1.0, 1e-40, rng),
    "grid_gaussian_release": lambda rng: en.grid_gaussian_release(np.zeros(3), 1.0, 1.0, 1e-5, rng),
    "grid_gaussian_release_sigma": lambda rng: en.grid_gaussian_release_sigma(0.0, 1.0, 1e9, rng)[0],
    "integer_gaussian_noise": lambda rng: en.integer_gaussian_noise(2.5, (2,), rng),
    "sample_discrete_laplace": lambda rng: en.sample_discrete_laplace(Fraction(3, 2), 1, rng),
    "sample_discrete_gaussian": lambda rng: en.sample_discrete_gaussian(Fraction(10, 3), 1, rng),
    "bernoulli_exp": lambda rng: en.bernoulli_exp(np.array([0, 7, 10**30]), 3, rng),
}


@pytest.mark.parametrize("name", list(EXACT_DRAWS))
def test_work_is_identical_whatever_the_noise(name):
    """Deterministic: every call of ``integers`` (its size and type, so the words drawn and the rounds) is the
    same for 200 seeded draws with very different noise, and for generators whose words are all 0 or all
    2^64 - 1 (the extreme outcomes of every Bernoulli); the work depends on the public parameters only."""
    draw = EXACT_DRAWS[name]
    logs, sizes = set(), []
    generator = np.random.default_rng(40)
    for _ in range(200):
        rng = _Recording(generator)
        sizes.append(abs(float(np.ravel(draw(rng))[0])))
        logs.add(tuple(rng.log))
    for fill in (0, 2**64 - 1):
        rng = _Recording(fill=fill)
        draw(rng)
        logs.add(tuple(rng.log))
    assert len(logs) == 1
    if name != "bernoulli_exp":
        assert max(sizes) > 3 * np.median(sizes)  # the noise did vary


def test_a_laplace_coordinate_reads_four_words_per_bit():
    """At the three benchmark scales a Laplace coordinate reads 4 J words (two geometrics of J bits, two
    words a bit), J = geometric_bits(scale) public."""
    for epsilon in (1.0, 1e-3, 1e-9):
        k, scale = en.laplace_scale_on_grid(1.0, epsilon, 1)
        rng = _Recording(np.random.default_rng(41))
        en.grid_laplace_release(0.0, 1.0, epsilon, rng)
        assert sum(np.prod(size) for _, _, size, _ in rng.log) == 4 * en.geometric_bits(scale)


def _limbs(values, n_limbs):
    out = np.zeros((n_limbs, len(values)), dtype=np.int64)
    for j, v in enumerate(values):
        for i in range(n_limbs - 1):
            out[i, j], v = v & (2**en.LIMB_BITS - 1), v >> en.LIMB_BITS
        out[-1, j] = v
    return out


def _reference_release(x, k, y, n_bits):
    """RN(2^(h - k) floor((q + y) / 2^h)) by exact rational arithmetic, clipped to the finite doubles."""
    h = max(0, n_bits - 62)
    q = math.floor(Fraction(x) * Fraction(2) ** k + Fraction(1, 2))
    exact = Fraction((q + y) // 2**h) * Fraction(2) ** (h - k)
    big = float(np.finfo(float).max)
    return math.copysign(big, exact) if abs(exact) >= Fraction(big) else float(exact)


def _double(mantissa, exponent):
    try:
        return math.ldexp(mantissa, exponent)
    except OverflowError:
        return 0.0


def test_release_is_the_correctly_rounded_function_of_the_sum():
    """The fixed-operation release (grid rounding, fmod split, limbs, Boldo-Melquiond sum) equals exact
    rational arithmetic on random and adversarial cases: values across the doubles' range (zeros, ties,
    already on the grid), noise cancelling the value, narrow and wide noise (coarse grid), k from -1000 to 1074."""
    rng = np.random.default_rng(42)
    checked = 0
    for _ in range(1500):
        k = int(rng.choice([0, 5, 20, 40, 300, 1000, 1074, -5, -300, -1000]))
        n_bits = int(rng.choice([5, 30, 62, 63, 70, 100, 200, 500]))
        if n_bits - k > 1008:
            continue
        xs = [
            _double(int(rng.integers(-(2**53), 2**53)), int(rng.integers(-1126, 972)))
            if rng.random() < 0.8
            else float(rng.choice([0.0, -0.0, 0.5, -1.5, _double(1, 52 - k), _double(-1, 52 - k), _double(3, -k - 1)]))
            for _ in range(3)
        ]
        ys = [int(rng.integers(-(2**62), 2**62)) >> int(rng.integers(0, 62)) for _ in xs]
        ys = [y << max(0, n_bits - 63) if abs(y << max(0, n_bits - 63)) < 2**n_bits else 0 for y in ys]
        if rng.random() < 0.2:  # noise cancelling the grid value
            qs = [math.floor(Fraction(x) * Fraction(2) ** k + Fraction(1, 2)) for x in xs]
            ys = [-q if abs(q) < 2**n_bits else 0 for q in qs]
        got = en._release(np.array(xs), k, _limbs(ys, n_bits // en.LIMB_BITS + 2), n_bits)
        want = [_reference_release(x, k, y, n_bits) for x, y in zip(xs, ys)]
        assert got.tolist() == want, (k, n_bits, xs, ys)
        checked += len(xs)
    assert checked > 2000


def test_sum3_is_correctly_rounded():
    rng = np.random.default_rng(43)
    for _ in range(5000):
        values = [
            _double(int(rng.integers(-(2**53), 2**53)) >> int(rng.integers(0, 53)), int(rng.integers(-1074, 960)))
            for _ in range(3)
        ]
        if rng.random() < 0.3:
            values[1] = -values[0]
        exact = sum(Fraction(v) for v in values)
        if abs(exact) >= Fraction(float(np.finfo(float).max)):
            continue
        assert en._sum3(*(np.array([v]) for v in values))[0] == float(exact), values


def test_wide_noise_release_has_its_scale():
    # epsilon = 1e-40: noise of 2^153 grid steps, released on the coarser grid 2^(h - k); E[noise^2] = 2 b^2
    noise = en.grid_laplace_release(np.zeros(20_000), 1.0, 1e-40, np.random.default_rng(44))
    _, lo, hi = mean_ci((noise / 1e40) ** 2, 0.999)
    assert lo <= 2.0 <= hi


def test_pool_size_and_sampling_delta():
    for alpha in (0.44, 0.6, 0.75):
        for n in (1, 2, 10, 1000, 10**6):
            m = en.pool_size(n, alpha)
            assert n / alpha < m <= 4 * n + 200
    assert en.pool_size(1, 0.5) == 128  # (1/2)^M <= 2^-128
    assert en.sampling_delta(np.inf, 10) == 0.0
    assert en.sampling_delta(1.0, 2**30) == pytest.approx((1 + math.e) * 2**-70)
    assert en.sampling_delta(1e300, 1) == 1.0


EPSILONS = (1e-300, 1e-100, 1e-10, 1.0, 1e10, 1e100, 1e300)
SENSITIVITIES = (1e-308, 1e-10, 1.0, 1e10, 1e308)
EXTREME = {
    "laplace_mechanism": lambda e, s: laplace_mechanism(np.array([0.25, -3.0]), s, e, random_state=0, noise="exact"),
    "gaussian_mechanism": lambda e, s: gaussian_mechanism(
        np.array([0.25, -3.0]), s, e, 1e-5, random_state=0, noise="exact"
    ),
    "symmetric_laplace_mechanism": lambda e, s: symmetric_laplace_mechanism(
        np.eye(2), s, e, random_state=0, noise="exact"
    ),
    "symmetric_gaussian_mechanism": lambda e, s: symmetric_gaussian_mechanism(
        np.eye(2), s, e, 1e-5, random_state=0, noise="exact"
    ),
    "grid_laplace_release": lambda e, s: en.grid_laplace_release(1e300, s, e, np.random.default_rng(0)),
    "grid_gaussian_release": lambda e, s: en.grid_gaussian_release(-1e-300, s, e, 1e-5, np.random.default_rng(0)),
    "grid_gaussian_release_sigma": lambda e, s: en.grid_gaussian_release_sigma(
        1.0, s, min(s / e, 1e308), np.random.default_rng(0)
    )[0],
    "integer_gaussian_noise": lambda e, s: en.integer_gaussian_noise(min(s / e, 1e308), (2,), np.random.default_rng(0)),
}


@pytest.mark.parametrize("name", list(EXTREME))
def test_extreme_parameters_give_a_finite_release_or_a_named_value_error(name):
    """epsilon from 1e-300 to 1e300, sensitivity (or sigma) from 1e-308 to 1e308: a finite release, or one
    ValueError naming epsilon (or sigma, or the sensitivity) when the noise would be wider than 2^1000."""
    finite = 0
    for epsilon in EPSILONS:
        for sensitivity in SENSITIVITIES:
            try:
                out = EXTREME[name](epsilon, sensitivity)
            except ValueError as error:
                assert any(p in str(error) for p in ("epsilon=", "sigma=")), str(error)
                assert "2^1000" in str(error) or "too small for sensitivity" in str(error), str(error)
                continue
            assert np.all(np.isfinite(out)), (epsilon, sensitivity)
            finite += 1
    assert finite >= 25


@pytest.mark.parametrize("epsilon", [1e-5, 1.0, 1e6])
@pytest.mark.parametrize("delta", [0.999999, 1 - 2**-53])
def test_zcdp_rho_for_a_delta_near_one_is_bracketed(epsilon, delta):
    """A delta near 1 puts the root far past epsilon + 10 (the fuzz found brentq's "f(a) and f(b) must have
    different signs" through gaussian_mechanism, mod_sulq and ModSULQ): the bracket grows until it holds it."""
    rho = en.zcdp_rho(epsilon, delta)
    assert rho > 0 and en.zcdp_delta(epsilon, rho) <= delta
    assert rho > en.zcdp_rho(epsilon, 0.5)
    release = gaussian_mechanism(np.zeros(3), 1.0, epsilon, delta, random_state=0, noise="exact")
    assert np.all(np.isfinite(release))


def _special_doubles(rng, size):
    """Doubles from every scale, with zeros, subnormals, the largest finite ones and infinities among them."""
    pool = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1.0, -1.0, 0.5, 1.7976931348623157e308, -1.7e308, np.inf])
    wide = rng.choice([-1.0, 1.0], size) * 2.0 ** rng.uniform(-1074, 1023, size)
    return np.where(rng.random(size) < 0.2, rng.choice(pool, size), wide)


@pytest.mark.parametrize("seed", range(8))
def test_the_bracketed_sum_preimage_is_the_full_bisection(seed):
    """fl(x + t) == y: the bisection from a bracket around y - x finds the interval the bisection over all doubles
    finds (or both find none), for x and y from every scale and for y = fl(x + t) with t at any scale."""
    rng = np.random.default_rng(seed)
    x = _special_doubles(rng, 150)
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.where(rng.random(150) < 0.5, _special_doubles(rng, 150), x * rng.uniform(-2, 2, 150))
        hits = x + t
    ys = np.where(rng.random(150) < 0.7, hits, _special_doubles(rng, 150))
    ys[:3] = [-np.inf, np.nan, x[3]]
    for xi, yi in zip(x.tolist(), ys.tolist(), strict=True):
        expected = en._preimage(lambda s, xi=xi: xi + s, yi)
        assert en._sum_preimage(xi, yi) == expected, (xi, yi)


def test_the_sum_preimage_uses_its_bracket_and_takes_numpy_scalars_and_huge_integers(monkeypatch):
    import warnings

    biggest = 1.7976931348623157e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # y - x overflows: no bracket and no warning
        assert en._sum_preimage(np.float64(-biggest), np.float64(biggest)) is None
    assert en._sum_preimage(-(2**1023), 2**1023) is None  # y - x is beyond the float range
    brackets = []
    full = en._preimage
    monkeypatch.setattr(en, "_preimage", lambda f, y, bracket=None: brackets.append(bracket) or full(f, y, bracket))
    assert en._sum_preimage(1.0, 3.5) == (2.5, 2.5)
    assert brackets[0] is not None and brackets[0][0] < 2.5 < brackets[0][1]
