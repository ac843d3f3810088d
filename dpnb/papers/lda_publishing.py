"""LDA-based private data publishing (Jiang et al., TDP 2013, Section 3.2): DP-LDA and its greedy sampler.

:class:`DPLDAPublisher` releases Laplace-noised per-class sums, class counts and the pooled
second moment; :meth:`DPLDAPublisher.sample` then runs the paper's greedy sampler (Section 3.2,
"Sampling"), which draws records whose statistics approximately match the noisy ones in L1;
:func:`sample_releases` runs the samplers of many releases in lockstep (same records, faster).
:func:`lda_sensitivity` is the L1 sensitivity of the released sums, :func:`lda_vector` the query
the audits search, :func:`attribute_entropy_kl` and :func:`statistics_distance` the paper's
yardsticks (Fig. 4).

The data layout ``[numeric in [0, 1] | one-hot groups]``, its checks, the neighbour notions and
the statistics DP-PCA shares live in :mod:`dpnb.papers.onehot`; DP-PCA itself (Section 3.1) in
:mod:`dpnb.papers.component_analysis`.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dpnb.ground.compiled import value_range
from dpnb.ground.validation import MAX_SAMPLES, check_array, check_choice, check_fraction, check_integer
from dpnb.numerics.linalg import triangle
from dpnb.papers.onehot import (
    NEIGHBOURS,
    NOISE_SCALES,
    check_counts,
    check_datasets,
    check_group_sizes,
    check_onehot_data,
    group_slices,
    max_over_t,
    moment_sums,
    onehot_gram,
    onehot_layout,
    record_contribution,
    row_weights,
)
from dpnb.privacy.audit import check_neighbours
from dpnb.privacy.estimator import PrivateEstimator, split_budget, with_sampling_delta
from dpnb.privacy.exact_noise import check_noise
from dpnb.privacy.mechanisms import laplace_mechanism


def lda_sensitivity(
    n_numeric: int, n_categorical: int = 0, *, noise_scale: str = "corrected", neighbours: str = "replace-row"
) -> float:
    """L1 sensitivity of ``(class sums, upper triangle of pooled sum x x^T)`` (Section 3.2, step 2).

    ``"paper"``: ``2p + p(p+1)/2`` (numeric) and ``2(p1+p2) + [(p1+p2+1)(p1+p2) + p2(p2+1)]/2``
    (dummies). ``"corrected"`` with ``neighbours="replace-row"`` (the replaced record may change
    class): ``max_t p1(1+t) + 2 p2 + p1(p1+1)(1-t^2)/2 + p1 p2 (1+t) + p2(p2+1)``, the
    cross-class case, which dominates the within-class one; with ``"add-remove-row"``:
    :func:`dpnb.papers.onehot.record_contribution`. Class *counts* are not included; their sensitivity is 2
    (replace) or 1 (add/remove) and :class:`DPLDAPublisher` releases them separately.
    """
    p1, p2 = check_counts(n_numeric, n_categorical)
    check_neighbours(neighbours, NEIGHBOURS)
    if check_choice(noise_scale, "noise_scale", NOISE_SCALES) == "paper":
        return float(2 * (p1 + p2) + ((p1 + p2 + 1) * (p1 + p2) + p2 * (p2 + 1)) / 2)
    if neighbours == "add-remove-row":
        return record_contribution(p1, p2)
    return max_over_t(p1, p2, +1)


def _check_labels(y, shape: tuple[int, ...], n_classes: int) -> np.ndarray:
    """Integer labels in ``0..n_classes-1`` of the given shape (one per row of the data)."""
    message = f"y must hold integer class labels in 0..{n_classes - 1} (encode labels first)"
    if isinstance(y, np.ndarray) and y.dtype.kind in "iu" and y.shape == shape:  # integers: only the range to check
        low, high = value_range(y.ravel()) if y.size else (0, 0)
        if low < 0 or high >= n_classes:
            raise ValueError(message)
        return y.astype(int, copy=False)
    y = check_array(y, ndim=len(shape), name="y", min_rows=0)
    if y.shape != shape:
        raise ValueError(f"y has {y.size} labels but X has {int(np.prod(shape))} rows")
    if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= n_classes):
        raise ValueError(message)
    return y.astype(int)


def class_sums(X, y, n_classes: int, weights=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(per-class sums (C, p), class counts (C,), pooled sum x x^T (p, p))`` (Section 3.2, step 1).

    ``y`` holds integer labels in ``0..n_classes-1``, one per row. ``X`` may be a stack of
    datasets ``(m, n, p)`` with labels ``(m, n)`` (every output gains a leading axis ``m``), and
    ``weights`` row weights as in :func:`dpnb.papers.onehot.moment_sums` (counts are then sums of weights).
    """
    X = check_datasets(X)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    y = _check_labels(y, X.shape[:-1], n_classes)
    w = row_weights(weights, X.shape[:-1])
    onehot = np.eye(n_classes)[y] if w is None else np.eye(n_classes)[y] * w[..., None]
    return np.swapaxes(onehot, -1, -2) @ X, onehot.sum(axis=-2), moment_sums(X, w)[1]


