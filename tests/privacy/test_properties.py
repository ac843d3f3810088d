"""Privacy and robustness properties of every public release: estimators and release functions.

Each entry point (:data:`ENTRIES`) declares its public domain (a box, the unit ball, integer codes
or one-hot rows), whether data outside it is refused or clipped, and how to call it with a seed.
Every property runs over every entry with inputs drawn by hypothesis:

* same seed, same release; the release is finite;
* data outside the public domain is refused (ValueError), or, where the docstring says it clips,
  the release equals that of the clipped data (same seed);
* NaN/inf, wrong shapes refused with ValueError; sparse, text and complex input with TypeError;
* bad bounds ((-inf, inf), NaN, low >= high) refused with a ValueError naming ``bounds``;
* ``random_state=-1`` a ValueError, ``"x"`` a TypeError, both naming ``random_state``;
* neighbouring inputs (one row, and its label, replaced inside the domain) succeed or fail alike;
* no state outlives a call: a refit on a neighbour equals a fresh fit on it, and no module-level
  container grows with a call;
* a failed fit (bad data, or bad parameters after ``set_params``) leaves ``vars(est)`` unchanged;
* extreme but valid parameters (epsilon 1e-300 ... 1e300, bounds +-1e308, entries near 1e154)
  give a finite release or one ValueError naming the parameter.

``make test`` runs them derandomised with a small budget (profile ``ci``); ``make fuzz`` with a
large one (profile ``fuzz``) and prints, per entry point, the cases tried and the failures.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from releases import release_array

import dpnb
from dpnb.ground import datasets
from dpnb.numerics.linalg import haar_stiefel
from dpnb.papers import component_analysis, dppro, library_samplers, mst, pca_gauss, private_pca, ron_gauss
from dpnb.papers.component_analysis import DPLDAPublisher, DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.mst import MST
from dpnb.papers.pca_gauss import PCAGauss
from dpnb.papers.private_pca import PPCA, ModSULQ
from dpnb.papers.ron_gauss import RONGauss
from dpnb.privacy import mechanisms

_COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile("ci", derandomize=True, max_examples=12, **_COMMON)
settings.register_profile(
    "fuzz", derandomize=False, max_examples=int(os.environ.get("DPNB_FUZZ_EXAMPLES", 60)), **_COMMON
)
settings.load_profile(os.environ.get("DPNB_HYPOTHESIS_PROFILE", "ci"))

# -------------------------------------------------------------------------------------------
# Counting the generated cases (make fuzz prints the table)
# -------------------------------------------------------------------------------------------
TALLY: dict = defaultdict(lambda: [0, 0])  # (entry, property) -> [cases, failures]


def _counted(entry: str, prop: str, body: Callable) -> None:
    TALLY[entry, prop][0] += 1
    try:
        body()
    except BaseException:
        TALLY[entry, prop][1] += 1
        raise


@pytest.fixture(scope="module", autouse=True)
def _write_tally():
    yield
    out = os.environ.get("DPNB_FUZZ_REPORT")
    if out:
        os.makedirs(out, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        rows = [{"entry": e, "property": p, "cases": c, "failures": f} for (e, p), (c, f) in TALLY.items()]
        with open(os.path.join(out, f"tally-{worker}-{os.getpid()}.json"), "w") as fh:
            json.dump(rows, fh)


# -------------------------------------------------------------------------------------------
# Entry points
# -------------------------------------------------------------------------------------------
@dataclass
class Entry:
    """One public entry point.

    ``domain``: "box" (``bounds``), "ball" (rows of L2 norm <= 1), "codes" (integers below
    ``sizes``) or "free" (any finite data). ``run(X, y, seed, **overrides)`` returns the release as
    a float array; ``estimator`` builds the estimator (None for a function). ``outside``: "refuse"
    or "clip". ``labels``: number of classes (0: no labels, -1: real labels in [-1, 1]).
    """

    name: str
    domain: str
    run: Callable
    bounds: tuple = (0.0, 1.0)
    outside: str = "refuse"
    labels: int = 0
    estimator: Callable | None = None
    has_bounds_param: bool = False
    n_features: tuple = (2, 5)
    extreme: dict = field(default_factory=dict)


def _est_entry(name, domain, factory, *, labels=0, bounds=(0.0, 1.0), has_bounds_param=False, outside="refuse", **kw):
    def run(X, y, seed, **params):
        est = factory(X.shape[1]).set_params(random_state=seed, **params)
        est.fit(X, y)
        out = release_array(est)
        if hasattr(est, "sample"):
            drawn = est.sample(4) if name != "DPLDAPublisher" else est.sample()
            drawn = drawn[0] if isinstance(drawn, tuple) else drawn
            out = np.concatenate([out.ravel(), np.asarray(drawn, dtype=float).ravel()])
        return out

    return Entry(
        name,
        domain,
        run,
        bounds=bounds,
        labels=labels,
        estimator=factory,
        has_bounds_param=has_bounds_param,
        outside=outside,
        **kw,
    )


def _basis(d, k=2):
    return haar_stiefel(d, k, random_state=1)


def _fn(name, domain, call, **kw):
    return Entry(name, domain, lambda X, y, seed, **p: np.asarray(call(X, y, seed, **p), dtype=float), **kw)


ENTRIES = [
    # estimators
    _est_entry("RONGauss", "free", lambda d: RONGauss(2, 1.0)),
    _est_entry(
        "RONGauss-supervised", "free", lambda d: RONGauss(2, 1.0, mode="supervised", label_bound=1.0), labels=-1
    ),
    _est_entry("RONGauss-gmm", "free", lambda d: RONGauss(2, 1.0, mode="gmm"), labels=2),
    _est_entry(
        "PCAGauss-alg1",
        "box",
        lambda d: PCAGauss(2, 1.0),
        bounds=(-1.0, 1.0),
        has_bounds_param=True,
    ),
    _est_entry(
        "PCAGauss-basis",
        "box",
        lambda d: PCAGauss(2, 1.0, basis=_basis(d)),
        bounds=(-1.0, 1.0),
        has_bounds_param=True,
    ),
    _est_entry(
        "PCAGauss-supervised",
        "box",
        lambda d: PCAGauss(2, 1.0, mode="supervised", basis=_basis(d)),
        bounds=(-1.0, 1.0),
        has_bounds_param=True,
        labels=-1,
    ),
    _est_entry(
        "PCAGauss-gmm",
        "box",
        lambda d: PCAGauss(2, 1.0, mode="gmm", basis=_basis(d), n_classes=2),
        bounds=(-1.0, 1.0),
        has_bounds_param=True,
        labels=2,
    ),
    _est_entry("DPPro", "box", lambda d: DPPro(2, 1.0, 1e-5), has_bounds_param=True),
    _est_entry("DPPCAPublisher", "box", lambda d: DPPCAPublisher(2, 1.0)),
    _est_entry("DPLDAPublisher", "box", lambda d: DPLDAPublisher(1.0, n_classes=2), labels=2),
    _est_entry("ModSULQ", "ball", lambda d: ModSULQ(1, 1.0, 1e-5)),
    _est_entry("PPCA", "ball", lambda d: PPCA(1, 1.0, sampler="exact")),
    _est_entry("MST", "codes", lambda d: MST(1.0, 1e-6, domain_sizes=[3] * d)),
    # exact noise (dpnb.privacy.exact_noise): the Laplace, Gaussian-at-sigma and integer paths
    _est_entry("RONGauss-gmm-exact", "free", lambda d: RONGauss(2, 1.0, mode="gmm", noise="exact"), labels=2),
    _est_entry("DPPro-exact", "box", lambda d: DPPro(2, 1.0, 1e-5, noise="exact"), has_bounds_param=True),
    _est_entry("DPPCAPublisher-exact", "box", lambda d: DPPCAPublisher(2, 1.0, noise="exact")),
    _est_entry("MST-exact", "codes", lambda d: MST(1.0, 1e-6, domain_sizes=[3] * d, noise="exact")),
    # release functions
    _fn(
        "laplace_mechanism",
        "free",
        lambda X, y, s, epsilon=1.0: mechanisms.laplace_mechanism(X, 1.0, epsilon, random_state=s),
    ),
    _fn(
        "gaussian_mechanism",
        "free",
        lambda X, y, s, epsilon=1.0: mechanisms.gaussian_mechanism(X, 1.0, epsilon, 1e-5, random_state=s),
    ),
    _fn(
        "symmetric_laplace_mechanism",
        "free",
        lambda X, y, s, epsilon=1.0: mechanisms.symmetric_laplace_mechanism(X.T @ X, 1.0, epsilon, random_state=s),
    ),
    _fn(
        "symmetric_gaussian_mechanism",
        "free",
        lambda X, y, s, epsilon=1.0: mechanisms.symmetric_gaussian_mechanism(
            X.T @ X, 1.0, epsilon, 1e-5, random_state=s
        ),
    ),
    _fn(
        "lap_pca",
        "box",
        lambda X, y, s, epsilon=1.0, bounds=(-1.0, 1.0): pca_gauss.lap_pca(
            X, 1, epsilon, bounds=bounds, random_state=s
        ),
        bounds=(-1.0, 1.0),
        has_bounds_param=True,
    ),
    _fn(
        "analyze_gauss_pca",
        "ball",
        lambda X, y, s, epsilon=1.0: pca_gauss.analyze_gauss_pca(X, 1, epsilon, 1e-5, random_state=s),
    ),
    _fn(
        "bernoulli_identity",
        "ball",
        lambda X, y, s, epsilon=1.0: ron_gauss.bernoulli_identity(X, 1, epsilon, random_state=s)[0],
    ),
    _fn("pca_identity", "ball", lambda X, y, s, epsilon=1.0: ron_gauss.pca_identity(X, 1, epsilon, random_state=s)[0]),
    _fn(
        "laplace_identity",
        "box",
        lambda X, y, s, epsilon=1.0: component_analysis.laplace_identity(X, epsilon, random_state=s),
    ),
    _fn(
        "split_laplace",
        "box",
        lambda X, y, s, epsilon=1.0, bounds=(0.0, 1.0): component_analysis.split_laplace(
            X, epsilon, bounds, random_state=s
        ),
        has_bounds_param=True,
    ),
    _fn(
        "component_laplace",
        "box",
        lambda X, y, s, epsilon=1.0, bounds=(0.0, 1.0): component_analysis.component_laplace(
            X, epsilon, np.eye(X.shape[1])[0], np.zeros(X.shape[1]), bounds, random_state=s
        ),
        has_bounds_param=True,
    ),
    _fn("mod_sulq", "ball", lambda X, y, s, epsilon=1.0: private_pca.mod_sulq(X, 1, epsilon, 1e-5, random_state=s)),
    _fn("ppca", "ball", lambda X, y, s, epsilon=1.0: private_pca.ppca(X, 1, epsilon, sampler="exact", random_state=s)),
    _fn(
        "bingham_mechanism",
        "ball",
        lambda X, y, s, epsilon=1.0: library_samplers.bingham_mechanism(X.T @ X, epsilon, random_state=s),
    ),
    _fn(
        "discretize",
        "box",
        lambda X, y, s, bounds=(0.0, 1.0): mst.discretize(X, bounds, 4),
        outside="clip",
        has_bounds_param=True,
    ),
    _fn(
        "scale_to_box",
        "box",
        lambda X, y, s, bounds=(0.0, 1.0): datasets.scale_to_box(X, bounds),
        outside="clip",
        has_bounds_param=True,
    ),
    _fn("normalize_rows", "ball", lambda X, y, s: datasets.normalize_rows(X), outside="clip"),
]
BY_NAME = {e.name: e for e in ENTRIES}
NAMES = list(BY_NAME)
ESTIMATORS = [e.name for e in ENTRIES if e.estimator is not None]
SEEDED = [e.name for e in ENTRIES if e.name not in ("discretize", "scale_to_box", "normalize_rows")]
EPSILON = [e.name for e in ENTRIES if e.estimator is not None or "epsilon" in e.run.__code__.co_varnames]


# -------------------------------------------------------------------------------------------
# Data inside (and just outside) each entry's domain
# -------------------------------------------------------------------------------------------
@st.composite
def datasets_for(draw, entry: Entry, n_rows=(3, 10)):
    """``(X, y)`` inside the entry's public domain (y None without labels)."""
    n = draw(st.integers(*n_rows))
    d = draw(st.integers(*entry.n_features))
    if entry.domain == "codes":
        X = np.array(draw(st.lists(st.lists(st.integers(0, 2), min_size=d, max_size=d), min_size=n, max_size=n)))
        return X.astype(np.int64), None
    unit = np.array(
        draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d), min_size=n, max_size=n)), dtype=float
    )
    if entry.domain == "box":
        low, high = entry.bounds
        X = low + unit * (high - low)
        X = np.clip(X, low, high)
    elif entry.domain == "ball":
        X = (2 * unit - 1) / np.sqrt(d)
    else:
        X = 2 * unit - 1
    y = None
    if entry.labels > 0:
        y = np.array(draw(st.lists(st.integers(0, entry.labels - 1), min_size=n, max_size=n)))
    elif entry.labels < 0:
        y = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n)))
    return X, y


