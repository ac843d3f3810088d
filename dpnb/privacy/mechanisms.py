"""Additive-noise mechanisms: Laplace and Gaussian, with symmetric-matrix variants.

Conventions
-----------
* ``sensitivity`` is the *global* sensitivity of the query under the neighbour relation the
  caller uses (L1 for Laplace, L2 for Gaussian). It is an argument, never estimated from data.
* Symmetric variants refuse a matrix that is not symmetric (up to rounding), release its
  upper triangle (diagonal included) plus independent noise, and mirror the result, so the lower
  triangle never reaches the output. Their ``sensitivity`` is therefore the sensitivity of the *upper triangle* viewed
  as a vector of ``d (d + 1) / 2`` numbers, which is what the privacy proof needs.
* ``epsilon = inf`` is the non-private limit: every mechanism adds no noise (scale 0).
* Gaussian calibration: ``"classic"`` is Dwork & Roth (2014, Thm A.1),
  ``sigma = sensitivity * sqrt(2 ln(1.25 / delta)) / epsilon``, valid only for ``epsilon < 1``
  and refused otherwise; ``"analytic"`` is Balle & Wang (2018, Thm 8): the smallest sigma with
  ``delta_exact(epsilon; sigma) <= delta``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from dpnb.ground.validation import (
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_random_state,
    check_symmetric,
)
from dpnb.numerics.linalg import symmetrize_upper
from dpnb.privacy import exact_noise

CALIBRATIONS = ("analytic", "classic")


def _noise_shape(value: np.ndarray, size) -> tuple:
    """Shape of the noise: ``value``'s, with ``size`` independent releases stacked in front if given."""
    return value.shape if size is None else (check_integer(size, "size"), *value.shape)


_MAX_SCALE = 1e300  # the largest noise scale (Laplace) or sigma (Gaussian) a mechanism uses: releases stay finite
_TINY = float(np.finfo(np.float64).tiny)


def _laplace_scale(sensitivity, epsilon) -> float:
    """``sensitivity / epsilon``, refused when it overflows (an epsilon so small the noise is infinite)."""
    sensitivity, epsilon = check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon)
    with np.errstate(over="ignore"):
        scale = sensitivity / epsilon
    if not np.isfinite(scale) or scale > _MAX_SCALE:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for sensitivity {sensitivity!r}: the noise scale "
            "overflows; pass a larger epsilon"
        )
    return scale


def laplace_mechanism(value, sensitivity, epsilon, *, random_state=None, size: int | None = None, noise="float"):
    """Release ``value + Lap(sensitivity / epsilon)`` i.i.d. per entry (epsilon-DP).

    ``noise="float"`` (the default) adds numpy's floating-point noise, whose set of possible outputs
    depends on ``value`` (Mironov 2012; the ``foundations`` notebook rules out a neighbour from one
    release); ``noise="exact"`` releases on a grid ``2^-k`` with discrete Laplace noise from
    ``dpnb.privacy.exact_noise``, at a noise scale at most ``1 + 2^-20`` larger, drawn with work (words,
    passes, integer sizes) that depends on the public parameters and shape only. Its sampler is within
    total variation ``2^-100`` per coordinate of the exact law, so the release of ``m`` coordinates is
    ``(epsilon, exact_noise.sampling_delta(epsilon, m))``-DP, ``(1 + e^epsilon) m 2^-100``, not pure.

    Parameters
    ----------
    value : float or array_like
        The exact query answer (any shape).
    sensitivity : float
        Global L1 sensitivity of the query.
    epsilon : float
        Privacy parameter, > 0.
    random_state : None, int, SeedSequence or Generator
    size : int, optional
        Number of independent releases, stacked along a new first axis; they are the draws of
        ``size`` separate calls on the same generator, in order (for batched audits).
    noise : {"float", "exact"}
        Floating-point Laplace noise, or exact discrete Laplace noise on a grid.

    Returns
    -------
    float or ndarray of the same shape as ``value`` (``(size, *value.shape)`` with ``size``).

    Examples
    --------
    >>> from dpnb.privacy.mechanisms import laplace_mechanism
    >>> out = laplace_mechanism([10.0, 20.0], sensitivity=1.0, epsilon=1.0, random_state=0)
    >>> out.shape, bool(abs(out - [10.0, 20.0]).max() < 40)  # Lap(1) noise exceeds 40 with probability e^-40
    ((2,), True)
    >>> laplace_mechanism(3.0, 1.0, float("inf"))  # epsilon = inf: no noise
    3.0
    """
    value = check_array(value, ndim=None, name="value")
    scale = _laplace_scale(sensitivity, epsilon)
    rng = check_random_state(random_state)
    if exact_noise.check_noise(noise) == "exact":
        out = exact_noise.grid_laplace_release(value, sensitivity, epsilon, rng, size)
        return float(out) if out.ndim == 0 else out
    out = value + rng.laplace(0.0, scale, size=_noise_shape(value, size))
    return float(out) if out.ndim == 0 else out