def _grid_class_moments(
    X, y, n_classes: int, n_numeric: int, sizes, chunk: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class sums, class counts and pooled ``sum x x^T`` of the rows of ``X`` rounded to the grid ``2^-16``: exact.

    ``X`` is a ``[numeric | one-hot]`` matrix (``n_numeric`` numeric columns, groups of ``sizes``),
    validated on the way block by block as :func:`dpnb.papers.onehot.check_onehot_data`
    would (one pass over the data).

    Every entry of ``X`` (in ``[0, 1]``) is first rounded to the nearest multiple of ``2^-16``
    (ties to even). This is a fixed map of each record into the same domain ``[0, 1]^p``, applied
    before any statistic, so the sensitivities (suprema over that domain) and the privacy analysis
    are unchanged; it moves an attribute by at most ``2^-17``, far below the noise.

    Exactness. A rounded entry is ``a 2^-16`` with an integer ``0 <= a <= 2^16``. The statistics
    are computed on the integers ``a`` and scaled by a power of two at the end, hence exactly: the
    pooled second moment as the Gram matrix of the rows ``a`` (``2^32 sum x x^T``), the class sums
    and counts as running sums of ``a`` and of 1 in the compiled loop of
    :func:`dpnb.numerics.gram.indicator_gram` (``2^16`` times the class sums). Every product
    ``a b <= 2^32`` is an integer, exact in float64; a sum of ``N`` of them, and every partial sum in
    any order or grouping, is an integer of at most ``N 2^32``, representable in float64 (53-bit
    significand) whenever ``N <= 2^21``; a partial class sum is an integer of at most ``N 2^16``,
    representable whenever ``N <= 2^37``. Each addition (or fused multiply-add) then has a
    representable exact result, which IEEE arithmetic returns without rounding. So for up to
    ``2^21`` rows the result is the exact sum, bit-identical for any summation order, blocking or
    BLAS kernel, on any machine; here BLAS forms the Gram matrix of each block of ``chunk`` rows (by
    default :func:`dpnb.numerics.linalg.gram_block_rows`, at most ``2^21`` for up to ``2^18`` columns) and the
    blocks are added in order. Beyond ``2^21`` rows the running total of the Gram matrix may round, but every block is
    exact and the blocks (whose size depends on ``p`` only) are added in a fixed order, so the
    result is still the same on every machine. The greedy sampler downstream, which turns a
    last-bit difference in its inputs into different records, therefore gets the same inputs
    everywhere.
    """
    p = X.shape[1]
    total = onehot_gram(X, y, n_classes, n_numeric, sizes, grid=True, chunk=chunk)
    total *= 2.0**-32
    return total[p:, :p], np.diag(total[p:, p:]).copy(), total[:p, :p]


def lda_vector(Z, n_classes: int = 2, weights=None) -> np.ndarray:
    """``(class sums, triangle(pooled sum x x^T))`` of rows ``[x | label]``: the query of Section 3.2.

    ``Z`` is one dataset ``(n, p + 1)`` or a stack ``(m, n, p + 1)`` (one vector per dataset);
    ``weights`` are row weights as in :func:`dpnb.papers.onehot.moment_sums`.
    """
    Z = check_datasets(Z, "Z")
    sums, _, second = class_sums(Z[..., :-1], Z[..., -1], n_classes, weights)
    return np.concatenate([sums.reshape(*sums.shape[:-2], -1), triangle(second)], axis=-1)


# --------------------------------------------------------------------------------------
# DP-LDA publishing (Section 3.2)
# --------------------------------------------------------------------------------------
class DPLDAPublisher(PrivateEstimator):
    """LDA-based private data publishing with the greedy sampler (Jiang et al. 2013, Section 3.2).

    ``fit(X, y)`` releases the per-class sums and the upper triangle of the pooled
    ``sum x x^T`` with Laplace noise of scale ``s / ((1 - count_fraction) epsilon)``, ``s`` from
    :func:`lda_sensitivity` (Section 3.2, step 2), and the class counts with scale
    ``2 / (count_fraction epsilon)`` (a record moving between classes changes two counts by
    one); sequential composition gives ``epsilon``. The paper divides by the *exact* class
    sizes and draws exactly ``n_c`` records per class, which discloses the sizes and breaks DP
    for the neighbours its own proof considers (demonstrated in the notebook); noisy counts
    fix that. :meth:`sample` runs the greedy sampler on the noisy statistics (post-processing).
    The sums are taken over the records rounded to the grid ``2^-16`` (a fixed map of the domain
    into itself, so the sensitivities are unchanged), which makes them exact in float64 and hence
    bit-identical on every machine (proof: ``_grid_class_moments``).

    Cost of ``fit``: one pass over ``X`` that checks it, rounds it and forms the class sums, the
    class counts and the Gram matrix (:func:`dpnb.numerics.gram.indicator_gram`), plus one pass over
    the labels (their range): ``O(n p^2)``, the floor of forming ``X^T X`` (``make benchmark`` times
    the fit against it, ``benchmarks/gram_floor.py``).

    ``X`` may be float32 or a ``dask.array`` (summed chunk by chunk on the Dask cluster,
    :func:`dpnb.numerics.blocks.row_sums`; the grid makes the sums, hence the release, bit-identical to the
    in-memory fit's); ``y`` is held in memory.

    Parameters
    ----------
    epsilon : float
        Total budget; ``inf`` releases the exact statistics (of the rounded records).
    n_classes : int
        Public number of classes; labels are ``0..n_classes-1``.
    group_sizes : sequence of int
        Sizes of the trailing one-hot groups.
    noise_scale : {"corrected", "paper"}
        Sensitivity of the sums (see :func:`lda_sensitivity`); the counts are noisy either way.
    count_fraction : float in (0, 1)
        Share of ``epsilon`` spent on the class counts (their sensitivity, 2, is small, so a
        small share gives accurate counts).
    random_state : None, int, SeedSequence or Generator
        Drives the noise and, through the generator made in ``fit``, :meth:`sample`.
    noise : {"float", "exact"}
        ``"float"`` (default): numpy's floating-point Laplace noise; ``"exact"``: exact discrete
        Laplace noise on a grid (:func:`dpnb.privacy.mechanisms.laplace_mechanism`), DP as stated.

    Attributes
    ----------
    class_counts_ : ndarray of shape (C,)
        Noisy counts rounded to integers in ``[1, n]`` (``n`` is public under replace-one
        neighbours). A class without records is released like any other (no refusal that would
        reveal it).
    means_ : ndarray of shape (C, p)
        Noisy class means.
    second_moment_ : ndarray of shape (p, p)
        Noisy pooled ``E[x x^T]``.
    budget_ : dict
        ``{"class_counts": (f epsilon, 0), "sums": ((1 - f) epsilon, 0)}``. With ``noise="exact"`` each delta
        is the sampler's ``sampling_delta(epsilon_i, m)`` (:func:`dpnb.privacy.estimator.with_sampling_delta`):
        ``m = C p + p (p + 1) / 2`` draws for the sums, ``m = C`` for the counts.
    sensitivity_ : dict
        ``{"class_counts": 2.0, "sums": s}`` (L1).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.papers.lda_publishing import DPLDAPublisher
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.uniform(0, 1, (200, 4)), rng.integers(0, 2, 200)
    >>> model = DPLDAPublisher(epsilon=1.0, n_classes=2, random_state=0).fit(X, y)
    >>> model.budget_
    {'class_counts': (0.1, 0.0), 'sums': (0.9, 0.0)}
    >>> X_syn, y_syn = model.sample(50)  # always fitted with labels: (X, y)
    >>> X_syn.shape, y_syn.shape
    ((50, 4), (50,))
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        n_classes: int = 2,
        group_sizes=(),
        noise_scale: str = "corrected",
        count_fraction: float = 0.1,
        noise: str = "float",
        random_state=None,
    ):
        self.epsilon = epsilon
        self.n_classes = n_classes
        self.group_sizes = group_sizes
        self.noise_scale = noise_scale
        self.count_fraction = count_fraction
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y) -> DPLDAPublisher:
        """Release the noisy class sums, class counts and pooled second moment."""
        epsilon, _ = self._check_privacy(needs_delta=False)
        f = check_fraction(self.count_fraction, "count_fraction", low_open=True)
        n_classes = check_integer(self.n_classes, "n_classes", minimum=2)
        check_choice(self.noise_scale, "noise_scale", NOISE_SCALES)
        noise = check_noise(self.noise)
        X, n_numeric, sizes = onehot_layout(X, self.group_sizes)
        y = _check_labels(y, X.shape[:1], n_classes)
        sums, counts, sum_xx = _grid_class_moments(X, y, n_classes, n_numeric, sizes)  # X's value checks ride along
        rng = self._make_rng()
        p = X.shape[1]
        self.budget_ = split_budget(epsilon, 0.0, {"class_counts": f, "sums": 1 - f})
        self.sensitivity_ = {
            "class_counts": 2.0,
            "sums": lda_sensitivity(n_numeric, len(sizes), noise_scale=self.noise_scale),
        }
        iu = np.triu_indices(p)
        noisy = laplace_mechanism(
            np.concatenate([sums.ravel(), triangle(sum_xx)]),
            self.sensitivity_["sums"],
            self.budget_["sums"][0],
            random_state=rng,
            noise=noise,
        )
        noisy_counts = laplace_mechanism(
            counts, self.sensitivity_["class_counts"], self.budget_["class_counts"][0], random_state=rng, noise=noise
        )
        # post-processing with the public n (replace-one neighbours): a count lies in [1, n], so an
        # extreme epsilon never overflows the integer conversion
        self.class_counts_ = np.clip(np.round(noisy_counts), 1, X.shape[0]).astype(int)
        upper = np.zeros((p, p))
        upper[iu] = noisy[n_classes * p :]
        self.means_ = noisy[: n_classes * p].reshape(n_classes, p) / self.class_counts_[:, None]
        self.second_moment_ = (upper + np.triu(upper, 1).T) / self.class_counts_.sum()
        self.n_features_in_ = p
        self._n_numeric = n_numeric
        if noise == "exact":  # the sampler's delta: C p + p (p + 1) / 2 draws for the sums, C for the counts
            draws = {"sums": n_classes * p + p * (p + 1) // 2, "class_counts": n_classes}
            self.budget_ = with_sampling_delta(self.budget_, draws)
        self._rng = rng
        return self

    def sample(self, n_samples=None) -> tuple[np.ndarray, np.ndarray]:
        """Greedy sampler (Section 3.2, "Sampling"): ``class_counts_[c]`` records per class by default.

        ``n_samples`` (optional): draw that many records instead, class sizes multinomial with the
        proportions of ``class_counts_`` (post-processing of the release either way).

        Records are built one at a time (classes interleaved in random order). Each minimises,
        feature by feature, the L1 objective
        ``sum_c ||sum_{j in c} y_j - m_c mu_c||_1 + ||triu(sum_j y_j y_j^T - m E[xx^T])||_1``
        where ``m_c, m`` count the records drawn so far. A dummy group tries each of its levels;
        a numeric feature ``z`` sees terms ``|a z - b|`` once the other features are fixed
        (undecided ones, and ``z`` itself in ``z^2``, replaced by the noisy class mean), whose
        sum is minimised over ``[0, 1]`` by a weighted median of the break points ``b / a`` --
        the same optimum as the paper's scan of all break points, in ``O(p log p)`` per feature.
        Groups are decided before numeric features, as the paper suggests. Levels tied for the
        lowest cost (frequent: the L1 objective is flat once residuals are large) are drawn at
        random in proportion to the noisy class mean; the paper does not say how it breaks ties,
        and always taking the first level would bias every group towards its first level.

        Returns
        -------
        X : ndarray of shape (n, p)
            Synthetic records in the input layout.
        y : ndarray of shape (n,)
            Their labels: the publisher is always fitted with labels, so the pair ``(X, y)`` is returned.
        """
        return sample_releases([self], n_samples)[0]


def _weighted_medians(points, weights) -> np.ndarray:
    """Row-wise minimisers of ``sum_l w_l |z - points_l|`` (weights >= 0, each row with a positive one).

    A stable sort of each row, then the first point whose cumulative weight reaches half the row's
    total. Entries of zero weight never decide the result (they may be ``inf``).
    """
    rows = np.arange(len(points))
    order = np.argsort(points, axis=1, kind="stable")
    cum = np.cumsum(weights[rows[:, None], order], axis=1)
    return points[rows, order[rows, np.argmax(cum >= cum[:, -1:] / 2, axis=1)]]


def _draw_levels(cost, proxy, rngs) -> np.ndarray:
    """Per row, the level of lowest ``cost``; ties drawn in proportion to ``proxy`` from that row's generator.

    The L1 objective is often flat (exact ties once residuals are large); the paper is silent, so
    ties are broken at random in proportion to the noisy class mean. ``rngs[r].random()`` is called
    once per row with a tie, so each generator sees the draws a one-record-at-a-time sampler makes.
    """
    low = cost.min(axis=1, keepdims=True)
    tied = cost <= low + 1e-9 * (1 + np.abs(low))
    level = np.argmax(tied, axis=1)
    multi = np.flatnonzero(tied.sum(axis=1) > 1)
    if multi.size:
        cum = np.cumsum(np.where(tied[multi], np.maximum(proxy[multi], 1e-12), 0.0), axis=1)
        u = np.array([rngs[r].random() for r in multi])
        level[multi] = np.argmax(tied[multi] & (cum >= u[:, None] * cum[:, -1:]), axis=1)
    return level


def _greedy_records(v, R, Q, n_numeric: int, groups, rngs) -> np.ndarray:
    """One greedy record per row (one row per release): ``v`` (m, p) starts at the class proxies.

    ``R`` (m, p) are the class-sum residuals and ``Q`` (m, p, p) the second-moment residuals of
    each release. Setting level ``g`` of a group costs, up to terms that do not depend on ``g``,
    the sums term ``|1 - R_g| - |R_g|``, the group's diagonal ``|1 - Q_gg| - |Q_gg|`` and the cross
    terms ``|v_j - Q_gj| - |Q_gj|`` with every feature ``j`` outside the group; the cross terms of
    all dummy rows are kept in one array whose columns are refreshed as groups are decided. A
    numeric feature ``z`` then minimises ``sum_l |a_l z - b_l|`` by a weighted median.
    """
    m, p = v.shape
    d = p - n_numeric  # dummy columns, the trailing block: slices below are views, not copies
    if d:
        Qd = Q[:, n_numeric:]
        diag = Qd[:, np.arange(d), np.arange(n_numeric, p)]
        base = np.abs(1 - R[:, n_numeric:]) - np.abs(R[:, n_numeric:]) + np.abs(1 - diag) - np.abs(diag)
        cross = np.abs(v[:, None, :] - Qd) - np.abs(Qd)
    for sl, eye in groups:
        cols = slice(n_numeric + sl.start, n_numeric + sl.stop)
        cost = base[:, sl] + cross[:, sl].sum(axis=2) - cross[:, sl, cols].sum(axis=2)
        v[:, cols] = eye[_draw_levels(cost, v[:, cols], rngs)]
        cross[:, :, cols] = np.abs(v[:, None, cols] - Qd[:, :, cols]) - np.abs(Qd[:, :, cols])
    a = np.empty((m, p + 1))
    b = np.empty((m, p + 1))
    a[:, 0] = 1.0
    for j in range(n_numeric):
        a[:, 1:] = v  # v >= 0: proxies are clipped to [0, 1]
        b[:, 0], b[:, 1:] = R[:, j], Q[:, j]
        keep = a > 0
        points = np.where(keep, b / np.where(keep, a, 1.0), np.inf)
        v[:, j] = np.clip(_weighted_medians(points, np.where(keep, a, 0.0)), 0.0, 1.0)
    return v


def sample_releases(publishers, n_samples=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The greedy sampler of several fitted :class:`DPLDAPublisher` run in lockstep (one NumPy pass per record).

    Each release gets exactly what its own :meth:`DPLDAPublisher.sample` with the same ``n_samples``
    returns (same records, same draws from its generator): the releases share no state, the batch only
    amortises NumPy's per-call overhead over them. They must share the layout (``n_features_in_``,
    ``group_sizes``).
    """
    publishers = list(publishers)
    if not publishers:
        return []
    for pub in publishers:
        if not isinstance(pub, DPLDAPublisher):
            raise TypeError(f"publishers must be DPLDAPublisher instances, got {type(pub).__name__}")
        check_is_fitted(pub, "means_")
    layout = {(pub.means_.shape, pub._n_numeric, check_group_sizes(pub.group_sizes)) for pub in publishers}
    if len(layout) > 1:
        raise ValueError("the publishers must share n_classes, the number of features and group_sizes")
    if n_samples is not None:
        n_samples = check_integer(n_samples, "n_samples", maximum=MAX_SAMPLES)
    # Every generator draws its record order first (after the class sizes, if n_samples is given), as a
    # one-release sampler does.
    labels = [
        pub._rng.permutation(np.repeat(np.arange(pub.means_.shape[0]), _sizes(pub, n_samples))) for pub in publishers
    ]
    order = np.argsort([-lab.size for lab in labels], kind="stable")  # active releases stay a prefix
    records = _lockstep(
        np.stack([publishers[r].means_ for r in order]),
        np.stack([publishers[r].second_moment_ for r in order]),
        [labels[r] for r in order],
        publishers[0],
        [publishers[r]._rng for r in order],
    )
    out = [None] * len(publishers)
    for r, X in zip(order, records, strict=True):
        out[r] = (X, labels[r])
    return out


def _sizes(pub, n_samples) -> np.ndarray:
    """Records per class: the released counts, or ``n_samples`` split multinomially in their proportions."""
    if n_samples is None:
        return pub.class_counts_
    return pub._rng.multinomial(n_samples, pub.class_counts_ / pub.class_counts_.sum())


def _lockstep(means, second, labels, template, rngs) -> list[np.ndarray]:
    """Records of ``B`` releases sorted by decreasing length: record ``i`` of every release still drawing."""
    B, C, p = means.shape
    n_numeric = template._n_numeric
    groups = [
        (slice(sl.start - n_numeric, sl.stop - n_numeric), np.eye(sl.stop - sl.start))
        for sl in group_slices(n_numeric, check_group_sizes(template.group_sizes))
    ]
    lengths = np.array([lab.size for lab in labels])
    padded = np.zeros((B, lengths[0]), dtype=int)
    for r, lab in enumerate(labels):
        padded[r, : lab.size] = lab
    proxies = np.clip(means, 0.0, 1.0)
    residual_sums = np.zeros((B, C, p))
    residual_second = np.zeros((B, p, p))
    out = np.empty((B, lengths[0], p))
    active = B
    for i in range(int(lengths[0])):
        while lengths[active - 1] <= i:
            active -= 1
        rows = np.arange(active)
        c = padded[:active, i]
        residual_sums[rows, c] += means[rows, c]
        residual_second[:active] += second[:active]
        record = _greedy_records(
            proxies[rows, c], residual_sums[rows, c], residual_second[:active], n_numeric, groups, rngs
        )
        residual_sums[rows, c] -= record
        residual_second[:active] -= record[:, :, None] * record[:, None, :]
        out[:active, i] = record
    return [out[r, :n] for r, n in enumerate(lengths)]


def _attribute_histograms(X, y, n_numeric: int, group_sizes, n_classes: int, bins: int) -> list[np.ndarray]:
    """Counts per attribute: numerics in ``bins`` equal bins of [0, 1], dummy groups by level, the label."""
    hists = [np.bincount(np.minimum((X[:, j] * bins).astype(int), bins - 1), minlength=bins) for j in range(n_numeric)]
    hists += [X[:, sl].sum(axis=0) for sl in group_slices(n_numeric, group_sizes)]
    return hists + [np.bincount(y, minlength=n_classes)]


def attribute_entropy_kl(X, y, X_ref, y_ref, group_sizes=(), *, n_classes: int = 2, bins: int = 10):
    """Mean per-attribute entropy of ``(X, y)`` and mean KL divergence ``D(P || Q_ref)``, in bits (Fig. 4).

    The paper does not define either for mixed data; this is our reading: every attribute
    (numerics in ``bins`` equal bins of [0, 1], each dummy group by level, the label) gets a
    histogram smoothed by adding 1/2 to every cell, and the two measures are averaged over
    attributes. Both datasets must be valid ``[numeric | one-hot]`` layouts.
    """
    bins = check_integer(bins, "bins", minimum=2)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    X, n_numeric = check_onehot_data(X, group_sizes)
    X_ref, _ = check_onehot_data(X_ref, group_sizes)
    y, y_ref = _check_labels(y, X.shape[:1], n_classes), _check_labels(y_ref, X_ref.shape[:1], n_classes)
    sizes = check_group_sizes(group_sizes)
    entropy, kl = [], []
    for h, g in zip(
        _attribute_histograms(X, y, n_numeric, sizes, n_classes, bins),
        _attribute_histograms(X_ref, y_ref, n_numeric, sizes, n_classes, bins),
        strict=True,
    ):
        P, Q = (h + 0.5) / (h.sum() + 0.5 * h.size), (g + 0.5) / (g.sum() + 0.5 * g.size)
        entropy.append(-np.sum(P * np.log2(P)))
        kl.append(np.sum(P * np.log2(P / Q)))
    return float(np.mean(entropy)), float(np.mean(kl))


def statistics_distance(X, y, means, second_moment) -> float:
    """L1 distance between ``(class means, triu E[x x^T])`` of ``(X, y)`` and the given ones.

    The yardstick of the paper's claim that the sampler's statistics are closer to the true
    ones than the noisy statistics are.
    """
    means = check_array(means, ndim=2, name="means")
    sums, counts, sum_xx = class_sums(X, y, means.shape[0])
    if np.any(counts == 0):
        raise ValueError("every class needs at least one record to compare class means")
    own_means = sums / counts[:, None]
    return float(np.abs(own_means - means).sum() + np.abs(triangle(sum_xx / counts.sum() - second_moment)).sum())
