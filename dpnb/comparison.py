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

Each task function takes ``epsilon``, ``delta`` and a generator and returns ``{method: score}``;
a method that does not apply to a task is not in its registry. Controls bracket the methods: the
non-private computation on the same rows, and a data-free release (drawn without looking at the
data), whose score any private method should beat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

from . import datasets
from .component_analysis import DPLDAPublisher, DPPCAPublisher, laplace_identity
from .dppro import DPPro, relative_l2_error, squared_distance_estimate
from .linalg import haar_stiefel, top_eigenvectors
from .mst import MST, discretize
from .pca_gauss import PCAGauss
from .private_pca import PPCA, ModSULQ
from .ron_gauss import RONGauss
from .streams import sklearn_seed
from .validation import check_integer


# ----------------------------------------------------------------------------- Adult classification
@dataclass(frozen=True)
class AdultData:
    """Adult rows prepared once for every method (all bounds from ``Dataset.domain``).

    ``X_*``: numeric columns scaled to ``[0, 1]`` by their declared domain, then one-hot groups;
    ``codes_*``: numeric columns cut into bins of the declared domain, categorical codes, and
    the label as the last column (MST's input); ``group_sizes``: the one-hot group widths;
    ``domain_sizes``: values per column of ``codes_*``.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    codes_train: np.ndarray
    codes_test: np.ndarray
    n_numeric: int
    group_sizes: tuple
    domain_sizes: np.ndarray


def load_adult_task(n_train: int, n_test: int, *, n_bins: int = 8, random_state=None) -> AdultData:
    """Draw ``n_train + n_test`` Adult rows at random and prepare them (see :class:`AdultData`)."""
    n_train, n_test = check_integer(n_train, "n_train", 10), check_integer(n_test, "n_test", 10)
    adult = datasets.load_adult(one_hot=False, n_samples=n_train + n_test, random_state=random_state)
    low, high = adult.domain
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


def _adult_real(data, epsilon, delta, rng, n_components):
    return data.X_train, data.y_train, data.X_test


def _adult_data_free(data, epsilon, delta, rng, n_components):
    n = len(data.X_train)
    parts = [rng.random((n, data.n_numeric))] + [np.eye(s)[rng.integers(0, s, n)] for s in data.group_sizes]
    return np.hstack(parts), rng.integers(0, 2, n), data.X_test


def _adult_ron_gauss(data, epsilon, delta, rng, n_components):
    model = RONGauss(n_components, epsilon, mode="gmm", random_state=rng).fit(data.X_train, data.y_train)
    X_syn, y_syn = model.sample(len(data.X_train))
    return X_syn, y_syn, model.transform(data.X_test)


def _adult_pca_gauss(data, epsilon, delta, rng, n_components):
    basis = haar_stiefel(data.X_train.shape[1], n_components, random_state=rng)  # data-free basis
    model = PCAGauss(
        n_components, epsilon, mode="gmm", basis=basis, bounds=(0.0, 1.0), n_classes=2, random_state=rng
    ).fit(data.X_train, data.y_train)
    X_syn, y_syn = model.sample(len(data.X_train))
    return X_syn, y_syn, model.transform(data.X_test)


def _adult_dp_lda(data, epsilon, delta, rng, n_components):
    model = DPLDAPublisher(epsilon, n_classes=2, group_sizes=data.group_sizes, random_state=rng)
    X_syn, y_syn = model.fit(data.X_train, data.y_train).sample()
    return X_syn, y_syn, data.X_test


def _adult_mst(data, epsilon, delta, rng, n_components):
    model = MST(epsilon, delta, domain_sizes=data.domain_sizes, random_state=rng).fit(data.codes_train)
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
    data: AdultData, epsilon: float, delta: float, rng, *, n_components: int = 16, methods=None
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
            X_syn, y_syn, X_test = release(data, epsilon, delta, child, n_components)
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


def _subspace_methods():
    return {
        "non-private PCA": lambda X, k, e, d, rng: top_eigenvectors(X.T @ X, k)[1].T,
        "data-free control (Haar)": lambda X, k, e, d, rng: haar_stiefel(X.shape[1], k, random_state=rng).T,
        "MOD-SULQ (exact calibration)": lambda X, k, e, d, rng: ModSULQ(k, e, d, random_state=rng).fit(X).components_,
        "PPCA (exponential mechanism)": lambda X, k, e, d, rng: (
            PPCA(k, e, sampler="exact" if k == 1 else "gibbs", random_state=rng).fit(X).components_
        ),
        "Jiang DP-PCA": lambda X, k, e, d, rng: (
            DPPCAPublisher(k, e, random_state=rng).fit(X * np.sqrt(X.shape[1])).components_
        ),
    }


def subspace_quality(X, n_components: int, epsilon: float, delta: float, rng, methods=None) -> dict:
    """Captured variance of each private top-``k`` subspace of ``X`` (rows of norm <= 1).

    PPCA samples exactly for ``k = 1`` (Kent-Ganeiber-Mardia) and with a finite Gibbs chain
    otherwise (whose guarantee is weaker, see the private PCA chapter).

    Jiang's publisher takes its input in the box ``[0, 1]^d``: it is given ``X sqrt(d)``,
    which lies there for rows that were binary before the division by ``sqrt(d)``.
    """
    registry = _subspace_methods()
    names = list(registry) if methods is None else list(methods)
    children = rng.spawn(len(registry))
    return {
        name: captured_variance(X, fn(X, n_components, epsilon, delta, child))
        for child, (name, fn) in zip(children, registry.items(), strict=True)
        if name in names
    }


# ----------------------------------------------------------------------------- distance preservation
def _pairwise_squared(Z) -> np.ndarray:
    """All pairwise squared distances of the rows of ``Z``, upper triangle (DPPro's estimator with no noise)."""
    return squared_distance_estimate(Z, 0.0)[np.triu_indices(len(Z), 1)]


def relative_distance_error(true, estimate) -> float:
    """``||estimate - true||_2 / ||true||_2`` over all pairs (0: perfect; 1: as bad as answering 0).

    The square root of DPPro's eq. (12) (:func:`dpnb.dppro.relative_l2_error`), so that it reads
    on the scale of the distances.
    """
    return float(np.sqrt(relative_l2_error(true, estimate)))


def distance_preservation(X, n_components: int, epsilon: float, delta: float, rng) -> dict:
    """Relative error of all pairwise squared distances of ``X`` (binary rows, box ``[0, 1]``).

    DPPro publishes ``XR + noise`` with the whole-record sensitivity and estimates distances
    with its unbiased estimator (Theorem 3); Jiang's DP-PCA publishes each record's noisy
    projection, reconstructed; the Laplace identity query adds noise to every entry. The
    data-free control answers 0 for every pair.
    """
    true = _pairwise_squared(X)
    c_dppro, c_jiang, c_lap = rng.spawn(3)
    dppro = DPPro(n_components, epsilon, delta, neighbor="record", random_state=c_dppro).fit(X)
    jiang = DPPCAPublisher(n_components, epsilon, random_state=c_jiang).fit(X)
    noisy = laplace_identity(X, epsilon, random_state=c_lap)
    return {
        "data-free control (answer 0)": 1.0,
        "DPPro (record-level)": relative_distance_error(
            true, dppro.estimate_squared_distances()[np.triu_indices(len(X), 1)]
        ),
        "Jiang DP-PCA publishing": relative_distance_error(true, _pairwise_squared(jiang.publish())),
        "Laplace identity query": relative_distance_error(true, _pairwise_squared(noisy)),
    }