def symmetric_laplace_mechanism(matrix, sensitivity, epsilon, *, random_state=None, noise="float"):
    """Laplace mechanism for a symmetric matrix: noise on the upper triangle, mirrored.

    ``matrix`` must be symmetric (up to rounding; refused otherwise): the release is the upper
    triangle of ``matrix`` plus noise, mirrored, so it depends on the upper triangle only.

    ``sensitivity`` must be the L1 sensitivity of the upper triangle (diagonal included) of
    the query, i.e. ``max ||triu(f(X) - f(X'))||_1``. For a query whose full-matrix L1
    sensitivity is ``S`` this lies between ``S / 2`` and ``S``.

    ``noise`` is as in :func:`laplace_mechanism`: numpy's floating-point noise (the default), or
    ``"exact"``, discrete Laplace noise on a grid ``2^-k`` that releases the ``m = d (d + 1) / 2`` entries
    of a ``d x d`` matrix's upper triangle ``(epsilon, exact_noise.sampling_delta(epsilon, m))``-DP, then
    mirrors them.

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.privacy.mechanisms import symmetric_laplace_mechanism
    >>> out = symmetric_laplace_mechanism(np.eye(3), sensitivity=0.1, epsilon=1.0, random_state=0)
    >>> out.shape, bool(np.array_equal(out, out.T))  # noise on the upper triangle, mirrored
    ((3, 3), True)
    """
    matrix = check_symmetric(matrix, name="matrix")
    scale = _laplace_scale(sensitivity, epsilon)
    rng = check_random_state(random_state)
    if exact_noise.check_noise(noise) == "exact":
        release = lambda v: exact_noise.grid_laplace_release(v, sensitivity, epsilon, rng)  # noqa: E731
        return exact_noise.symmetric_grid_release(matrix, release)
    return symmetrize_upper(matrix + rng.laplace(0.0, scale, size=matrix.shape))


def check_gaussian_sigma(sigma, sensitivity, epsilon, delta) -> float:
    """Return ``sigma`` after checking it is at most ``1e300``, the largest noise scale a mechanism here uses.

    A larger (or NaN) sigma comes from an epsilon and delta so small for ``sensitivity`` that the noise
    would overflow float64: ValueError naming epsilon and delta. Calibrations that compute sigma by
    their own formula (e.g. MOD-SULQ's ``beta``) check it here too.

    >>> check_gaussian_sigma(2.0, 1.0, 1.0, 1e-5)
    2.0
    """
    if not sigma <= _MAX_SCALE:
        raise ValueError(
            f"epsilon={epsilon!r} and delta={delta!r} are too small for sensitivity {sensitivity!r}: the Gaussian "
            "noise's sigma overflows; pass a larger epsilon or delta"
        )
    return sigma


