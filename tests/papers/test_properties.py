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
* extreme but valid parameters give a finite release (and finite samples, transforms, inverse
  transforms) or one ValueError naming a parameter: every float parameter (epsilon, delta,
  sensitivities, bounds, data_norm, label_bound, budget fractions) is drawn log-uniformly over its
  whole valid range, subnormals and the largest float64 included, with the data scaled to match
  (RON-Gauss's unbounded data over all of float64 too).

Every estimator is an entry in each mode x noise ("float", "exact"), with its noise scale,
calibration, neighbour relation and ``n_components`` (1 or several) drawn per case.

``make test`` runs them derandomised with a small budget (profile ``ci``); ``make fuzz`` with a
large one (profile ``fuzz``) and prints, per entry point, the cases tried and the failures.
An exception raised inside ``dpnb.privacy.exact_noise`` is judged as any other (its samplers were
counted apart while issue 32 rewrote them; no longer).
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
from dpnb.papers.component_analysis import DPPCAPublisher
from dpnb.papers.dppro import DPPro
from dpnb.papers.lda_publishing import DPLDAPublisher
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
            json.dump({"rows": rows}, fh)


# -------------------------------------------------------------------------------------------
# Every float parameter over its whole valid range, log-uniformly (with the ends themselves)
# -------------------------------------------------------------------------------------------
TINY, HUGE = 5e-324, float(np.finfo(np.float64).max)  # the smallest subnormal and the largest float64


def log_uniform(low: float, high: float):
    """Floats in ``[low, high]`` (``0 < low < high``) with a uniformly drawn binary exponent, ends included."""
    exponents = st.floats(math.log2(low), math.log2(high)).map(lambda e: min(max(2.0 ** min(e, 1023.99), low), high))
    return st.one_of(st.sampled_from([low, high]), exponents)


def _below_one(low: float):
    """Floats in ``[low, 1)``: log-uniform, and log-uniformly close to 1 (``1 - t``, ``t`` down to ``2^-53``)."""
    return st.one_of(log_uniform(low, 0.5), log_uniform(2.0**-53, 0.5).map(lambda t: 1.0 - t))


def _bounds():
    """A public box ``(low, high)``: ``(-s, s)``, ``(0, s)`` or ``(-s1, s2)``, each scale over all of float64."""
    s = log_uniform(TINY, HUGE)
    return st.one_of(
        s.map(lambda v: (-v, v)), s.map(lambda v: (0.0, v)), st.tuples(s, s).map(lambda ab: (-ab[0], ab[1]))
    )


FLOAT_KINDS = {
    "epsilon": st.one_of(st.just(math.inf), log_uniform(TINY, HUGE)),  # (0, inf]
    "delta": _below_one(TINY),  # (0, 1)
    "fraction": _below_one(TINY),  # (0, 1)
    "half": log_uniform(TINY, 0.499),  # (0, 1/2): two fractions that must add up to less than 1
    "positive": log_uniform(TINY, HUGE),  # sensitivities, data_norm, label_bound: (0, max]
    "bounds": _bounds(),
}
MAGNITUDES = log_uniform(TINY, HUGE)  # the scale of data with no public bound (RON-Gauss normalises every row)


def _k(d):
    """``n_components``: 1, or several (2 .. d)."""
    return st.one_of(st.just(1), st.integers(min(2, d), d))


def _k_below(d):
    """``n_components`` below ``d`` (PPCA): 1, or several."""
    return st.one_of(st.just(1), st.integers(1, d - 1))


# -------------------------------------------------------------------------------------------
# Entry points
# -------------------------------------------------------------------------------------------
@dataclass
class Entry:
    """One public entry point.

    ``domain``: "box" (``bounds``), "ball" (rows of L2 norm <= ``data_norm``, 1 by default), "codes" (integers
    below ``sizes``) or "free" (any finite data). ``run(X, y, seed, choices, **params)`` returns the release as
    a float array; ``build(d, choices)`` makes the unfitted estimator (None for a function). ``choices``: its
    discrete options, name -> list or ``d -> strategy``, drawn for every case (modes, noise scales,
    ``n_components`` 1 or several); ``floats``: its float parameters, name -> kind of :data:`FLOAT_KINDS`, drawn
    over their whole range by the extreme-parameter property. ``outside``: "refuse" or "clip". ``labels``: number
    of classes (0: no labels, -1: real labels in [-label_bound, label_bound]). ``scaled``: the data itself has
    no public bound (its magnitude is drawn over all of float64 too). ``not_dp``: ``(choice, value)`` pairs that
    the docstring declares not differentially private (audit modes), left out of the privacy properties.
    """

    name: str
    domain: str
    run: Callable
    bounds: tuple = (0.0, 1.0)
    outside: str = "refuse"
    labels: int = 0
    build: Callable | None = None
    choices: dict = field(default_factory=dict)
    floats: dict = field(default_factory=dict)
    n_features: tuple = (2, 5)
    min_rows: int = 1
    scaled: bool = False
    not_dp: tuple = ()

    def draw_choices(self, draw, d: int) -> dict:
        return {k: draw(v(d) if callable(v) else st.sampled_from(v)) for k, v in self.choices.items()}

    def is_dp(self, choices: dict) -> bool:
        return not any(choices.get(k) == v for k, v in self.not_dp)

    def default_choices(self, d: int) -> dict:
        return {k: (1 if callable(v) else v[0]) for k, v in self.choices.items()}


NOISES = ["float", "exact"]


def _release_and_samples(est) -> np.ndarray:
    """The fitted estimator's release, then 4 synthetic rows where it samples (DP-LDA: its one draw)."""
    out = release_array(est).ravel()
    if hasattr(est, "sample"):
        drawn = est.sample(4)
        drawn = drawn[0] if isinstance(drawn, tuple) else drawn
        out = np.concatenate([out, np.asarray(drawn, dtype=float).ravel()])
    return out


def _est_entry(name, domain, build, **kw):
    def run(X, y, seed, choices, **params):
        est = build(np.shape(X)[-1], choices).set_params(random_state=seed, **params)
        return _release_and_samples(est.fit(X, y))

    return Entry(name, domain, run, build=build, **kw)


def _basis(d, k=2):
    return haar_stiefel(d, k, random_state=1)


def _fn(name, domain, call, **kw):
    return Entry(
        name, domain, lambda X, y, seed, choices, **p: np.asarray(call(X, y, seed, **choices, **p), dtype=float), **kw
    )


EPS = {"epsilon": "epsilon"}
EPS_DELTA = {"epsilon": "epsilon", "delta": "delta"}
BOX = {"bounds": "bounds"}


def _ron(mode, noise):
    def build(d, c):
        extra = {"label_bound": 1.0} if mode == "supervised" else {}
        if mode != "gmm":
            extra["add_mean"] = c["add_mean"]
        return RONGauss(
            c["n_components"],
            0.5,
            mode=mode,
            noise=noise,
            projection=c["projection"],
            reconstruct=c["reconstruct"],
            **extra,
        )

    choices = {"n_components": _k, "projection": ["haar", "paper"], "reconstruct": [False, True]}
    if mode != "gmm":
        choices["add_mean"] = [False, True]
    floats = {**EPS, "mean_fraction": "fraction", **({"label_bound": "positive"} if mode == "supervised" else {})}
    labels = {"unsupervised": 0, "supervised": -1, "gmm": 2}[mode]
    return _est_entry(
        f"RONGauss-{mode}-{noise}", "free", build, labels=labels, choices=choices, floats=floats, scaled=True
    )


class _SpectrumGiven(PCAGauss):
    """PCA-Gauss whose ``fit`` is given ``spectrum=pca_spectrum(X)``, as a loop over releases of the same rows is.

    Rows that ``pca_spectrum`` refuses (invalid, or a second moment that overflows) must be refused by the fit too:
    the fit's own error is raised, and a fit that accepts them fails the case.
    """

    def fit(self, X, y=None):
        try:
            spectrum = pca_gauss.pca_spectrum(X)
        except np.linalg.LinAlgError:  # a ValueError subclass: never a refusal
            raise
        except (ValueError, TypeError) as refusal:
            super().fit(X, y)
            raise AssertionError(f"pca_spectrum refused rows that the fit accepts: {refusal}") from refusal
        return super().fit(X, y, spectrum=spectrum)


def _pca_gauss(mode, noise):
    def build(d, c):
        k = c["n_components"]
        if mode == "alg1-spectrum":
            return _SpectrumGiven(k, 0.5, noise=noise, noise_scale=c["noise_scale"], bounds=(-1.0, 1.0))
        extra = {
            "alg1": {},
            "basis": {"basis": _basis(d, k)},
            "supervised": {"mode": "supervised", "basis": _basis(d, k)},
            "gmm": {"mode": "gmm", "basis": _basis(d, k), "n_classes": 2},
        }[mode]
        return PCAGauss(k, 0.5, noise=noise, noise_scale=c["noise_scale"], bounds=(-1.0, 1.0), **extra)

    floats = {**EPS, **BOX}
    floats.update(
        {
            "alg1": {},
            "alg1-spectrum": {},
            "basis": {"mean_fraction": "fraction"},
            "supervised": {"mean_fraction": "fraction", "label_bound": "positive"},
            "gmm": {"mean_fraction": "half", "count_fraction": "half"},
        }[mode]
    )
    return _est_entry(
        f"PCAGauss-{mode}-{noise}",
        "box",
        build,
        bounds=(-1.0, 1.0),
        labels={"supervised": -1, "gmm": 2}.get(mode, 0),
        choices={"n_components": _k, "noise_scale": ["corrected", "paper"]},
        floats=floats,
        min_rows=2,
        not_dp=(("noise_scale", "paper"),) if mode == "gmm" else (),  # Theorem 6 as stated: noise by private N_c
    )


def _identity(name):
    """One of RON-Gauss's two identity releases (they share their signature); the release, not its sensitivity."""
    release = getattr(ron_gauss, name)
    return _fn(
        name,
        "ball",
        lambda X, y, s, noise, n_components, epsilon=0.5: release(
            X, n_components, epsilon, random_state=s, noise=noise
        )[0],
        choices={"noise": NOISES, "n_components": _k},
        floats=EPS,
    )


ENTRIES = [
    # estimators: every mode x noise, their other options and n_components (1 or several) drawn
    *[_ron(mode, noise) for mode in ("unsupervised", "supervised", "gmm") for noise in NOISES],
    *[_pca_gauss(mode, noise) for mode in ("alg1", "alg1-spectrum", "basis", "supervised", "gmm") for noise in NOISES],
    *[
        _est_entry(
            f"DPPro-{noise}",
            "box",
            lambda d, c, noise=noise: DPPro(
                c["n_components"],
                0.5,
                1e-5,
                neighbours=c["neighbours"],
                noise_scale=c["noise_scale"],
                calibration=c["calibration"],
                noise=noise,
            ),
            choices={
                "n_components": _k,
                "neighbours": ["change-attribute", "replace-row"],
                "noise_scale": ["corrected", "paper"],  # "lemma4" needs k >= 2 (ln d + ln(2 / delta)): extreme draws
                "calibration": ["analytic", "classic"],
            },
            floats={**EPS_DELTA, **BOX},
        )
        for noise in NOISES
    ],
    *[
        _est_entry(
            f"DPPCAPublisher-{noise}",
            "box",
            lambda d, c, noise=noise: DPPCAPublisher(
                c["n_components"], 0.5, noise_scale=c["noise_scale"], tight_projection=c["tight"], noise=noise
            ),
            choices={"n_components": _k, "noise_scale": ["corrected", "paper"], "tight": [False, True]},
            floats=EPS,
        )
        for noise in NOISES
    ],
    *[
        _est_entry(
            f"DPLDAPublisher-{noise}",
            "box",
            lambda d, c, noise=noise: DPLDAPublisher(0.5, n_classes=2, noise_scale=c["noise_scale"], noise=noise),
            labels=2,
            choices={"noise_scale": ["corrected", "paper"]},
            floats={**EPS, "count_fraction": "fraction"},
        )
        for noise in NOISES
    ],
    *[
        _est_entry(
            f"ModSULQ-{noise}",
            "ball",
            lambda d, c, noise=noise: ModSULQ(
                c["n_components"], 0.5, 1e-5, noise_scale=c["noise_scale"], calibration=c["calibration"], noise=noise
            ),
            choices={"n_components": _k, "noise_scale": ["corrected", "paper"], "calibration": ["analytic", "classic"]},
            floats={**EPS_DELTA, "data_norm": "positive"},
        )
        for noise in NOISES
    ],
    _est_entry(
        "PPCA-gibbs",
        "ball",
        lambda d, c: PPCA(c["n_components"], 0.5, n_iter=3),
        choices={"n_components": _k_below},
        floats={**EPS, "data_norm": "positive"},
    ),
    _est_entry(
        "PPCA-exact", "ball", lambda d, c: PPCA(1, 0.5, sampler="exact"), floats={**EPS, "data_norm": "positive"}
    ),
    *[
        _est_entry(
            f"MST-{noise}",
            "codes",
            lambda d, c, noise=noise: MST(0.5, 1e-6, domain_sizes=[3] * d, noise=noise),
            floats=EPS_DELTA,
        )
        for noise in NOISES
    ],
    # release functions
    _fn(
        "laplace_mechanism",
        "free",
        lambda X, y, s, noise, epsilon=0.5, sensitivity=1.0: mechanisms.laplace_mechanism(
            X, sensitivity, epsilon, random_state=s, noise=noise
        ),
        choices={"noise": NOISES},
        floats={**EPS, "sensitivity": "positive"},
    ),
    _fn(
        "gaussian_mechanism",
        "free",
        lambda X, y, s, noise, calibration, epsilon=0.5, delta=1e-5, sensitivity=1.0: mechanisms.gaussian_mechanism(
            X, sensitivity, epsilon, delta, calibration=calibration, random_state=s, noise=noise
        ),
        choices={"noise": NOISES, "calibration": ["analytic", "classic"]},
        floats={**EPS_DELTA, "sensitivity": "positive"},
    ),
    _fn(
        "symmetric_laplace_mechanism",
        "free",
        lambda X, y, s, noise, epsilon=0.5, sensitivity=1.0: mechanisms.symmetric_laplace_mechanism(
            X.T @ X, sensitivity, epsilon, random_state=s, noise=noise
        ),
        choices={"noise": NOISES},
        floats={**EPS, "sensitivity": "positive"},
    ),
    _fn(
        "symmetric_gaussian_mechanism",
        "free",
        lambda X, y, s, noise, calibration, epsilon=0.5, delta=1e-5, sensitivity=1.0: (
            mechanisms.symmetric_gaussian_mechanism(
                X.T @ X, sensitivity, epsilon, delta, calibration=calibration, random_state=s, noise=noise
            )
        ),
        choices={"noise": NOISES, "calibration": ["analytic", "classic"]},
        floats={**EPS_DELTA, "sensitivity": "positive"},
    ),
    _fn(
        "lap_pca",
        "box",
        lambda X, y, s, noise, n_components, epsilon=0.5, bounds=(-1.0, 1.0): pca_gauss.lap_pca(
            X, n_components, epsilon, bounds=bounds, random_state=s, noise=noise
        ),
        bounds=(-1.0, 1.0),
        choices={"noise": NOISES, "n_components": _k},
        floats={**EPS, **BOX},
    ),
    _fn(
        "analyze_gauss_pca",
        "ball",
        lambda X, y, s, noise, n_components, noise_scale, calibration, epsilon=0.5, delta=1e-5, data_norm=1.0: (
            pca_gauss.analyze_gauss_pca(
                X,
                n_components,
                epsilon,
                delta,
                data_norm=data_norm,
                noise_scale=noise_scale,
                calibration=calibration,
                random_state=s,
                noise=noise,
            )
        ),
        choices={
            "noise": NOISES,
            "n_components": _k,
            "noise_scale": ["corrected", "paper"],
            "calibration": ["analytic", "classic"],
        },
        floats={**EPS_DELTA, "data_norm": "positive"},
    ),
    _identity("bernoulli_identity"),
    _identity("pca_identity"),
    _fn(
        "laplace_identity",
        "box",
        lambda X, y, s, noise, epsilon=0.5: component_analysis.laplace_identity(
            X, epsilon, random_state=s, noise=noise
        ),
        choices={"noise": NOISES},
        floats=EPS,
    ),
    _fn(
        "split_laplace",
        "box",
        lambda X, y, s, noise, epsilon=0.5, bounds=(0.0, 1.0): component_analysis.split_laplace(
            X, epsilon, bounds, random_state=s, noise=noise
        ),
        choices={"noise": NOISES},
        floats={**EPS, **BOX},
    ),
    _fn(
        "component_laplace",
        "box",
        lambda X, y, s, noise, epsilon=0.5, bounds=(0.0, 1.0): component_analysis.component_laplace(
            X, epsilon, np.eye(X.shape[1])[0], np.zeros(X.shape[1]), bounds, random_state=s, noise=noise
        ),
        choices={"noise": NOISES},
        floats={**EPS, **BOX},
    ),
    _fn(
        "mod_sulq",
        "ball",
        lambda X, y, s, noise, n_components, noise_scale, epsilon=0.5, delta=1e-5, data_norm=1.0: private_pca.mod_sulq(
            X, n_components, epsilon, delta, noise_scale=noise_scale, data_norm=data_norm, random_state=s, noise=noise
        ),
        choices={"noise": NOISES, "n_components": _k, "noise_scale": ["corrected", "paper"]},
        floats={**EPS_DELTA, "data_norm": "positive"},
    ),
    _fn(
        "ppca",
        "ball",
        lambda X, y, s, sampler, epsilon=0.5, data_norm=1.0: private_pca.ppca(
            X, 1, epsilon, data_norm=data_norm, sampler=sampler, n_iter=3, random_state=s
        ),
        choices={"sampler": ["exact", "gibbs"]},
        floats={**EPS, "data_norm": "positive"},
    ),
    _fn(
        "bingham_mechanism",
        "ball",
        lambda X, y, s, epsilon=0.5, sensitivity=1.0: library_samplers.bingham_mechanism(
            X.T @ X, epsilon, sensitivity=sensitivity, random_state=s
        ),
        floats={**EPS, "sensitivity": "positive"},
    ),
    _fn(
        "discretize",
        "box",
        lambda X, y, s, bounds=(0.0, 1.0): mst.discretize(X, bounds, 4),
        outside="clip",
        floats=BOX,
    ),
    _fn(
        "scale_to_box",
        "box",
        lambda X, y, s, bounds=(0.0, 1.0): datasets.scale_to_box(X, bounds),
        outside="clip",
        floats=BOX,
    ),
    _fn(
        "normalize_rows",
        "ball",
        lambda X, y, s, data_norm=1.0: datasets.normalize_rows(X, data_norm),
        outside="clip",
        floats={"data_norm": "positive"},
    ),
]
BY_NAME = {e.name: e for e in ENTRIES}
NAMES = list(BY_NAME)
ESTIMATORS = [e.name for e in ENTRIES if e.build is not None]
SEEDED = [e.name for e in ENTRIES if e.name not in ("discretize", "scale_to_box", "normalize_rows")]
BOUNDED = [e.name for e in ENTRIES if "bounds" in e.floats]


# -------------------------------------------------------------------------------------------
# Data inside (and just outside) each entry's domain
# -------------------------------------------------------------------------------------------
@st.composite
def datasets_for(draw, entry: Entry, n_rows=(3, 10), d=None, params=None, scale=1.0):
    """``(X, y)`` inside the entry's public domain (y None without labels), for its parameters ``params``.

    ``bounds``, ``data_norm`` and ``label_bound`` in ``params`` set the domain (the entry's defaults otherwise);
    ``scale`` is the magnitude of "free" data.
    """
    params = params or {}
    n = draw(st.integers(max(n_rows[0], entry.min_rows), max(n_rows[1], entry.min_rows)))
    d = draw(st.integers(*entry.n_features)) if d is None else d
    if entry.domain == "codes":
        X = np.array(draw(st.lists(st.lists(st.integers(0, 2), min_size=d, max_size=d), min_size=n, max_size=n)))
        return X.astype(np.int64), None
    unit = np.array(
        draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d), min_size=n, max_size=n)), dtype=float
    )
    if entry.domain == "box":
        low, high = params.get("bounds", entry.bounds)
        X = np.clip(low * (1 - unit) + high * unit, low, high)  # no high - low: it may overflow
    elif entry.domain == "ball":
        X = (2 * unit - 1) / np.sqrt(d) * params.get("data_norm", 1.0)
    else:
        X = (2 * unit - 1) * scale
    y = None
    if entry.labels > 0:
        y = np.array(draw(st.lists(st.integers(0, entry.labels - 1), min_size=n, max_size=n)))
        y[: entry.labels] = np.arange(min(n, entry.labels))  # every class has a record (where n allows)
    elif entry.labels < 0:
        y = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n))) * params.get("label_bound", 1.0)
    return X, y


