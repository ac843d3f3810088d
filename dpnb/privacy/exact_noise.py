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

**Exact noise whose work reveals nothing.** The discrete Laplace and discrete Gaussian of Canonne,
Kamath & Steinke (2020), sampled with a fixed amount of work: the words drawn, the vectorised passes and
the sizes of every integer depend on the public parameters (scale, grid, number of draws) only, never
on the value released nor on the noise drawn. (Their rejection loops, run until success, draw more
words and larger integers for larger noise: an observer of the time or the generator learns ``|noise|``.)

* Every random bit comes from ``rng.integers(0, 2**64, dtype=uint64)``, one bit-generator output a word
  (seeds stay reproducible). A Bernoulli(p) compares two words with ``floor(p 2^128)``: within
  ``2^-127`` of ``p``.
* Geometric, ``Pr[G = g] ∝ a^g`` with ``a = exp(-1/b)``: the binary digits of ``G`` are independent,
  ``Pr[g_j = 1] = 1 / (1 + exp(2^j / b))``; ``J = geometric_bits(b)`` digits, so that ``Pr[G >= 2^J] < 2^-128``.
* Discrete Laplace: ``G1 - G2`` (:func:`sample_discrete_laplace`), ``4 J`` words a draw, no rejection.
* Discrete Gaussian: their Algorithm 3 (Laplace proposal of scale ``floor(sigma) + 1``, acceptance
  ``exp(-v^2 / D)``), with a public pool of ``pool_size(n, alpha)`` proposals all drawn and tested
  (shortfall below ``2^-128``), the exponent in 112-bit fixed point (exact 30-bit-limb integer arithmetic)
  and ``exp(-x)`` as the AND of fifteen Bernoullis over its 8-bit digits (tabulated thresholds).

**What it costs in privacy.** Each draw is within total variation ``eta_1 = 2^-100`` of its exact law
(``TV_PER_DRAW``: the union of the rounded thresholds, ``4 J 2^-127``, the truncations, ``2^-127``, and for
the Gaussian per proposal ``30 2^-127 + 1.25 2^-112 + 2^-128``, at most ``4n + 200`` proposals for ``n``
draws, and the pool's shortfall; with ``J < 2^12`` the sum is below ``n 2^-100``). If a mechanism ``M`` is
``(epsilon, delta)``-DP and ``M'`` is within ``eta`` of it on every input, then for every event ``S``,
``M'(x)(S) <= M(x)(S) + eta <= e^epsilon M(x')(S) + delta + eta <= e^epsilon M'(x')(S) + delta + (1 + e^epsilon) eta``:
``M'`` is ``(epsilon, delta + (1 + e^epsilon) eta)``-DP. A release of ``m`` coordinates has ``eta <= m 2^-100``
(total variation adds over independent coordinates, and post-processing does not increase it), so an
epsilon-DP Laplace release with exact noise is ``(epsilon, sampling_delta(epsilon, m))``-DP, e.g.
``delta <= 2^-68`` for ``m = 2^30`` at ``epsilon = 1``; not pure epsilon-DP.