def gaussian_delta(epsilon, sigma, sensitivity=1.0) -> float:
    """Exact privacy curve of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``f(X) + N(0, sigma^2 I)`` with L2 sensitivity ``Delta`` is (epsilon, delta)-DP iff
    ``delta >= Phi(Delta/(2 sigma) - epsilon sigma/Delta)
    - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta)``; this returns the right side.
    ``epsilon = 0`` is allowed here (it gives the total-variation distance).
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    r = check_positive(sensitivity, "sensitivity") / check_positive(sigma, "sigma")
    a = r / 2 - epsilon / r
    b = -r / 2 - epsilon / r
    return float(max(0.0, np.exp(log_ndtr(a)) - np.exp(epsilon + log_ndtr(b))))


def gaussian_epsilon(delta, sigma, sensitivity=1.0) -> float:
    """Smallest epsilon >= 0 for which the Gaussian mechanism is (epsilon, delta)-DP.

    Inverts :func:`gaussian_delta`, which is decreasing in epsilon.
    """
    delta = check_delta(delta)
    sigma = check_positive(sigma, "sigma")
    sensitivity = check_positive(sensitivity, "sensitivity")
    if gaussian_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, sigma, sensitivity) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gaussian_delta(e, sigma, sensitivity) - delta, 0.0, hi, xtol=1e-12))


def gaussian_sigma_classic(sensitivity, epsilon, delta) -> float:
    """Classic calibration ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon`` (Dwork & Roth Thm A.1).

    Raises ValueError for ``epsilon >= 1``, where the theorem does not apply (for example at
    epsilon = 10, delta = 1e-5 this sigma only achieves delta = 2.3e-5), and, naming epsilon and
    delta, when sigma exceeds 1e300 (the noise would overflow float64).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if np.isinf(epsilon):
        return 0.0
    if epsilon >= 1:
        raise ValueError(
            f"the classic Gaussian calibration is only valid for epsilon < 1, got {epsilon}; "
            "use calibration='analytic' (Balle & Wang 2018)"
        )
    with np.errstate(over="ignore"):
        sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    # a subnormal sensitivity: the smallest normal sigma instead, larger (more private) than needed
    return max(check_gaussian_sigma(sigma, sensitivity, epsilon, delta), _TINY)


def gaussian_sigma_analytic(sensitivity, epsilon, delta) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP (Balle & Wang 2018).

    Solves ``gaussian_delta(epsilon, sigma, Delta) = delta`` for sigma by bracketing root
    finding; the curve is decreasing in sigma, so the root is unique. Valid for every epsilon > 0.
    A sigma above 1e300 (the noise would overflow float64) is refused with a ValueError naming epsilon
    and delta; one below float64's normal range is returned as a normal number above it (valid: more
    noise than needed).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if np.isinf(epsilon):
        return 0.0
    if sensitivity < 2.0**-900:  # the bracket below would underflow: solve for sigma / sensitivity instead
        return max(gaussian_sigma_analytic(1.0, epsilon, delta) * sensitivity, _TINY)
    lo, hi = 1e-3, 1.0
    while gaussian_delta(epsilon, hi * sensitivity, sensitivity) > delta:
        hi *= 2.0
        check_gaussian_sigma(hi * sensitivity, sensitivity, epsilon, delta)
    while gaussian_delta(epsilon, lo * sensitivity, sensitivity) < delta:
        if lo * sensitivity / 2.0 < _TINY:  # sigma lies below float64's normal range: lo * sensitivity is valid
            return lo * sensitivity
        lo /= 2.0
    g = lambda s: gaussian_delta(epsilon, s * sensitivity, sensitivity) - delta  # noqa: E731
    return check_gaussian_sigma(
        float(brentq(g, lo, hi, xtol=1e-14, rtol=1e-12)) * sensitivity, sensitivity, epsilon, delta
    )


def gaussian_sigma(sensitivity, epsilon, delta, calibration: str = "analytic") -> float:
    """Noise standard deviation for the Gaussian mechanism under the chosen calibration."""
    if check_choice(calibration, "calibration", CALIBRATIONS) == "analytic":
        return gaussian_sigma_analytic(sensitivity, epsilon, delta)
    return gaussian_sigma_classic(sensitivity, epsilon, delta)


