"""The primer chapter's mechanisms and attacks: randomized response and reconstruction from subset counts.

Randomized response (Warner 1965) is the oldest private mechanism: each person reports the truth
with probability ``p`` and otherwise a fair coin, so that no single answer can be trusted, while the
population's proportion can still be estimated. The reconstruction attacks (Dinur & Nissim 2003)
show why some noise is unavoidable: answers to many subset counts of a secret bit column, each
accurate to within ``E``, determine the column up to ``4 E`` entries (the exhaustive attack), and a
linear program recovers almost all of it from a few times ``n`` random counts when ``E`` is small
against ``sqrt(n)``.

Examples
--------
>>> import numpy as np
>>> from dpnb.chapters import primer
>>> rng = np.random.default_rng(0)
>>> secret = rng.integers(0, 2, size=60)
>>> Q = primer.subset_queries(60, 240, random_state=rng)
>>> guess = primer.reconstruct(Q, Q @ secret + rng.uniform(-1, 1, size=240))
>>> int(np.sum(guess != secret))
0
>>> round(primer.randomized_response_epsilon(0.5), 4)  # ln 3
1.0986
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, hstack, vstack

from dpnb.ground.validation import check_array, check_choice, check_integer, check_nonnegative, check_random_state

METHODS = ("lp", "least-squares")
#: Largest column the exhaustive attack enumerates (2^n candidates against 2^n subsets).
MAX_EXHAUSTIVE = 16


def _check_truth_probability(truth_probability) -> float:
    if isinstance(truth_probability, bool) or not isinstance(truth_probability, numbers.Real):
        raise TypeError(f"truth_probability must be a number in (0, 1), got {type(truth_probability).__name__}")
    p = float(truth_probability)
    if not 0 < p < 1:
        raise ValueError(
            f"truth_probability must lie in (0, 1), got {truth_probability!r}: at 0 the answers carry no "
            "information, at 1 they are the truth (no privacy)"
        )
    return p


def _check_bits(bits, name: str) -> np.ndarray:
    array = check_array(bits, ndim=None, name=name)
    if array.size == 0:
        raise ValueError(f"{name} is empty; pass at least one 0/1 value")
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 (a yes/no attribute per person)")
    return array.astype(np.int8)


def randomized_response(bits, truth_probability: float = 0.5, *, random_state=None, size: int | None = None):
    """Each person's randomized answer: the truth with probability ``p``, else a fair coin.

    One pass over the bits with two uniform draws per answer. A person with bit 1 answers 1 with
    probability ``(1 + p) / 2`` and a person with bit 0 with probability ``(1 - p) / 2``: the
    ratio of the two is ``(1 + p) / (1 - p)`` (3 for ``p = 1/2``, Warner's coin), so the answer of
    each person is ``ln((1 + p) / (1 - p))``-DP (:func:`randomized_response_epsilon`).

    Parameters
    ----------
    bits : array_like of 0 and 1
        The true answers, one per person (any shape).
    truth_probability : float in (0, 1)
        ``p``: the probability that a person answers truthfully (Warner's first coin).
    random_state : None, int, SeedSequence or Generator
    size : int, optional
        Number of independent surveys of the same people, stacked along a new first axis.

    Returns
    -------
    numpy.ndarray of int8
        The answers, of the shape of ``bits`` (with ``size`` in front if given).

    Examples
    --------
    >>> answers = randomized_response([1, 0, 1, 1], random_state=0)
    >>> answers.shape
    (4,)
    """
    x = _check_bits(bits, "bits")
    p = _check_truth_probability(truth_probability)
    shape = x.shape if size is None else (check_integer(size, "size"), *x.shape)
    rng = check_random_state(random_state)
    truthful = rng.random(shape) < p
    coin = (rng.random(shape) < 0.5).astype(np.int8)
    return np.where(truthful, np.broadcast_to(x, shape), coin).astype(np.int8)


def randomized_response_epsilon(truth_probability: float = 0.5) -> float:
    """The exact privacy parameter of randomized response: ``ln((1 + p) / (1 - p))``.

    It is the largest log-ratio of an answer's probability under the two values of the bit:
    ``P[1 | 1] / P[1 | 0] = P[0 | 0] / P[0 | 1] = (1 + p) / (1 - p)``; no smaller epsilon holds.

    Examples
    --------
    >>> round(randomized_response_epsilon(0.5), 6)
    1.098612
    """
    p = _check_truth_probability(truth_probability)
    return float(np.log1p(p) - np.log1p(-p))


def estimate_proportion(answers, truth_probability: float = 0.5, *, axis: int = -1):
    """Unbiased estimate of the proportion of 1s from randomized answers.

    The answers' mean has expectation ``lambda = p pi + (1 - p) / 2``; solving for ``pi`` gives
    ``(mean - (1 - p) / 2) / p``, unbiased, one pass over the answers. It can fall outside
    ``[0, 1]`` (noise, not a bug); clip it only if a biased estimate is acceptable.

    Parameters
    ----------
    answers : array_like of 0 and 1
        Randomized answers (:func:`randomized_response`).
    truth_probability : float in (0, 1)
        The ``p`` the answers were drawn with.
    axis : int
        Axis of the people (the others index independent surveys).

    Returns
    -------
    float or numpy.ndarray
        One estimate per survey.

    Examples
    --------
    >>> float(estimate_proportion([1, 1, 0, 0], 0.5))
    0.5
    """
    y = _check_bits(answers, "answers")
    p = _check_truth_probability(truth_probability)
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral) or not -y.ndim <= axis < y.ndim:
        raise ValueError(f"axis must be an axis of answers (ndim {y.ndim}), got {axis!r}")
    estimate = (y.mean(axis=axis) - (1 - p) / 2) / p
    return float(estimate) if np.ndim(estimate) == 0 else estimate


def estimate_variance(n_people: int, truth_probability: float = 0.5) -> float:
    """Exact variance of :func:`estimate_proportion` over the answers' randomness, the people fixed.

    Each answer is a Bernoulli draw of mean ``(1 + p) / 2`` (bit 1) or ``(1 - p) / 2`` (bit 0),
    independently, so its variance is ``(1 + p)(1 - p) / 4`` either way, and the estimate
    ``(mean - (1 - p) / 2) / p`` has variance ``(1 - p^2) / (4 n p^2)``, whatever the true
    proportion. For Warner's ``p = 1/2`` this is ``3 / (4 n)``: as noisy as an exact survey of
    ``n / 3`` people at the worst proportion 1/2 (whose variance is ``1 / (4 n)``, per person).

    Parameters
    ----------
    n_people : int >= 1
    truth_probability : float in (0, 1)

    Examples
    --------
    >>> estimate_variance(100, 0.5)
    0.0075
    """
    n = check_integer(n_people, "n_people")
    p = _check_truth_probability(truth_probability)
    return (1 - p * p) / (4 * n * p * p)


def subset_queries(n_rows: int, n_queries: int, *, random_state=None) -> np.ndarray:
    """A random query matrix: each query counts a uniformly random subset of the rows.

    Row ``j`` of the result is the indicator of query ``j``'s subset (each row included
    independently with probability 1/2, as in Dinur & Nissim's polynomial attack); the answer to
    the queries on a secret 0/1 column ``d`` is ``Q @ d``.

    Returns
    -------
    numpy.ndarray of shape (n_queries, n_rows), float64 with values 0 and 1

    Examples
    --------
    >>> subset_queries(3, 2, random_state=0).shape
    (2, 3)
    """
    n = check_integer(n_rows, "n_rows")
    m = check_integer(n_queries, "n_queries")
    rng = check_random_state(random_state)
    return (rng.random((m, n)) < 0.5).astype(float)


def query_sensitivity(queries) -> float:
    """L1 sensitivity of the vector of answers ``Q @ d`` when one person's bit changes.

    Changing bit ``i`` moves every answer whose subset contains ``i`` by one: the L1 change is
    the number of queries containing ``i``, and the sensitivity is the largest such number (the
    largest column sum of ``Q``; about half the number of queries for random subsets).

    Examples
    --------
    >>> query_sensitivity([[1, 0], [1, 1]])
    2.0
    """
    Q = _check_queries(queries)
    return float(Q.sum(axis=0).max())


def _check_queries(queries) -> np.ndarray:
    Q = check_array(queries, name="queries")
    if not np.all((Q == 0) | (Q == 1)):
        raise ValueError("queries must be a 0/1 matrix: one row per query, 1 where the query counts that row")
    return Q


def reconstruct(queries, answers, *, method: str = "lp") -> np.ndarray:
    """Reconstruct a secret 0/1 column from noisy answers to subset counts (Dinur & Nissim 2003).

    ``method="lp"`` is Dinur & Nissim's linear program with the error bound left free: find
    ``c`` in ``[0, 1]^n`` minimising ``E`` subject to ``|Q c - a| <= E`` for every query (``n + 1``
    variables, ``2 m`` inequalities; HiGHS). ``method="least-squares"`` minimises
    ``||Q c - a||_2`` over all real ``c``, which averages independent noise and suits unbounded
    (Laplace) noise better than a bound on the largest error: from the normal equations
    ``Q^T Q c = Q^T a`` (one product, ``O(m n^2)``; ``Q^T Q`` counts rows and is exact in floating
    point; then an ``n x n`` Cholesky solve) when ``Q^T Q`` is well conditioned (reciprocal condition
    number at least ``1e-8``), else by an SVD (the minimum-norm solution when ``Q`` has dependent
    columns). Either way ``c`` is rounded at ``1/2``.

    Parameters
    ----------
    queries : array_like of shape (m, n), 0/1
        The subsets queried (:func:`subset_queries`).
    answers : array_like of shape (m,)
        The released (noisy) counts.
    method : {"lp", "least-squares"}

    Returns
    -------
    numpy.ndarray of shape (n,), int8
        The reconstructed column.

    Raises
    ------
    ValueError
        Shapes that do not match, a non-0/1 query matrix, non-finite answers, or a solver failure.

    Examples
    --------
    >>> Q = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]
    >>> reconstruct(Q, [1.2, -0.1, 0.9, 2.0]).tolist()
    [1, 0, 1]
    """
    Q = _check_queries(queries)
    a = check_array(answers, ndim=1, name="answers")
    if a.shape[0] != Q.shape[0]:
        raise ValueError(f"answers has {a.shape[0]} entries for {Q.shape[0]} queries; pass one answer per query")
    check_choice(method, "method", METHODS)
    m, n = Q.shape
    if method == "least-squares":
        c = _least_squares(Q, a)
    else:
        sparse_q = csr_matrix(Q)
        ones = csr_matrix(np.ones((m, 1)))
        constraints = vstack([hstack([sparse_q, -ones]), hstack([-sparse_q, -ones])], format="csr")
        cost = np.zeros(n + 1)
        cost[-1] = 1.0
        bounds = [(0.0, 1.0)] * n + [(0.0, None)]
        result = linprog(cost, A_ub=constraints, b_ub=np.concatenate([a, -a]), bounds=bounds, method="highs")
        if result.status != 0:
            raise ValueError(f"the linear program failed: {result.message}")
        c = result.x[:n]
    return (c > 0.5).astype(np.int8)


def _least_squares(Q, a) -> np.ndarray:
    """``argmin_c ||Q c - a||_2``: Cholesky on the normal equations where they are well conditioned, else an SVD.

    The normal equations square ``Q``'s condition number; at ``rcond(Q^T Q) >= 1e-8`` their relative error is
    about ``1e-8`` at most, far inside the rounding at 1/2. They cost one ``m x n`` by ``n x m`` product and an
    ``n x n`` factorisation, several times less than an SVD-based solve (LAPACK ``gelsd``: a bidiagonalisation
    made mostly of matrix-vector products, then an SVD).
    """
    gram = Q.T @ Q
    try:
        factor = scipy.linalg.cho_factor(gram, lower=False, check_finite=False)
        rcond = scipy.linalg.lapack.dpocon(factor[0], np.abs(gram).sum(axis=0).max())[0]
    except np.linalg.LinAlgError:  # dependent columns
        rcond = 0.0
    if rcond < 1e-8:
        return np.linalg.lstsq(Q, a, rcond=None)[0]
    return scipy.linalg.cho_solve(factor, Q.T @ a, check_finite=False)


def all_subsets(n_rows: int) -> np.ndarray:
    """Every subset of ``n_rows`` rows as a 0/1 matrix of shape ``(2^n, n)``; row ``s`` is the binary digits of ``s``.

    Examples
    --------
    >>> all_subsets(2).tolist()
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    n = check_integer(n_rows, "n_rows")
    if n > MAX_EXHAUSTIVE:
        raise ValueError(f"n_rows must be at most {MAX_EXHAUSTIVE} (2^n subsets are enumerated), got {n}")
    codes = np.arange(2**n)[:, None]
    return ((codes >> np.arange(n)) & 1).astype(np.int8)


def consistent_candidates(answers, error_bound: float) -> np.ndarray:
    """Every 0/1 column whose subset counts all lie within ``error_bound`` of ``answers`` (exhaustive attack).

    Dinur & Nissim's exponential-time adversary: ``answers[s]`` is the released count of subset
    ``s`` of :func:`all_subsets`; each of the ``2^n`` candidates is checked against the ``2^n``
    answers, 512 at a time, and dropped at its first contradiction (at most ``4^n`` sums, in
    practice a few times ``2^n``). If every answer is within ``E`` of the truth, the true column is
    among the result, and every candidate in it differs from the truth in at most ``4 E`` entries.

    Parameters
    ----------
    answers : array_like of shape (2^n,)
        One released count per subset, in the order of :func:`all_subsets`; ``n <= 16``.
    error_bound : float >= 0
        ``E``: the largest error the attacker assumes.

    Returns
    -------
    numpy.ndarray of shape (k, n), int8
        The consistent candidates (possibly none if the assumed bound is too small).

    Examples
    --------
    >>> consistent_candidates(all_subsets(3) @ [1, 0, 1], 0.0).tolist()
    [[1, 0, 1]]
    """
    a = check_array(answers, ndim=1, name="answers")
    n = int(a.size).bit_length() - 1
    if a.size < 2 or 2**n != a.size or n > MAX_EXHAUSTIVE:
        raise ValueError(
            f"answers must hold one count per subset, 2^n entries with 1 <= n <= {MAX_EXHAUSTIVE}; got {a.size}"
        )
    E = check_nonnegative(error_bound, "error_bound")
    subsets = all_subsets(n).astype(float)  # counts are small integers: exact in floating point
    alive = subsets  # the candidates not yet contradicted, checked against 512 answers at a time
    for start in range(0, 2**n, 512):
        counts = alive @ subsets[start : start + 512].T  # candidate x subset
        alive = alive[np.all(np.abs(counts - a[start : start + 512]) <= E, axis=1)]
    return alive.astype(np.int8)


def low_frequency_basis(side: int, n_components: int) -> np.ndarray:
    """The ``k`` lowest-frequency 2-D DCT-II basis images of a ``side x side`` image, as orthonormal rows.

    A public, data-independent projection for images: row ``j`` is ``outer(C[u], C[v])`` flattened
    row-major, where ``C`` is the orthonormal 1-D DCT-II matrix and the frequency pairs ``(u, v)`` are
    taken in the order of ``u + v``, then ``u`` (the diagonals of the zigzag scan). Building it costs
    ``O(k side^2)``; the rows are orthonormal, so projecting onto them never increases an L2 distance.

    Parameters
    ----------
    side : int >= 1
        Image side in pixels (28 for MNIST).
    n_components : int in [1, side^2]
        ``k``, the number of basis images.

    Returns
    -------
    numpy.ndarray of shape (n_components, side * side)

    Examples
    --------
    >>> P = low_frequency_basis(4, 3)
    >>> bool(np.allclose(P @ P.T, np.eye(3)))
    True
    """
    s = check_integer(side, "side")
    k = check_integer(n_components, "n_components")
    if k > s * s:
        raise ValueError(f"n_components must be at most side^2 = {s * s}, got {k}")
    j = np.arange(s)
    C = np.sqrt(2.0 / s) * np.cos(np.pi * (2 * j[None, :] + 1) * j[:, None] / (2 * s))
    C[0] /= np.sqrt(2.0)
    pairs = sorted(((u, v) for u in range(s) for v in range(s)), key=lambda uv: (uv[0] + uv[1], uv[0]))[:k]
    return np.stack([np.outer(C[u], C[v]).ravel() for u, v in pairs])
