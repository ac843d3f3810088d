"""Which private release should I use? Tasks and method adapters for the comparison chapter.

Every method is run at the same ``(epsilon, delta)`` under the same neighbour relation (replace
one record, labels included) with the corrected calibrations of the paper chapters, on data
scaled with declared public bounds. Three tasks:

* :func:`adult_classification` -- train a logistic regression on each release, score it on
  real held-out rows (the releases that publish labelled records);
* :func:`subspace_quality` -- the share of the top-``k`` variance a private subspace captures
  (the releases that publish a subspace);
* :func:`distance_preservation` -- relative error of all pairwise squared distances (the
  releases that publish one noisy row per record).

* :func:`rf1_regression` -- RMSE of a ridge regression trained on each release, scored on real
  held-out RF1 rows (the releases that publish labelled records, and diffprivlib's private
  linear regression);
* :func:`mnist_clustering` -- adjusted Rand index of KMeans clusters fitted on each release,
  assigned on the real rows (the releases that publish rows, and diffprivlib's private KMeans).

Each task function takes ``epsilon``, ``delta`` and a generator and returns ``{method: score}``;
a method that does not apply to a task is not in its registry. Controls bracket the methods: the
non-private computation on the same rows, and a data-free release (drawn without looking at the
data), whose score any private method should beat.

The libraries' DP-PCA (diffprivlib's ``PCA``, OpenDP's PCA) sample eigenvectors by rejection,
at a cost that grows exponentially with ``epsilon * n``; :class:`dpnb.reporting.budget.TimeBudget` runs
each of their fits in a child process and reports :class:`Unfinished` when it does not finish in time.
"""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import adjusted_rand_score

from dpnb.ground import datasets
from dpnb.ground.streams import sklearn_seed, stream
from dpnb.ground.validation import check_integer, check_positive
from dpnb.numerics.linalg import haar_stiefel, top_eigenvectors
from dpnb.papers.component_analysis import DPPCAPublisher, laplace_identity
from dpnb.papers.dppro import DPPro, relative_l2_error, squared_distance_estimate
from dpnb.papers.lda_publishing import DPLDAPublisher
from dpnb.papers.library_samplers import bingham_parameter, library_rate_bounds, opendp_sampler
from dpnb.papers.mst import MST, discretize
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import PPCA, ModSULQ
from dpnb.papers.ron_gauss import RONGauss
from dpnb.reporting.budget import TimeBudget, Unfinished