def gaussian_mechanism(
    value,
    sensitivity,
    epsilon,
    delta,
    *,
    calibration: str = "analytic",
    random_state=None,
    size: int | None = None,
    noise="float",
):
    """Release ``value + N(0, sigma^2)`` i.i.d. per entry, (epsilon, delta)-DP.

    ``sensitivity`` is the global L2 sensitivity; sigma comes from :func:`gaussian_sigma`.
    ``size`` stacks that many independent releases along a new first axis, drawn as ``size``
    separate calls would draw them (sigma is calibrated once).

    ``noise="float"`` (the default) adds numpy's floating-point noise, whose set of possible outputs
    depends on ``value`` (Mironov 2012; the ``foundations`` notebook rules out a neighbour from one
    release); ``noise="exact"`` releases on a grid ``2^-k`` with discrete Gaussian noise from
    ``dpnb.privacy.exact_noise``, drawn with work that depends on the public parameters and shape only;
    the release of ``m`` coordinates is ``(epsilon, delta + exact_noise.sampling_delta(epsilon, m))``-DP.
    Its sigma comes from the discrete Gaussian's zCDP bound (Canonne, Kamath & Steinke 2020), not from
    ``calibration``: 8% above the analytic sigma at epsilon = 1, delta = 1e-5.

    Examples
    --------
    >>> from dpnb.privacy.mechanisms import gaussian_mechanism, gaussian_sigma
    >>> out = gaussian_mechanism([1.0, 2.0, 3.0], sensitivity=1.0, epsilon=1.0, delta=1e-5, random_state=0)
    >>> out.shape
    (3,)
    >>> round(gaussian_sigma(1.0, 1.0, 1e-5), 2)  # the analytic calibration's sigma (Balle & Wang 2018)
    3.73
    """
    value = check_array(value, ndim=None, name="value")
    if exact_noise.check_noise(noise) == "exact":  # its own calibration: the float sigma is not needed
        check_choice(calibration, "calibration", CALIBRATIONS)
        out = exact_noise.grid_gaussian_release(
            value, sensitivity, epsilon, delta, check_random_state(random_state), size
        )
        return float(out) if out.ndim == 0 else out
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    rng = check_random_state(random_state)
    out = value + rng.normal(0.0, sigma, size=_noise_shape(value, size))
    return float(out) if out.ndim == 0 else out


def symmetric_gaussian_mechanism(
    matrix, sensitivity, epsilon, delta, *, calibration: str = "analytic", random_state=None, noise="float"
):
    """Gaussian mechanism for a symmetric matrix: noise on the upper triangle, mirrored.

    ``matrix`` must be symmetric (up to rounding; refused otherwise); as for
    :func:`symmetric_laplace_mechanism`, only its upper triangle reaches the release.

    ``sensitivity`` is the L2 sensitivity of the upper triangle (diagonal included).

    ``noise`` is as in :func:`gaussian_mechanism`: numpy's floating-point noise (the default), or
    ``"exact"``, discrete Gaussian noise on a grid ``2^-k`` (its sigma from the zCDP bound, not from
    ``calibration``) that releases the ``m = d (d + 1) / 2`` entries of a ``d x d`` matrix's upper
    triangle ``(epsilon, delta + exact_noise.sampling_delta(epsilon, m))``-DP, then mirrors them.

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.privacy.mechanisms import symmetric_gaussian_mechanism
    >>> out = symmetric_gaussian_mechanism(np.eye(4), 0.01, 1.0, 1e-5, random_state=0)
    >>> out.shape, bool(np.array_equal(out, out.T))
    ((4, 4), True)
    """
    matrix = check_symmetric(matrix, name="matrix")
    rng = check_random_state(random_state)
    if exact_noise.check_noise(noise) == "exact":  # its own calibration: the float sigma is not needed
        check_choice(calibration, "calibration", CALIBRATIONS)
        release = lambda v: exact_noise.grid_gaussian_release(v, sensitivity, epsilon, delta, rng)  # noqa: E731
        return exact_noise.symmetric_grid_release(matrix, release)
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    return symmetrize_upper(matrix + rng.normal(0.0, sigma, size=matrix.shape))
