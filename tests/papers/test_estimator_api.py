"""One contract for every dpnb estimator (scikit-learn conventions plus a privacy budget).

Each case gives an estimator with small, valid settings and data inside its public bounds.
"""

import inspect
import math

import numpy as np
import pytest
from releases import release_array
from sklearn.base import TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from dpnb.numerics.linalg import haar_stiefel
from dpnb.papers.component_analysis import DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.lda_publishing import DPLDAPublisher
from dpnb.papers.mst import MST
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import PPCA, ModSULQ
from dpnb.papers.ron_gauss import RONGauss
from dpnb.privacy.estimator import PrivateEstimator, budget_total

_rng = np.random.default_rng(0)
BOX = _rng.random((120, 6))  # [0, 1]^6
SYM = 2 * BOX - 1  # [-1, 1]^6
BALL = SYM / np.sqrt(6)  # rows of norm <= 1
LABELS = (BOX[:, 0] > 0.5).astype(int)
CODES = np.column_stack([_rng.integers(0, 3, 120), _rng.integers(0, 2, 120), LABELS])

CASES = {
    "RONGauss-unsupervised": (lambda: RONGauss(3, 1.0), SYM, None),
    "RONGauss-supervised": (lambda: RONGauss(3, 1.0, mode="supervised", label_bound=1.0), SYM, SYM[:, 0]),
    "RONGauss-gmm": (lambda: RONGauss(3, 1.0, mode="gmm"), SYM, LABELS),
    "PCAGauss-unsupervised": (lambda: PCAGauss(3, 1.0, basis=haar_stiefel(6, 3, random_state=1)), SYM, None),
    "PCAGauss-gmm": (
        lambda: PCAGauss(3, 1.0, mode="gmm", basis=haar_stiefel(6, 3, random_state=1), n_classes=2),
        SYM,
        LABELS,
    ),
    "DPPro": (lambda: DPPro(3, 1.0, 1e-5), BOX, None),
    "DPPCAPublisher": (lambda: DPPCAPublisher(2, 1.0), BOX, None),
    "DPLDAPublisher": (lambda: DPLDAPublisher(1.0, n_classes=2), BOX, LABELS),
    "ModSULQ": (lambda: ModSULQ(2, 1.0, 1e-5), BALL, None),
    "PPCA": (lambda: PPCA(1, 1.0, sampler="exact"), BALL, None),
    "MST": (lambda: MST(1.0, 1e-6, domain_sizes=[3, 2, 2]), CODES, None),
}
ids = list(CASES)


def _fit(name, **params):
    factory, X, y = CASES[name]
    est = factory().set_params(random_state=0, **params)
    return est.fit(X, y), X, y


@pytest.mark.parametrize("name", ids)
def test_is_a_private_estimator_with_get_set_params_clone_and_repr(name):
    est = CASES[name][0]()
    assert isinstance(est, PrivateEstimator)
    params = est.get_params()
    assert {"epsilon", "random_state"} <= set(params)
    twin = clone(est)
    assert twin is not est and twin.get_params().keys() == params.keys()
    for key, value in twin.get_params().items():
        assert np.array_equal(value, params[key]) if isinstance(value, np.ndarray) else value == params[key]
    assert repr(est).startswith(type(est).__name__ + "(")
    est.set_params(epsilon=2.5)
    assert est.epsilon == 2.5


@pytest.mark.parametrize("name", ids)
def test_init_only_stores(name):
    factory = CASES[name][0]
    est = factory().set_params(epsilon=-1.0, random_state="not a seed")
    assert est.epsilon == -1.0  # nothing is validated before fit


@pytest.mark.parametrize("name", ids)
def test_same_int_seed_gives_the_same_release_on_refit(name):
    est, X, y = _fit(name)
    first = release_array(est).copy()
    again = release_array(est.fit(X, y))
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, release_array(clone(est).fit(X, y)))


@pytest.mark.parametrize("name", ids)
def test_budget_adds_up_and_sensitivities_are_reported(name):
    est, X, _ = _fit(name)
    epsilon, delta = budget_total(est.budget_)
    assert epsilon == pytest.approx(est.epsilon, rel=1e-12)
    assert delta == pytest.approx(getattr(est, "delta", 0.0) if delta > 0 else 0.0, rel=1e-12)
    assert delta <= getattr(est, "delta", 0.0) * (1 + 1e-12)
    assert isinstance(est.sensitivity_, dict) and est.sensitivity_
    assert all(np.all(np.asarray(v) > 0) for v in est.sensitivity_.values())
    assert est.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("name", ids)