def _neighbour(draw, entry, X, y):
    """Replace one row (and its label) by another inside the domain."""
    X2 = X.copy()
    i = draw(st.integers(0, len(X) - 1))
    other, other_y = draw(datasets_for(entry, n_rows=(1, 1)).filter(lambda xy: xy[0].shape[1] == X.shape[1]))
    X2[i] = other[0]
    y2 = None
    if y is not None:
        y2 = y.copy()
        y2[i] = other_y[0]
    return X2, y2


def _outcome(entry, X, y, seed=0, **params):
    try:
        return ("ok", entry.run(X, y, seed, **params))
    except Exception as exc:  # noqa: BLE001 -- the outcome itself is compared
        return (type(exc).__name__, str(exc))


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "ok":
        return a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True)
    return a[1] == b[1]


# -------------------------------------------------------------------------------------------
# Properties
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SEEDED)
@given(data=st.data())
def test_same_seed_same_finite_release(name, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    seed = data.draw(st.integers(0, 2**32 - 1))

    def body():
        first = _outcome(entry, X, y, seed)
        assert first[0] == "ok", first
        assert np.all(np.isfinite(first[1])), "the release is not finite"
        assert _same(first, _outcome(entry, X, y, seed))

    _counted(name, "same seed", body)


@pytest.mark.parametrize(
    "name", [e.name for e in ENTRIES if e.domain in ("box", "ball", "codes") and e.name != "bingham_mechanism"]
)
@given(data=st.data())
def test_outside_the_domain_is_refused_or_clipped(name, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    i = data.draw(st.integers(0, len(X) - 1))
    j = data.draw(st.integers(0, X.shape[1] - 1))
    excess = data.draw(st.floats(1e-6 if entry.domain == "ball" else 1e-9, 1e6))
    up = data.draw(st.booleans())
    Xo = X.astype(float).copy()
    if entry.domain == "codes":
        Xo = X.copy()
        Xo[i, j] = 3 + int(excess) if up else -1 - int(excess)
    elif entry.domain == "box":
        low, high = entry.bounds
        Xo[i, j] = high + excess * (high - low) if up else low - excess * (high - low)
        if Xo[i, j] == (high if up else low):
            Xo[i, j] = np.nextafter(Xo[i, j], np.inf if up else -np.inf)
    else:
        Xo[i] = 0.0
        Xo[i, j] = (1.0 + excess) * (1 if up else -1)

    def body():
        out = _outcome(entry, Xo, y)
        if entry.outside == "refuse":
            assert out[0] in ("ValueError", "TypeError"), f"data outside the public domain was released: {out}"
        else:
            if entry.domain == "box":
                clipped = np.clip(Xo, *entry.bounds)
            else:
                clipped = Xo.copy()
                clipped[i] /= max(1.0, np.linalg.norm(clipped[i]))
            assert _same(out, _outcome(entry, clipped, y)), "the release depends on more than the clipped data"

    _counted(name, "outside domain", body)


BAD_DATA = {
    "nan": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), ValueError, "NaN"),
    "inf": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 0, np.inf, X), ValueError, "infinite"),
    "3-d": (lambda X: X[None], ValueError, "dimensional"),
    "sparse": (lambda X: scipy.sparse.csr_matrix(X), TypeError, "dense"),
    "text": (lambda X: np.full(X.shape, "a"), TypeError, "numeric"),
    "complex": (lambda X: X + 1j, TypeError, "real-valued|integer codes"),
}


@pytest.mark.parametrize("kind", list(BAD_DATA))
@pytest.mark.parametrize(
    "name",
    [
        n
        for n in NAMES
        if not n.startswith("symmetric") and n not in ("bingham_mechanism", "laplace_mechanism", "gaussian_mechanism")
    ],
)
@given(data=st.data())
def test_structurally_bad_data_is_refused_with_the_right_error(name, kind, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    make, error, match = BAD_DATA[kind]
    if entry.domain == "codes" and kind in ("nan", "inf"):
        return

    def body():
        with pytest.raises(error, match=match):
            entry.run(make(X), y, 0)

    _counted(name, f"bad data: {kind}", body)


@pytest.mark.parametrize("name", ["symmetric_laplace_mechanism", "symmetric_gaussian_mechanism"])
@given(data=st.data(), gap=st.floats(1e-6, 1e6))
def test_symmetric_mechanisms_refuse_a_non_symmetric_matrix(name, data, gap):
    d = data.draw(st.integers(2, 5))
    M = np.zeros((d, d))
    i, j = data.draw(st.sampled_from([(a, b) for a in range(d) for b in range(d) if a != b]))
    M[i, j] = gap
    release = {
        "symmetric_laplace_mechanism": lambda: mechanisms.symmetric_laplace_mechanism(M, 1.0, 1.0, random_state=0),
        "symmetric_gaussian_mechanism": lambda: mechanisms.symmetric_gaussian_mechanism(
            M, 1.0, 1.0, 1e-5, random_state=0
        ),
    }[name]

    def body():
        with pytest.raises(ValueError, match="symmetric"):
            release()

    _counted(name, "non-symmetric", body)


BAD_BOUNDS = [(-np.inf, np.inf), (np.nan, 1.0), (0.0, np.nan), (1.0, 0.0), (0.5, 0.5), (-1e308, 1e308)]


@pytest.mark.parametrize("bounds", BAD_BOUNDS, ids=str)
@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.has_bounds_param])
@given(data=st.data())
def test_bad_bounds_are_refused_naming_bounds(name, bounds, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    if name == "scale_to_box" and bounds == (0.5, 0.5):
        return  # a one-point domain is valid there (a constant column maps to the midpoint)

    def body():
        out = _outcome(entry, X, y, bounds=bounds)
        assert out[0] == "ValueError", out
        assert "bounds" in out[1] and "impute" not in out[1], out[1]

    _counted(name, "bad bounds", body)


@pytest.mark.parametrize("name", [n for n in SEEDED])
@given(data=st.data(), seed=st.sampled_from([-1, -(2**40), "x", 1.5]))
def test_a_bad_random_state_is_refused_naming_it(name, data, seed):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))

    def body():
        out = _outcome(entry, X, y, seed)
        assert out[0] == ("TypeError" if not isinstance(seed, int) else "ValueError"), out
        assert "random_state" in out[1], out[1]

    _counted(name, "bad random_state", body)