def _neighbour(draw, entry, X, y):
    """Replace one row (and its label) by another inside the domain."""
    X2 = X.copy()
    i = draw(st.integers(0, len(X) - 1))
    other, other_y = draw(datasets_for(entry, n_rows=(1, 1), d=X.shape[1]))
    X2[i] = other[0]
    y2 = None
    if y is not None:
        y2 = y.copy()
        y2[i] = other_y[0]
    return X2, y2


def _outcome(entry, X, y, choices, seed=0, **params):
    try:
        return ("ok", entry.run(X, y, seed, choices, **params))
    except Exception as exc:  # noqa: BLE001 -- the outcome itself is compared
        return (type(exc).__name__, str(exc))


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "ok":
        return a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True)
    return a[1] == b[1]


def _draw(name, data):
    """The entry point ``name``, a dataset in its domain and its choices, drawn in this order (one Hypothesis case)."""
    entry = BY_NAME[name]
    X, y = data.draw(datasets_for(entry))
    return entry, X, y, entry.draw_choices(data.draw, X.shape[1])


# -------------------------------------------------------------------------------------------
# Properties
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SEEDED)
@given(data=st.data())
def test_same_seed_same_finite_release(name, data):
    entry, X, y, choices = _draw(name, data)
    seed = data.draw(st.integers(0, 2**32 - 1))

    def body():
        first = _outcome(entry, X, y, choices, seed)
        assert first[0] == "ok", first
        assert np.all(np.isfinite(first[1])), "the release is not finite"
        assert _same(first, _outcome(entry, X, y, choices, seed))

    _counted(name, "same seed", body)