# ----------------------------------------------------------------------------- Adult classification
@dataclass(frozen=True)
class TaskSplit:
    """Training and test rows of a labelled task, as features and as MST's integer codes."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    codes_train: np.ndarray
    codes_test: np.ndarray


@dataclass(frozen=True)
class AdultData(TaskSplit):
    """Adult rows prepared once for every method (all bounds from ``Dataset.bounds``).

    ``X_*``: numeric columns scaled to ``[0, 1]`` by their declared domain, then one-hot groups;
    ``codes_*``: numeric columns cut into bins of the declared domain, categorical codes, and
    the label as the last column (MST's input); ``group_sizes``: the one-hot group widths;
    ``domain_sizes``: values per column of ``codes_*``.
    """

    n_numeric: int
    group_sizes: tuple
    domain_sizes: np.ndarray


def load_adult_task(n_train: int, n_test: int, *, n_bins: int = 8, random_state=None) -> AdultData:
    """Draw ``n_train + n_test`` Adult rows at random and prepare them (see :class:`AdultData`)."""
    n_train, n_test = check_integer(n_train, "n_train", 10), check_integer(n_test, "n_test", 10)
    adult = datasets.load_adult(one_hot=False, n_samples=n_train + n_test, random_state=random_state)
    low, high = adult.bounds
    categorical = [adult.feature_names.index(c) for c in adult.categorical]
    numeric = [j for j in range(adult.X.shape[1]) if j not in categorical]
    unit = (adult.X[:, numeric] - low[numeric]) / (high[numeric] - low[numeric])
    sizes = [int(high[j]) + 1 for j in categorical]
    onehot = [np.eye(s)[adult.X[:, j].astype(int)] for j, s in zip(categorical, sizes, strict=True)]
    X = np.hstack([unit, *onehot])
    codes = np.column_stack([discretize(adult.X, (low, high), n_bins, categorical=categorical), adult.y])
    domain_sizes = np.array([n_bins if j in numeric else int(high[j]) + 1 for j in range(adult.X.shape[1])] + [2])
    tr, te = slice(0, n_train), slice(n_train, None)
    return AdultData(
        X[tr], adult.y[tr], X[te], adult.y[te], codes[tr], codes[te], len(numeric), tuple(sizes), domain_sizes
    )


def _onehot_codes(codes, sizes) -> np.ndarray:
    return np.hstack([np.eye(s)[codes[:, j]] for j, s in enumerate(sizes)])


def _accuracy(X_train, y_train, X_test, y_test, rng) -> float:
    y_train = np.asarray(y_train).astype(int)
    if np.unique(y_train).size < 2:  # a release with one class: the classifier predicts it
        return float(np.mean(y_test == y_train[0]))
    model = LogisticRegression(max_iter=500, random_state=sklearn_seed(rng)).fit(X_train, y_train)
    return float(model.score(X_test, y_test))


def _adult_real(data, epsilon, delta, rng, n_components, noise="float"):
    return data.X_train, data.y_train, data.X_test


def _adult_data_free(data, epsilon, delta, rng, n_components, noise="float"):
    n = len(data.X_train)
    parts = [rng.random((n, data.n_numeric))] + [np.eye(s)[rng.integers(0, s, n)] for s in data.group_sizes]
    return np.hstack(parts), rng.integers(0, 2, n), data.X_test


def _adult_ron_gauss(data, epsilon, delta, rng, n_components, noise="float"):
    model = RONGauss(n_components, epsilon, mode="gmm", noise=noise, random_state=rng).fit(data.X_train, data.y_train)
    X_syn, y_syn = model.sample(len(data.X_train))
    return X_syn, y_syn, model.transform(data.X_test)


def _adult_pca_gauss(data, epsilon, delta, rng, n_components, noise="float"):
    basis = haar_stiefel(data.X_train.shape[1], n_components, random_state=rng)  # data-free basis
    model = PCAGauss(
        n_components, epsilon, mode="gmm", basis=basis, bounds=(0.0, 1.0), n_classes=2, noise=noise, random_state=rng
    ).fit(data.X_train, data.y_train)
    X_syn, y_syn = model.sample(len(data.X_train))
    return X_syn, y_syn, model.transform(data.X_test)


def _adult_dp_lda(data, epsilon, delta, rng, n_components, noise="float"):
    model = DPLDAPublisher(epsilon, n_classes=2, group_sizes=data.group_sizes, noise=noise, random_state=rng)
    X_syn, y_syn = model.fit(data.X_train, data.y_train).sample()
    return X_syn, y_syn, data.X_test


def _adult_mst(data, epsilon, delta, rng, n_components, noise="float"):
    model = MST(epsilon, delta, domain_sizes=data.domain_sizes, noise=noise, random_state=rng).fit(data.codes_train)
    synth = model.sample(len(data.codes_train))
    sizes = data.domain_sizes[:-1]
    return _onehot_codes(synth[:, :-1], sizes), synth[:, -1], _onehot_codes(data.codes_test[:, :-1], sizes)


ADULT_METHODS = {
    "real data (non-private)": _adult_real,
    "data-free control": _adult_data_free,
    "RON-Gauss (gmm)": _adult_ron_gauss,
    "PCA-Gauss (gmm, Haar basis)": _adult_pca_gauss,
    "Jiang DP-LDA publishing": _adult_dp_lda,
    "MST (tree sampling)": _adult_mst,
}


def adult_classification(
    data: AdultData, epsilon: float, delta: float, rng, *, n_components: int = 16, methods=None, noise: str = "float"
) -> dict:
    """Test accuracy of a logistic regression trained on each method's release of ``data``.

    Parameters
    ----------
    data : AdultData
    epsilon, delta : float
        The budget every method gets (pure-epsilon methods ignore ``delta``).
    rng : numpy.random.Generator
        Drives every method; each method gets its own child generator, so adding a method does
        not change the others' results.
    n_components : int
        Projected dimension of RON-Gauss and PCA-Gauss.
    methods : sequence of str, optional
        Names from ``ADULT_METHODS`` (default: all).
    noise : {"float", "exact"}
        Passed to every dpnb estimator (``"exact"``: exact discrete noise, see dpnb.privacy.exact_noise).

    Returns
    -------
    dict
        Method name -> accuracy on ``data.X_test``.
    """
    names = list(ADULT_METHODS) if methods is None else list(methods)
    children = rng.spawn(len(ADULT_METHODS))
    out = {}
    for child, (name, release) in zip(children, ADULT_METHODS.items(), strict=True):
        if name in names:
            X_syn, y_syn, X_test = release(data, epsilon, delta, child, n_components, noise)
            out[name] = _accuracy(X_syn, y_syn, X_test, data.y_test, child)
    return out


# ----------------------------------------------------------------------------- private subspaces
def captured_variance(X, components) -> float:
    """Share of the top-``k`` variance of ``X^T X`` that the rows of ``components`` capture."""
    A = X.T @ X
    V = np.asarray(components).T
    k = V.shape[1]
    best = top_eigenvectors(A, k)[0].sum()
    return float(np.trace(V.T @ A @ V) / best)


def _subspace_methods(noise: str = "float"):
    return {
        "non-private PCA": lambda X, k, e, d, rng: top_eigenvectors(X.T @ X, k)[1].T,
        "data-free control (Haar)": lambda X, k, e, d, rng: haar_stiefel(X.shape[1], k, random_state=rng).T,
        "MOD-SULQ (exact calibration)": lambda X, k, e, d, rng: (
            ModSULQ(k, e, d, noise=noise, random_state=rng).fit(X).components_
        ),
        "PPCA (exponential mechanism)": lambda X, k, e, d, rng: (
            PPCA(k, e, sampler="exact" if k == 1 else "gibbs", random_state=rng).fit(X).components_
        ),
        "Jiang DP-PCA": lambda X, k, e, d, rng: (
            DPPCAPublisher(k, e, noise=noise, random_state=rng).fit(X * np.sqrt(X.shape[1])).components_
        ),
    }


def diffprivlib_pca(X, n_components: int, epsilon: float, rng) -> np.ndarray:
    """diffprivlib 0.6.6's ``PCA`` on rows of norm <= 1 about the public origin; its ``components_``.

    ``centered=True`` (the origin is public, as for every method here) spends all of ``epsilon``
    on the eigenvalues and the Bingham eigenvector draws, with ``data_norm=1``.
    """
    from diffprivlib.models import PCA

    model = PCA(n_components, epsilon=epsilon, data_norm=1.0, centered=True, random_state=sklearn_seed(rng))
    return model.fit(X).components_


def opendp_pca(X, n_components: int, epsilon: float, rng) -> np.ndarray:
    """OpenDP 0.16.0's PCA with a public origin, ``k = 1``: its eigenvector measurement at ``epsilon / 2``.

    With a known origin OpenDP's ``make_private_pca`` splits ``epsilon`` evenly between the
    eigenvalues and the eigenvectors; the direction is the eigenvector measurement's draw on
    ``X^T X`` (:func:`dpnb.papers.library_samplers.opendp_sampler`, seeded). The eigenvalues do not
    change the direction and are not drawn.
    """
    if n_components != 1:
        raise ValueError("the OpenDP adapter releases the top direction only (n_components=1)")
    return opendp_sampler(X.shape[1], epsilon / 2, random_state=rng)(X.T @ X)[None, :]


PEER_SUBSPACES = {"diffprivlib PCA": diffprivlib_pca, "OpenDP PCA": opendp_pca}


MULTIPLY_ADDS_PER_SECOND = 1e11
"""A ceiling on one CPU core's multiply-adds per second (above the peak of current cores, 2 x 8 doubles x 5 GHz)."""


def peer_proposals(X, epsilon: float) -> tuple[float, float]:
    """``log10`` bounds on the expected proposals per draw of the libraries' sampler in their ``k = 1`` fit.

    diffprivlib's ``PCA(centered=True)`` and OpenDP's PCA with a public origin both draw the top
    direction with the Bingham sampler at ``epsilon / 2`` on ``C = X^T X`` (sensitivity 1); one draw
    takes ``1 / r`` proposals in expectation, ``r`` the acceptance rate of the libraries' rule,
    bounded by :func:`dpnb.papers.library_samplers.library_rate_bounds`. Machine-free: the cost of a fit
    in proposals, whatever the CPU.

    Returns
    -------
    low, high : float
        ``log10`` of a lower and an upper bound on the expected proposals per draw.

    Examples
    --------
    >>> low, high = peer_proposals(np.eye(3)[[0, 0, 1]], 1.0)
    >>> bool(0 <= low <= high)
    True
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (rows, features), got shape {X.shape}")
    log_low, log_high = library_rate_bounds(bingham_parameter(X.T @ X, epsilon / 2))
    return float(-log_high / np.log(10)), float(-log_low / np.log(10))


def proposal_ceiling(seconds: float, n_features: int) -> float:
    """The most proposals one core can make in ``seconds`` of CPU time at dimension ``n_features``.

    Each proposal evaluates at least one quadratic form ``u^T A u`` (``d^2`` multiply-adds; both libraries
    evaluate two, and draw a Gaussian vector besides), so at most ``seconds * MULTIPLY_ADDS_PER_SECOND / d^2``
    proposals fit in the budget on any machine: a draw that needs more in expectation cannot finish in it.

    Examples
    --------
    >>> f"{proposal_ceiling(5.0, 180):.1e}"
    '1.5e+07'
    """
    seconds = check_positive(seconds, "seconds")
    d = check_integer(n_features, "n_features", minimum=2)
    return seconds * MULTIPLY_ADDS_PER_SECOND / d**2


PEER_MODULES = ("diffprivlib.models", "opendp.prelude", "opendp.extras.sklearn._make_eigenvector")
"""What the libraries' fits import: imported by a budgeted child before its budget starts."""


def subspace_quality(
    X,
    n_components: int,
    epsilon: float,
    delta: float,
    rng,
    methods=None,
    budget: TimeBudget | None = None,
    noise: str = "float",
) -> dict:
    """Captured variance of each private top-``k`` subspace of ``X`` (rows of norm <= 1).

    PPCA samples exactly for ``k = 1`` (Kent-Ganeiber-Mardia) and with a finite Gibbs chain
    otherwise (whose guarantee is weaker, see the private PCA chapter).

    Jiang's publisher takes its input in the box ``[0, 1]^d``: it is given ``X sqrt(d)``,
    which lies there for rows that were binary before the division by ``sqrt(d)``.

    With a ``budget``, the libraries' DP-PCA (``PEER_SUBSPACES``) run under it; their score is
    an :class:`Unfinished` where a fit gave no result. ``noise`` reaches the dpnb estimators that add
    noise (MOD-SULQ, Jiang's DP-PCA).
    """
    registry = _subspace_methods(noise)
    names = list(registry) + list(PEER_SUBSPACES) if methods is None else list(methods)
    children = rng.spawn(len(registry) + len(PEER_SUBSPACES))
    out = {
        name: captured_variance(X, fn(X, n_components, epsilon, delta, child))
        for child, (name, fn) in zip(children, registry.items(), strict=False)
        if name in names
    }
    for child, (name, fn) in zip(children[len(registry) :], PEER_SUBSPACES.items(), strict=True):
        if budget is not None and name in names:
            V = budget.run(name, len(X), epsilon, fn, X, n_components, epsilon, child, preload=PEER_MODULES)
            out[name] = V if isinstance(V, Unfinished) else captured_variance(X, V)
    return out


# ----------------------------------------------------------------------------- distance preservation
def _pairwise_squared(Z) -> np.ndarray:
    """All pairwise squared distances of the rows of ``Z``, upper triangle (DPPro's estimator with no noise)."""
    return squared_distance_estimate(Z, 0.0)[np.triu_indices(len(Z), 1)]


def relative_distance_error(true, estimate) -> float:
    """``||estimate - true||_2 / ||true||_2`` over all pairs (0: perfect; 1: as bad as answering 0).

    The square root of DPPro's eq. (12) (:func:`dpnb.papers.dppro.relative_l2_error`), so that it reads
    on the scale of the distances.
    """
    return float(np.sqrt(relative_l2_error(true, estimate)))


def distance_preservation(X, n_components: int, epsilon: float, delta: float, rng, *, noise: str = "float") -> dict:
    """Relative error of all pairwise squared distances of ``X`` (binary rows, box ``[0, 1]``).

    DPPro publishes ``XR + noise`` with the whole-record sensitivity and estimates distances
    with its unbiased estimator (Theorem 3); Jiang's DP-PCA publishes each record's noisy
    projection, reconstructed; the Laplace identity query adds noise to every entry. The
    data-free control answers 0 for every pair. ``noise`` reaches all three releases.
    """
    true = _pairwise_squared(X)
    c_dppro, c_jiang, c_lap = rng.spawn(3)
    dppro = DPPro(n_components, epsilon, delta, neighbours="replace-row", noise=noise, random_state=c_dppro).fit(X)
    jiang = DPPCAPublisher(n_components, epsilon, noise=noise, random_state=c_jiang).fit(X)
    noisy = laplace_identity(X, epsilon, random_state=c_lap, noise=noise)
    return {
        "data-free control (answer 0)": 1.0,
        "DPPro (record-level)": relative_distance_error(
            true, dppro.estimate_squared_distances()[np.triu_indices(len(X), 1)]
        ),
        "Jiang DP-PCA publishing": relative_distance_error(true, _pairwise_squared(jiang.publish())),
        "Laplace identity query": relative_distance_error(true, _pairwise_squared(noisy)),
    }


# ----------------------------------------------------------------------------- RF1 regression
@dataclass(frozen=True)
class RegressionData(TaskSplit):
    """RF1 rows prepared once for every method (bounds from ``bounds`` and ``target_bounds``).

    ``X_*`` and ``y_*`` are scaled to ``[-1, 1]`` by the declared domains (the public origin is
    the domains' midpoint); ``codes_*`` cut features and target into bins of those domains, the
    target last (MST's input); ``y_half_range`` converts errors back to the target's units.
    """

    domain_sizes: np.ndarray
    y_half_range: float


def _to_unit_box(values, low, high) -> np.ndarray:
    return np.clip((2.0 * values - (low + high)) / (high - low), -1.0, 1.0)


def load_rf1_task(n_train: int, n_test: int, *, n_bins: int = 8, random_state=None) -> RegressionData:
    """Draw ``n_train + n_test`` RF1 rows at random and prepare them (see :class:`RegressionData`)."""
    n_train, n_test = check_integer(n_train, "n_train", 10), check_integer(n_test, "n_test", 10)
    rf1 = datasets.load_rf1(n_samples=n_train + n_test, random_state=random_state)
    (low, high), (y_low, y_high) = rf1.bounds, rf1.target_bounds
    X = _to_unit_box(rf1.X, low, high)
    y = _to_unit_box(rf1.y, y_low[0], y_high[0])
    box = (np.full(X.shape[1] + 1, -1.0), np.ones(X.shape[1] + 1))
    codes = discretize(np.column_stack([X, y]), box, n_bins)
    sizes = np.full(X.shape[1] + 1, n_bins)
    tr, te = slice(0, n_train), slice(n_train, None)
    return RegressionData(X[tr], y[tr], X[te], y[te], codes[tr], codes[te], sizes, float(y_high[0] - y_low[0]) / 2)


def _rmse(X_train, y_train, X_test, y_test) -> float:
    prediction = Ridge(alpha=1.0).fit(X_train, y_train).predict(X_test)
    return float(np.sqrt(np.mean((np.clip(prediction, -1.0, 1.0) - y_test) ** 2)))


def _rf1_ron_gauss(data, epsilon, delta, rng, n_components, noise="float"):
    model = RONGauss(n_components, epsilon, mode="supervised", label_bound=1.0, noise=noise, random_state=rng)
    X_syn, y_syn = model.fit(data.X_train, data.y_train).sample(len(data.X_train))
    return _rmse(X_syn, y_syn, model.transform(data.X_test), data.y_test)


def _rf1_pca_gauss(data, epsilon, delta, rng, n_components, noise="float"):
    basis = haar_stiefel(data.X_train.shape[1], n_components, random_state=rng)  # data-free basis
    model = PCAGauss(
        n_components, epsilon, mode="supervised", basis=basis, bounds=(-1.0, 1.0), noise=noise, random_state=rng
    )
    X_syn, y_syn = model.fit(data.X_train, data.y_train).sample(len(data.X_train))
    return _rmse(X_syn, y_syn, model.transform(data.X_test), data.y_test)


def _rf1_diffprivlib(data, epsilon, delta, rng, n_components, noise="float"):
    from diffprivlib.models import LinearRegression

    model = LinearRegression(
        epsilon=epsilon, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), random_state=sklearn_seed(rng)
    ).fit(data.X_train, data.y_train)
    return float(np.sqrt(np.mean((np.clip(model.predict(data.X_test), -1.0, 1.0) - data.y_test) ** 2)))


