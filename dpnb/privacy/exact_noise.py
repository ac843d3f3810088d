"""Floating point is part of the mechanism: the textbook samplers' reachable sets, and exact noise.

Two halves.

**The attack** (Mironov 2012). ``numpy.random.Generator.laplace(0, b)`` computes its noise from one
uniform ``U = k 2^-53`` (``k = next_uint64 >> 11``, ``U = 0`` redrawn) as ``-b log(2 - U - U)`` for
``U >= 1/2`` and ``b log(U + U)`` otherwise, in double precision, and ``laplace_mechanism`` then
rounds ``x + noise`` to a double. The release can therefore take only the doubles
``{fl(x + N(k))}``, a set that depends on ``x``: :func:`laplace_reachable` decides exactly whether
a double ``y`` is in that set for a given ``x`` (no ``k`` is skipped; the only assumption is that
the platform's ``log`` is within 2 ulp of the true logarithm, which the C library documents with
a wide margin). A release that is reachable from ``x`` and not from its neighbour ``x'`` rules
``x'`` out with certainty, which no epsilon-DP mechanism allows.
:func:`gaussian_reachable` does the same, conservatively, for ``Generator.normal`` (ziggurat):
outside its tail every standard normal it returns is ``±fl(m w_i)`` with ``m < 2^52`` and ``w_i``
one of 256 layer widths, read from numpy itself by :func:`ziggurat_widths`.

**Exact noise** (Canonne, Kamath & Steinke 2020). Bernoulli(exp(-gamma)) for rational ``gamma``
by exact integer comparisons (:func:`bernoulli_exp`), the discrete Laplace by a geometric and
rejection (:func:`sample_discrete_laplace`), the discrete Gaussian by rejection from the discrete
Laplace (:func:`sample_discrete_gaussian`); every random bit comes from a numpy ``Generator``
(``integers``), so seeds stay reproducible, and the loops are batched over all pending draws.
A real-valued release is made on the grid ``2^-k``: the value is rounded (half up, exactly) to the
grid, integer noise is added, and the integer is scaled back; the final conversion to a double is
post-processing. Rounding moves each coordinate by at most one grid step, so the integer
sensitivity is at most ``Delta / 2^-k + (number of coordinates)`` in L1 and
``Delta / 2^-k + sqrt(number of coordinates)`` in L2 (:func:`grid_sensitivity`); the grid is
chosen ``2^20`` times finer than ``Delta / coordinates``, so this costs at most a factor
``1 + 2^-20`` of noise.
"""

from __future__ import annotations

import functools
import math
import struct
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq

from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
)

NOISE_OPTIONS = ("float", "exact")
GRID_BITS = 20  # the grid is 2^GRID_BITS times finer than sensitivity / (number of coordinates)
LOG_ULPS = 2  # assumed accuracy of the C library's log, in units in the last place
ZIGGURAT_R = 3.6541528853610088  # numpy's ziggurat_nor_r: start of the normal sampler's tail


def check_noise(noise) -> str:
    """Return ``noise`` after checking it is one of ``NOISE_OPTIONS``."""
    return check_choice(noise, "noise", NOISE_OPTIONS)


# ---------------------------------------------------------------------------------------------
# The textbook samplers as numpy computes them
# ---------------------------------------------------------------------------------------------


def numpy_laplace_noise(k: int, scale: float) -> float:
    """The double ``Generator.laplace(0.0, scale)`` returns for the uniform ``U = k 2^-53``.

    ``k`` is ``next_uint64 >> 11`` in ``1 .. 2^53 - 1`` (numpy redraws ``k = 0``). The arithmetic is
    numpy's, operation by operation, in IEEE double precision; ``math.log`` is the C library's
    ``log``, the function numpy's C code calls.
    """
    u = k * (1.0 / 9007199254740992.0)
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