**Releases on a grid.** A real-valued release is made on the grid ``2^-k``: the value is rounded (half up,
exactly) to the grid, integer noise is added, and the sum is rounded to a double; these last steps are
post-processing of the exact sum. Rounding moves each coordinate by at most one grid step, so the integer
sensitivity is at most ``Delta / 2^-k + (number of coordinates)`` in L1 and
``Delta / 2^-k + sqrt(number of coordinates)`` in L2 (:func:`grid_sensitivity`); the grid is chosen
``2^20`` times finer than ``Delta / coordinates``, so this costs at most a factor ``1 + 2^-20`` of noise.
The rounding, the addition and the conversion run as a fixed sequence of double operations (``fmod``,
error-free sums, a correctly rounded three-term sum) on every value (``_release``), so a release's
work does not depend on the value either. Noise wider than ``2^62`` grid steps (epsilon below about
``2^-34``) is released on a grid ``2^h`` times coarser, still ``2^54`` times finer than the noise.
"""

from __future__ import annotations

import functools
import math
import struct
from decimal import ROUND_FLOOR, Decimal, localcontext
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


def _preimage(f, y: float, bracket: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """The doubles ``t`` with ``f(t) == y``, for ``f`` nondecreasing on doubles: ``(lo, hi)`` or None.

    Found by bisection over the ordered doubles, so no double is skipped: over all of them (64 steps
    per end), or over ``bracket = (a, b)`` when ``f(a) < y < f(b)`` holds, which puts every such ``t``
    strictly inside it (``f`` is nondecreasing), so the answer is the same, in fewer steps; a bracket
    that does not hold is ignored.
    """
    start, stop = -_LARGEST, _LARGEST
    if bracket is not None and f(bracket[0]) < y < f(bracket[1]):
        start, stop = _ordered(bracket[0]), _ordered(bracket[1])

    def first_at_least(target):  # smallest ordered t in [start, stop] with f(t) >= target
        lo, hi = start, stop
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


def _sum_preimage(x: float, y: float) -> tuple[float, float] | None:
    """The doubles ``t`` with ``fl(x + t) == y``: ``(lo, hi)`` or None (:func:`_preimage` of ``t -> x + t``).

    Every such ``t`` lies within ``ulp(y)`` of ``y - x`` (rounding to nearest moves a sum by at most half an ulp
    of the result), so the bisection starts from ``fl(y - x)`` widened by twice ``ulp(y) + ulp(y - x)`` (which
    also covers the rounding of ``y - x`` and of the widening); :func:`_preimage` checks the bracket before using it.
    """
    try:  # Python floats: an overflow is inf, not a warning; an int beyond the float range has no bracket
        centre = float(y) - float(x)
        margin = 2.0 * (math.ulp(float(y)) + math.ulp(centre))
        bracket = (centre - margin, centre + margin)
    except OverflowError:
        bracket = (math.inf, math.inf)
    return _preimage(lambda t: x + t, y, bracket if all(map(math.isfinite, bracket)) else None)


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

    pre = _sum_preimage(x, y)
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
    pre_t = _sum_preimage(x, y)
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
# Exact samplers with fixed work (Canonne, Kamath & Steinke 2020, made constant-work)
# ---------------------------------------------------------------------------------------------

WORD_BITS = 64  # one word = rng.integers(0, 2**64, dtype=uint64): exactly one output of the bit generator
THRESHOLD_BITS = 2 * WORD_BITS  # a Bernoulli compares two words with a 128-bit threshold
TAIL_BITS = 128  # every truncation (geometric tail, acceptance cap, pool shortfall) has probability < 2^-128
FRACTION_BITS = 112  # fixed-point precision of the Gaussian acceptance exponent
GAMMA_CAP = 89  # exp(-89) < 2^-128: a larger acceptance exponent rejects
LIMB_BITS = 30  # big integers are (limbs, draws) int64 arrays of 30-bit limbs, the top limb signed
TV_PER_DRAW = 2.0**-100  # total variation between each sampler's law and the exact law, per draw
MAX_NOISE_SCALE = 2.0**1000  # largest noise scale (Laplace b or Gaussian sigma, in the value's units)
_MASK = (1 << LIMB_BITS) - 1
_BLOCK_WORDS = 2**21  # words drawn per call at most (memory); the blocks follow from the public size
_EXP_DIGITS = FRACTION_BITS // 8 + 1  # 8-bit digits of the acceptance exponent (14 fractional, 1 integer)


def _threshold(p: Decimal) -> int:
    """``floor(p 2^128)`` clamped to ``[0, 2^128 - 1]``: a Bernoulli(p) within ``2^-127`` of ``p``."""
    t = int((p * _TWO_128).to_integral_value(rounding=ROUND_FLOOR))
    return min(max(t, 0), 2**THRESHOLD_BITS - 1)


_TWO_128 = Decimal(2**THRESHOLD_BITS)


def _split(thresholds) -> tuple[np.ndarray, np.ndarray]:
    """128-bit thresholds as (high word, low word) uint64 arrays."""
    t = np.array(thresholds, dtype=object)
    return (t >> WORD_BITS).astype(np.uint64), (t & (2**WORD_BITS - 1)).astype(np.uint64)


def _bernoulli(high: np.ndarray, low: np.ndarray, shape: tuple, rng) -> np.ndarray:
    """Independent Bernoulli(``T / 2^128``) of ``shape``, ``T = high 2^64 + low`` broadcast to ``shape``.

    Two uniform 64-bit words per draw, one ``integers`` call: the word pair is below ``T`` with
    probability exactly ``T / 2^128``. The work is ``2 prod(shape)`` words whatever the thresholds.
    """
    words = rng.integers(0, 2**WORD_BITS, size=(2, *shape), dtype=np.uint64)
    return (words[0] < high) | ((words[0] == high) & (words[1] < low))


def _normalize(limbs: np.ndarray) -> np.ndarray:
    """Carry-propagate limbs (any int64 values with room in the top limb) to canonical form, in place.

    Canonical: limbs ``0 .. L-2`` in ``[0, 2^30)``, the top limb signed; value ``sum limb_i 2^(30 i)``.
    One pass over the limbs (arithmetic shifts floor, so negative limbs borrow correctly).
    """
    for i in range(limbs.shape[0] - 1):
        carry = limbs[i] >> LIMB_BITS
        limbs[i] &= _MASK
        limbs[i + 1] += carry
    return limbs


def _const_limbs(value: int, n_limbs: int) -> np.ndarray:
    """A nonnegative Python int as a column of ``n_limbs`` canonical limbs, shape ``(n_limbs, 1)``."""
    return np.array([[(value >> (LIMB_BITS * i)) & _MASK] for i in range(n_limbs)], dtype=np.int64)


def _pad(limbs: np.ndarray, n_limbs: int) -> np.ndarray:
    """Canonical limbs widened to ``n_limbs`` (the sign of the top limb extended)."""
    extra = n_limbs - limbs.shape[0]
    if extra <= 0:
        return limbs
    return _normalize(np.concatenate([limbs, np.zeros((extra, limbs.shape[1]), dtype=np.int64)]))


def _absolute(limbs: np.ndarray) -> np.ndarray:
    """``|value|`` of canonical signed limbs (both signs computed, one selected)."""
    return np.where(limbs[-1] < 0, _normalize(-limbs), limbs)


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of two nonnegative canonical limb arrays (``(La, n)`` and ``(Lb, n)`` or ``(Lb, 1)``).

    Schoolbook: ``La Lb`` limb products (each below ``2^60``) split into 30-bit halves and added to
    their columns, then one carry pass; ``La + Lb`` limbs out.
    """
    out = np.zeros((a.shape[0] + b.shape[0], max(a.shape[1], b.shape[1])), dtype=np.int64)
    for i in range(a.shape[0]):
        product = a[i] * b
        out[i : i + b.shape[0]] += product & _MASK
        out[i + 1 : i + b.shape[0] + 1] += product >> LIMB_BITS
    return _normalize(out)