def _rf1_mst(data, epsilon, delta, rng, n_components, noise="float"):
    model = MST(epsilon, delta, domain_sizes=data.domain_sizes, noise=noise, random_state=rng).fit(data.codes_train)
    synth = model.sample(len(data.codes_train))
    centres = (np.arange(data.domain_sizes[-1]) + 0.5) * 2.0 / data.domain_sizes[-1] - 1.0
    sizes = data.domain_sizes[:-1]
    return _rmse(
        _onehot_codes(synth[:, :-1], sizes),
        centres[synth[:, -1]],
        _onehot_codes(data.codes_test[:, :-1], sizes),
        data.y_test,
    )


RF1_METHODS = {
    "real data (non-private)": lambda data, e, d, rng, k, noise="float": _rmse(
        data.X_train, data.y_train, data.X_test, data.y_test
    ),
    "data-free control (midpoint)": lambda data, e, d, rng, k, noise="float": float(np.sqrt(np.mean(data.y_test**2))),
    "RON-Gauss (supervised)": _rf1_ron_gauss,
    "PCA-Gauss (supervised, Haar basis)": _rf1_pca_gauss,
    "MST (tree sampling)": _rf1_mst,
    "diffprivlib LinearRegression": _rf1_diffprivlib,
}


def rf1_regression(
    data: RegressionData, epsilon: float, delta: float, rng, *, n_components: int = 16, noise: str = "float"
) -> dict:
    """RMSE (target units) on real held-out rows of a ridge regression trained on each release.

    The parameters are those of :func:`adult_classification`, with ``data`` a
    :class:`RegressionData` and every method in ``RF1_METHODS`` run (``noise`` reaches the dpnb estimators).

    Returns
    -------
    dict
        Method name -> RMSE in the target's units (predictions clipped to the public target
        domain). The data-free control predicts the domain's midpoint.
    """
    children = rng.spawn(len(RF1_METHODS))
    return {
        name: data.y_half_range * release(data, epsilon, delta, child, n_components, noise)
        for child, (name, release) in zip(children, RF1_METHODS.items(), strict=True)
    }