def _ordered(x: float) -> int:
    """Map doubles to integers preserving order (-0.0 and 0.0 both to 0)."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def _unordered(i: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", i if i >= 0 else (-i) | (1 << 63)))[0]


_LARGEST = _ordered(float(np.finfo(float).max))


def _preimage(f, y: float) -> tuple[float, float] | None:
    """The doubles ``t`` with ``f(t) == y``, for ``f`` nondecreasing on doubles: ``(lo, hi)`` or None.

    Found by bisection over the ordered doubles, so no double is skipped.
    """

    def first_at_least(target):  # smallest ordered t with f(t) >= target
        lo, hi = -_LARGEST, _LARGEST
        if f(_unordered(hi)) < target:
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            if f(_unordered(mid)) >= target:
                hi = mid
            else:
                lo = mid + 1
        return lo

    lo = first_at_least(y)
    if lo is None or f(_unordered(lo)) != y:
        return None
    above = first_at_least(math.nextafter(y, math.inf))
    hi = _LARGEST if above is None else above - 1
    return _unordered(lo), _unordered(hi)


def _ulp_margin(lo: float, hi: float) -> float:
    return 4 * LOG_ULPS * math.ulp(max(abs(lo), abs(hi), 2.0**-1000))


def laplace_reachable(y: float, x: float, scale: float) -> bool:
    """Whether ``laplace_mechanism(x, ...)`` with noise scale ``scale`` can return the double ``y``.

    Exact: the doubles ``t`` with ``fl(x + t) == y`` form an interval ``[lo, hi]`` (addition rounds
    monotonically), found by bisection. The noise ``N(k)`` approximates ``scale * ln(v_k)`` (up to
    sign), where ``v_k`` is the argument of numpy's log, an exact multiple of ``2^-53`` (``2k 2^-53``
    below ``U = 1/2``, ``fl(2 - U) - U`` above), and decreasing in ``k`` above ``1/2``, increasing
    below. With the log within ``LOG_ULPS`` ulp, ``|N(k) - (±scale ln v_k)|`` is below the margin
    of ``_ulp_margin``, so every ``k`` with ``N(k)`` in ``[lo, hi]`` has ``v_k`` in an interval
    computed from ``exp`` at 40 digits; every such ``k`` is evaluated with numpy's arithmetic.
    """
    from decimal import Decimal, localcontext

    pre = _preimage(lambda t: x + t, y)
    if pre is None:
        return False
    lo, hi = pre
    margin = _ulp_margin(lo, hi)
    with localcontext() as ctx:
        ctx.prec = 40
        two53 = Decimal(2) ** 53
        s = Decimal(scale)

        def v_range(a: float, b: float) -> tuple[int, int]:
            """Integers j with j 2^-53 = v in [exp(a / scale), exp(b / scale)], widened by 2."""
            j_lo = (Decimal(a) / s).exp() * two53 if a / scale > -800 else Decimal(0)
            j_hi = (Decimal(b) / s).exp() * two53 if b / scale < 1 else two53
            return int(j_lo) - 2, int(j_hi) + 3

        candidates = []
        if lo - margin <= 0.0:  # lower half: N = scale log(2k 2^-53) <= 0, k in 1 .. 2^52 - 1
            j_lo, j_hi = v_range(lo - margin, min(hi + margin, 0.0))
            candidates.append((max(1, (j_lo + 1) // 2), min(2**52 - 1, j_hi // 2)))
        if hi + margin >= 0.0:  # upper half: N = -scale log(v), v = (2^54 - 2k + e) 2^-53, |e| <= 1
            j_lo, j_hi = v_range(-(hi + margin), -max(lo - margin, 0.0))
            candidates.append((max(2**52, (2**54 - j_hi - 1) // 2), min(2**53 - 1, (2**54 - j_lo + 2) // 2)))
    for k_lo, k_hi in candidates:
        if k_lo > k_hi:
            continue
        mid = (k_lo + k_hi) // 2
        if lo <= numpy_laplace_noise(mid, scale) <= hi:
            return True
        if k_hi - k_lo > 2**20:
            raise RuntimeError(f"{k_hi - k_lo} candidate uniforms for y = {y!r}: too many to enumerate")
        if any(lo <= numpy_laplace_noise(k, scale) <= hi for k in range(k_lo, k_hi + 1)):
            return True
    return False


def _generator_at(raw: int) -> np.random.Generator:
    """A PCG64 Generator whose next 64-bit output is ``raw``.

    PCG64 advances its 128-bit state before output (XSL-RR); a state ``raw`` (high word 0, so no
    rotation) outputs ``raw``; ``advance(-1)`` steps back one draw.
    """
    bit_generator = np.random.PCG64(0)
    state = bit_generator.state
    state["state"]["state"] = raw
    state["has_uint32"], state["uinteger"] = 0, 0
    bit_generator.state = state
    bit_generator.advance(2**128 - 1)
    return np.random.Generator(bit_generator)


def ziggurat_widths() -> np.ndarray:
    """numpy's 256 ziggurat layer widths ``w_i`` (``wi_double``), read from numpy itself.

    ``standard_normal`` takes ``idx = r & 0xff``, a sign bit and ``rabs = (r >> 9) & (2^52 - 1)``
    from one 64-bit ``r`` and returns ``±rabs * w_idx`` when ``rabs < k_idx``; with ``rabs = 1`` it
    returns ``w_idx`` itself.
    """
    return np.array([_generator_at((1 << 9) | i).standard_normal() for i in range(256)])


def gaussian_reachable(y: float, x: float, sigma: float, widths: np.ndarray) -> bool:
    """Whether ``gaussian_mechanism(x, ...)`` with noise ``sigma`` can return ``y`` (conservative).

    The release is ``fl(x + fl(sigma z))`` with ``z`` numpy's standard normal. Every ``z`` numpy
    returns is ``±fl(m w_i)`` with ``0 <= m < 2^52`` (fast path and wedges), or has ``|z| >`` the
    tail start ``r``. This returns False only when no such ``z`` (and no ``|z| >= r``) gives ``y``:
    a certain exclusion; True means "not excluded".
    """
    pre_t = _preimage(lambda t: x + t, y)
    if pre_t is None:
        return False
    t_lo, t_hi = pre_t
    lo_z, hi_z = _first_z(sigma, t_lo), _last_z(sigma, t_hi)  # the z with fl(sigma z) in [t_lo, t_hi]
    if lo_z > hi_z:
        return False
    if max(abs(lo_z), abs(hi_z)) >= ZIGGURAT_R or (lo_z <= 0.0 <= hi_z):
        return True
    a, b = (lo_z, hi_z) if lo_z > 0 else (-hi_z, -lo_z)  # the sign is a free bit: work with |z|
    m_lo = np.floor(a / widths) - 2
    m_hi = np.ceil(b / widths) + 2
    if np.max(m_hi - m_lo) > 2**20:
        mid = np.round((a + b) / 2 / widths)
        prod = mid * widths
        if np.any((prod >= a) & (prod <= b)):
            return True
        raise RuntimeError(f"too many candidate multiples for y = {y!r}")
    for offset in range(int(np.max(m_hi - m_lo)) + 1):
        m = m_lo + offset
        ok = (m >= 0) & (m < 2**52) & (m <= m_hi)
        prod = m * widths  # exact integer m (< 2^53) times a double: one IEEE rounding, as in numpy
        if np.any(ok & (prod >= a) & (prod <= b)):
            return True
    return False


def _first_z(sigma, t):
    """Smallest double z with fl(sigma z) >= t."""
    lo, hi = -_LARGEST, _LARGEST
    while lo < hi:
        mid = (lo + hi) // 2
        if sigma * _unordered(mid) >= t:
            hi = mid
        else:
            lo = mid + 1
    return _unordered(lo)


def _last_z(sigma, t):
    """Largest double z with fl(sigma z) <= t."""
    lo, hi = -_LARGEST, _LARGEST
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sigma * _unordered(mid) <= t:
            lo = mid
        else:
            hi = mid - 1
    return _unordered(lo)


# ---------------------------------------------------------------------------------------------
# Exact samplers (Canonne, Kamath & Steinke 2020)
# ---------------------------------------------------------------------------------------------


_SMALL = 2**62  # integers below this are kept in int64 arrays; larger ones in object arrays of Python ints


def _ints(values, n: int | None = None) -> np.ndarray:
    """Integers as an int64 array when every ``|value| < 2^62``, else as an object array of Python ints.

    A scalar is broadcast to ``n`` entries. Arithmetic then runs in C on int64 arrays and falls back to
    exact Python integers only where values could overflow.
    """
    if np.ndim(values) == 0:
        values = int(values)
        return np.full(n, values, dtype=np.int64) if abs(values) < _SMALL else np.array([values] * n, dtype=object)
    arr = np.asarray(values)
    if arr.dtype == np.int64:
        return arr
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == object:
        if all(-_SMALL < v < _SMALL for v in (min(arr), max(arr))):
            return arr.astype(np.int64)
        return arr
    return arr.astype(np.int64)


def _big(values: np.ndarray) -> np.ndarray:
    """The same integers as an object array of Python ints (exact arithmetic at any size)."""
    return values if values.dtype == object else np.array(values.tolist(), dtype=object)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b`` elementwise without overflow (int64 when both factors are small enough)."""
    if a.dtype == np.int64 and b.dtype == np.int64 and a.size:
        if float(np.max(np.abs(a))) * float(np.max(np.abs(b))) < 2.0**61:
            return a * b
    return _ints(_big(a) * _big(b))