@pytest.mark.parametrize(
    "epsilon, error",
    [(0.0, ValueError), (-1.0, ValueError), (math.nan, ValueError), ("1", TypeError), (None, TypeError)],
)
def test_bad_epsilon_is_refused_in_fit(name, epsilon, error):
    factory, X, y = CASES[name]
    with pytest.raises(error, match="epsilon"):
        factory().set_params(epsilon=epsilon).fit(X, y)


@pytest.mark.parametrize("name", [n for n in ids if "delta" in CASES[n][0]().get_params()])
@pytest.mark.parametrize("delta, error", [(0.0, ValueError), (1.0, ValueError), ("x", TypeError)])
def test_bad_delta_is_refused_in_fit(name, delta, error):
    factory, X, y = CASES[name]
    with pytest.raises(error, match="delta"):
        factory().set_params(delta=delta).fit(X, y)


@pytest.mark.parametrize("name", ids)
def test_infinite_epsilon_is_the_noiseless_release(name):
    est, X, y = _fit(name, epsilon=np.inf)
    assert budget_total(est.budget_)[0] == np.inf
    other, _, _ = _fit(name, epsilon=np.inf)
    other.set_params(random_state=1).fit(X, y)
    if name not in ("DPPro", "RONGauss-unsupervised", "RONGauss-supervised", "RONGauss-gmm"):
        # without noise the release does not depend on the seed (DPPro and RON-Gauss still
        # draw their data-independent projection at random)
        np.testing.assert_allclose(release_array(est), release_array(other), atol=1e-9)


@pytest.mark.parametrize("name", ids)
def test_methods_check_fitted_state(name):
    est = CASES[name][0]()
    sample_args = (5,) if "n_samples" in inspect.signature(getattr(est, "sample", lambda: None)).parameters else ()
    for method, args in (("transform", (CASES[name][1],)), ("sample", sample_args)):
        if hasattr(est, method):
            with pytest.raises(NotFittedError):
                getattr(est, method)(*args)


@pytest.mark.parametrize("name", [n for n in ids if CASES[n][2] is None])
def test_unsupervised_fit_accepts_and_ignores_y(name):
    est, X, _ = _fit(name)
    with_y = clone(est).fit(X, LABELS)
    np.testing.assert_array_equal(release_array(est), release_array(with_y))


@pytest.mark.parametrize("name", ids)
def test_components_are_n_components_by_n_features(name):
    est, X, _ = _fit(name)
    if hasattr(est, "components_"):
        assert est.components_.shape == (est.n_components, X.shape[1])


@pytest.mark.parametrize("name", [n for n in ids if isinstance(CASES[n][0](), TransformerMixin)])
def test_transformers_work_inside_a_pipeline(name):
    factory, X, y = CASES[name]
    if y is not None and not np.array_equal(y, LABELS):
        pytest.skip("a supervised release with real-valued labels feeds no classifier")
    pipe = Pipeline([("release", factory().set_params(random_state=0)), ("clf", LogisticRegression(max_iter=200))]).fit(
        X, LABELS
    )
    assert pipe.predict(X).shape == (len(X),)


SAMPLE_CASES = {
    **{n: CASES[n] for n in ids if hasattr(CASES[n][0](), "sample")},
    "PCAGauss-unsupervised-own-basis": (lambda: PCAGauss(3, 1.0), SYM, None),  # Algorithm 1 proper
    "PCAGauss-supervised": (
        lambda: PCAGauss(3, 1.0, mode="supervised", basis=haar_stiefel(6, 3, random_state=1)),
        SYM,
        SYM[:, 0],
    ),
    "RONGauss-gmm-reconstruct": (lambda: RONGauss(3, 1.0, mode="gmm", reconstruct=True), SYM, LABELS),
}


@pytest.mark.parametrize("name", list(SAMPLE_CASES))
def test_sample_returns_x_or_x_and_y_as_fitted(name):
    """The one convention: ``sample(n_samples)`` returns ``X`` (n_samples rows) for an estimator fitted without
    labels, the pair ``(X, y)`` for one fitted with labels (RONGauss and PCAGauss "supervised"/"gmm",
    DPLDAPublisher always)."""
    factory, X, y = SAMPLE_CASES[name]
    est = factory().set_params(random_state=0).fit(X, y)
    out = est.sample(7)
    if y is not None:
        assert isinstance(out, tuple) and len(out) == 2
        X_syn, y_syn = out
        assert isinstance(y_syn, np.ndarray) and y_syn.shape == (7,)
    else:
        X_syn = out
    assert isinstance(X_syn, np.ndarray) and X_syn.ndim == 2 and X_syn.shape[0] == 7