# ----------------------------------------------------------------------------- MNIST clustering
def load_mnist_task(n_rows: int, *, pool: int = 1, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """``n_rows`` MNIST-subset images, pixels divided by the public maximum 255, and their digits.

    ``pool > 1`` averages ``pool x pool`` pixel blocks (a data-independent map; 28 must be a
    multiple of ``pool``), e.g. 2 gives 196 features in ``[0, 1]``.
    """
    pool = check_integer(pool, "pool")
    if 28 % pool:
        raise ValueError(f"pool must divide 28, got {pool}")
    mnist = datasets.load_mnist_subset(n_samples=check_integer(n_rows, "n_rows", 10), random_state=random_state)
    images = mnist.X.reshape(-1, 28 // pool, pool, 28 // pool, pool) / mnist.bounds[1].max()
    return images.mean(axis=(2, 4)).reshape(len(mnist.X), -1), mnist.y


def _assign(centres, X) -> np.ndarray:
    """Index of the nearest centre for every row of ``X``."""
    squared = (X**2).sum(axis=1)[:, None] - 2 * X @ centres.T + (centres**2).sum(axis=1)[None, :]
    return np.argmin(squared, axis=1)


def _kmeans_centres(Z, n_clusters, rng) -> np.ndarray:
    return KMeans(n_clusters, n_init=1, random_state=sklearn_seed(rng)).fit(Z).cluster_centers_


def _mnist_real(X, y, epsilon, delta, rng, k, noise="float"):
    return _assign(_kmeans_centres(X, 10, rng), X)


def _mnist_data_free(X, y, epsilon, delta, rng, k, noise="float"):
    return _assign(rng.random((10, X.shape[1])), X)


def _mnist_dppro(X, y, epsilon, delta, rng, k, noise="float"):
    model = DPPro(k, epsilon, delta, neighbours="replace-row", noise=noise, random_state=rng).fit(X)
    return _assign(_kmeans_centres(model.embedding_, 10, rng), model.transform(X))


def _mnist_jiang(X, y, epsilon, delta, rng, k, noise="float"):
    return _assign(
        _kmeans_centres(DPPCAPublisher(k, epsilon, noise=noise, random_state=rng).fit(X).publish(), 10, rng), X
    )


def _mnist_ron_gauss(X, y, epsilon, delta, rng, k, noise="float"):
    model = RONGauss(k, epsilon, mode="gmm", noise=noise, random_state=rng).fit(X, y)
    return _assign(_kmeans_centres(model.sample(len(X))[0], 10, rng), model.transform(X))


def _mnist_diffprivlib(X, y, epsilon, delta, rng, k, noise="float"):
    from diffprivlib.models import KMeans as PrivateKMeans

    model = PrivateKMeans(10, epsilon=epsilon, bounds=(0.0, 1.0), random_state=sklearn_seed(rng)).fit(X)
    return _assign(model.cluster_centers_, X)


MNIST_METHODS = {
    "real data (non-private)": _mnist_real,
    "data-free control (random centres)": _mnist_data_free,
    "DPPro (record-level)": _mnist_dppro,
    "Jiang DP-PCA publishing": _mnist_jiang,
    "RON-Gauss (gmm, uses the labels)": _mnist_ron_gauss,
    "diffprivlib KMeans": _mnist_diffprivlib,
}


def mnist_clustering(X, y, epsilon: float, delta: float, rng, *, n_components: int = 16, noise: str = "float") -> dict:
    """Adjusted Rand index against the digit labels of 10 clusters fitted on each release.

    KMeans (one initialisation) is fitted on each method's release and the real rows ``X`` (pixels
    scaled by the public 255 to ``[0, 1]``) are assigned to its nearest centre, in the space
    the release lives in (DPPro's and RON-Gauss's public projections). The data-free control
    draws 10 centres uniformly in the box. ``noise`` reaches the dpnb estimators.
    """
    children = rng.spawn(len(MNIST_METHODS))
    return {
        name: float(adjusted_rand_score(y, release(X, y, epsilon, delta, child, n_components, noise)))
        for child, (name, release) in zip(children, MNIST_METHODS.items(), strict=True)
    }


# ----------------------------------------------------------------------------- the trial grid, here or on a sweep
@functools.lru_cache(maxsize=4)
def _experiment_data(experiment: str, seed: int, n_rows: int, n_test: int, pool: int):
    """The rows of one experiment, drawn from their own stream of ``seed`` (kept per process)."""
    if experiment == "adult":
        return load_adult_task(n_rows, n_test, random_state=stream(seed, "adult-rows"))
    if experiment == "rf1":
        return load_rf1_task(n_rows, n_test, random_state=stream(seed, "rf1-rows"))
    if experiment == "mnist":
        return load_mnist_task(n_rows, pool=pool, random_state=stream(seed, "mnist-rows"))
    return datasets.load_dna(n_samples=n_rows, random_state=stream(seed, "dna-distance-rows")).X


EXPERIMENTS = ("adult", "rf1", "mnist", "distances")


def trial(
    experiment: str,
    epsilons: list,
    epsilon_index: int,
    repetition: int,
    delta: float,
    n_components: int,
    n_rows: int,
    seed: int,
    n_test: int = 0,
    pool: int = 1,
) -> dict:
    """One point of the comparison's trial grid: every method of ``experiment`` at one budget and repetition.

    A sweep task (``dpnb.chapters.comparison:trial``): the rows are drawn from the
    stream ``(seed, "<experiment>-rows")`` (``"dna-distance-rows"`` for the distances), the
    methods from the stream ``(seed, (experiment, epsilon_index, repetition))``, so a point gives
    the same scores wherever it runs.

    Parameters
    ----------
    experiment : {"adult", "rf1", "mnist", "distances"}
        :func:`adult_classification`, :func:`rf1_regression`, :func:`mnist_clustering` or
        :func:`distance_preservation`.
    epsilons : list of float
        The budgets of the grid; this point runs ``epsilons[epsilon_index]``.
    epsilon_index, repetition : int
        The point's budget (index into ``epsilons``) and repetition.
    delta : float
    n_components : int
        Projected dimension of the methods that take one.
    n_rows : int
        Rows each release is computed from (for MNIST also scored on).
    seed : int
        Root of the point's streams.
    n_test : int
        Real held-out rows the Adult and RF1 models are scored on.
    pool : int
        MNIST pixel-block side (see :func:`load_mnist_task`).

    Returns
    -------
    dict
        Method name -> score.
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {', '.join(EXPERIMENTS)}, got {experiment!r}")
    epsilon = float(epsilons[check_integer(epsilon_index, "epsilon_index", minimum=0)])
    data = _experiment_data(experiment, seed, n_rows, n_test, pool)
    rng = stream(seed, (experiment, epsilon_index, repetition))
    if experiment == "adult":
        return adult_classification(data, epsilon, delta, rng, n_components=n_components)
    if experiment == "rf1":
        return rf1_regression(data, epsilon, delta, rng, n_components=n_components)
    if experiment == "mnist":
        return mnist_clustering(*data, epsilon, delta, rng, n_components=n_components)
    return distance_preservation(data, n_components, epsilon, delta, rng)


def run_grid(experiment, epsilons, n_repetitions: int, seed: int, *, sweep=None, **options) -> dict:
    """Scores of every method at every budget and repetition: ``{method: {epsilon: [score, ...]}}``.

    Parameters
    ----------
    experiment : str or callable
        A name of ``EXPERIMENTS``, run as :func:`trial` points (with ``options``: ``delta``,
        ``n_components``, ``n_rows``, ``n_test``, ``pool``); or a function ``(epsilon, rng) ->
        {method: score}``, run in this process with ``rng = stream(seed, (key, i, s))``, ``key``
        given in ``options``.
    epsilons : list of float
    n_repetitions : int
        Repetitions per budget.
    seed : int
    sweep : None or dict
        None runs the points here, one after another. A dict runs a named experiment's points as
        sweep tasks (``dpnb.chapters.comparison:trial``) by ``sweep["runner"]``, a function
        ``(task, grid, seeds, output, **options) -> records`` such as the tools' Dask sweep
        :func:`dpnb.tools.sweep.sweep_records` (the caller passes it: nothing here imports a tool),
        with the dict's other entries as its keyword arguments (``output`` required; ``scheduler``,
        ``n_workers``, ``processes``); the folder is emptied first, so the scores are those of the
        code that runs now. The scores are the same either way.

    Raises
    ------
    RuntimeError
        A point of the sweep failed (the message gives its parameters and error).
    """
    epsilons = [float(e) for e in epsilons]
    n_repetitions = check_integer(n_repetitions, "n_repetitions")
    points = [(i, s) for i in range(len(epsilons)) for s in range(n_repetitions)]
    if callable(experiment):
        if set(options) != {"key"}:
            raise TypeError(f"a callable experiment takes only the stream key, key=..., got {sorted(options)}")
        key = options["key"]
        results = [experiment(epsilons[i], stream(seed, (key, i, s))) for i, s in points]
    elif sweep is None:
        results = [trial(experiment, epsilons, i, s, seed=seed, **options) for i, s in points]
    else:
        results = _swept(experiment, epsilons, n_repetitions, seed, sweep, options)
    scores: dict = {}
    for (i, _), result in zip(points, results, strict=True):
        for method, value in result.items():
            scores.setdefault(method, {}).setdefault(epsilons[i], []).append(value)
    return scores


def _swept(experiment, epsilons, n_repetitions, seed, sweep, options) -> list[dict]:
    """The points of :func:`run_grid` as sweep tasks; their scores in the grid's order.

    ``sweep["runner"]`` returns one record per grid point in grid order (a dict with ``params``,
    ``status``, ``error`` and ``metrics``): this module names a task, the caller's runner runs it.
    """
    sweep = dict(sweep)
    runner = sweep.pop("runner", None)
    if not callable(runner):
        raise ValueError("sweep needs a 'runner', e.g. sweep={'runner': dpnb.tools.sweep.sweep_records, 'output': ...}")
    if "output" not in sweep:
        raise ValueError("sweep needs an 'output' folder for the points' records")
    output = Path(sweep.pop("output"))
    shutil.rmtree(output, ignore_errors=True)
    grid = {
        "experiment": [experiment],
        "epsilons": [list(epsilons)],
        "epsilon_index": list(range(len(epsilons))),
        "repetition": list(range(n_repetitions)),
        **{name: [value] for name, value in options.items()},
    }
    records = runner(f"{__name__}:trial", grid, [seed], output, progress=False, **sweep)
    failed = [r for r in records if r["status"] != "ok"]
    if failed:
        params = failed[0]["params"]
        raise RuntimeError(
            f"{len(failed)} point(s) of the {experiment} sweep failed, e.g. epsilon index "
            f"{params['epsilon_index']}, repetition {params['repetition']}: {failed[0]['error']}"
        )
    return [record["metrics"] for record in records]  # grid order: epsilon index, then repetition