def _uniform_below(bounds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact uniform integers in ``[0, bound)`` for an array of integer bounds (>= 1)."""
    bounds = _ints(bounds)
    if bounds.dtype == np.int64:
        return rng.integers(0, bounds) if bounds.size else bounds.copy()
    out = np.empty(bounds.size, dtype=object)
    for i, bound in enumerate(bounds):  # rare: bounds beyond 2^62, 63-bit words with rejection
        words = -(-bound.bit_length() // 63)
        while True:
            value = 0
            for word in rng.integers(0, 2**63, size=words):
                value = (value << 63) | int(word)
            value >>= words * 63 - bound.bit_length()
            if value < bound:
                out[i] = value
                break
    return _ints(out)


def bernoulli_ratio(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(num / den) draws for integer arrays, ``0 <= num``, ``den >= 1``.

    Small integers: ``[uniform integer in [0, den) < num]``. Large ones: ``[V < num / den]`` for a
    uniform ``V`` in [0, 1) read 63 bits at a time: with the next word ``w`` and
    ``c = floor(2^63 num / den)``, ``w < c`` decides 1, ``w > c`` decides 0, and a tie (probability
    ``2^-63``) continues with the remainder ``2^63 num - c den``. The first word is compared in
    floating point when ``w`` is farther than the rounding errors (a relative ``2^-48``) from
    ``2^63 num / den``, which gives the same decision; the rest (about ``2^-40`` of draws) in integers.
    """
    num, den = _ints(num), _ints(den)
    if num.dtype == np.int64 and den.dtype == np.int64:
        return rng.integers(0, den) < num if num.size else np.zeros(0, dtype=bool)
    num, den = _big(num), _big(den)
    out = num >= den
    pending = np.flatnonzero(~out)
    num = num.copy()
    first = True
    while pending.size:
        words = rng.integers(0, 2**63, size=pending.size)
        if first:  # decide in floating point where a wide margin makes the exact decision certain
            first = False
            ratio = num[pending].astype(float) / den[pending].astype(float)  # within 2^-50 relative of num/den
            w = words.astype(float)  # within 2^10 of the word
            surely_1 = (w + 2048.0) * 2.0**-63 < ratio * (1 - 2.0**-48)  # then (word + 1) 2^-63 <= num/den
            surely_0 = (w - 2048.0) * 2.0**-63 > ratio * (1 + 2.0**-48)  # then word 2^-63 > num/den
            out[pending[surely_1]] = True
            undecided = ~(surely_1 | surely_0)
            pending, words = pending[undecided], words[undecided]
            if not pending.size:
                break
        scaled = num[pending] * (1 << 63)
        c = scaled // den[pending]
        c_int = c.astype(np.int64)  # < 2^63 since num < den
        out[pending[words < c_int]] = True
        tie = words == c_int
        num[pending[tie]] = scaled[tie] - c[tie] * den[pending[tie]]
        pending = pending[tie]
    return out.astype(bool)


def _bernoulli_exp_at_most_one(num: np.ndarray, den: np.ndarray, rng) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for ``num <= den``: K = 1, 2, ... while Bernoulli(gamma / K); 1 iff K odd."""
    out = np.zeros(num.size, dtype=bool)
    k = np.ones(num.size, dtype=np.int64)
    active = np.arange(num.size)
    while active.size:
        accept = bernoulli_ratio(num[active], _product(den[active], k[active]), rng)
        stop = active[~accept]
        out[stop] = k[stop] % 2 == 1
        active = active[accept]
        k[active] += 1
    return out


def bernoulli_exp(num, den, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-num / den)) draws, ``num >= 0`` and ``den >= 1`` integers (arrays of them).

    Canonne, Kamath & Steinke (2020), Algorithm 1: for ``gamma <= 1`` run K while Bernoulli(gamma/K)
    succeeds and return ``K`` odd; for ``gamma > 1`` require ``floor(gamma)`` Bernoulli(exp(-1)) and
    one Bernoulli(exp(-(gamma - floor gamma))). Batched over the array.
    """
    num = _ints(np.atleast_1d(np.asarray(num, dtype=object)))
    den = _ints(den, num.size) if np.ndim(den) == 0 else _ints(np.asarray(den, dtype=object))
    if num.size and (np.any(num < 0) or np.any(den < 1)):
        raise ValueError("bernoulli_exp needs num >= 0 and den >= 1")
    whole = num // den
    frac = num - whole * den
    out = np.ones(num.size, dtype=bool)
    left = whole.astype(np.int64)
    active = np.flatnonzero(left > 0)
    while active.size:  # Bernoulli(exp(-1)) for each whole unit of gamma, until one fails
        ones = np.ones(active.size, dtype=np.int64)
        out[active] = _bernoulli_exp_at_most_one(ones, ones, rng)
        left[active] -= 1
        active = active[out[active] & (left[active] > 0)]
    keep = np.flatnonzero(out)
    out[keep] = _bernoulli_exp_at_most_one(frac[keep], den[keep], rng)
    return out


def _geometric_exp_minus_one(n: int, rng) -> np.ndarray:
    """Numbers of successes before the first failure of Bernoulli(exp(-1)) trials (int64)."""
    count = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        ones = np.ones(active.size, dtype=np.int64)
        active = active[_bernoulli_exp_at_most_one(ones, ones, rng)]
        count[active] += 1
    return count


def sample_discrete_laplace(scale, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws with ``Pr[Y = y] ∝ exp(-|y| / scale)`` on the integers.

    ``scale = t / s`` is a positive rational (a Fraction, int, or a float read exactly). Canonne,
    Kamath & Steinke (2020), Algorithm 2: ``U`` uniform on ``0..t-1`` kept with probability
    ``exp(-U / t)``, ``V`` geometric with ratio ``exp(-1)``, ``X = U + t V`` (``Pr[X = x] ∝ e^(-x/t)``),
    ``Y = floor(X / s)``, a random sign, and the draw ``-0`` rejected. All pending draws advance
    together. Returns an int64 array, or an object array of Python ints where values may pass 2^62.
    """
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    size = check_integer(size, "size", minimum=0)
    t, s = scale.numerator, scale.denominator
    out = _ints(0, size)
    pending = np.arange(size)
    while pending.size:
        m = pending.size
        u = _uniform_below(_ints(t, m), rng)
        kept = np.flatnonzero(bernoulli_exp(u, _ints(t, m), rng))
        x = u[kept] + _product(_geometric_exp_minus_one(kept.size, rng), _ints(t, kept.size))
        y = _ints(x // s if s < _SMALL else _big(x) // s)
        negative = rng.integers(0, 2, size=kept.size).astype(bool)
        done = ~(negative & (y == 0))
        y[negative] = -y[negative]
        if y.dtype == object and out.dtype != object:
            out = _big(out)
        out[pending[kept[done]]] = y[done]
        finished = np.zeros(m, dtype=bool)
        finished[kept[done]] = True
        pending = pending[~finished]
    return out


def sample_discrete_gaussian(sigma2, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws with ``Pr[Y = y] ∝ exp(-y^2 / (2 sigma2))`` on the integers.

    ``sigma2`` is a positive rational variance parameter. Canonne, Kamath & Steinke (2020),
    Algorithm 3: ``Y`` discrete Laplace with scale ``t = floor(sigma) + 1``, accepted with
    probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``; with ``sigma2 = p / q`` the exponent is
    the rational ``(|Y| q t - p)^2 / (2 p q t^2)``, evaluated in exact integers.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    size = check_integer(size, "size", minimum=0)
    p, q = sigma2.numerator, sigma2.denominator
    t = math.isqrt(p // q) + 1
    out = _ints(0, size)
    pending = np.arange(size)
    den = 2 * p * q * t * t
    while pending.size:
        y = sample_discrete_laplace(t, pending.size, rng)
        num = (np.abs(_big(y)) * (q * t) - p) ** 2
        keep = bernoulli_exp(num, den, rng)
        if y.dtype == object and out.dtype != object:
            out = _big(out)
        out[pending[keep]] = y[keep]
        pending = pending[~keep]
    return out


def discrete_laplace_pmf(values, scale: float) -> np.ndarray:
    """``Pr[Y = y] = (1 - e^(-1/b)) / (1 + e^(-1/b)) e^(-|y|/b)`` of the discrete Laplace, scale ``b``."""
    a = math.exp(-1.0 / float(scale))
    return (1 - a) / (1 + a) * np.exp(-np.abs(np.asarray(values, dtype=float)) / float(scale))


def discrete_gaussian_pmf(values, sigma2: float) -> np.ndarray:
    """``Pr[Y = y]`` of the discrete Gaussian, normalised by its sum over ``|y| <= 40 sigma``."""
    sigma2 = float(sigma2)
    half = int(40 * math.sqrt(sigma2)) + 2
    grid = np.arange(-half, half + 1, dtype=float)
    norm = np.exp(-(grid**2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(values, dtype=float) ** 2) / (2 * sigma2)) / norm


# ---------------------------------------------------------------------------------------------
# Privacy of the discrete Gaussian
# ---------------------------------------------------------------------------------------------


def discrete_gaussian_delta(epsilon, sigma2, sensitivity: int = 1) -> float:
    """Exact privacy curve of ``x + N_Z(0, sigma2)`` for integer ``x`` with ``|x - x'| <= sensitivity``.

    Canonne, Kamath & Steinke (2020), Thm 7: the optimal event is ``{L > epsilon}`` with privacy loss
    ``L(y) = (Delta^2 - 2 y Delta) / (2 sigma2)`` (shift ``Delta`` to the other side), so
    ``delta = Pr[Y > epsilon sigma2 / Delta - Delta / 2] - e^epsilon Pr[Y > epsilon sigma2 / Delta + Delta / 2]``,
    ``Y`` discrete Gaussian; both tails are summed from the pmf over ``|y| <= 40 sigma + epsilon sigma2``.
    Neighbours may differ by any integer up to ``sensitivity``: the maximum over those shifts is returned.
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    sigma2 = check_positive(float(sigma2), "sigma2")
    sensitivity = check_integer(sensitivity, "sensitivity")
    half = int(40 * math.sqrt(sigma2) + epsilon * sigma2 + sensitivity) + 2
    y = np.arange(-half, half + 1, dtype=float)
    weights = np.exp(-(y**2) / (2 * sigma2))
    norm = weights.sum()
    curve = 0.0
    for shift in range(1, sensitivity + 1):  # every integer shift up to the sensitivity; the largest wins
        a = epsilon * sigma2 / shift
        tail_1 = weights[y > a - shift / 2].sum() / norm
        tail_2 = weights[y > a + shift / 2].sum() / norm
        curve = max(curve, tail_1 - math.exp(epsilon) * tail_2)
    return float(curve)


def zcdp_delta(epsilon, rho) -> float:
    """delta(epsilon) of a rho-zCDP mechanism (Canonne, Kamath & Steinke 2020).

    ``delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1) (1 - 1/alpha)^alpha``.
    The bound holds at every alpha, so the numerical minimum (a log-grid refined by golden section)
    is a valid delta whatever its accuracy.
    """
    return float(min(1.0, math.exp(_zcdp_log_delta(epsilon, rho))))


def _zcdp_log_delta(epsilon, rho) -> float:
    """log of :func:`zcdp_delta` before capping at 1 (finite where delta underflows)."""
    epsilon = check_nonnegative(epsilon, "epsilon")
    rho = check_positive(rho, "rho")

    def log_delta(alpha):
        return (alpha - 1) * (alpha * rho - epsilon) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)

    grid = np.geomspace(1 + 1e-9, 1e6, 2000)
    with np.errstate(over="ignore"):  # a huge rho overflows at large alpha: inf, never the minimum
        values = [log_delta(a) for a in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(100):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if log_delta(a) < log_delta(b):
            hi = b
        else:
            lo = a
    return min(log_delta((lo + hi) / 2), values[i])


# ---------------------------------------------------------------------------------------------
# Real-valued releases on a grid
# ---------------------------------------------------------------------------------------------


def grid_exponent(sensitivity: float, n_coordinates: int) -> int:
    """``k`` of the grid ``2^-k``: the largest step with ``n_coordinates 2^-k <= sensitivity 2^-GRID_BITS``."""
    return GRID_BITS + math.ceil(math.log2(n_coordinates / sensitivity))


def grid_sensitivity(sensitivity: float, n_coordinates: int, k: int, norm: int) -> float:
    """Sensitivity of the rounded query in grid units, ``Delta 2^k + n`` (L1) or ``Delta 2^k + sqrt(n)`` (L2).

    Rounding half up, ``r(a) = floor(a + 1/2)``, satisfies ``|r(a) - r(b)| <= ceil(|a - b|) < |a - b| + 1``
    per coordinate (and ``= 0`` where ``a = b``), so the rounded difference is the scaled one plus a
    vector with entries in (-1, 1); the triangle inequality gives both bounds.
    """
    extra = n_coordinates if norm == 1 else math.sqrt(n_coordinates)
    return math.ldexp(sensitivity, k) + extra


def round_to_grid(value: np.ndarray, k: int) -> np.ndarray:
    """``floor(value 2^k + 1/2)`` exactly, flattened (int64, or Python ints when large); scaling by 2^k is exact."""
    with np.errstate(over="ignore"):  # an overflow is reported below, as a ValueError
        scaled = np.ldexp(value, k)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(f"value is too large for the grid 2^-{k}; rescale the query")
    whole = np.floor(scaled).ravel()
    up = ((scaled.ravel() - whole) >= 0.5).astype(np.int64)  # scaled - floor(scaled) is exact in double precision
    if whole.size and np.max(np.abs(whole)) < 2.0**61:
        return whole.astype(np.int64) + up
    return _ints(np.array([int(w) for w in whole], dtype=object) + up)


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` for integer arrays without overflow."""
    if a.dtype == np.int64 and b.dtype == np.int64 and a.size:
        if float(np.max(np.abs(a))) + float(np.max(np.abs(b))) < 2.0**62:
            return a + b
    return _ints(_big(a) + _big(b))


def _from_grid(integers: np.ndarray, k: int, shape) -> np.ndarray:
    """Post-processing: the grid integers as doubles (correctly rounded), times 2^-k."""
    values = integers.astype(float) if integers.dtype == np.int64 else np.array([float(v) for v in integers])
    return np.ldexp(values, -k).reshape(shape)  # int64 -> double and float(int) both round to nearest


#: Largest noise parameter, in grid units, the exact samplers take: their first comparison
#: converts it to a double, and noise this wide (over 1e300 grid steps) carries no information.
MAX_GRID_PARAMETER = Fraction(2) ** 1000


def _representable(parameter: Fraction, what: str, epsilon: float) -> Fraction:
    """``parameter`` if the exact samplers can draw with it, else a ValueError naming epsilon."""
    if parameter > MAX_GRID_PARAMETER:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for exact noise: its {what} exceeds 2^1000 grid steps; "
            "pass a larger epsilon"
        )
    return parameter


def laplace_scale_on_grid(sensitivity: float, epsilon: float, n_coordinates: int) -> tuple[int, Fraction]:
    """Grid exponent ``k`` and discrete-Laplace scale (grid units) for an epsilon-DP grid release.

    The scale is ``grid_sensitivity / epsilon`` rounded up to a rational with denominator ``2^8``,
    so the guarantee is ``grid_sensitivity / scale <= epsilon``.
    """
    k = grid_exponent(sensitivity, n_coordinates)
    needed = (Fraction(sensitivity) * Fraction(2) ** k + n_coordinates) / Fraction(epsilon)  # exact
    return k, _representable(Fraction(math.ceil(needed * 256), 256), "scale", epsilon)


@functools.lru_cache(maxsize=256)  # a root search per call otherwise; the arguments are numbers
def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` (just inside the root) whose :func:`zcdp_delta` at ``epsilon`` meets ``delta``.

    The root is bracketed in ``[1e-12, epsilon + 10]`` (``[1e-300, ...]`` when ``rho`` must be below
    ``1e-12``), found to an absolute ``1e-15`` and, if that is too coarse for a tiny ``rho``, refined
    to a relative ``1e-12``. An epsilon that no ``rho >= 1e-300`` serves is refused (ValueError).
    """
    gap = lambda rho: _zcdp_log_delta(epsilon, rho) - math.log(delta)  # noqa: E731
    low = 1e-12 if gap(1e-12) < 0 else 1e-300
    if gap(low) >= 0:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for exact Gaussian noise: no zCDP rho above 1e-300 meets "
            f"delta={delta!r}; pass a larger epsilon"
        )
    rho = brentq(gap, low, epsilon + 10, xtol=1e-15) * (1 - 1e-9)  # just inside the root
    if gap(rho) > 0:  # the absolute tolerance is coarse for a tiny rho
        rho = brentq(gap, low, rho, xtol=1e-300, rtol=1e-12) * (1 - 1e-9)
    if gap(rho) > 0:
        raise RuntimeError("zCDP calibration failed to meet delta")
    return rho


def gaussian_sigma2_on_grid(
    sensitivity: float, epsilon: float, delta: float, n_coordinates: int
) -> tuple[int, Fraction]:
    """Grid exponent ``k`` and discrete-Gaussian variance (grid units^2) for an (epsilon, delta)-DP release.

    The discrete Gaussian with L2 sensitivity ``D`` (grid units) is ``rho = D^2 / (2 sigma^2)``-zCDP
    in any dimension (Canonne, Kamath & Steinke 2020: their concentrated-DP bound for the
    multivariate discrete Gaussian, the per-coordinate divergences adding up), converted
    with :func:`zcdp_delta`; ``sigma^2`` is the smallest meeting ``delta`` (:func:`zcdp_rho`), rounded up
    to an integer. For one coordinate :func:`discrete_gaussian_delta` is exact and smaller.
    """
    k = grid_exponent(sensitivity, n_coordinates)
    root_n = math.isqrt(n_coordinates - 1) + 1  # an integer >= sqrt(n_coordinates)
    d = Fraction(sensitivity) * Fraction(2) ** k + root_n  # exact upper bound on the grid L2 sensitivity
    return k, _representable(Fraction(math.ceil(d * d / (2 * Fraction(zcdp_rho(epsilon, delta))))), "variance", epsilon)


def zcdp_sigma(sensitivity, epsilon, delta) -> float:
    """``sensitivity / sqrt(2 rho)``: the sigma whose (discrete) Gaussian noise is (epsilon, delta)-DP through zCDP.

    ``rho`` from :func:`zcdp_rho`. For an estimator that computes its own sigma, this replaces the
    continuous Gaussian's calibration when it releases exact noise with
    :func:`grid_gaussian_release_sigma` (about 8% above the analytic sigma at epsilon = 1,
    delta = 1e-5). ``epsilon = inf`` gives 0.
    """
    sensitivity, epsilon, delta = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon), check_delta(delta)
    if math.isinf(epsilon):
        return 0.0
    return sensitivity / math.sqrt(2 * zcdp_rho(epsilon, delta))


def gaussian_sigma2_for_sigma(sensitivity: float, sigma: float, n_coordinates: int) -> tuple[int, Fraction]:
    """Grid exponent ``k`` and discrete-Gaussian variance (grid units^2) with the zCDP ``rho`` of ``N(0, sigma^2)``.

    The continuous Gaussian with L2 sensitivity ``Delta`` and standard deviation ``sigma`` is
    ``rho = Delta^2 / (2 sigma^2)``-zCDP. On the grid the sensitivity is at most
    ``D = Delta 2^k + ceil(sqrt(n))`` (:func:`grid_sensitivity`), so the variance is
    ``(sigma 2^k D / (Delta 2^k))^2``, rounded up to a rational with denominator ``2^8``: then
    ``D^2 / (2 sigma_grid^2) <= rho`` exactly, at a noise scale at most ``1 + 2^-20`` larger.
    """
    k = grid_exponent(sensitivity, n_coordinates)
    root_n = math.isqrt(n_coordinates - 1) + 1
    scaled = Fraction(sensitivity) * Fraction(2) ** k
    variance = (Fraction(sigma) * Fraction(2) ** k * (scaled + root_n) / scaled) ** 2
    return k, Fraction(math.ceil(variance * 256), 256)


def grid_laplace_release(value, sensitivity, epsilon, rng, size=None) -> np.ndarray:
    """epsilon-DP release of ``value`` with exact discrete Laplace noise on the grid ``2^-k`` (any shape).

    ``size`` stacks independent releases in front. ``epsilon = inf`` returns ``value`` unchanged.
    """
    value = check_array(value, ndim=None, name="value")
    sensitivity, epsilon = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon)
    shape = value.shape if size is None else (check_integer(size, "size"), *value.shape)
    if np.isinf(epsilon):
        return np.broadcast_to(value, shape).copy()
    k, scale = laplace_scale_on_grid(sensitivity, epsilon, max(1, value.size))
    base = round_to_grid(np.broadcast_to(value, shape).ravel(), k)
    return _from_grid(_add(base, sample_discrete_laplace(scale, base.size, rng)), k, shape)


def symmetric_grid_release(matrix, release) -> np.ndarray:
    """Apply ``release`` (a grid release of a vector) to the upper triangle of ``matrix``, mirrored."""
    rows, cols = np.triu_indices(matrix.shape[0])
    upper = np.zeros(matrix.shape)
    upper[rows, cols] = release(matrix[rows, cols])
    return upper + np.triu(upper, 1).T


def grid_gaussian_release(value, sensitivity, epsilon, delta, rng, size=None) -> np.ndarray:
    """(epsilon, delta)-DP release with exact discrete Gaussian noise on the grid ``2^-k`` (any shape)."""
    value = check_array(value, ndim=None, name="value")
    sensitivity, epsilon, delta = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon), check_delta(delta)
    shape = value.shape if size is None else (check_integer(size, "size"), *value.shape)
    if np.isinf(epsilon):
        return np.broadcast_to(value, shape).copy()
    k, sigma2 = gaussian_sigma2_on_grid(sensitivity, epsilon, delta, max(1, value.size))
    base = round_to_grid(np.broadcast_to(value, shape).ravel(), k)
    return _from_grid(_add(base, sample_discrete_gaussian(sigma2, base.size, rng)), k, shape)


def grid_gaussian_release_sigma(value, sensitivity, sigma, rng, size=None) -> tuple[np.ndarray, float]:
    """Release ``value`` with exact discrete Gaussian noise on the grid ``2^-k``, at the privacy of ``N(0, sigma^2)``.

    For estimators that compute their own ``sigma`` for L2 sensitivity ``sensitivity``: the release is
    ``rho = sensitivity^2 / (2 sigma^2)``-zCDP, the zCDP guarantee of the continuous Gaussian it
    replaces, with the grid rounding accounted for (:func:`gaussian_sigma2_for_sigma`). For an
    (epsilon, delta) guarantee pass ``sigma = zcdp_sigma(sensitivity, epsilon, delta)``.
    ``sigma = 0`` returns ``value`` unchanged.

    Returns
    -------
    (release, effective_sigma): the release (shape of ``value``, ``size`` stacked in front) and the
    standard deviation parameter of its noise in the units of ``value`` (``sqrt(variance) 2^-k``).
    """
    value = check_array(value, ndim=None, name="value")
    sensitivity = check_positive(sensitivity, "sensitivity")
    shape = value.shape if size is None else (check_integer(size, "size"), *value.shape)
    if sigma == 0:
        return np.broadcast_to(value, shape).copy(), 0.0
    sigma = check_positive(sigma, "sigma")
    k, sigma2 = gaussian_sigma2_for_sigma(sensitivity, sigma, max(1, value.size))
    base = round_to_grid(np.broadcast_to(value, shape).ravel(), k)
    release = _from_grid(_add(base, sample_discrete_gaussian(sigma2, base.size, rng)), k, shape)
    return release, math.ldexp(math.sqrt(sigma2), -k)


def integer_gaussian_noise(sigma, shape, rng) -> np.ndarray:
    """Exact discrete Gaussian noise for integer-valued queries (counts), as float64 of ``shape``.

    The variance is ``sigma^2`` rounded up to a rational with denominator ``2^8``, so for an integer
    query with L2 sensitivity ``Delta`` the release keeps (at most) the zCDP ``rho = Delta^2 / (2 sigma^2)``
    of ``N(0, sigma^2)`` noise (Canonne, Kamath & Steinke 2020). No grid: counts are integers already.
    ``sigma = 0`` gives zeros.
    """
    shape = tuple(np.atleast_1d(shape)) if not isinstance(shape, tuple) else shape
    size = math.prod(shape)
    if sigma == 0:
        return np.zeros(shape)
    sigma = check_positive(sigma, "sigma")
    variance = Fraction(math.ceil(Fraction(sigma) ** 2 * 256), 256)
    draws = sample_discrete_gaussian(variance, size, rng)
    values = draws.astype(float) if draws.dtype == np.int64 else np.array([float(v) for v in draws])
    return values.reshape(shape)