def test_dp_lda_sample_defaults_to_the_released_counts():
    est, X, _ = _fit("DPLDAPublisher")
    X_syn, y_syn = est.sample()
    assert len(X_syn) == len(y_syn) == est.class_counts_.sum()
    assert np.array_equal(np.bincount(y_syn, minlength=2), est.class_counts_)


@pytest.mark.parametrize("name", ["PCAGauss-unsupervised", "PCAGauss-gmm", "ModSULQ", "PPCA", "DPPCAPublisher"])
def test_inverse_transform_maps_back_to_the_input_units(name):
    """Where the release has a public basis, ``inverse_transform(transform(X))`` is the projection of ``X`` onto
    it in the input's features (DPPCAPublisher: about its released mean)."""
    est, X, _ = _fit(name)
    Z = est.transform(X / 10)  # a row's projection then stays inside PCAGauss's public box
    back = est.inverse_transform(Z)
    assert back.shape == X.shape
    np.testing.assert_allclose(est.transform(back), Z, atol=1e-10)


# scikit-learn's generic checks feed data the DP estimators must refuse; each one that fails is
# named here with the reason, and every other check must pass.
DOMAIN = (
    "scikit-learn feeds data outside the estimator's public bounds (or with fewer features than "
    "n_components); dpnb refuses it instead of reading bounds from the data"
)
WORDING = "dpnb refuses this input with its own error message, which scikit-learn's check does not recognise"
EXPECTED_FAILURES = {
    **dict.fromkeys(
        [
            "check_dict_unchanged",
            "check_dont_overwrite_parameters",
            "check_estimators_dtypes",
            "check_estimators_pickle",
            "check_f_contiguous_array_estimator",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_pipeline_consistency",
            "check_positive_only_tag_during_fit",
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_transformer_preserve_dtypes",
            "check_estimators_nan_inf",
            "check_fit_score_takes_y",
            "check_fit2d_1feature",
            "check_fit2d_1sample",
            "check_fit_check_is_fitted",
            "check_fit_idempotent",
            "check_n_features_in",
            "check_readonly_memmap_input",
            "check_estimators_overwrite_params",
            "check_estimators_fit_returns_self",
            "check_fit1d",
        ],
        DOMAIN,
    ),
    **dict.fromkeys(
        [
            "check_complex_data",
            "check_dtype_object",
            "check_estimators_empty_data_messages",
            "check_fit2d_predict1d",
            "check_n_features_in_after_fitting",
            "check_estimator_sparse_array",
            "check_estimator_sparse_matrix",
            "check_estimator_sparse_tag",
        ],
        WORDING,
    ),
}
CORE = {
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_parameters_default_constructible",
    "check_estimator_repr",
    "check_estimators_unfitted",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_estimator_cloneable",
}


@pytest.mark.parametrize(
    "name", ["RONGauss-gmm", "PCAGauss-gmm", "DPPro", "DPPCAPublisher", "DPLDAPublisher", "ModSULQ", "PPCA", "MST"]
)
def test_scikit_learn_check_estimator(name):
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(CASES[name][0]().set_params(random_state=0), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert failed <= set(EXPECTED_FAILURES), f"unexpected failures: {sorted(failed - set(EXPECTED_FAILURES))}"
    present = CORE & {r["check_name"] for r in results}
    assert present <= passed, f"core checks failed: {sorted(present - passed)}"


@pytest.mark.parametrize(
    "call",
    [
        lambda X: MST(domain_sizes=[2] * (X.shape[1] + 1)).fit((X > 0).astype(int)),
        lambda X: MST(domain_sizes=[1] * X.shape[1]).fit((X > 0).astype(int)),
        lambda X: PCAGauss(2, 1.0).fit(2 * X),
        lambda X: PCAGauss(2, 1.0, bounds=(-np.ones(X.shape[1]), np.linspace(1, 2, X.shape[1]))).fit(3 * X),
        lambda X: DPPro(2, 1.0, 1e-5).fit(2 * X),
        lambda X: DPPCAPublisher(2, 1.0).fit(2 * X),
        lambda X: DPPro(2, 1.0, 1e-5, attribute_groups=[list(range(X.shape[1]))]).fit(np.abs(X)),
    ],
)
def test_an_error_on_784_features_is_short_and_names_the_count(call):
    """An MNIST-sized row (784 features) out of its box: the message names the first few features and the count."""
    X = np.random.default_rng(0).uniform(0.6, 1, (5, 784))  # every feature offends
    with pytest.raises(ValueError) as info:
        call(X)
    message = str(info.value)
    assert len(message) < 300 and "784" in message and "..." in message, message