@pytest.mark.parametrize("name", SEEDED)
@given(data=st.data())
def test_neighbours_succeed_or_fail_alike(name, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    X2, y2 = _neighbour(data.draw, entry, X, y)

    def body():
        a, b = _outcome(entry, X, y), _outcome(entry, X2, y2)
        assert a[0] == b[0], f"one neighbour gives {a[0]}, the other {b[0]}: {a[1] if a[0] != 'ok' else b[1]}"
        if a[0] != "ok":
            assert a[1] == b[1], "the error message depends on the private data"

    _counted(name, "neighbours alike", body)


def _container_sizes() -> dict:
    """Every dpnb module-level container, fingerprinted: its size and the identities of its entries.

    A cache that replaces its entry (same size, other key) changes the fingerprint too; public
    constants keep theirs. lru caches are compared by size.
    """
    sizes = {}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("dpnb"):
            continue
        for key, value in vars(module).items():
            if isinstance(value, dict) and not key.startswith("__"):
                sizes[module.__name__, key] = (len(value), [id(k) for k in value], [id(v) for v in value.values()])
            elif isinstance(value, (list, set)) and not key.startswith("__"):
                sizes[module.__name__, key] = (len(value), [id(v) for v in value])
            info = getattr(value, "cache_info", None)
            if callable(info) and getattr(value, "__module__", "").startswith("dpnb"):
                sizes[module.__name__, key] = (info().currsize,)
    return sizes


# lru caches keyed only by public numbers (dimension, quadrature nodes, epsilon and delta): they may grow
PUBLIC_CACHES = {
    ("dpnb.papers.library_samplers", "_nodes"),
    ("dpnb.numerics.bingham", "_beta_grid"),
    ("dpnb.privacy.exact_noise", "zcdp_rho"),
    ("dpnb.privacy.exact_noise", "gaussian_sigma2_on_grid"),
}


@pytest.mark.parametrize("name", SEEDED)
@given(data=st.data())
def test_no_state_outlives_a_call(name, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    X2, y2 = _neighbour(data.draw, entry, X, y)

    def body():
        before = _container_sizes()
        fresh = _outcome(entry, X2, y2)
        if entry.estimator is not None:
            est = entry.estimator(X.shape[1]).set_params(random_state=0)
            try:
                est.fit(X, y)
            except Exception:  # noqa: BLE001
                pass
            try:
                est.fit(X2, y2)
                again = ("ok", release_array(est))
            except Exception as exc:  # noqa: BLE001
                again = (type(exc).__name__, str(exc))
            fresh_est = entry.estimator(X.shape[1]).set_params(random_state=0)
            try:
                fresh_est.fit(X2, y2)
                first = ("ok", release_array(fresh_est))
            except Exception as exc:  # noqa: BLE001
                first = (type(exc).__name__, str(exc))
            assert _same(again, first), "a refit on a neighbour differs from a fresh fit on it"
        else:
            _outcome(entry, X, y)
            assert _same(_outcome(entry, X2, y2), fresh), "the release depends on an earlier call"
        after = _container_sizes()
        changed = sorted(k for k, v in after.items() if v != before.get(k) and k not in PUBLIC_CACHES)
        assert not changed, f"module-level state changed during a release: {changed}"

    _counted(name, "no state across calls", body)


BAD_PARAMS = [
    {"epsilon": -1.0},
    {"epsilon": math.nan},
    {"random_state": -1},
    {"random_state": "x"},
    {"bounds": (-np.inf, np.inf)},
    {"bounds": (1.0, 0.0)},
    {"n_components": 0},
    {"delta": 2.0},
    {"noise": "fast"},
]


def _snapshot(est):
    return copy.deepcopy(vars(est))


def _equal(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, z) for x, z in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return repr(a) == repr(b)


@pytest.mark.parametrize("name", ESTIMATORS)
@given(data=st.data())
def test_a_failed_fit_leaves_the_estimator_unchanged(name, data):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    fitted = data.draw(st.booleans())
    how = data.draw(st.sampled_from(["params", "data"]))
    bad = data.draw(st.sampled_from(BAD_PARAMS))
    bad_data = data.draw(st.sampled_from(["nan", "outside", "rows", "labels"]))

    def body():
        est = entry.estimator(X.shape[1]).set_params(random_state=0)
        if fitted:
            try:
                est.fit(X, y)
            except ValueError:
                pass
        snap = _snapshot(est)
        params = {k: v for k, v in bad.items() if k in est.get_params()}
        if how == "params" and params:
            est.set_params(**params)
            with pytest.raises((ValueError, TypeError)):
                est.fit(X, y)
            est.set_params(**{k: snap[k] for k in params})
        else:
            X_bad, y_bad = X.astype(float), y
            if bad_data == "nan" or entry.domain == "free" and bad_data == "outside":
                X_bad = X_bad.copy()
                X_bad[-1, 0] = np.nan
            elif bad_data == "outside":
                X_bad = X_bad.copy()
                X_bad[-1, 0] = 1e6
            elif bad_data == "rows" or y is None:
                X_bad = X_bad[:, :1][:0]
            else:
                y_bad = np.full(len(y), np.nan)
            if entry.domain == "codes" and bad_data != "rows":
                X_bad = X.copy()
                X_bad[-1, 0] = 99
            with pytest.raises((ValueError, TypeError)):
                est.fit(X_bad, y_bad)
        assert _equal(_snapshot(est), snap), "a failed fit changed the estimator"

    _counted(name, "failed fit unchanged", body)


@pytest.mark.parametrize("name", EPSILON)
@given(data=st.data(), epsilon=st.sampled_from([1e-300, 1e-100, 1e-6, 1e6, 1e100, 1e300]))
def test_extreme_epsilon_gives_a_finite_release_or_a_named_value_error(name, data, epsilon):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))

    def body():
        out = _outcome(entry, X, y, epsilon=epsilon)
        if out[0] == "ok":
            assert np.all(np.isfinite(out[1])), f"epsilon={epsilon}: the release is not finite"
        else:
            assert out[0] == "ValueError" and "epsilon" in out[1], out

    _counted(name, "extreme epsilon", body)


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.has_bounds_param])
@given(data=st.data(), scale=st.sampled_from([1e-300, 1e-150, 1e150, 1e154, 1e300, 1e308]))
def test_extreme_bounds_and_entries_give_a_finite_release_or_a_named_value_error(name, data, scale):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    low, high = entry.bounds
    bounds = (low * scale, high * scale)

    def body():
        out = _outcome(entry, X * scale, y, bounds=bounds)
        if out[0] == "ok":
            assert np.all(np.isfinite(out[1])), f"bounds x {scale}: the release is not finite"
        else:
            assert out[0] == "ValueError" and "bounds" in out[1], out

    _counted(name, "extreme bounds", body)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if hasattr(BY_NAME[n].estimator(3), "sample")])
@given(data=st.data(), n=st.sampled_from([0, -1, 2**62, 10**30, 1.5, "3"]))
def test_a_huge_or_bad_sample_size_is_refused_naming_it(name, data, n):
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    est = entry.estimator(X.shape[1]).set_params(random_state=0).fit(X, y)
    if name == "DPLDAPublisher":
        return

    def body():
        with pytest.raises((ValueError, TypeError), match="n_samples"):
            est.sample(n)

    _counted(name, "bad sample size", body)


def test_every_public_release_is_covered():
    """Every estimator class dpnb exports is an entry above (new ones must be added)."""
    from dpnb.privacy.estimator import PrivateEstimator

    classes = set()
    for module in (pca_gauss, dppro, ron_gauss, component_analysis, private_pca, mst):
        classes |= {
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, PrivateEstimator) and v.__module__ == module.__name__
        }
    covered = {type(BY_NAME[n].estimator(3)).__qualname__ for n in ESTIMATORS}
    missing = {c.__qualname__ for c in classes if not c.__qualname__.startswith("_")} - covered - {"PrivateEstimator"}
    assert not missing, f"estimators without an entry: {missing}"
    assert dpnb.__name__ == "dpnb"
