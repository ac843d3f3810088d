"""Input validation shared by every mechanism.

Every check raises :class:`ValueError` (a bad value) or :class:`TypeError` (a wrong type) with a
message that names the parameter and says what to change, so that bad input never fails silently
inside a privacy mechanism. Every module validates through these functions.
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
    return _finite_real(value, name, "a positive real number", "> 0", strict=True)


def check_nonnegative(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and >= 0 (a noise level that may be 0, ...)."""
    return _finite_real(value, name, "a real number >= 0", ">= 0", strict=False)


def _finite_real(value, name: str, kind: str, bound: str, *, strict: bool) -> float:
    """``value`` as a float, refused unless a real number (``TypeError``), finite and > 0 or >= 0 (``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or (value <= 0 if strict else value < 0):
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return value


def check_bool(value, name: str) -> bool:
    """Return ``value`` after checking it is True or False (TypeError otherwise, e.g. for 0/1 or "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


LISTED = 5  # an error message names at most this many offending features (or values), then their count


def first_few(values, what: str = "features", limit: int = LISTED) -> str:
    """``"3 features (2, 7, 9)"`` or ``"784 features (0, 1, 2, 3, 4, ...)"``: the count, then the first ``limit``.

    Error messages name offending features this way, so one about 784 features stays a line long.
    """
    values = [v.item() if isinstance(v, np.generic) else v for v in np.ravel(np.asarray(values, dtype=object))]
    shown = ", ".join(str(v) for v in values[:limit]) + (", ..." if len(values) > limit else "")
    if len(values) == 1 and what.endswith("s"):
        what = what[:-2] if what.endswith("sses") else what[:-1]  # "1 feature (700)", "1 class (2)"
    return f"{len(values)} {what} ({shown})"


def _feature_bounds(low: np.ndarray, high: np.ndarray, features) -> str:
    """The bounds of the first few ``features`` as ``j: [low_j, high_j]``, or one ``[low, high]`` shared by all."""
    if np.all(low == low[0]) and np.all(high == high[0]):
        return f"[{low[0]:g}, {high[0]:g}]"
    shown = ", ".join(f"{j}: [{low[j]:g}, {high[j]:g}]" for j in features[:3])
    return shown + (", ..." if len(features) > 3 else "")


MAX_SAMPLES = 10**9  # the most synthetic records one sample() call draws (8 GB per float64 column)


def check_integer(value, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking ``minimum <= value <= maximum`` (counts, sizes)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {value!r}; draw in smaller batches")
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
    arr = _as_float_array(X, name)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.ndim >= 1 and arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} row(s), got {arr.shape[0]}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; impute or drop them first")
    return arr


def _as_float_array(X, name: str) -> np.ndarray:
    """``X`` as a float64 array; TypeError naming ``name`` for sparse, non-numeric or complex input."""
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{name} must be a dense array, got the sparse {type(X).__name__}; pass {name}.toarray()")
    raw = X if isinstance(X, np.ndarray) else None
    try:
        if raw is None:
            raw = np.asarray(X)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a rectangular numeric array (equal-length rows): {exc}") from None
    if raw.dtype.kind not in "biuf":
        if raw.dtype.kind == "c":
            raise TypeError(f"{name} must be real-valued, got complex dtype {raw.dtype}")
        if raw.dtype.kind == "O":
            try:
                return np.asarray(raw, dtype=np.float64)
            except (TypeError, ValueError):
                pass
        raise TypeError(
            f"{name} must be a numeric (int or float) array, got dtype {raw.dtype}; encode "
            "text and categories as numbers first"
        )
    return np.asarray(raw, dtype=np.float64)


def check_square(A, name: str = "A") -> np.ndarray:
    """Return ``A`` as a finite float64 square matrix."""
    A = check_array(A, ndim=2, name=name)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {A.shape}")
    return A


def check_symmetric(A, name: str = "A") -> np.ndarray:
    """Return ``A`` as a finite float64 square matrix after checking it is symmetric.

    The tolerance admits only floating-point rounding (``1e-10`` relative to the largest entry, as
    in ``W^T G W``). A symmetric mechanism reads the upper triangle only (and mirrors it), so
    whatever rounding asymmetry passes this check never reaches the release.
    """
    A = check_square(A, name=name)
    scale = float(np.abs(A).max()) if A.size else 0.0
    if np.any(np.abs(A - A.T) > 1e-10 * scale):
        raise ValueError(
            f"{name} must be symmetric (it is released through its upper triangle); pass ({name} + {name}.T) / 2"
        )
    return A


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` after checking it is one of the strings ``choices`` (TypeError for a non-string)."""
    choices = tuple(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {choices}, got {type(value).__name__} {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_fraction(value, name: str, *, low_open: bool = False, high_open: bool = True) -> float:
    """Return ``value`` as a float after checking it lies in ``[0, 1)`` (endpoints as requested)."""
    interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in {interval}, got {type(value).__name__}")
    value = float(value)
    if not (0 < value if low_open else 0 <= value) or not (value < 1 if high_open else value <= 1):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return value


def check_bounds(
    bounds, n_features: int | None = None, *, name: str = "bounds", strict: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The public box ``bounds = (low, high)`` as two finite float64 vectors with ``low < high``.

    Parameters
    ----------
    bounds : pair (low, high)
        Scalars or per-feature arrays, declared (never read from the data).
    n_features : int, optional
        Number of features to broadcast to; None keeps the broadcast shape (at least 1-d).
    name : str
        Name used in error messages.
    strict : bool
        False also accepts ``low == high`` (a declared constant feature), for callers that only
        describe or rescale data; a sensitivity needs ``strict=True``.

    Every sensitivity over a box is a function of ``high - low``, so infinite or NaN bounds, or an
    empty box, are refused here (with advice on declaring them), before any data is read.
    """
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(f"{name} must be a pair (low, high) of scalars or per-feature arrays, got {bounds!r}")
    low, high = (_as_float_array(b, f"{name} {side}") for b, side in zip(bounds, ("low", "high"), strict=True))
    try:
        shape = np.broadcast_shapes(low.shape, high.shape, () if n_features is None else (n_features,))
    except ValueError:
        raise ValueError(
            f"{name} must be scalars or have one entry per feature ({n_features}), "
            f"got shapes {low.shape} and {high.shape}"
        ) from None
    if len(shape) > 1:
        raise ValueError(f"{name} must be scalars or vectors, got shape {shape}")
    low, high = (np.atleast_1d(np.broadcast_to(b, shape).astype(np.float64)) for b in (low, high))
    infinite = np.flatnonzero(~(np.isfinite(low) & np.isfinite(high)))
    if infinite.size:
        raise ValueError(
            f"{name} must be finite numbers: declare the public domain of every feature "
            f"(e.g. from the dataset's documented range); {first_few(infinite)} are not: "
            f"{_feature_bounds(low, high, infinite)}"
        )
    empty = np.flatnonzero(low >= high if strict else low > high)
    if empty.size:
        relation = "<" if strict else "<="
        raise ValueError(
            f"{name} must satisfy low {relation} high in every feature; {first_few(empty)} do not: "
            f"{_feature_bounds(low, high, empty)}"
        )
    with np.errstate(over="ignore"):
        width = high - low
    if not np.all(np.isfinite(width)):
        raise ValueError(f"{name} are too wide: high - low overflows; rescale the data to a smaller public box")
    return low, high


def check_per_feature(value, n_features: int, name: str) -> np.ndarray:
    """A finite scalar or vector of one entry per feature, returned as a float64 vector of length ``n_features``."""
    v = check_array(value, ndim=None, name=name)
    if v.ndim > 1 or (v.ndim == 1 and v.size != n_features):
        raise ValueError(f"{name} must be a scalar or have one entry per feature ({n_features}), got shape {v.shape}")
    return np.broadcast_to(v, (n_features,)).astype(np.float64)


def check_sensitivity(value, name: str = "bounds") -> float:
    """Return a sensitivity computed from public parameters after checking it is a positive normal float.

    A box so narrow that ``(high - low)^2 / N`` underflows to 0 (or a subnormal, where relative
    precision is lost) would calibrate no noise at all; one so wide that it overflows, infinite
    noise. Both are refused with a ValueError naming ``name``, the parameter that set it.
    """
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} are too wide: the sensitivity overflows; rescale the data to a smaller public box")
    if value < np.finfo(np.float64).tiny:
        raise ValueError(
            f"{name} are too narrow: the sensitivity {value!r} underflows float64; "
            "rescale the data to a larger public box"
        )
    return value


NOISE_MARGIN = 1024.0  # released values are checked to stay finite up to this many noise scales


def check_release_range(magnitude, scale, name: str = "bounds") -> None:
    """Refuse a release whose public worst case ``magnitude + NOISE_MARGIN * scale`` overflows float64.

    ``magnitude`` bounds ``|value|`` over the public domain and ``scale`` is the noise scale (or
    sigma), both public, so the decision never reads the data. Floating-point noise from numpy is
    below 37 scales in magnitude; exact noise exceeds 1024 scales with probability below ``e^-1000``.
    Also refuses a positive scale that underflows (noise lost to rounding).
    """
    magnitude, scale = np.asarray(magnitude, dtype=float), np.asarray(scale, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        worst = magnitude + NOISE_MARGIN * scale
    if not np.all(np.isfinite(worst)) or np.any(scale > 1e300):  # 1e300: the mechanisms' own limit
        raise ValueError(
            f"{name} and epsilon give a release that can overflow float64 (values up to "
            f"{float(np.max(magnitude)):.3g} plus noise of scale {float(np.max(scale)):.3g}); pass a larger "
            "epsilon or rescale the data to a smaller public box"
        )
    if np.any((scale > 0) & (scale < np.finfo(np.float64).tiny)):
        raise ValueError(
            f"{name} are too narrow: the noise scale underflows float64; rescale the data to a larger public box"
        )


def check_n_components(k, d: int, name: str = "n_components") -> int:
    """Return ``k`` as an int after checking 1 <= k <= d."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(k).__name__}")
    k = int(k)
    if not (1 <= k <= d):
        raise ValueError(f"{name} must satisfy 1 <= {name} <= {d} (the data dimension), got {k}")
    return k


def check_in_box(X, low, high, /, *, name: str = "X") -> np.ndarray:
    """Raise unless every entry of ``X`` lies in ``[low, high]`` (broadcast per column; the bounds pair, positional)."""
    X = check_array(X, ndim=None, name=name)
    low, high = check_bounds((low, high))
    outside = (X < low) | (X > high)
    if np.any(outside):
        features = np.flatnonzero(outside.reshape(-1, outside.shape[-1]).any(axis=0)) if X.ndim else np.array([0])
        where = f" in {first_few(features)}" if X.ndim > 1 else ""
        raise ValueError(
            f"{name} has entries outside the declared bounds {_feature_bounds(low, high, features)}{where}; clip or "
            "rescale the data to the public bounds before calling (bounds are never read from the data)"
        )
    return X


def check_matrix_in_box(X, low, high, /, *, name: str = "X") -> np.ndarray:
    """Raise unless every entry of the float64 matrix ``X`` lies in ``[low[j], high[j]]`` (column ``j``).

    The same check as :func:`check_in_box` for validated bounds (``low``, ``high``: float64 vectors
    of one entry per column, ``low < high``), made in one compiled pass with no temporaries
    (:func:`dpnb.ground.compiled.first_row_outside`; a NaN or an infinity fails it). Only on failure does
    :func:`check_in_box` run, to word the error. Returns ``X``.
    """
    from dpnb.ground.compiled import first_row_outside

    bad = first_row_outside(X, np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64))
    if bad >= 0:
        check_in_box(check_array(X, ndim=2, name=name), low, high, name=name)
        raise RuntimeError(f"row {bad} of {name} failed the compiled box check but not check_in_box")
    return X


def check_data_in_bounds(X, bounds, *, name: str = "X", min_rows: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` as a float64 matrix inside the public box ``bounds``: returns ``(X, low, high)``.

    ``bounds`` goes through :func:`check_bounds` (finite, ``low < high``, one entry per column);
    ``X`` through one compiled pass (:func:`check_matrix_in_box`; a NaN or an infinity fails it)
    instead of separate finiteness and box checks with full-size temporaries. No copy for float64
    input.
    """
    X = check_array(X, ndim=2, name=name, min_rows=min_rows, finite=False)
    low, high = check_bounds(bounds, X.shape[1])
    return check_matrix_in_box(X, low, high, name=name), low, high


def check_row_norms(X, data_norm: float, *, name: str = "X", tol: float = 1e-9) -> np.ndarray:
    """Raise unless every row of ``X`` has L2 norm <= ``data_norm``."""
    X = check_array(X, ndim=2, name=name)
    data_norm = check_positive(data_norm, "data_norm")
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms > data_norm * (1 + tol)):
        raise ValueError(
            f"{name} has rows with L2 norm up to {norms.max():.6g} > declared data_norm {data_norm:.6g}; "
            "normalise or clip rows (dpnb.ground.datasets.normalize_rows) before calling"
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
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative int seed, got {random_state}; pass e.g. 0")
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a SeedSequence or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )
