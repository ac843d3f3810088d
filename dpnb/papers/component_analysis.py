"""Differentially private data publishing through component analysis (Jiang et al., TDP 2013).

This module holds Section 3.1 and what both of the paper's mechanisms share; Section 3.2 lives
in :mod:`dpnb.papers.lda_publishing` (both audited in ``notebooks/component_analysis.md``):

* :class:`DPPCAPublisher` -- Section 3.1, "PCA-based PPDP": Laplace noise on the sums of
  ``x`` and of the upper triangle of ``x x^T`` (budget ``epsilon/2``, Lemma 1), top-``k``
  eigenvectors of the noisy covariance, Laplace noise on every record's ``k`` projected
  coordinates (budget ``epsilon/2``, Lemmas 2-3), and reconstruction in the original space.
  The output keeps one row per input row, in order (the paper's "one-to-one mapping").
* :class:`dpnb.papers.lda_publishing.DPLDAPublisher` -- Section 3.2, "LDA-based PPDP": noisy
  per-class sums and pooled second moment, then the paper's greedy sampler.

Shared with DP-LDA: the data layout, its checks and the weighted moments
(:mod:`dpnb.papers.onehot`); here the value recovery :func:`decode_dummies`, the one-hot
neighbour relation :class:`OneHotRows` and the record-level sensitivities (:func:`row_diameter`,
:func:`worst_case_rows`). Baselines: :func:`laplace_identity` (the Laplace mechanism on the
raw records, Theorem 3 and Fig. 2) and :func:`component_laplace` (noise on one public direction,
the toy example of Fig. 1).

Neighbouring datasets
---------------------
Both mechanisms release exactly ``n`` records and divide by ``n``, so they can only be DP for
*replace-one* neighbours (``neighbours="replace-row"``: same ``n``; one record replaced by any
record of the domain). The paper's Definition 1 (symmetric difference of one record) is
add/remove (``"add-remove-row"``), under which the row count alone distinguishes neighbours. For
DP-LDA a replaced record may change class; the class sizes then change, and DP-LDA privatises
them (the paper does not; see :class:`dpnb.papers.lda_publishing.DPLDAPublisher`).
:class:`dpnb.privacy.audit.AddRemoveRows` lets the audits search add/remove pairs too.

Data layout
-----------
Rows are ``[numeric columns | dummy groups]``: ``p1`` numeric attributes first, each in
``[0, 1]``, then one one-hot group per categorical attribute, of the sizes in
``group_sizes``. Data outside ``[0, 1]`` or with a malformed one-hot group is *rejected*
with ValueError (the bounds are public arguments, never read from the data; rescale with
``dpnb.ground.datasets.scale_to_box`` and declared bounds first).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.validation import (
    NOISE_MARGIN,
    check_array,
    check_bool,
    check_choice,
    check_data_in_bounds,
    check_epsilon,
    check_in_box,
    check_integer,
    check_n_components,
    check_positive,
    check_random_state,
    check_release_range,
    check_sensitivity,
)
from dpnb.numerics.blocks import project_rows
from dpnb.numerics.linalg import top_eigenvectors, triangle
from dpnb.papers.onehot import (
    NEIGHBOURS,
    NOISE_SCALES,
    check_counts,
    check_group_sizes,
    check_onehot_data,
    checked_moments,
    group_slices,
    max_over_t,
    moment_sums,
    onehot_layout,
    record_contribution,
)
from dpnb.privacy.audit import NeighbourRelation, check_neighbours
from dpnb.privacy.estimator import PrivateEstimator, split_budget, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise
from dpnb.privacy.mechanisms import laplace_mechanism, symmetric_laplace_mechanism

# --------------------------------------------------------------------------------------
# Layout and input checks
# --------------------------------------------------------------------------------------


def decode_dummies(X, group_sizes=()) -> np.ndarray:
    """Post-process a noisy release back into the data format (Section 3.1, "value recovery").

    Numeric columns are clipped to ``[0, 1]``; each dummy group becomes one-hot at its largest
    noisy value (the paper's argmax recovery). Post-processing: costs no privacy.
    """
    X = check_array(X, ndim=2, name="X")
    sizes = check_group_sizes(group_sizes, X.shape[1])
    n_numeric = X.shape[1] - sum(sizes)
    out = np.clip(X, 0.0, 1.0)
    for sl in group_slices(n_numeric, sizes):
        block = np.zeros_like(X[:, sl])
        block[np.arange(X.shape[0]), np.argmax(X[:, sl], axis=1)] = 1.0
        out[:, sl] = block
    return out


# --------------------------------------------------------------------------------------
# Sensitivities
# --------------------------------------------------------------------------------------


def moment_sensitivity(
    n_numeric: int, n_categorical: int = 0, *, noise_scale: str = "corrected", neighbours: str = "replace-row"
) -> float:
    """L1 sensitivity of ``(sum x, upper triangle of sum x x^T)`` (Section 3.1, Lemma 1).

    Parameters
    ----------
    n_numeric, n_categorical : int
        ``p1`` numeric attributes in ``[0, 1]`` and ``p2`` one-hot coded categorical attributes.
    noise_scale : {"corrected", "paper"}
        ``"paper"``: Section 3.1, ``s = p + p(p+1)/2`` for numeric data and
        ``(p1 + 2 p2) + [(p1+p2)(p1+p2+1) + p2(p2+1)]/2`` with dummies (whatever ``neighbours``).
        ``"corrected"``: the true supremum for ``neighbours``.
    neighbours : {"replace-row", "add-remove-row"}
        ``"replace-row"``: ``max_t p1(1-t) + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + 2 p2 + p2(p2+1)``
        (derived in the notebook); it equals the paper's value for ``p2 <= 1`` and exceeds it
        when ``p1 >= 1`` and ``p2 >= 2``. ``"add-remove-row"``: :func:`~dpnb.papers.onehot.record_contribution`.
    """
    p1, p2 = check_counts(n_numeric, n_categorical)
    check_neighbours(neighbours, NEIGHBOURS)
    if check_choice(noise_scale, "noise_scale", NOISE_SCALES) == "paper":
        return float(p1 + 2 * p2 + ((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1)) / 2)
    if neighbours == "add-remove-row":
        return record_contribution(p1, p2)
    return max_over_t(p1, p2, -1)


def row_diameter(n_numeric: int, n_categorical: int = 0, *, norm: int = 1) -> float:
    """Largest ``||x - x'||`` between two rows of the ``[0,1]^p1 x one-hot`` layout.

    ``norm=1``: ``p1 + 2 p2`` (the identity query's replace-one L1 sensitivity); ``norm=2``:
    ``sqrt(p1 + 2 p2)``. For numeric data (``p2 = 0``) these are ``p`` and ``sqrt(p)``.
    """
    p1, p2 = check_counts(n_numeric, n_categorical)
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    return float(p1 + 2 * p2) if norm == 1 else float(np.sqrt(p1 + 2 * p2))


def projection_sensitivity(n_components: int, n_features: int, *, diameter: float | None = None) -> float:
    """Lemma 2: L1 sensitivity ``sqrt(k p)`` of one record's projection ``U_k x``, x in [0,1]^p.

    Cauchy-Schwarz and Bessel give ``||U_k (x - x')||_1 <= sqrt(k) ||x - x'||_2 <= sqrt(k p)``;
    the bound is attained for some orthonormal ``U_k`` (the notebook constructs one). With
    ``diameter`` (the rows' L2 diameter, e.g. :func:`row_diameter` with ``norm=2``) the bound
    is ``sqrt(k) * diameter``.
    """
    p = check_integer(n_features, "n_features")
    k = check_n_components(n_components, p)
    if diameter is None:
        return float(np.sqrt(k * p))
    diameter = check_positive(diameter, "diameter")
    if diameter > np.sqrt(p) * (1 + 1e-12):
        raise ValueError(f"diameter must lie in (0, sqrt(n_features)] for rows in [0, 1]^p, got {diameter}")
    return float(np.sqrt(k) * diameter)


def basis_projection_sensitivity(components, return_pair: bool = False):
    """Exact L1 sensitivity of ``x -> U x`` over ``x in [0, 1]^p`` for a *given* basis ``U`` (k x p).

    ``||U d||_1 = max_s s^T U d`` over sign vectors ``s``, and ``max_{d in [-1,1]^p} (U^T s)^T d
    = ||U^T s||_1``, so the sensitivity is ``max_{s in {-1,1}^k} ||U^T s||_1`` (at most
    :func:`projection_sensitivity`). Enumerates the ``2^(k-1)`` sign patterns up to a global
    sign, so ``k <= 20``. With ``return_pair``, also returns rows ``x, x'`` of ``{0,1}^p``
    attaining it.
    """
    U = check_array(components, ndim=2, name="components")
    k = U.shape[0]
    if k > 20:
        raise ValueError(f"enumerating sign patterns needs k <= 20 components, got {k}")
    signs = 1 - 2 * ((np.arange(2 ** (k - 1))[:, None] >> np.arange(k)) & 1)
    values = np.abs(signs @ U).sum(axis=1)
    best = int(np.argmax(values))
    if not return_pair:
        return float(values[best])
    x = (signs[best] @ U > 0).astype(float)
    return float(values[best]), x, 1.0 - x


def worst_case_rows(n_numeric: int, group_sizes=(), *, between_classes: bool = False):
    """The explicit replace-one pair attaining :func:`moment_sensitivity` and DP-LDA's sensitivity.

    (:func:`dpnb.papers.lda_publishing.lda_sensitivity`, ``between_classes=True``.)

    ``x`` has every numeric attribute at 1 and level 0 of each group; ``x'`` has its numerics
    at the maximiser ``t*`` (clipped ``(p2 -+ 1)/(p1 + 1)``, notebook D6/D7) and level 1 of each
    group. ``between_classes=True`` appends class labels 0 (``x``) and 1 (``x'``): the DP-LDA
    worst case, a record that changes class.
    """
    sizes = check_group_sizes(group_sizes)
    p1, p2 = check_counts(n_numeric, len(sizes))
    slope = 1 if between_classes else -1
    t = 0.0 if p1 == 0 else float(np.clip((p2 + slope) / (p1 + 1), 0.0, 1.0))
    labels = ([[0.0]], [[1.0]]) if between_classes else ([], [])
    x = np.concatenate([np.ones(p1)] + [np.eye(s)[0] for s in sizes] + labels[0])
    x_prime = np.concatenate([np.full(p1, t)] + [np.eye(s)[1] for s in sizes] + labels[1])
    return x, x_prime


def tight_basis(n_components: int, n_features: int, *, random_state=None) -> np.ndarray:
    """An orthonormal ``U`` (k x p) with ``U 1 = sqrt(p / k) 1``: Lemma 2's bound is attained by it.

    Rows span ``1 / sqrt(p)`` with equal inner products (an orthonormal basis containing
    ``1 / sqrt(p)``, rotated by the Householder map ``e_1 -> 1 / sqrt(k)``), so
    ``||U (1 - 0)||_1 = k sqrt(p / k) = sqrt(k p)``.
    """
    p = check_integer(n_features, "n_features")
    k = check_n_components(n_components, p)
    rng = check_random_state(random_state)
    B, _ = np.linalg.qr(np.column_stack([np.ones(p), rng.standard_normal((p, k - 1))]))
    B[:, 0] = 1.0 / np.sqrt(p)
    if k == 1:
        return B.T
    v = np.full(k, 1.0 / np.sqrt(k)) - np.eye(k)[0]
    return (B @ (np.eye(k) - 2.0 * np.outer(v, v) / (v @ v))).T


# --------------------------------------------------------------------------------------
# Neighbour relations for the audits
# --------------------------------------------------------------------------------------
class OneHotRows(NeighbourRelation):
    """Replace one row of ``[numeric in [0,1] | one-hot groups | optional class label]``.

    With ``n_classes`` set, the last column is an integer class label in ``0..n_classes-1``
    and a replacement may change it (Section 3.2's "replacement between classes").
    """

    def __init__(self, n_numeric: int, group_sizes=(), n_classes: int | None = None):
        self.n_numeric, _ = check_counts(n_numeric, len(tuple(group_sizes)))
        self.group_sizes = check_group_sizes(group_sizes)
        self.n_classes = None if n_classes is None else check_integer(n_classes, "n_classes", minimum=2)
        self.width = self.n_numeric + sum(self.group_sizes) + (n_classes is not None)
        self._bounds = [(sl.start, sl.stop) for sl in group_slices(self.n_numeric, self.group_sizes)]
        label = f", class label in 0..{n_classes - 1}" if n_classes else ""
        self.description = (
            f"replace one row: {self.n_numeric} numeric in [0,1], dummy groups {list(self.group_sizes)}{label}"
        )

    def _check_width(self, d):
        if d != self.width:
            raise ValueError(f"this relation has rows of width {self.width}, got d={d}")

    def random_row(self, d, rng):
        self._check_width(d)
        u = rng.random(self.n_numeric)
        parts = [np.round(u) if rng.random() < 0.5 else u]
        parts += [np.eye(s)[rng.integers(s)] for s in self.group_sizes]
        if self.n_classes:
            parts.append([rng.integers(self.n_classes)])
        return np.concatenate(parts).astype(float)

    def project_row(self, row):
        row = np.asarray(row, dtype=float)
        self._check_width(row.size)
        out = np.zeros_like(row)
        out[: self.n_numeric] = np.minimum(np.maximum(row[: self.n_numeric], 0.0), 1.0)
        for start, stop in self._bounds:
            out[start + int(row[start:stop].argmax())] = 1.0
        if self.n_classes:
            out[-1] = min(max(round(float(row[-1])), 0), self.n_classes - 1)
        return out

    def random_rows(self, m, d, rng):
        self._check_width(d)
        u = rng.random((m, self.n_numeric))
        vertex = rng.random(m) < 0.5  # as random_row: half the rows with numerics at vertices
        u[vertex] = np.round(u[vertex])
        parts = [u] + [np.eye(s)[rng.integers(s, size=m)] for s in self.group_sizes]
        if self.n_classes:
            parts.append(rng.integers(self.n_classes, size=(m, 1)))
        return np.hstack(parts).astype(float)

    def project_rows(self, rows):
        rows = np.asarray(rows, dtype=float)
        self._check_width(rows.shape[1])
        out = np.zeros_like(rows)
        out[:, : self.n_numeric] = np.clip(rows[:, : self.n_numeric], 0.0, 1.0)
        every = np.arange(rows.shape[0])
        for start, stop in self._bounds:
            out[every, start + np.argmax(rows[:, start:stop], axis=1)] = 1.0
        if self.n_classes:
            out[:, -1] = np.clip(np.round(rows[:, -1]), 0, self.n_classes - 1)
        return out

    def perturb_rows(self, rows, rng, steps):
        # the one-row move (NeighbourRelation.perturb_row): Gaussian steps, then the projection
        return self.project_rows(rows + np.asarray(steps, dtype=float)[:, None] * rng.standard_normal(rows.shape))


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def moments_vector(X, weights=None) -> np.ndarray:
    """``(sum x, triangle(sum x x^T))`` as one vector (one per dataset of a stack): the query of Lemma 1.

    ``X`` and ``weights`` as in :func:`~dpnb.papers.onehot.moment_sums`.
    """
    sums, second = moment_sums(X, weights)
    return np.concatenate([sums, triangle(second)], axis=-1)


# --------------------------------------------------------------------------------------
# DP-PCA publishing (Section 3.1)
# --------------------------------------------------------------------------------------
class DPPCAPublisher(TransformerMixin, PrivateEstimator):
    """PCA-based private data publishing (Jiang et al. 2013, Section 3.1, Theorem 2).

    ``fit(X)`` spends the whole budget: ``epsilon/2`` on the noisy sums (steps 1-3, Lemma 1:
    Laplace noise of scale ``2 s / epsilon`` with ``s`` from :func:`moment_sensitivity`) and
    ``epsilon/2`` on every record's noisy projection (step 5, Lemmas 2-3: scale
    ``2 sqrt(k p) / epsilon``). :meth:`publish` reconstructs the noisy records (post-processing).
    Replace-one neighbours only (see the module docstring).

    Cost: two passes over ``X`` that cannot be merged, because the components depend on the whole
    noisy Gram matrix: the checked Gram matrix (:func:`dpnb.numerics.gram.indicator_gram`), then the
    projections ``X U_k^T`` with ``n k`` Laplace draws: ``O(n d^2 + d^3 + n d k)`` in all
    (``make benchmark`` times the fit beside one read of ``X`` plus ``X^T X``, ``benchmarks/gram_floor.py``).

    ``X`` may be float32 or a ``dask.array``: the moments are summed chunk by chunk on the Dask cluster
    (:func:`dpnb.numerics.blocks.row_sums`) and the projections formed there; the noise is drawn on the
    client, and ``scores_`` (one row per record) is held in memory.

    Parameters
    ----------
    n_components : int
        ``k``, number of principal components (1 <= k <= p).
    epsilon : float
        Total privacy budget; ``inf`` releases the exact projections (no noise). One so small that the
        noisy covariance could overflow float64 (public worst case, below about ``1e-150``) is refused
        with a ValueError naming it.
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups (empty for purely numeric data).
    noise_scale : {"corrected", "paper"}
        Moment sensitivity: ``"corrected"`` is the exact replace-one value; ``"paper"`` the
        paper's formula, too small for >= 2 categorical attributes (use it only to reproduce
        the paper).
    tight_projection : bool
        False: Lemma 2's ``sqrt(k p)``. True: ``sqrt(k (p1 + 2 p2))``, the same bound with the
        L2 diameter of the one-hot layout (equal for numeric data).
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise. ``"exact"``: exact discrete
        Laplace noise on a grid (:func:`dpnb.privacy.mechanisms.laplace_mechanism`), DP as stated; the sum
        and the upper triangle of the moments then go through one joint call, so the pair costs
        exactly ``epsilon / 2`` (two calls would each add their own rounding slack).
    random_state : None, int, SeedSequence or Generator

    Attributes
    ----------
    mean_ : ndarray of shape (p,)
        Noisy mean.
    covariance_ : ndarray of shape (p, p)
        Noisy covariance (symmetric, not PSD-projected; only its eigenvectors are used).
    components_ : ndarray of shape (k, p)
        Top-``k`` eigenvectors as rows.
    scores_ : ndarray of shape (n, k)
        The released noisy projections ``(X - mean_) U_k^T + Lap``.
    budget_ : dict
        ``{"moments": (epsilon/2, 0), "projection": (epsilon/2, 0)}``. With ``noise="exact"`` each delta is
        the sampler's ``sampling_delta(epsilon/2, m)`` (:func:`dpnb.privacy.estimator.with_sampling_delta`):
        ``m = p + p (p + 1) / 2`` draws for the moments, ``m = n k`` for the projections.
    sensitivity_ : dict
        ``{"moments": s, "projection": sqrt(k p)}`` (L1).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.component_analysis import DPPCAPublisher
    >>> X = np.random.default_rng(0).uniform(0, 1, (200, 6))  # numeric attributes in [0, 1]
    >>> model = DPPCAPublisher(n_components=2, epsilon=1.0, random_state=0)
    >>> scores = model.fit_transform(X)  # the private release: noisy projections of the training rows
    >>> scores.shape, model.publish().shape  # publish() maps them back to the input's units
    ((200, 2), (200, 6))
    >>> sorted(model.budget_)
    ['moments', 'projection']
    """

    def __init__(
        self,
        n_components: int = 1,
        epsilon: float = 1.0,
        *,
        group_sizes=(),
        noise_scale: str = "corrected",
        tight_projection: bool = False,
        noise: str = "float",
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.group_sizes = group_sizes
        self.noise_scale = noise_scale
        self.tight_projection = tight_projection
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y=None) -> DPPCAPublisher:
        """Compute the noisy moments, the principal components and the noisy projections of ``X``.

        ``y`` is ignored.
        """
        epsilon, _ = self._check_privacy(needs_delta=False)
        X, n_numeric, sizes = onehot_layout(X, self.group_sizes)
        check_choice(self.noise_scale, "noise_scale", NOISE_SCALES)
        noise = check_noise(self.noise)
        check_bool(self.tight_projection, "tight_projection")
        n, p = X.shape
        k = check_n_components(self.n_components, p)
        sum_x, sum_xx = checked_moments(X, n_numeric, sizes)  # the value checks of X ride on this pass
        rng = self._make_rng()
        self.budget_ = split_budget(epsilon, 0.0, {"moments": 0.5, "projection": 0.5})
        diameter = row_diameter(n_numeric, len(sizes), norm=2) if self.tight_projection else None
        self.sensitivity_ = {
            "moments": moment_sensitivity(n_numeric, len(sizes), noise_scale=self.noise_scale),
            "projection": projection_sensitivity(k, p, diameter=diameter),
        }
        # One joint Laplace mechanism on (sum x, triu sum xx^T): every coordinate gets scale 2s/epsilon.
        eps_moments = self.budget_["moments"][0]
        with np.errstate(over="ignore", divide="ignore"):  # epsilon / 2 may underflow to 0: an infinite scale
            _check_covariance_range(np.float64(self.sensitivity_["moments"]) / eps_moments, n, epsilon)
        if noise == "exact":
            noisy = laplace_mechanism(
                np.concatenate([sum_x, triangle(sum_xx)]),
                self.sensitivity_["moments"],
                eps_moments,
                random_state=rng,
                noise=noise,
            )
            upper = np.zeros((p, p))
            upper[np.triu_indices(p)] = noisy[p:]
            mean, second = noisy[:p] / n, (upper + np.triu(upper, 1).T) / n
        else:
            mean = laplace_mechanism(sum_x, self.sensitivity_["moments"], eps_moments, random_state=rng) / n
            second = (
                symmetric_laplace_mechanism(sum_xx, self.sensitivity_["moments"], eps_moments, random_state=rng) / n
            )
        self.covariance_ = second - np.outer(mean, mean)
        self.components_ = top_eigenvectors(self.covariance_, k)[1].T
        self.mean_ = mean
        self.scores_ = self._noisy_projections(X, rng, noise)
        if noise == "exact":  # the sampler's delta: p + p (p + 1) / 2 moment draws, n k projection draws
            self.budget_ = with_sampling_delta(self.budget_, {"moments": p + p * (p + 1) // 2, "projection": n * k})
        self.n_features_in_ = p
        return self

    def _noisy_projections(self, X, rng, noise: str = "float", chunk: int = 8192) -> np.ndarray:
        """Step 5: ``(X - mean_) U_k^T + Lap(2 sqrt(kp) / epsilon)`` per entry, in row chunks.

        ``X U_k^T - mean_ U_k^T``, so no centred copy of ``X``; the noise of each chunk is drawn
        right after the previous one's, so the draws are those of one ``n x k`` Laplace call.
        With ``noise="exact"`` each chunk goes through :func:`dpnb.privacy.mechanisms.laplace_mechanism` on
        its own grid: neighbours differ in one row, so only one chunk's input differs (the others
        are the same values given the released mean and components).
        """
        scale = self.sensitivity_["projection"] / self.budget_["projection"][0]
        shift = self.mean_ @ self.components_.T
        scores = project_rows(X, self.components_.T, chunk)  # Dask: per chunk on the cluster
        for start in range(0, X.shape[0], chunk):
            block = scores[start : start + chunk]
            block -= shift
            if noise == "exact":
                epsilon = self.budget_["projection"][0]
                block[...] = laplace_mechanism(
                    block, self.sensitivity_["projection"], epsilon, random_state=rng, noise=noise
                )
            else:
                block += rng.laplace(0.0, scale, size=block.shape)
        return scores

    def fit_transform(self, X, y=None, **fit_params) -> np.ndarray:
        """Fit on ``X`` and return its *noisy* projections ``scores_`` (the private release).

        This is what a Pipeline trains on; :meth:`transform` of the training rows would
        instead project them without noise and is not private.
        """
        return self.fit(X, y).scores_

    def transform(self, X) -> np.ndarray:
        """Project rows that are *not* the private input (e.g. test rows): ``(X - mean_) U_k^T``.

        Uses only the released ``mean_`` and ``components_``; adds no noise, so the rows passed
        here are not protected. The private release of the training rows is ``scores_``.
        """
        check_is_fitted(self, "scores_")
        X = check_array(X, ndim=2, name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} columns, got {X.shape[1]}")
        return X @ self.components_.T - self.mean_ @ self.components_.T

    def inverse_transform(self, Z) -> np.ndarray:
        """Map projections back to the original space: ``Z U_k + mean_`` (Section 3.1, step 5)."""
        check_is_fitted(self, "scores_")
        Z = check_array(Z, ndim=2, name="Z")
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"Z must have {self.components_.shape[0]} columns, got {Z.shape[1]}")
        return Z @ self.components_ + self.mean_

    def publish(self, decode: bool = False) -> np.ndarray:
        """The released records ``scores_ U_k + mean_``, row ``i`` standing for input row ``i``.

        ``decode=True`` applies :func:`decode_dummies` (clip numerics, argmax per dummy group).
        """
        check_is_fitted(self, "scores_")
        out = self.inverse_transform(self.scores_)
        return decode_dummies(out, self.group_sizes) if decode else out


def _check_covariance_range(scale, n: int, epsilon: float) -> None:
    """Refuse (naming epsilon) moments noise of ``scale`` whose covariance ``second - mean mean^T`` could overflow.

    Public worst case: every entry of ``mean`` and of ``second`` (sums of ``n`` values in ``[0, 1]``, over ``n``)
    is at most ``w = 1 + NOISE_MARGIN scale / n`` in magnitude, so the covariance's are at most ``w + w^2``.
    """
    with np.errstate(over="ignore"):
        worst = 1.0 + NOISE_MARGIN * scale / n
        worst = worst + worst * worst
    if not worst <= 1e300:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for DP-PCA on {n} rows: the noisy covariance could overflow "
            "float64; pass a larger epsilon"
        )


def laplace_identity(X, epsilon: float, *, group_sizes=None, random_state=None, noise="float") -> np.ndarray:
    """The Laplace mechanism on the raw records of ``X in [0,1]^{n x p}`` (Theorem 3, Fig. 2's LAP).

    Every entry gets ``Lap(r / epsilon)`` with ``r`` the replace-one L1 change of one row:
    ``r = p`` without ``group_sizes`` (the paper's ``Lap(p / epsilon)``, any row of
    ``[0,1]^p``) and ``r = p1 + 2 p2`` (:func:`row_diameter`) when ``group_sizes`` declares
    one-hot groups, whose rows then must be valid dummies. epsilon-DP either way.
    ``noise``: numpy's floating-point Laplace noise (``"float"``, default) or exact discrete
    Laplace noise on a grid (``"exact"``, :func:`dpnb.privacy.mechanisms.laplace_mechanism`), whose
    ``n p`` draws make the release ``(epsilon, sampling_delta(epsilon, n p))``-DP
    (:func:`dpnb.privacy.exact_noise.sampling_delta`).
    """
    epsilon = check_epsilon(epsilon)
    if group_sizes is None:
        X = check_in_box(check_array(X, ndim=2, name="X"), 0.0, 1.0, name="X")
        sensitivity = float(X.shape[1])
    else:
        X, n_numeric = check_onehot_data(X, group_sizes)
        sensitivity = row_diameter(n_numeric, len(check_group_sizes(group_sizes)))
    return laplace_mechanism(X, sensitivity, epsilon, random_state=random_state, noise=noise)


def split_laplace(X, epsilon: float, bounds, *, random_state=None, noise="float") -> np.ndarray:
    """Fig. 1's attribute-wise release: ``epsilon`` split evenly over the ``p`` attributes.

    Attribute ``j`` of every record gets ``Lap(p (high_j - low_j) / epsilon)`` (sequential
    composition over attributes, replace-one neighbours). ``bounds = (low, high)``: scalars or
    per-attribute arrays, public; rows outside are rejected. Bounds so wide (or ``epsilon`` so
    small) that the release could overflow float64 are refused with a ValueError naming them.

    ``noise="float"`` (default): numpy's floating-point Laplace noise. ``noise="exact"``: column ``j``
    goes through :func:`dpnb.privacy.mechanisms.laplace_mechanism` with exact discrete Laplace noise on a
    grid (sensitivity ``high_j - low_j`` at ``epsilon / p``): ``(epsilon, p sampling_delta(epsilon / p, n))``-DP
    for its ``n`` draws a column (:func:`dpnb.privacy.exact_noise.sampling_delta`).
    """
    epsilon = check_epsilon(epsilon)
    noise = check_noise(noise)
    X, low, high = check_data_in_bounds(X, bounds)
    p = X.shape[1]
    with np.errstate(over="ignore"):
        scale = p * (high - low) / epsilon
    check_release_range(np.maximum(np.abs(low), np.abs(high)), scale)
    rng = check_random_state(random_state)
    if noise == "exact":
        columns = [
            laplace_mechanism(X[:, j], check_sensitivity(high[j] - low[j]), epsilon / p, random_state=rng, noise=noise)
            for j in range(p)
        ]
        return np.column_stack(columns)
    return X + rng.laplace(0.0, scale, size=X.shape)


def component_laplace(X, epsilon: float, direction, center, bounds, *, random_state=None, noise="float") -> np.ndarray:
    """Fig. 1's component-aware release: noise on one public direction ``u`` only.

    Each record is released as ``center + (u^T (x - center) + Lap(s / epsilon)) u`` with
    ``s = sum_j |u_j| (high_j - low_j)``, the L1 (here: absolute) change of ``u^T x`` over the
    box. ``direction`` and ``center`` must be public (common knowledge, not the data); the
    part of ``x - center`` orthogonal to ``u`` is dropped. Bounds so wide (or ``epsilon`` so small)
    that the release could overflow float64 are refused with a ValueError naming them.

    ``noise="float"`` (default): numpy's floating-point Laplace noise. ``noise="exact"``: the
    projections ``t`` go through :func:`dpnb.privacy.mechanisms.laplace_mechanism` with exact discrete
    Laplace noise on a grid (sensitivity ``s``): ``(epsilon, sampling_delta(epsilon, n))``-DP for its ``n``
    draws (:func:`dpnb.privacy.exact_noise.sampling_delta`).
    """
    epsilon = check_epsilon(epsilon)
    noise = check_noise(noise)
    X, low, high = check_data_in_bounds(X, bounds)
    u = check_array(direction, ndim=1, name="direction")
    center = check_array(center, ndim=1, name="center")
    if u.size != X.shape[1] or center.size != X.shape[1]:
        raise ValueError(f"direction and center need {X.shape[1]} entries, got {u.size} and {center.size}")
    if not np.isclose(u @ u, 1.0):
        raise ValueError("direction must have unit L2 norm")
    with np.errstate(over="ignore"):
        sensitivity = np.abs(u) @ (high - low)
        scale = sensitivity / epsilon
        reach = np.abs(u) @ np.maximum(np.abs(low - center), np.abs(high - center))  # public bound on |u^T (x - c)|
    check_release_range(np.abs(center).max() + reach, scale)
    rng = check_random_state(random_state)
    if noise == "exact":
        t = laplace_mechanism((X - center) @ u, check_sensitivity(sensitivity), epsilon, random_state=rng, noise=noise)
    else:
        t = (X - center) @ u + rng.laplace(0.0, scale, size=X.shape[0])
    return center + np.outer(t, u)


def mse_per_record(released, X) -> float:
    """``||released - X||_F^2 / n``: the per-record squared error of Figs. 1-2 (F-norm / n)."""
    released = check_array(released, ndim=2, name="released")
    X = check_array(X, ndim=2, name="X")
    if released.shape != X.shape:
        raise ValueError(f"released has shape {released.shape} but X has {X.shape}")
    diff = released - X
    return float(np.einsum("ij,ij->", diff, diff) / X.shape[0])