@pytest.mark.parametrize(
    "name", [e.name for e in ENTRIES if e.domain in ("box", "ball", "codes") and e.name != "bingham_mechanism"]
)
@given(data=st.data())
def test_outside_the_domain_is_refused_or_clipped(name, data):
    entry, X, y, choices = _draw(name, data)
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
        out = _outcome(entry, Xo, y, choices)
        if entry.outside == "refuse":
            assert out[0] in ("ValueError", "TypeError"), f"data outside the public domain was released: {out}"
        else:
            if entry.domain == "box":
                clipped = np.clip(Xo, *entry.bounds)
            else:
                clipped = Xo.copy()
                clipped[i] /= max(1.0, np.linalg.norm(clipped[i]))
            assert _same(out, _outcome(entry, clipped, y, choices)), "the release depends on more than the clipped data"

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
    entry, X, y, choices = _draw(name, data)
    make, error, match = BAD_DATA[kind]
    if entry.domain == "codes" and kind in ("nan", "inf"):
        return

    def body():
        with pytest.raises(error, match=match):
            entry.run(make(X), y, 0, choices)

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
@pytest.mark.parametrize("name", BOUNDED)
@given(data=st.data())
def test_bad_bounds_are_refused_naming_bounds(name, bounds, data):
    entry, X, y, choices = _draw(name, data)
    if name == "scale_to_box" and bounds == (0.5, 0.5):
        return  # a one-point domain is valid there (a constant column maps to the midpoint)

    def body():
        out = _outcome(entry, X, y, choices, bounds=bounds)
        assert out[0] == "ValueError", out
        assert "bounds" in out[1] and "impute" not in out[1], out[1]

    _counted(name, "bad bounds", body)


@pytest.mark.parametrize("name", [n for n in SEEDED])
@given(data=st.data(), seed=st.sampled_from([-1, -(2**40), "x", 1.5]))
def test_a_bad_random_state_is_refused_naming_it(name, data, seed):
    entry, X, y, choices = _draw(name, data)

    def body():
        out = _outcome(entry, X, y, choices, seed)
        assert out[0] == ("TypeError" if not isinstance(seed, int) else "ValueError"), out
        assert "random_state" in out[1], out[1]

    _counted(name, "bad random_state", body)


@pytest.mark.parametrize("name", SEEDED)
@given(data=st.data())
def test_neighbours_succeed_or_fail_alike(name, data):
    entry, X, y, choices = _draw(name, data)
    X2, y2 = _neighbour(data.draw, entry, X, y)
    if not entry.is_dp(choices):
        return

    def body():
        a, b = _outcome(entry, X, y, choices), _outcome(entry, X2, y2, choices)
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
    entry, X, y, choices = _draw(name, data)
    X2, y2 = _neighbour(data.draw, entry, X, y)

    def body():
        before = _container_sizes()
        fresh = _outcome(entry, X2, y2, choices)
        if entry.build is not None:
            est = entry.build(X.shape[1], choices).set_params(random_state=0)
            try:
                est.fit(X, y)
            except Exception:  # noqa: BLE001
                pass
            try:
                est.fit(X2, y2)
                again = ("ok", release_array(est))
            except Exception as exc:  # noqa: BLE001
                again = (type(exc).__name__, str(exc))
            fresh_est = entry.build(X.shape[1], choices).set_params(random_state=0)
            try:
                fresh_est.fit(X2, y2)
                first = ("ok", release_array(fresh_est))
            except Exception as exc:  # noqa: BLE001
                first = (type(exc).__name__, str(exc))
            assert _same(again, first), "a refit on a neighbour differs from a fresh fit on it"
        else:
            _outcome(entry, X, y, choices)
            assert _same(_outcome(entry, X2, y2, choices), fresh), "the release depends on an earlier call"
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
    entry, X, y, choices = _draw(name, data)
    fitted = data.draw(st.booleans())
    how = data.draw(st.sampled_from(["params", "data"]))
    bad = data.draw(st.sampled_from(BAD_PARAMS))
    bad_data = data.draw(st.sampled_from(["nan", "outside", "rows", "labels"]))

    def body():
        est = entry.build(X.shape[1], choices).set_params(random_state=0)
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


EXTREME = [e.name for e in ENTRIES if e.floats]


def _every_output(entry, X, y, seed, choices, params, n_samples) -> np.ndarray:
    """The release and every output derived from it: ``sample(n_samples)``, ``transform`` of the training rows,
    ``inverse_transform`` of that and ``publish`` where the estimator has them (a function: its release)."""
    if entry.build is None:
        return entry.run(X, y, seed, choices, **params)
    est = entry.build(X.shape[1], choices).set_params(random_state=seed, **params).fit(X, y)
    parts = [_release_and_samples(est)]
    if hasattr(est, "sample"):
        drawn = est.sample(n_samples)
        parts.append(drawn[0] if isinstance(drawn, tuple) else drawn)
    if hasattr(est, "transform") and getattr(est, "components_", None) is not None:
        Z = est.transform(X)
        parts.append(Z)
        if hasattr(est, "inverse_transform"):
            parts.append(est.inverse_transform(Z))
    if hasattr(est, "publish"):
        parts.append(est.publish())
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


@pytest.mark.parametrize("name", EXTREME)
@given(data=st.data())
def test_extreme_parameters_give_a_finite_release_or_a_named_value_error(name, data):
    """Every float parameter anywhere in its valid range (log-uniform, ends included), the data scaled to match:
    a finite release, samples, transform and inverse transform, or one ValueError naming a parameter."""
    entry = BY_NAME[name]
    d = data.draw(st.integers(*entry.n_features))
    choices = entry.draw_choices(data.draw, d)
    params = {p: data.draw(FLOAT_KINDS[kind], label=p) for p, kind in entry.floats.items()}
    scale = data.draw(MAGNITUDES, label="data scale") if entry.scaled else 1.0
    X, y = data.draw(datasets_for(entry, n_rows=(1, 10), d=d, params=params, scale=scale))
    n_samples = data.draw(st.integers(1, 64))
    names = set(params) | set(choices)

    def body():
        try:
            with np.errstate(all="ignore"):  # warnings are not failures; non-finite values and exceptions are
                out = ("ok", _every_output(entry, X, y, 0, choices, params, n_samples))
        except Exception as exc:  # noqa: BLE001 -- the outcome itself is checked
            out = (type(exc).__name__, str(exc))
        if out[0] == "ok":
            assert np.all(np.isfinite(out[1])), f"{params}: the release is not finite"
        else:
            assert out[0] == "ValueError" and any(p in out[1] for p in names), out

    _counted(name, "extreme parameters", body)


SAMPLERS = [n for n in ESTIMATORS if hasattr(BY_NAME[n].build(3, BY_NAME[n].default_choices(3)), "sample")]


@pytest.mark.parametrize("name", SAMPLERS)
@given(data=st.data(), n=st.sampled_from([0, -1, 2**62, 10**30, 1.5, "3"]))
def test_a_huge_or_bad_sample_size_is_refused_naming_it(name, data, n):
    entry, X, y, choices = _draw(name, data)
    est = entry.build(X.shape[1], choices).set_params(random_state=0).fit(X, y)

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
    covered = {type(BY_NAME[n].build(3, BY_NAME[n].default_choices(3))).__qualname__ for n in ESTIMATORS}
    missing = {c.__qualname__ for c in classes if not c.__qualname__.startswith("_")} - covered - {"PrivateEstimator"}
    assert not missing, f"estimators without an entry: {missing}"
    assert dpnb.__name__ == "dpnb"
