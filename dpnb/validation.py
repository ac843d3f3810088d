"""Input validation shared by every mechanism.

Every check raises :class:`ValueError` with a message that says what to change, so that bad
input never fails silently inside a privacy mechanism.
"""

from __future__ import annotations

import numbers

import numpy as np


def check_epsilon(epsilon, name: str = "epsilon", *, allow_infinite: bool = True) -> float:
    """Return ``epsilon`` as a float after checking it is a number > 0.

    ``numpy.inf`` is accepted (unless ``allow_infinite=False``) and means no privacy: every
    dpnb mechanism then adds no noise, the non-private limit of the same algorithm.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(epsilon).__name__}")
    epsilon = float(epsilon)
    if np.isnan(epsilon) or epsilon <= 0 or (np.isinf(epsilon) and not allow_infinite):
        allowed = "> 0 (inf for no noise)" if allow_infinite else "finite and > 0"
        raise ValueError(f"{name} must be {allowed}, got {epsilon!r}; pass a positive privacy budget")
    return epsilon


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking 0 < delta < 1."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1), got {type(delta).__name__}")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {delta!r}")
    return delta


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and > 0 (a sensitivity, a radius...)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def check_integer(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum`` (counts, sizes)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_array(X, *, ndim: int | None = 2, name: str = "X", min_rows: int = 1, finite: bool = True) -> np.ndarray:
    """Return ``X`` as a float64 array after checking its dimension and that it is finite.

    Parameters
    ----------
    X : array_like
    ndim : int or None
        Required number of dimensions, or None to accept any.
    name : str
        Name used in error messages.
    min_rows : int
        Minimum length of the first axis (ignored for 0-d input).
    finite : bool
        False leaves the finiteness check to the caller, which must then make it on a statistic it
        computes anyway and that is not finite whenever ``X`` is not (e.g. every row's squared
        norm), calling ``check_array(X)`` again to raise this message: one pass over ``X`` fewer.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.ndim >= 1 and arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} row(s), got {arr.shape[0]}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; impute or drop them first")
    return arr


def check_square(A, name: str = "A") -> np.ndarray:
    """Return ``A`` as a finite float64 square matrix."""
    A = check_array(A, ndim=2, name=name)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {A.shape}")
    return A


def check_n_components(k, d: int, name: str = "n_components") -> int:
    """Return ``k`` as an int after checking 1 <= k <= d."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(k).__name__}")
    k = int(k)
    if not (1 <= k <= d):
        raise ValueError(f"{name} must satisfy 1 <= {name} <= {d} (the data dimension), got {k}")
    return k


def check_in_box(X, low, high, *, name: str = "X") -> np.ndarray:
    """Raise unless every entry of ``X`` lies in ``[low, high]`` (broadcast per column)."""
    X = check_array(X, ndim=None, name=name)
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    if np.any(low >= high):
        raise ValueError(f"bounds must satisfy low < high, got low={low}, high={high}")
    if np.any(X < low) or np.any(X > high):
        raise ValueError(
            f"{name} has entries outside the declared bounds [{low}, {high}]; clip or rescale "
            "the data to the public bounds before calling (bounds are never read from the data)"
        )
    return X


def check_matrix_in_box(X, low, high, *, name: str = "X") -> np.ndarray:
    """Raise unless every entry of the float64 matrix ``X`` lies in ``[low[j], high[j]]`` (column ``j``).

    The same check as :func:`check_in_box` for validated bounds (``low``, ``high``: float64 vectors
    of one entry per column, ``low < high``), made in one compiled pass with no temporaries
    (:func:`dpnb.compiled.first_row_outside`; a NaN or an infinity fails it). Only on failure does
    :func:`check_in_box` run, to word the error. Returns ``X``.
    """
    from .compiled import first_row_outside

    bad = first_row_outside(X, np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64))
    if bad >= 0:
        check_in_box(check_array(X, ndim=2, name=name), low, high, name=name)
        raise RuntimeError(f"row {bad} of {name} failed the compiled box check but not check_in_box")
    return X


def check_row_norms(X, radius: float, *, name: str = "X", tol: float = 1e-9) -> np.ndarray:
    """Raise unless every row of ``X`` has L2 norm <= ``radius``."""
    X = check_array(X, ndim=2, name=name)
    radius = check_positive(radius, "radius")
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms > radius * (1 + tol)):
        raise ValueError(
            f"{name} has rows with L2 norm up to {norms.max():.6g} > declared radius {radius:.6g}; "
            "normalise or clip rows (dpnb.datasets.normalize_rows) before calling"
        )
    return X


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Accepts None (fresh OS entropy), an int seed, a :class:`numpy.random.SeedSequence` or a
    Generator (returned as is, so callers share one stream). The legacy global RNG is never used.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, bool):
            raise TypeError("random_state must be None, an int, a SeedSequence or a Generator, got bool")
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a SeedSequence or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )
