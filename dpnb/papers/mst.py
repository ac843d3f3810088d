"""MST: differentially private synthetic data from noisy marginals on a maximum spanning tree.

McKenna, Miklau & Sheldon (2021), the winning method of the 2018 NIST synthetic-data challenge
and the usual modern baseline for private synthetic tabular data. On discrete data with public
domain sizes it (1) measures every one-way marginal with Gaussian noise, (2) selects ``d - 1``
attribute pairs forming a spanning tree, each by the exponential mechanism with the score
"how badly the independent model from step 1 misses this pair's two-way marginal", and (3)
measures the selected two-way marginals with Gaussian noise. Synthetic records are drawn from
the tree-structured model those marginals define.

What differs from the reference implementation: the paper fits a graphical model to the noisy
marginals with Private-PGM (a convex projection onto mutually consistent marginals) and
samples from it; here the noisy tables are clipped at zero and normalised, and records are
drawn by ancestral sampling along the tree (root from its one-way marginal, each child from the
parent-conditional of the edge's two-way table). Both are post-processing, so the privacy
guarantee is the same; the utility of Private-PGM's consistent estimate can only be better.

Privacy accounting is in zero-concentrated DP (Bun & Steinke 2016) and converted to
``(epsilon, delta)``: ``rho``-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP, so
``rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2``. ``rho`` is split in three equal
parts as in the paper. Neighbours replace one record, so a histogram moves by at most
``sqrt(2)`` in L2 and 2 in L1.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.validation import (
    MAX_SAMPLES,
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_integer,
    first_few,
)
from dpnb.privacy.estimator import PrivateEstimator, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise, integer_gaussian_noise
from dpnb.privacy.mechanisms import check_gaussian_sigma

HISTOGRAM_L2 = math.sqrt(2.0)  # replace one record: one count -1, another +1
HISTOGRAM_L1 = 2.0
_LOG_RECIPROCAL_MIN = 1.0 / np.finfo(np.float64).max  # below, 1 / delta overflows


def bun_steinke_rho(epsilon: float, delta: float) -> float:
    """The ``rho`` whose zCDP guarantee converts to exactly ``(epsilon, delta)``-DP (Bun & Steinke 2016, Prop. 1.3).

    A closed-form, sufficient conversion; :func:`dpnb.privacy.exact_noise.zcdp_rho` is the tight one
    (the largest ``rho`` whose exact privacy curve meets ``delta``), used by the exact Gaussian noise.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if math.isinf(epsilon):
        return math.inf
    log_term = math.log(1.0 / delta) if delta >= _LOG_RECIPROCAL_MIN else -math.log(delta)  # 1 / delta overflows
    root = math.sqrt(log_term)
    gap = math.sqrt(log_term + epsilon) - root
    if gap < 1e-4 * root:  # the difference has lost digits to cancellation: its equal, epsilon / (sum of the roots)
        gap = epsilon / (math.sqrt(log_term + epsilon) + root)
    return gap**2


def discretize(X, bounds, n_bins: int = 8, *, categorical=()) -> np.ndarray:
    """Integer codes for MST: numeric columns cut into ``n_bins`` equal-width bins of their public domain.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    bounds : tuple (low, high) of arrays of shape (n_features,)
        The declared public domain of each column (e.g. a dataset's ``domain``); values outside
        are clipped to it. Never read from the data.
    n_bins : int
        Bins per numeric column.
    categorical : sequence of int
        Columns already holding integer codes ``0 .. high``; kept as they are.

    Returns
    -------
    ndarray of int64, shape (n_samples, n_features)
    """
    X = check_array(X, name="X")
    n_bins = check_integer(n_bins, "n_bins", minimum=2)
    low, high = check_bounds(bounds, X.shape[1])
    unit = (np.clip(X, low, high) - low) / (high - low)
    codes = np.minimum((unit * n_bins).astype(np.int64), n_bins - 1)
    for j in categorical:
        codes[:, j] = np.clip(np.round(X[:, j]), 0, high[j]).astype(np.int64)
    return codes


def _check_codes(X, domain_sizes) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(X, "toarray"):
        raise TypeError(
            f"X must be a dense array of integer codes, got the sparse {type(X).__name__}; pass X.toarray()"
        )
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.integer):
        raise TypeError(
            f"X must be a numeric array of integer codes, got dtype {X.dtype}; encode text and categories "
            "as integers first (see dpnb.papers.mst.discretize)"
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (records x columns), got shape {X.shape}")
    if domain_sizes is None:
        raise ValueError("domain_sizes must be declared (public): the number of values of each column")
    sizes = np.asarray(domain_sizes)
    if sizes.shape != (X.shape[1],) or not np.issubdtype(sizes.dtype, np.integer) or np.any(sizes < 1):
        raise ValueError(
            f"domain_sizes must hold one positive integer per column ({X.shape[1]}), got "
            f"{first_few(sizes, 'values') if sizes.ndim == 1 else f'shape {sizes.shape}'}"
        )
    if np.any(X < 0) or np.any(X >= sizes):
        columns = np.flatnonzero(((X < 0) | (X >= sizes)).any(axis=0))
        raise ValueError(
            f"X has codes outside 0 .. domain_sizes - 1 in {first_few(columns, 'columns')}; discretize with the "
            "public domain first"
        )
    return X.astype(np.int64), sizes.astype(np.int64)


class MST(PrivateEstimator):
    """MST synthetic data (McKenna, Miklau & Sheldon 2021) with tree sampling; see the module docstring.

    Parameters
    ----------
    epsilon : float, > 0 (``inf``: no noise)
    delta : float in (0, 1)
    domain_sizes : sequence of int
        Public number of values of each column.
    noise : {"float", "exact"}
        Noise of the measured marginals. ``"float"`` (default): numpy's floating-point Gaussian
        noise. ``"exact"``: exact discrete Gaussian noise on the integer counts at the same sigma
        (variance rounded up to a multiple of ``2^-8``: :func:`dpnb.privacy.exact_noise.integer_gaussian_noise`),
        which keeps each measurement's zCDP ``rho`` exactly; ``budget_`` adds the sampler's delta. The
        tree selection (exponential mechanism) samples in floating point either way.
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    edges_ : list of (int, int)
        The selected tree, as (parent, child) pairs in sampling order.
    marginals_ : dict
        Noisy one-way (key ``j``) and two-way (key ``(i, j)``) count tables.
    budget_ : dict
        ``(epsilon, delta)`` attributed to each step: the three steps split ``rho`` equally; the
        ``epsilon`` parts are ``epsilon / 3`` each (a zCDP split reported in DP units) and the
        whole ``delta`` is charged once, to the conversion. With ``noise="exact"`` that delta also
        holds the sampler's ``sampling_delta(epsilon, m)`` (:func:`dpnb.privacy.estimator.with_sampling_delta`)
        for the ``m`` counts measured, ``sum_j |D_j| + sum over the tree's edges of |D_i| |D_j|``, charged at
        the whole ``epsilon`` (the zCDP split is converted to ``(epsilon, delta)`` once).
    sensitivity_ : dict
        L2 sensitivity of each measured histogram and L1 sensitivity of the selection score.

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.mst import MST
    >>> codes = np.random.default_rng(0).integers(0, 3, (300, 4))  # integer codes, 3 values per column
    >>> model = MST(epsilon=1.0, delta=1e-6, domain_sizes=[3, 3, 3, 3], random_state=0).fit(codes)
    >>> len(model.edges_)  # a spanning tree over the 4 columns
    3
    >>> model.sample(10).shape  # fitted without labels: the rows alone, in the input's codes
    (10, 4)
    """

    def __init__(self, epsilon=1.0, delta=1e-9, *, domain_sizes=None, noise="float", random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def fit(self, X, y=None):
        """Measure the marginals and select the tree. ``X``: integer codes; ``y`` ignored."""
        epsilon, delta = self._check_privacy()
        noise = check_noise(self.noise)
        X, sizes = _check_codes(X, self.domain_sizes)
        rng = self._make_rng()
        if noise == "exact":
            draw = lambda sigma, shape: integer_gaussian_noise(sigma, shape, rng)  # noqa: E731
        else:
            draw = lambda sigma, shape: rng.normal(0.0, sigma, shape)  # noqa: E731
        n, d = X.shape
        if d < 2:
            raise ValueError("MST needs at least two columns")
        rho = bun_steinke_rho(epsilon, delta) / 3
        if rho == 0:
            raise ValueError(
                f"epsilon={epsilon!r} is too small: the zCDP budget rho underflows to 0; pass a larger epsilon"
            )
        sigma1 = 0.0 if math.isinf(rho) else HISTOGRAM_L2 * math.sqrt(d / (2 * rho))
        check_gaussian_sigma(sigma1, HISTOGRAM_L2, epsilon, delta)  # the larger sigma, as d > d - 1
        one_way = {j: np.bincount(X[:, j], minlength=sizes[j]) + draw(sigma1, (sizes[j],)) for j in range(d)}
        eps_select = math.inf if math.isinf(rho) else math.sqrt(8 * rho / (d - 1))
        edges = self._select(X, sizes, one_way, eps_select, rng)
        sigma2 = 0.0 if math.isinf(rho) else HISTOGRAM_L2 * math.sqrt((d - 1) / (2 * rho))
        marginals = dict(one_way)
        for i, j in edges:
            table = np.zeros((sizes[i], sizes[j]))
            np.add.at(table, (X[:, i], X[:, j]), 1.0)
            marginals[(i, j)] = table + draw(sigma2, table.shape)
        self.edges_, self.marginals_ = edges, marginals
        self.n_features_in_, self.n_samples_seen_ = d, n
        self.domain_sizes_ = sizes
        third = epsilon / 3
        self.budget_ = {
            "one-way marginals": (third, 0.0),
            "tree selection": (third, 0.0),
            "two-way marginals": (third if math.isinf(epsilon) else epsilon - 2 * third, delta),
        }
        if noise == "exact":  # every count drawn, charged once at the whole epsilon (one zCDP-to-DP conversion)
            cells = sum(sizes[j] for j in range(d)) + sum(sizes[i] * sizes[j] for i, j in edges)
            self.budget_ = with_sampling_delta(self.budget_, {"two-way marginals": (epsilon, int(cells))})
        self.sensitivity_ = {
            "one-way marginals": HISTOGRAM_L2,
            "tree selection": HISTOGRAM_L1,
            "two-way marginals": HISTOGRAM_L2,
        }
        self.noise_ = {"one-way sigma": sigma1, "selection epsilon per edge": eps_select, "two-way sigma": sigma2}
        self._rng = rng
        return self

    @staticmethod
    def _select(X, sizes, one_way, eps_select, rng) -> list[tuple[int, int]]:
        """Kruskal's algorithm with each edge chosen by the exponential mechanism (MST Algorithm 1)."""
        d = X.shape[1]
        probs = {j: _normalise(one_way[j]) for j in range(d)}
        n = X.shape[0]
        scores = {}
        for i in range(d):
            for j in range(i + 1, d):
                table = np.zeros((sizes[i], sizes[j]))
                np.add.at(table, (X[:, i], X[:, j]), 1.0)
                scores[(i, j)] = np.abs(table - n * np.outer(probs[i], probs[j])).sum()
        component = list(range(d))

        def root(a):
            while component[a] != a:
                a = component[a]
            return a

        chosen = []
        for _ in range(d - 1):
            candidates = [e for e in scores if root(e[0]) != root(e[1])]
            s = np.array([scores[e] for e in candidates])
            if math.isinf(eps_select):
                pick = int(np.argmax(s))
            else:
                logits = eps_select * (s - s.max()) / (2 * HISTOGRAM_L1)
                p = np.exp(logits)
                pick = int(rng.choice(len(candidates), p=p / p.sum()))
            i, j = candidates[pick]
            component[root(i)] = root(j)
            chosen.append((i, j))
        return _orient(chosen, d)

    def sample(self, n_samples: int) -> np.ndarray:
        """``n_samples`` synthetic records (integer codes), drawn along the tree (post-processing).

        Draws from the generator made in :meth:`fit`.
        """
        check_is_fitted(self, "edges_")
        n_samples = check_integer(n_samples, "n_samples", maximum=MAX_SAMPLES)
        rng = self._rng
        out = np.zeros((n_samples, self.n_features_in_), dtype=np.int64)
        sampled = set()
        for parent, child in self.edges_:
            if parent not in sampled:
                out[:, parent] = rng.choice(
                    self.domain_sizes_[parent], n_samples, p=_normalise(self.marginals_[parent])
                )
                sampled.add(parent)
            table = (
                self.marginals_[(parent, child)]
                if (parent, child) in self.marginals_
                else self.marginals_[(child, parent)].T
            )
            fallback = _normalise(self.marginals_[child])
            for value in range(self.domain_sizes_[parent]):
                rows = np.flatnonzero(out[:, parent] == value)
                if rows.size:
                    row = np.clip(table[value], 0.0, None)
                    p = row / row.sum() if row.sum() > 0 else fallback
                    out[rows, child] = rng.choice(self.domain_sizes_[child], rows.size, p=p)
            sampled.add(child)
        return out


def _normalise(counts) -> np.ndarray:
    p = np.clip(np.asarray(counts, dtype=float), 0.0, None)
    return p / p.sum() if p.sum() > 0 else np.full(p.size, 1.0 / p.size)


def _orient(edges, d) -> list[tuple[int, int]]:
    """Edges of a spanning tree as (parent, child), in breadth-first order from column 0."""
    neighbours = {j: [] for j in range(d)}
    for i, j in edges:
        neighbours[i].append(j)
        neighbours[j].append(i)
    order, seen, queue = [], {0}, [0]
    while queue:
        a = queue.pop(0)
        for b in sorted(neighbours[a]):
            if b not in seen:
                seen.add(b)
                order.append((a, b))
                queue.append(b)
    return order