def _bits_to_limbs(bits: np.ndarray, n_limbs: int) -> np.ndarray:
    """Bits ``(J, n)`` (bit ``j`` of weight ``2^j``) as ``n_limbs`` canonical limbs."""
    out = np.zeros((n_limbs, bits.shape[1]), dtype=np.int64)
    for start in range(0, bits.shape[0], LIMB_BITS):
        chunk = bits[start : start + LIMB_BITS].astype(np.int64)
        out[start // LIMB_BITS] = (np.int64(1) << np.arange(chunk.shape[0], dtype=np.int64)) @ chunk
    return out


def _limbs_to_int64(limbs: np.ndarray, shift: int = 0) -> np.ndarray:
    """``floor(value / 2^shift)`` as int64, for a value whose quotient fits in int64.

    Arithmetic modulo ``2^64`` (limbs above the 64th bit contribute multiples of ``2^64``, or are the
    sign extension), then read as signed: exact because the true quotient fits.
    """
    first, offset = divmod(shift, LIMB_BITS)
    out = (limbs[first] >> offset).astype(np.uint64)
    position = LIMB_BITS - offset
    for i in range(first + 1, limbs.shape[0]):
        if position < 64:
            out += limbs[i].astype(np.uint64) << np.uint64(position)
        position += LIMB_BITS
    return out.view(np.int64)


def _limbs_to_integers(limbs: np.ndarray, n_bits: int) -> np.ndarray:
    """Signed limbs as integers: int64 when ``|value| < 2^n_bits <= 2^62``, else Python ints (object)."""
    if n_bits <= 62:
        return _limbs_to_int64(limbs)
    out = np.zeros(limbs.shape[1], dtype=object)
    for i in range(limbs.shape[0]):
        out = out + (limbs[i].astype(object) << (LIMB_BITS * i))
    return out


def _in_blocks(n: int, words_per_draw: int, draw) -> list:
    """``draw(m)`` over consecutive blocks of ``m`` draws covering ``n``; the blocks depend on ``n`` only."""
    block = max(1, _BLOCK_WORDS // words_per_draw)
    return [draw(min(block, n - start)) for start in range(0, n, block)]


def geometric_bits(scale: Fraction) -> int:
    """Number of bits ``J`` of the geometric noise at ``scale``: the smallest ``J >= 1`` with ``2^J >= 89 scale``.

    A geometric ``G`` with ``Pr[G = g] ∝ exp(-g / scale)`` exceeds ``2^J`` with probability
    ``exp(-2^J / scale) <= e^-89 < 2^-128``. Public: it depends on the scale only.
    """
    return max(1, (math.ceil(89 * Fraction(scale)) - 1).bit_length())


def _geometric_thresholds(scale: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds of the ``J`` independent bits of a geometric with ratio ``a = exp(-1 / scale)``.

    ``Pr[G = g] = (1 - a) a^g`` factors over the binary digits ``g_j`` of ``g``,
    ``a^g = prod_j (a^(2^j))^(g_j)``, so the digits are independent with
    ``Pr[g_j = 1] = a^(2^j) / (1 + a^(2^j)) = 1 / (1 + exp(x_j))``, ``x_j = 2^j / scale``. At 80 digits:
    ``exp(x) = 1 + x + x^2 / 2`` below ``x = 2^-60`` (error below ``2^-180``), then one ``exp`` and
    squarings (``x_(j+1) = 2 x_j``; at most 70 of them, relative error below ``2^70 10^-80``).
    """
    out, power = [], None
    with localcontext() as ctx:
        ctx.prec = 80
        inverse = Decimal(scale.denominator) / Decimal(scale.numerator)
        for j in range(geometric_bits(scale)):
            x = inverse * (1 << j)
            if x > 400:  # Pr[g_j = 1] < e^-400
                out.append(0)
                continue
            if x < _TINY:
                value = 1 + x + x * x / 2
            else:
                power = x.exp() if power is None else power * power
                value = power
            out.append(_threshold(1 / (1 + value)))
    return _split(out)


_TINY = Decimal(2) ** -60  # below it exp(x) is read from its Taylor polynomial


def _laplace_limbs(scale: Fraction, n: int, rng) -> np.ndarray:
    """``n`` discrete Laplace draws as signed limbs: ``G1 - G2`` for independent truncated geometrics.

    ``Pr[G1 - G2 = y] = sum_g (1 - a)^2 a^g a^(g + |y|) = (1 - a) / (1 + a) a^|y|``. Every draw costs
    ``4 J`` words (``J = geometric_bits(scale)``), whatever its value.
    """
    high, low = _geometric_thresholds(scale)
    n_bits = high.size
    n_limbs = n_bits // LIMB_BITS + 2

    def draw(m):
        bits = _bernoulli(high[:, None, None], low[:, None, None], (n_bits, 2, m), rng)
        return _normalize(_bits_to_limbs(bits[:, 0], n_limbs) - _bits_to_limbs(bits[:, 1], n_limbs))

    blocks = _in_blocks(n, 4 * n_bits, draw)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((n_limbs, 0), dtype=np.int64)


def _exp_digit_thresholds() -> tuple[np.ndarray, np.ndarray]:
    """Thresholds of ``exp(-d 2^(8 i - 112))`` for digit ``d`` in 0..255 at position ``i`` in 0..14.

    Powers ``exp(-2^(8 i - 112))^d`` at 80 digits (255 products, relative error below ``10^-77``).
    """
    out = []
    with localcontext() as ctx:
        ctx.prec = 80
        for i in range(_EXP_DIGITS):
            base, value, row = (-(Decimal(2) ** (8 * i - FRACTION_BITS))).exp(), Decimal(1), []
            for _ in range(256):
                row.append(_threshold(value))
                value *= base
            out.append(row)
    return _split(out)


_EXP_HIGH, _EXP_LOW = _exp_digit_thresholds()  # public constants, computed once at import


def _gaussian_plan(sigma2: Fraction) -> dict:
    """The public constants of the discrete Gaussian sampler at ``sigma2 = p / q``.

    Proposal: discrete Laplace with scale ``t = floor(sigma) + 1``; acceptance
    ``exp(-(|Y| - sigma^2 / t)^2 / (2 sigma^2)) = exp(-v^2 / D)`` with the integer
    ``v = |Y| q t - p`` and ``D = 2 p q t^2`` (Canonne, Kamath & Steinke 2020, Algorithm 3). The
    exponent is computed in fixed point, ``floor(v^2 R / 2^z)`` with ``R = floor(2^(z + 112) / D)`` and
    ``2^z >= 4 v_max^2``: within ``1.25 2^-112`` below ``v^2 / D``. Draws with ``|v| > v_max``
    (exponent above 89) are rejected.
    """
    p, q = sigma2.numerator, sigma2.denominator
    t = math.isqrt(p // q) + 1  # floor(sqrt(floor(x))) = floor(sqrt(x))
    d = 2 * p * q * t * t
    v_max = math.isqrt(GAMMA_CAP * d) + 1
    z = 2 * v_max.bit_length() + 2
    return {
        "t": Fraction(t),
        "m": q * t,
        "p": p,
        "v_max": v_max,
        "z": z,
        "r": (1 << (z + FRACTION_BITS)) // d,
        "alpha": _acceptance_lower_bound(sigma2, t),
    }


def _acceptance_lower_bound(sigma2: Fraction, t: int) -> float:
    """A lower bound on the probability that one proposal of the discrete Gaussian sampler is accepted.

    The product of the Laplace pmf and the acceptance is ``tanh(1 / (2t)) exp(-(y^2 + c^2) / (2 sigma^2))``
    with ``c = sigma^2 / t``, so the acceptance rate is ``alpha = tanh(1/(2t)) exp(-sigma^2 / (2 t^2)) theta``,
    ``theta = sum_y exp(-y^2 / (2 sigma^2))``. Above ``sigma = 100``: ``theta >= sigma sqrt(2 pi)``
    (Poisson summation), ``sigma / t >= 100 / 101`` and ``tanh(x) >= x (1 - x^2 / 3)`` give
    ``alpha >= 0.75``. Below, ``theta`` is summed (at least its central term, 1) and a relative
    ``10^-6`` taken off for rounding.
    """
    if sigma2 > 10**4:
        return 0.75
    s2 = float(sigma2)
    theta = 1.0
    if s2 > 1e-3:
        y = np.arange(1, int(40 * math.sqrt(s2)) + 2, dtype=float)
        theta += 2 * float(np.sum(np.exp(-(y**2) / (2 * s2))))
    return math.tanh(1 / (2 * t)) * math.exp(-s2 / (2 * t * t)) * theta * (1 - 1e-6)


def pool_size(n: int, alpha: float) -> int:
    """Proposals drawn for ``n`` accepted ones at acceptance rate at least ``alpha``: the smallest ``M`` with
    ``Pr[Binomial(M, alpha) < n] <= 2^-128`` by the Chernoff bound ``exp(-M KL((n - 1) / M || alpha))``.

    About ``n / alpha + 9 sqrt(n)`` for large ``n``; 64 to 154 for ``n = 1`` (``alpha`` from 0.75 down to 0.44).
    Public: it depends on ``n`` and the noise parameter only.

    Examples
    --------
    >>> pool_size(1, 0.5)
    128
    """
    if n == 0:
        return 0
    target = TAIL_BITS * math.log(2)

    def exponent(m):
        a = (n - 1) / m
        if a >= alpha:
            return 0.0
        head = a * math.log(a / alpha) if a > 0 else 0.0
        return m * (head + (1 - a) * math.log((1 - a) / (1 - alpha)))

    low = high = math.ceil(n / alpha)
    while exponent(high) < target:
        high *= 2
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if exponent(middle) >= target else (middle + 1, high)
    return low


def _gaussian_limbs(sigma2: Fraction, n: int, rng) -> tuple[np.ndarray, int]:
    """``n`` discrete Gaussian draws as signed limbs, and the bound ``|draw| < 2^n_bits``.

    All ``pool_size(n, alpha)`` proposals are drawn and tested (the first ``n`` accepted are returned,
    then, in the event of probability below ``2^-128`` that fewer were accepted, rejected ones): the
    words drawn and the arithmetic depend on ``n`` and ``sigma2`` only.
    """
    plan = _gaussian_plan(sigma2)
    n_bits = geometric_bits(plan["t"])
    m_limbs = plan["m"].bit_length() // LIMB_BITS + 1
    y_limbs = n_bits // LIMB_BITS + 2
    v_limbs = max(y_limbs + m_limbs, plan["p"].bit_length() // LIMB_BITS + 1) + 1
    r = _const_limbs(plan["r"], plan["r"].bit_length() // LIMB_BITS + 1)
    m = _const_limbs(plan["m"], m_limbs)
    p = _const_limbs(plan["p"], v_limbs)
    cap = _const_limbs(plan["v_max"] + 1, v_limbs)
    table_high, table_low = _EXP_HIGH, _EXP_LOW
    rows = np.arange(_EXP_DIGITS)[:, None]

    def draw(count):
        y = _laplace_limbs(plan["t"], count, rng)
        v = _absolute(_normalize(_pad(_multiply(_absolute(y), m), v_limbs) - p))
        inside = _normalize(v - cap)[-1] < 0  # |v| <= v_max
        full = _pad(_multiply(_multiply(v, v), r), (plan["z"] + 8 * _EXP_DIGITS) // LIMB_BITS + 2)
        digits = []
        for i in range(_EXP_DIGITS):
            limb, offset = divmod(plan["z"] + 8 * i, LIMB_BITS)
            digit = full[limb] >> offset
            if offset > LIMB_BITS - 8:
                digit = digit | (full[limb + 1] << (LIMB_BITS - offset))
            digits.append(digit & 255)
        digits = np.array(digits)
        passes = _bernoulli(table_high[rows, digits], table_low[rows, digits], digits.shape, rng)
        return y, inside & np.all(passes, axis=0)

    total = pool_size(n, plan["alpha"])
    if total > 4 * n + 200:  # the bound behind TV_PER_DRAW
        raise RuntimeError(f"{total} proposals for {n} discrete Gaussian draws; the TV bound assumes at most 4n + 200")
    blocks = _in_blocks(total, 4 * n_bits + 2 * _EXP_DIGITS, draw)
    if not blocks:
        return np.zeros((y_limbs, 0), dtype=np.int64), n_bits
    proposals = np.concatenate([b[0] for b in blocks], axis=1)
    accepted = np.concatenate([b[1] for b in blocks])
    order = np.argsort(~accepted, kind="stable")[:n]  # accepted first, in order
    return proposals[:, order], n_bits


def bernoulli_ratio(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(``min(num / den, 1)``) draws for integer arrays, ``num >= 0``, ``den >= 1``, two words each.

    The draw is ``[W < floor(2^128 num / den)]`` for a uniform 128-bit ``W`` (two 64-bit words), so its
    probability is within ``2^-128`` below ``num / den`` (exact for ``num >= den``); every draw reads
    two words, whatever ``num / den``. The threshold is computed exactly from Python integers.
    """
    num = np.atleast_1d(np.asarray(num, dtype=object))
    den = np.broadcast_to(np.asarray(den, dtype=object), num.shape)
    if num.size and (np.any(num < 0) or np.any(den < 1)):
        raise ValueError("bernoulli_ratio needs num >= 0 and den >= 1")
    whole = num >= den
    scaled = np.where(whole, 0, (num << THRESHOLD_BITS) // den) if num.size else num
    high, low = _split(list(scaled))
    return whole | _bernoulli(high, low, num.shape, rng)


def bernoulli_exp(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(``exp(-num / den)``) draws, ``num >= 0`` and ``den >= 1`` integers (arrays of them), 30 words each.

    The exponent is read in fixed point, ``G = floor(2^112 num / den)``, and split into fifteen 8-bit
    digits ``d_i``: ``exp(-G 2^-112) = prod_i exp(-d_i 2^(8 i - 112))``, so the draw is the AND of fifteen
    independent Bernoullis with tabulated 128-bit thresholds (exponents beyond 255 saturate; their
    probability is below ``e^-255``). Within ``2^-111`` of ``exp(-num / den)``; the words drawn do not
    depend on ``num / den``.
    """
    num = np.atleast_1d(np.asarray(num, dtype=object))
    den = np.broadcast_to(np.asarray(den, dtype=object), num.shape)
    if num.size and (np.any(num < 0) or np.any(den < 1)):
        raise ValueError("bernoulli_exp needs num >= 0 and den >= 1")
    cap = (1 << (FRACTION_BITS + 8)) - 1
    fixed = [min((int(a) << FRACTION_BITS) // int(b), cap) for a, b in zip(num.ravel(), den.ravel())]
    digits = np.array([[(g >> (8 * i)) & 255 for g in fixed] for i in range(_EXP_DIGITS)], dtype=np.int64)
    digits = digits.reshape(_EXP_DIGITS, num.size)
    table_high, table_low = _EXP_HIGH, _EXP_LOW
    rows = np.arange(_EXP_DIGITS)[:, None]
    return np.all(_bernoulli(table_high[rows, digits], table_low[rows, digits], digits.shape, rng), axis=0)


def _check_scale(value, name: str) -> Fraction:
    value = Fraction(value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def sample_discrete_laplace(scale, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with ``Pr[Y = y] ∝ exp(-|y| / scale)`` on the integers, within ``TV_PER_DRAW`` of that law.

    ``scale`` is a positive rational (a Fraction, int, or a float read exactly). ``Y = G1 - G2`` for two
    independent geometrics, each the sum of ``J`` independent bits ``2^j B_j`` with
    ``Pr[B_j = 1] = 1 / (1 + exp(2^j / scale))`` (the binary digits of a geometric are independent),
    ``J = geometric_bits(scale)`` so that the truncation has probability below ``2^-128``. Every draw
    reads ``4 J`` words and runs the same vectorised passes, whatever its value. Returns an int64 array,
    or an object array of Python ints when ``2^J`` exceeds ``2^62``.

    Examples
    --------
    >>> sample_discrete_laplace(Fraction(3, 2), 4, np.random.default_rng(0)).dtype
    dtype('int64')
    """
    scale = _check_scale(scale, "scale")
    size = check_integer(size, "size", minimum=0)
    return _limbs_to_integers(_laplace_limbs(scale, size, rng), geometric_bits(scale))


def sample_discrete_gaussian(sigma2, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with ``Pr[Y = y] ∝ exp(-y^2 / (2 sigma2))`` on the integers, within ``TV_PER_DRAW`` of that law.

    ``sigma2`` is a positive rational. Rejection from the discrete Laplace (Canonne, Kamath & Steinke
    2020, Algorithm 3) with a public number of proposals, ``pool_size(size, alpha)``, all drawn and
    tested (``_gaussian_limbs``), the acceptance exponent in fixed point. Returns int64, or Python
    ints beyond ``2^62``.

    Examples
    --------
    >>> sample_discrete_gaussian(Fraction(10, 3), 3, np.random.default_rng(0)).shape
    (3,)
    """
    sigma2 = _check_scale(sigma2, "sigma2")
    size = check_integer(size, "size", minimum=0)
    limbs, n_bits = _gaussian_limbs(sigma2, size, rng)
    return _limbs_to_integers(limbs, n_bits)


def sampling_delta(epsilon, n_draws: int) -> float:
    """The ``delta`` the sampling adds to an ``epsilon``-DP (or ``(epsilon, delta)``-DP) exact-noise release.

    Each coordinate's noise is within total variation ``TV_PER_DRAW = 2^-100`` of the exact law, so a
    release of ``n_draws`` coordinates is within ``eta = n_draws 2^-100`` of the exact mechanism, which
    turns ``(epsilon, delta)`` into ``(epsilon, delta + (1 + e^epsilon) eta)`` (see the module docstring).
    ``epsilon = inf`` draws no noise: 0.

    Examples
    --------
    >>> sampling_delta(1.0, 10**6) < 2**-78
    True
    """
    epsilon = check_epsilon(epsilon)
    n_draws = check_integer(n_draws, "n_draws", minimum=0)
    if math.isinf(epsilon):
        return 0.0
    if epsilon > 700:
        return 1.0
    return min(1.0, (1 + math.exp(epsilon)) * n_draws * TV_PER_DRAW)


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

    def log_delta(alpha):  # Python floats: a huge rho overflows at large alpha to inf (never the minimum), silently
        return (alpha - 1) * (alpha * rho - epsilon) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)

    grid = np.geomspace(1 + 1e-9, 1e6, 2000).tolist()
    values = [log_delta(a) for a in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
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


MAX_GRID_EXPONENT = 1074  # the grid 2^-k is made of doubles (2^-1074 is the smallest)


def grid_exponent(sensitivity: float, n_coordinates: int) -> int:
    """``k`` of the grid ``2^-k``: the largest step with ``n_coordinates 2^-k <= sensitivity 2^-GRID_BITS``.

    Exact (rational arithmetic, no overflow for any double ``sensitivity``), and at most
    ``MAX_GRID_EXPONENT`` so that every grid point is a double; below ``sensitivity = n 2^-1054`` the
    grid is then coarser than the rule asks and :func:`grid_sensitivity` accounts for it.
    """
    ratio = Fraction(n_coordinates) * 2**GRID_BITS / Fraction(sensitivity)  # we need 2^k >= ratio
    if ratio >= 1:
        k = (math.ceil(ratio) - 1).bit_length()
    else:
        k = -(math.floor(1 / ratio).bit_length() - 1)
    return min(k, MAX_GRID_EXPONENT)


def grid_sensitivity(sensitivity: float, n_coordinates: int, k: int, norm: int) -> float:
    """Sensitivity of the rounded query in grid units, ``Delta 2^k + n`` (L1) or ``Delta 2^k + sqrt(n)`` (L2).

    Rounding half up, ``r(a) = floor(a + 1/2)``, satisfies ``|r(a) - r(b)| <= ceil(|a - b|) < |a - b| + 1``
    per coordinate (and ``= 0`` where ``a = b``), so the rounded difference is the scaled one plus a
    vector with entries in (-1, 1); the triangle inequality gives both bounds.
    """
    extra = n_coordinates if norm == 1 else math.sqrt(n_coordinates)
    return math.ldexp(sensitivity, k) + extra


def grid_point(value, k: int) -> np.ndarray:
    """The grid point ``floor(x 2^k + 1/2) 2^-k`` nearest each value (ties up), as doubles, exactly.

    Where ``|x| >= 2^(52 - k)`` the value already lies on the grid and is returned; elsewhere ``x 2^k``
    is below ``2^52``, its rounding is exact, and so is the scaling back (``k <= 1074``). Both are
    computed for every value and one selected, so the work does not depend on the values.

    Examples
    --------
    >>> grid_point(np.array([0.3, -0.5, 1e300]), 1).tolist()
    [0.5, -0.5, 1e+300]
    """
    x = np.asarray(value, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # inf where x is on the grid anyway: not selected
        scaled = np.ldexp(x, k)
        whole = np.floor(scaled)
        rounded = np.ldexp(whole + ((scaled - whole) >= 0.5), -k) + 0.0  # + 0.0: no -0.0
        return np.where(np.abs(x) >= np.ldexp(1.0, 52 - k), x, rounded)


def _double_limbs(value: np.ndarray, k: int, n_bits: int) -> np.ndarray:
    """``value 2^k`` (a nonnegative multiple of ``2^-k`` below ``2^(n_bits - k)``) as canonical limbs.

    Limb ``i`` is ``floor((value mod 2^(30 (i + 1) - k)) 2^(k - 30 i))``: ``fmod`` is exact, and so is
    the power-of-two scaling of its result (53 significant bits below ``2^30``).
    """
    limbs = [
        np.floor(np.ldexp(np.fmod(value, np.ldexp(1.0, LIMB_BITS * (i + 1) - k)), k - LIMB_BITS * i)).astype(np.int64)
        for i in range(n_bits // LIMB_BITS + 1)
    ]
    return np.array(limbs).reshape(-1, value.size)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = fl(a + b)`` and its exact error ``a + b - s`` (Knuth's TwoSum, no branch)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


def _sum3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a + b + c`` correctly rounded to the nearest double (ties to even), with a fixed sequence of operations.

    Boldo & Melquiond (2008), Algorithm 5: ``(uh, ul) = TwoSum(b, c)``, ``(th, tl) = TwoSum(a, uh)``,
    ``v = RO(tl + ul)`` (rounding to odd, emulated by TwoSum and one step to the odd neighbour when the
    sum is inexact and even), ``z = RN(th + v)``. An overflow gives ``±inf``.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        uh, ul = _two_sum(b, c)
        th, tl = _two_sum(a, uh)
        s, e = _two_sum(tl, ul)
        even = (s.view(np.int64) & 1) == 0
        v = np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return np.where(np.isinf(th), th, th + v)


def _release(value: np.ndarray, k: int, noise: np.ndarray, n_bits: int) -> np.ndarray:
    """The double released for grid point ``q = grid_point(value) 2^k`` and integer noise ``Y`` (``|Y| < 2^n_bits``).

    With ``h = max(0, n_bits - 62)`` the release is ``RN(2^(h - k) floor((q + Y) / 2^h))``, clipped to the
    finite doubles: a function of ``q + Y`` only (post-processing). ``h = 0`` unless the noise exceeds
    ``2^62`` grid steps; then the release lies on the coarser grid ``2^(h - k)``, more than ``2^54`` times
    finer than the noise scale. Computed as ``x_h + T 2^(h - k)`` with ``x_h = 2^(h - k) floor(q / 2^h)`` (a
    double, by ``fmod``) and ``T = floor((q mod 2^h + Y) / 2^h)`` (int64, from the limbs), summed correctly
    rounded by ``_sum3``. Every step runs on every value: the work depends on ``(k, n_bits)`` and the
    number of values only.
    """
    h = max(0, n_bits - 62)
    x = grid_point(value, k)
    if h:
        step = np.ldexp(1.0, h - k)
        r = np.fmod(x, step)  # exact; the sign of x
        negative = r < 0
        x = np.where(negative, (x - r) - step, x - r)  # 2^(h - k) floor(q / 2^h), exact
        low = _double_limbs(np.abs(r), k, h)
        n_low = low.shape[0] + 1
        low = np.where(negative, _normalize(_const_limbs(1 << h, n_low) - _pad(low, n_low)), _pad(low, n_low))
        width = max(n_low, noise.shape[0]) + 1
        noise = _normalize(_pad(low, width) + _pad(noise, width))
    top = _limbs_to_int64(noise, h)
    magnitude = np.abs(top)  # |top| < 2^62
    high = np.where(top < 0, -((magnitude >> 31) << 31), (magnitude >> 31) << 31)  # both parts exact doubles
    with np.errstate(over="ignore"):
        total = _sum3(x, np.ldexp(high.astype(float), h - k), np.ldexp((top - high).astype(float), h - k))
    return np.clip(total, -_DOUBLE_MAX, _DOUBLE_MAX)


_DOUBLE_MAX = float(np.finfo(float).max)


def _noise_scale_check(parameter: Fraction, k: int, power: int, name: str, value) -> None:
    """A ValueError naming ``name`` when the noise parameter exceeds ``MAX_NOISE_SCALE`` in the value's units.

    ``parameter`` is the discrete scale (``power = 1``) or variance (``power = 2``) in grid units; the
    noise beyond ``2^1000`` would overflow doubles (the release saturates there anyway).
    """
    if parameter > Fraction(2) ** (power * (1000 + k)):
        raise ValueError(
            f"{name}={value!r} gives exact noise wider than 2^1000 (the doubles' range); pass a "
            + ("larger epsilon" if name == "epsilon" else f"smaller {name}")
        )


def laplace_scale_on_grid(sensitivity: float, epsilon: float, n_coordinates: int) -> tuple[int, Fraction]:
    """Grid exponent ``k`` and discrete-Laplace scale (grid units) for an epsilon-DP grid release.

    The scale is ``grid_sensitivity / epsilon`` rounded up to a rational with denominator ``2^8``,
    so the guarantee is ``grid_sensitivity / scale <= epsilon``. A scale above ``2^1000`` in the value's
    units is refused (ValueError naming epsilon).
    """
    k = grid_exponent(sensitivity, n_coordinates)
    needed = (Fraction(sensitivity) * Fraction(2) ** k + n_coordinates) / Fraction(epsilon)  # exact
    scale = Fraction(math.ceil(needed * 256), 256)
    _noise_scale_check(scale, k, 1, "epsilon", epsilon)
    return k, scale


@functools.lru_cache(maxsize=256)  # a root search per call otherwise; the arguments are numbers
def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` (just inside the root) whose :func:`zcdp_delta` at ``epsilon`` meets ``delta``.

    The root is bracketed in ``[1e-12, epsilon + 10]`` (``[1e-300, ...]`` when ``rho`` must be below
    ``1e-12``; the upper end multiplied by 16 until it is past the root, which a ``delta`` near 1 puts far
    out, as the bound reaches 1 only for a large ``rho``), found to an absolute ``1e-15`` and, if that is
    too coarse for a tiny ``rho``, refined to a relative ``1e-12``. An epsilon that no ``rho >= 1e-300``
    serves is refused (ValueError).

    Examples
    --------
    >>> 0 < zcdp_rho(1.0, 1e-5) < zcdp_rho(1.0, 1 - 2**-53)
    True
    """
    gap = lambda rho: _zcdp_log_delta(epsilon, rho) - math.log(delta)  # noqa: E731
    low = 1e-12 if gap(1e-12) < 0 else 1e-300
    if gap(low) >= 0:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for exact Gaussian noise: no zCDP rho above 1e-300 meets "
            f"delta={delta!r}; pass a larger epsilon"
        )
    high = epsilon + 10
    while gap(high) < 0:  # the bound tends to +inf in log as rho grows: at most ~250 steps to the doubles' end
        high *= 16
    rho = brentq(gap, low, high, xtol=1e-15) * (1 - 1e-9)  # just inside the root
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
    to a multiple of ``2^-8``. For one coordinate :func:`discrete_gaussian_delta` is exact and smaller. A sigma
    above ``2^1000`` in the value's units is refused (ValueError naming epsilon).
    """
    k = grid_exponent(sensitivity, n_coordinates)
    root_n = math.isqrt(n_coordinates - 1) + 1  # an integer >= sqrt(n_coordinates)
    d = Fraction(sensitivity) * Fraction(2) ** k + root_n  # exact upper bound on the grid L2 sensitivity
    variance = Fraction(math.ceil(d * d / (2 * Fraction(zcdp_rho(epsilon, delta))) * 256), 256)
    _noise_scale_check(variance, k, 2, "epsilon", epsilon)
    return k, variance


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
    ``D^2 / (2 sigma_grid^2) <= rho`` exactly, at a noise scale at most ``1 + 2^-20`` larger. A sigma above
    ``2^1000`` is refused (ValueError naming sigma).
    """
    k = grid_exponent(sensitivity, n_coordinates)
    root_n = math.isqrt(n_coordinates - 1) + 1
    scaled = Fraction(sensitivity) * Fraction(2) ** k
    variance = Fraction(math.ceil((Fraction(sigma) * Fraction(2) ** k * (scaled + root_n) / scaled) ** 2 * 256), 256)
    _noise_scale_check(variance, k, 2, "sigma", sigma)
    return k, variance


def _shape(value: np.ndarray, size) -> tuple:
    return value.shape if size is None else (check_integer(size, "size", minimum=0), *value.shape)


def grid_laplace_release(value, sensitivity, epsilon, rng, size=None) -> np.ndarray:
    """Release ``value`` with discrete Laplace noise on the grid ``2^-k`` (any shape): (epsilon, sampling_delta)-DP.

    The grid mechanism with exact discrete Laplace noise is epsilon-DP; the sampler is within
    ``TV_PER_DRAW`` of it per coordinate, so the release of ``m`` coordinates is
    ``(epsilon, sampling_delta(epsilon, m))``-DP (``(1 + e^epsilon) m 2^-100``). Its work (words drawn,
    passes, integer sizes) depends on ``k``, the scale and ``m`` only: not on ``value`` nor on the noise.
    ``size`` stacks independent releases in front. ``epsilon = inf`` returns ``value`` unchanged.

    Examples
    --------
    >>> float(grid_laplace_release(0.0, 1.0, np.inf, np.random.default_rng(0)))
    0.0
    """
    value = check_array(value, ndim=None, name="value")
    sensitivity, epsilon = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon)
    shape = _shape(value, size)
    if np.isinf(epsilon):
        return np.broadcast_to(value, shape).copy()
    k, scale = laplace_scale_on_grid(sensitivity, epsilon, max(1, value.size))
    flat = np.broadcast_to(value, shape).ravel()
    return _release(flat, k, _laplace_limbs(scale, flat.size, rng), geometric_bits(scale)).reshape(shape)


def symmetric_grid_release(matrix, release) -> np.ndarray:
    """Apply ``release`` (a grid release of a vector) to the upper triangle of ``matrix``, mirrored."""
    rows, cols = np.triu_indices(matrix.shape[0])
    upper = np.zeros(matrix.shape)
    upper[rows, cols] = release(matrix[rows, cols])
    return upper + np.triu(upper, 1).T


def _gaussian_release(value, k: int, sigma2: Fraction, shape, rng) -> np.ndarray:
    flat = np.broadcast_to(value, shape).ravel()
    noise, n_bits = _gaussian_limbs(sigma2, flat.size, rng)
    return _release(flat, k, noise, n_bits).reshape(shape)


def grid_gaussian_release(value, sensitivity, epsilon, delta, rng, size=None) -> np.ndarray:
    """Release with discrete Gaussian noise on the grid ``2^-k`` (any shape): (epsilon, delta + sampling_delta)-DP.

    The grid mechanism with exact discrete Gaussian noise is (epsilon, delta)-DP; the sampler adds
    ``sampling_delta(epsilon, m)`` for ``m`` coordinates. Work as for :func:`grid_laplace_release`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.privacy.exact_noise import grid_gaussian_release
    >>> out = grid_gaussian_release(np.zeros(3), 1.0, 1.0, 1e-5, np.random.default_rng(0))
    >>> out.shape, bool(np.all(np.isfinite(out)))
    ((3,), True)
    """
    value = check_array(value, ndim=None, name="value")
    sensitivity, epsilon, delta = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon), check_delta(delta)
    shape = _shape(value, size)
    if np.isinf(epsilon):
        return np.broadcast_to(value, shape).copy()
    k, sigma2 = gaussian_sigma2_on_grid(sensitivity, epsilon, delta, max(1, value.size))
    return _gaussian_release(value, k, sigma2, shape, rng)


def grid_gaussian_release_sigma(value, sensitivity, sigma, rng, size=None) -> tuple[np.ndarray, float]:
    """Release ``value`` with discrete Gaussian noise on the grid ``2^-k``, at the privacy of ``N(0, sigma^2)``.

    For estimators that compute their own ``sigma`` for L2 sensitivity ``sensitivity``: with exact
    discrete Gaussian noise the release is ``rho = sensitivity^2 / (2 sigma^2)``-zCDP, the zCDP guarantee
    of the continuous Gaussian it replaces, with the grid rounding accounted for
    (:func:`gaussian_sigma2_for_sigma`); the sampler is within ``TV_PER_DRAW`` per coordinate of exact,
    which adds ``sampling_delta(epsilon, m)`` to any (epsilon, delta) read from that rho. For an
    (epsilon, delta) guarantee pass ``sigma = zcdp_sigma(sensitivity, epsilon, delta)``.
    ``sigma = 0`` returns ``value`` unchanged.

    Returns
    -------
    (release, effective_sigma): the release (shape of ``value``, ``size`` stacked in front) and the
    standard deviation parameter of its noise in the units of ``value`` (``sqrt(variance) 2^-k``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.privacy.exact_noise import grid_gaussian_release_sigma
    >>> out, sigma = grid_gaussian_release_sigma(np.zeros(3), 1.0, 2.0, np.random.default_rng(0))
    >>> out.shape, bool(sigma >= 2.0)  # the grid's sigma is at least the one asked for
    ((3,), True)
    """
    value = check_array(value, ndim=None, name="value")
    sensitivity = check_positive(sensitivity, "sensitivity")
    shape = _shape(value, size)
    if sigma == 0:
        return np.broadcast_to(value, shape).copy(), 0.0
    sigma = check_positive(sigma, "sigma")
    k, sigma2 = gaussian_sigma2_for_sigma(sensitivity, sigma, max(1, value.size))
    try:
        effective = math.ldexp(math.sqrt(sigma2), -k)
    except OverflowError:  # a variance beyond the doubles, in grid units: the same value through logarithms
        effective = math.exp((math.log(sigma2.numerator) - math.log(sigma2.denominator)) / 2 - k * math.log(2))
    return _gaussian_release(value, k, sigma2, shape, rng), effective


def integer_gaussian_noise(sigma, shape, rng) -> np.ndarray:
    """Discrete Gaussian noise for integer-valued queries (counts), as float64 of ``shape``.

    The variance is ``sigma^2`` rounded up to a rational with denominator ``2^8``, so for an integer
    query with L2 sensitivity ``Delta`` the release keeps (at most) the zCDP ``rho = Delta^2 / (2 sigma^2)``
    of ``N(0, sigma^2)`` noise (Canonne, Kamath & Steinke 2020), plus ``sampling_delta`` for the sampler.
    No grid: counts are integers already. The draws are exact doubles below ``2^53`` and rounded to the
    nearest double above; beyond ``2^62`` (a sigma above ``2^55``) they are converted from Python integers,
    whose size follows the draw. ``sigma = 0`` gives zeros.
    """
    shape = tuple(np.atleast_1d(shape)) if not isinstance(shape, tuple) else shape
    size = math.prod(shape)
    if sigma == 0:
        return np.zeros(shape)
    sigma = check_positive(sigma, "sigma")
    variance = Fraction(math.ceil(Fraction(sigma) ** 2 * 256), 256)
    _noise_scale_check(variance, 0, 2, "sigma", sigma)
    draws = sample_discrete_gaussian(variance, size, rng)
    values = draws.astype(float) if draws.dtype == np.int64 else np.array([float(v) for v in draws])
    return values.reshape(shape)
