"""The DPPro chapter's room: its audits and its reproduction runs.

The audits of the DPPro chapter: worst-case neighbouring pairs, the sensitivity grid, release runs.

Xu et al. (2017) calibrate DPPro's noise to ``theta_2(R) = max_j ||R_j||`` (Theorem 2), the
sensitivity of ``X -> X R`` when one binary attribute of one record changes; a whole record
changes it by up to ``max_s ||s R||`` over sign vectors ``s`` (the ``infinity -> 2`` norm of
``R``). This module builds the explicit pairs that attain (or bracket) those values, runs the
grid audit of both relations, and draws the runs a statistical epsilon audit needs. The science
(sensitivities, certificate, calibrations) is :mod:`dpnb.papers.dppro`.

The DPPro chapter's reproduction runs: eq. (12) errors of released distances, and the Adult SVM of Fig. 5.

Xu et al. (2017) measure a release by the relative ``L2`` error of its squared-distance
estimates (eq. 12, :func:`dpnb.papers.dppro.relative_l2_error`) and by a linear SVM trained on
the released rows. Each function here averages one setting over independent releases, each
drawn from the generator (or the ``stream(seed, (*key, rep))``) it is given.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from dpnb.ground.streams import sklearn_seed, stream
from dpnb.ground.validation import check_array, check_integer, check_n_components, check_nonnegative, check_random_state
from dpnb.papers import dppro
from dpnb.privacy.audit import ChangeOneAttribute, FlipOneBit, ReplaceRowBox, search_sensitivity
from dpnb.privacy.audit_power import audit_epsilon_tails

#: Relative slack under which a searched value counts as not exceeding a bound (round-off only).
ROUNDOFF = 1e-9


def attribute_flip_pair(projection, n_rows: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The binary pair attaining ``theta_2(R)``: all zeros, and a copy with attribute ``argmax_j ||R_j||`` of row 0 set.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    n_rows : int
        Rows of each dataset, >= 1 (the others are zero in both).

    Returns
    -------
    X, X_prime : ndarray, shape (n_rows, d)
    """
    R = check_array(projection, name="projection")
    n_rows = check_integer(n_rows, "n_rows")
    X = np.zeros((n_rows, R.shape[0]))
    X_prime = X.copy()
    X_prime[0, int(np.argmax(np.linalg.norm(R, axis=1)))] = 1.0
    return X, X_prime


def record_pair(change, n_rows: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The binary records ``x = 1[s = 1]``, ``x' = 1[s = -1]`` in row 0, for a sign vector ``s = sign(change)``.

    ``(x - x') R = s R``, so the pair realises the change of :func:`dpnb.papers.dppro.worst_record_change`
    on ``[0, 1]`` data (eq. ``eq-dppro-record``).

    Parameters
    ----------
    change : array_like, shape (d,)
        A record change with no zero entry.
    n_rows : int
    """
    v = check_array(change, ndim=1, name="change")
    if np.any(v == 0):
        raise ValueError("change must have no zero entry: each attribute is flipped one way or the other")
    n_rows = check_integer(n_rows, "n_rows")
    X, X_prime = np.zeros((n_rows, v.size)), np.zeros((n_rows, v.size))
    X[0], X_prime[0] = (1 + np.sign(v)) / 2, (1 - np.sign(v)) / 2
    return X, X_prime


def exact_record_sensitivity(projection, max_features: int = 16) -> float:
    """``max_{s in {-1, 1}^d} ||s R||_2`` by enumeration: the record sensitivity on ``[0, 1]`` data.

    Parameters
    ----------
    projection : array_like, shape (d, k)
    max_features : int
        Refuse ``d`` above this (``2^d`` sign vectors are enumerated).
    """
    R = check_array(projection, name="projection")
    if R.shape[0] > check_integer(max_features, "max_features"):
        raise ValueError(
            f"projection has d = {R.shape[0]} rows: 2^d sign vectors is too many; "
            f"use dppro.record_sensitivity (a certified upper bound) or raise max_features"
        )
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=R.shape[0])))
    return float(np.max(np.linalg.norm(signs @ R, axis=1)))


@dataclass(frozen=True)
class GridPoint:
    """The sensitivity audit of one ``(d, k, n)``: values found by searches beside the bounds."""

    d: int
    k: int
    n: int
    theta: float  # theta_2(R), attained by attribute_flip_pair
    attribute_found: float  # largest change found by ChangeOneAttribute and FlipOneBit searches
    record_pair: float  # ||s R|| of worst_record_change's sign vector (a lower bound)
    record_found: float  # largest change found by the ReplaceRowBox search
    record_exact: float | None  # exact_record_sensitivity where d <= 10
    record_certificate: float  # dppro.record_sensitivity, the certified upper bound B(y)

    @property
    def attribute_ok(self) -> bool:
        """No attribute search exceeded ``theta_2(R)``."""
        return self.attribute_found <= self.theta * (1 + ROUNDOFF)

    @property
    def record_ok(self) -> bool:
        """pair <= search <= certificate, and search <= exact <= certificate where exact is known."""
        up = 1 + ROUNDOFF
        ok = self.record_pair <= self.record_found * up and self.record_found <= self.record_certificate * up
        if self.record_exact is not None:
            ok = (
                ok and self.record_found <= self.record_exact * up and self.record_exact <= self.record_certificate * up
            )
        return ok

    def row(self) -> dict:
        """The point as a table row at fixed precision."""
        return {
            "d": self.d,
            "k": self.k,
            "n": self.n,
            "theta_2 (flip j*)": f"{self.theta:.3f}",
            "attribute searches <= theta_2": self.attribute_ok,
            "record: pair": f"{self.record_pair:.2f}",
            "record: pair <= search <= certificate": self.record_pair
            <= self.record_found * (1 + ROUNDOFF)
            <= self.record_certificate * (1 + 1e-6),
            "record: exact": "-" if self.record_exact is None else f"{self.record_exact:.2f}",
            "record: certificate B(y)": f"{self.record_certificate:.2f}",
        }


def sensitivity_grid(n_features=(2, 10, 45, 180), n_rows=(1, 3), *, seed: int, n_steps: int) -> list[GridPoint]:
    """Audit Theorem 2's sensitivity step and the record bracket on a grid of ``(d, k, n)``.

    For each ``d`` and ``k in {1, 4, d}`` (``k <= d``) one ``R`` is drawn on
    ``stream(seed, ("sensitivity-grid", d, k))``; for each ``n`` the attribute relations
    (``ChangeOneAttribute`` on ``[0, 1]`` and ``FlipOneBit``) are searched from
    :func:`attribute_flip_pair` and ``ReplaceRowBox`` from :func:`record_pair`, one start each,
    every search on ``stream(seed, ("search", relation, d, k, n))``.

    Parameters
    ----------
    n_features, n_rows : sequence of int
    seed : int
    n_steps : int
        Local steps of each search.
    """
    n_steps = check_integer(n_steps, "n_steps", minimum=0)
    points = []
    for dd in n_features:
        dd = check_integer(dd, "n_features")
        for k in sorted({1, 4, dd} & set(range(1, dd + 1))):
            rng = stream(seed, ("sensitivity-grid", dd, k))
            R = dppro.gaussian_projection(dd, k, random_state=rng)
            query = lambda X, R=R: X @ R  # noqa: E731
            theta = dppro.attribute_sensitivity(R)
            v, rec_pair = dppro.worst_record_change(R, random_state=rng)
            certificate = dppro.record_sensitivity(R)
            exact = exact_record_sensitivity(R) if dd <= 10 else None
            for n in n_rows:
                n = check_integer(n, "n_rows")

                def search(name, relation, claimed, start, n=n, dd=dd, k=k, query=query):
                    return search_sensitivity(
                        query,
                        relation,
                        n,
                        dd,
                        claimed=claimed,
                        starts=[start],
                        random_state=stream(seed, ("search", name, dd, k, n)),
                        n_starts=1,
                        n_steps=n_steps,
                    ).max_found

                flip = attribute_flip_pair(R, n)
                attribute_found = max(
                    search("attr", ChangeOneAttribute(0.0, 1.0), theta, flip),
                    search("flip", FlipOneBit(), theta, flip),
                )
                record_found = search("record", ReplaceRowBox(0.0, 1.0), certificate, record_pair(v, n))
                points.append(GridPoint(dd, k, n, theta, attribute_found, rec_pair, record_found, exact, certificate))
    return points


def release_scores(row, direction, projection, sigma: float, n_runs: int, *, random_state, chunk: int = 10_000):
    """``n_runs`` one-row releases ``row R + N(0, sigma^2 I_k)``, each projected on ``direction``.

    The runs are those of :func:`dpnb.papers.dppro.project_and_perturb` on ``n_runs`` copies of the row (the
    same draws, in order, ``chunk`` runs at a time), with the product ``row R`` formed once instead of once
    per copy (``O(d k)`` instead of ``O(n_runs d k)``; every copy's product is that vector, up to the
    round-off of how a BLAS kernel blocks the rows).

    Parameters
    ----------
    row : array_like, shape (1, d)
    direction : array_like, shape (k,)
        The statistic's direction, e.g. ``(x' - x) R`` (the likelihood-ratio direction).
    projection : array_like, shape (d, k)
    sigma : float
    n_runs, chunk : int
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_runs,)
    """
    row = check_array(row, name="row")
    if row.shape[0] != 1:
        raise ValueError(f"row must be one record, shape (1, d); got {row.shape[0]} rows")
    n_runs, chunk = check_integer(n_runs, "n_runs"), check_integer(chunk, "chunk")
    rng = check_random_state(random_state)
    direction = check_array(direction, ndim=1, name="direction")
    mean = dppro.project_and_perturb(row, projection, 0.0)  # row R, the release's mean; sigma = 0 draws nothing
    sigma = check_nonnegative(sigma, "sigma")
    out = []
    for start in range(0, n_runs, chunk):
        size = (min(chunk, n_runs - start), mean.shape[1])
        out.append((mean + rng.normal(0.0, sigma, size=size) if sigma > 0 else np.repeat(mean, size[0], 0)) @ direction)
    return np.concatenate(out)


def audit_release(X, X_prime, projection, sigma: float, *, claimed: float, delta: float, n_runs: int, random_state):
    """Tail epsilon audit (:func:`dpnb.privacy.audit_power.audit_epsilon_tails`) of DPPro's release on a pair.

    Both one-row datasets are released ``n_runs`` times at noise s.d. ``sigma`` from the same
    generator (``X`` first) and scored along ``(X' - X) R``.

    Returns
    -------
    dpnb.privacy.audit.EpsilonAudit
    """
    R = check_array(projection, name="projection")
    X, X_prime = check_array(X, name="X"), check_array(X_prime, name="X_prime")
    direction = ((X_prime - X) @ R).ravel()
    rng = check_random_state(random_state)
    scores = release_scores(X, direction, R, sigma, n_runs, random_state=rng)
    scores_prime = release_scores(X_prime, direction, R, sigma, n_runs, random_state=rng)
    return audit_epsilon_tails(scores, scores_prime, claimed=claimed, delta=delta)


def squared_distance_trials(pair, n_components: int, sigma: float, n_runs: int, *, random_state) -> np.ndarray:
    """Algorithm 2's estimate of ``||x - y||^2`` over ``n_runs`` releases of the two rows, fresh ``R`` and noise each.

    The population Theorem 3 describes (variance over ``R`` and the noise).

    Parameters
    ----------
    pair : array_like, shape (2, d)
    n_components : int
    sigma : float
        Noise s.d., fixed (independent of ``R``).
    n_runs : int
    random_state : numpy.random.Generator
    """
    pair = check_array(pair, name="pair")
    if pair.shape[0] != 2:
        raise ValueError(f"pair must hold two records, shape (2, d); got {pair.shape[0]} rows")
    n_runs = check_integer(n_runs, "n_runs")
    rng = check_random_state(random_state)
    d, one_pair = pair.shape[1], np.array([[0, 1]])
    return np.array(
        [
            dppro.squared_distance_estimate(
                dppro.project_and_perturb(
                    pair, dppro.gaussian_projection(d, n_components, random_state=rng), sigma, random_state=rng
                ),
                sigma,
                one_pair,
            )[0]
            for _ in range(n_runs)
        ]
    )


def sigma_of_r_trials(difference, n_components: int, scale: float, *, n_batches: int, batch: int, random_state):
    """Algorithm 2 with Theorem 2's ``sigma(R) = theta_2(R) * scale``, published with ``R``: ``n_batches * batch`` runs.

    Each run draws ``R`` and the noise difference ``phi_x - phi_y ~ N(0, 2 sigma(R)^2 I_k)`` and
    returns ``||(x - y) R + phi||^2 - 2 k sigma(R)^2``.

    Parameters
    ----------
    difference : array_like, shape (d,)
        ``x - y``.
    n_components : int
    scale : float
        ``sigma / theta_2`` of the calibration (``dppro.theorem2_sigma(1, epsilon, delta)``).
    n_batches, batch : int
    random_state : numpy.random.Generator

    Returns
    -------
    estimates, sigmas, projected : ndarray, shape (n_batches * batch,)
        The estimate, ``sigma(R)`` and ``||(x - y) R||^2`` of each run.
    """
    z = check_array(difference, ndim=1, name="difference")
    k = check_integer(n_components, "n_components")
    n_batches, batch = check_integer(n_batches, "n_batches"), check_integer(batch, "batch")
    rng = check_random_state(random_state)
    estimates, sigmas, projected = [], [], []
    for _ in range(n_batches):
        R_stack = rng.normal(0.0, 1 / np.sqrt(k), size=(batch, z.size, k))
        v = np.einsum("j,rjk->rk", z, R_stack)
        s = np.sqrt(np.max(np.sum(R_stack**2, axis=2), axis=1)) * scale
        noise = rng.normal(0.0, 1.0, size=(batch, k)) * (np.sqrt(2) * s[:, None])
        estimates.append(np.sum((v + noise) ** 2, axis=1) - 2 * k * s**2)
        sigmas.append(s)
        projected.append(np.sum(v**2, axis=1))
    return tuple(np.concatenate(x) for x in (estimates, sigmas, projected))


def joint_shift_ratios(n_features: int, components, *, n_draws: int, random_state) -> np.ndarray:
    """Shift of the joint release of several projections (Sec. IV-D), each at Theorem 2's sigma, per draw.

    Sec. IV-D releases ``P_j = X R_j + Phi_j`` for ``J`` projections (one per range of distances,
    ``R_j`` with ``components[j]`` columns), each calibrated alone: ``sigma_j = theta_2(R_j) c``.
    Together they are one Gaussian mechanism. Changing attribute ``a`` of one binary record moves
    the stacked release by ``(sum_j ||R_{j,a}||^2 / sigma_j^2)^(1/2)`` noise units, so the joint
    shift is ``mu_J = m_J / c`` with

        ``m_J = max_a (sum_{j <= J} ||R_{j,a}||^2 / theta_2(R_j)^2)^(1/2)``, in ``[1, sqrt(J)]``,

    and the joint release's exact epsilon at ``delta`` is that of a Gaussian mechanism with
    ``sensitivity / sigma = mu_J`` (:func:`dpnb.privacy.mechanisms.gaussian_epsilon`). ``m_1 = 1``:
    one projection is exactly Theorem 2's release. One pass over the rows of each matrix:
    ``O(n_draws * d * sum(components))`` time.

    Parameters
    ----------
    n_features : int
        ``d``.
    components : sequence of int
        ``k`` of each projection, in the order they join the release; each in ``[1, d]``.
    n_draws : int
        Independent draws of all ``J`` matrices (each draw: ``dppro.gaussian_projection`` per
        ``k``, in order).
    random_state : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_draws, J)
        Column ``J - 1`` holds ``m_J`` of the first ``J`` projections of each draw.

    Examples
    --------
    >>> m = joint_shift_ratios(45, [4, 8], n_draws=3, random_state=np.random.default_rng(0))
    >>> m.shape, bool(np.all(m[:, 0] == 1)), bool(np.all(m[:, 1] <= np.sqrt(2)))
    ((3, 2), True, True)
    """
    d = check_integer(n_features, "n_features")
    if isinstance(components, (str, bytes)) or not hasattr(components, "__len__") or len(components) == 0:
        raise ValueError(f"components must be a non-empty sequence of projected dimensions, got {components!r}")
    ks = [check_n_components(k, d, "each of components") for k in components]
    n_draws = check_integer(n_draws, "n_draws")
    rng = check_random_state(random_state)
    out = np.empty((n_draws, len(ks)))
    for i in range(n_draws):
        total = np.zeros(d)
        for j, k in enumerate(ks):
            rows = np.sum(dppro.gaussian_projection(d, k, random_state=rng) ** 2, axis=1)  # ||R_{j,a}||^2
            total += rows / rows.max()
            out[i, j] = np.sqrt(total.max())
    return out


def _upper_pairs(X, truth) -> tuple:
    X = check_array(X)
    truth = check_array(truth, ndim=1, name="truth")
    iu = np.triu_indices(X.shape[0], 1)
    if truth.size != iu[0].size:
        raise ValueError(
            f"truth must hold the {iu[0].size} squared distances of the pairs i < j of X's {X.shape[0]} rows, "
            f"got {truth.size}"
        )
    return X, truth, iu


def l2_error_fixed_sigma(X, truth, n_components: int, sigma: float, *, n_reps: int, random_state) -> float:
    """Mean eq.-(12) error over ``n_reps`` releases at a fixed noise s.d. ``sigma`` (the captions' reading).

    Parameters
    ----------
    X : array_like, shape (n, d)
    truth : array_like, shape (n (n - 1) / 2,)
        The true squared distances of the pairs ``i < j`` (``np.triu_indices`` order).
    n_components : int
    sigma : float
    n_reps : int
    random_state : numpy.random.Generator
    """
    X, truth, iu = _upper_pairs(X, truth)

    def estimate(rng):
        R = dppro.gaussian_projection(X.shape[1], n_components, random_state=rng)
        return dppro.squared_distance_estimate(dppro.project_and_perturb(X, R, sigma, random_state=rng), sigma)

    return _mean_error(estimate, truth, iu, n_reps, random_state)


def l2_error_private(
    X, truth, n_components: int, epsilon: float, delta: float, *, neighbours: str, groups=(), n_reps: int, random_state
) -> float:
    """Mean eq.-(12) error over ``n_reps`` :class:`~dpnb.papers.dppro.DPPro` releases at ``(epsilon, delta)``.

    Parameters
    ----------
    X, truth, n_components
        As in :func:`l2_error_fixed_sigma`.
    epsilon, delta : float
    neighbours : {"change-attribute", "replace-row"}
        The neighbour notion (:class:`~dpnb.papers.dppro.DPPro`'s ``neighbours``).
    groups : sequence of sequences of int
        One-hot blocks (``attribute_groups``), for the attribute relation.
    n_reps : int
    random_state : numpy.random.Generator
    """
    X, truth, iu = _upper_pairs(X, truth)

    def estimate(rng):
        model = dppro.DPPro(
            n_components, epsilon, delta, neighbours=neighbours, attribute_groups=groups, random_state=rng
        )
        return model.fit(X).estimate_squared_distances()

    return _mean_error(estimate, truth, iu, n_reps, random_state)


def _mean_error(estimate, truth, iu, n_reps, random_state) -> float:
    """Mean eq.-(12) error of ``n_reps`` releases, each ``estimate(rng)`` (an ``n x n`` matrix of squared
    distance estimates, read at the pairs ``iu``), all drawn from one generator in turn."""
    rng = check_random_state(random_state)
    errors = [dppro.relative_l2_error(truth, estimate(rng)[iu]) for _ in range(check_integer(n_reps, "n_reps"))]
    return float(np.mean(errors))


def expected_l2_error(truth, n_components, sigma) -> float:
    """``E[eq. (12)]`` from Theorem 3: the per-pair variances summed over ``sum rho^4`` (a fixed denominator).

    Parameters
    ----------
    truth : array_like of shape (m,)
        True squared distances ``rho^2``, not all zero.
    n_components : int
    sigma : float
    """
    rho2 = check_array(truth, ndim=1, name="truth")
    if not np.any(rho2):
        raise ValueError("truth is all zero: eq. (12) is undefined")
    return float(np.sum(dppro.squared_distance_variance(rho2, n_components, sigma)) / np.sum(rho2**2))


def one_hot_groups(feature_names) -> list[list[int]]:
    """Column indices of each one-hot block (``"workclass=Private"``, ...), in order of first appearance.

    A categorical attribute is the group of columns named ``"<attribute>=<level>"``; other columns
    belong to no group.
    """
    if isinstance(feature_names, str) or not all(isinstance(f, str) for f in feature_names):
        raise TypeError("feature_names must be a sequence of column names (str)")
    prefixes = [f.split("=")[0] if "=" in f else None for f in feature_names]
    return [[j for j, q in enumerate(prefixes) if q == name] for name in dict.fromkeys(q for q in prefixes if q)]


def svm_test_error(make_release, X_train, y_train, X_test, y_test, *, seed: int, key, n_reps: int) -> float:
    """Mean test error of ``Pipeline([("release", make_release(rng)), ("svm", LinearSVC())])`` over ``n_reps`` fits.

    Rep ``r`` draws the SVM's seed and then the release from ``stream(seed, (*key, r))``. The
    release step's ``fit_transform`` is what the SVM trains on and its ``transform`` what it is
    tested on (for DPPro: the released ``P``, and the test rows times the public ``R``).

    Parameters
    ----------
    make_release : callable
        ``make_release(rng)`` -> an unfitted transformer.
    X_train, y_train, X_test, y_test : array_like
    seed : int
    key : tuple of str and int
    n_reps : int
    """
    if not callable(make_release):
        raise TypeError("make_release must be a callable rng -> transformer")
    errs = []
    for rep in range(check_integer(n_reps, "n_reps")):
        rng = stream(seed, (*key, rep))
        svm = LinearSVC(dual=False, random_state=sklearn_seed(rng))
        pipe = Pipeline([("release", make_release(rng)), ("svm", svm)])
        errs.append(float(np.mean(pipe.fit(X_train, y_train).predict(X_test) != y_test)))
    return float(np.mean(errs))


def fixed_sigma_svm_error(
    X_train, y_train, X_test, y_test, n_components: int, sigma: float, *, seed: int, key, n_reps: int
) -> float:
    """Mean test error of a linear SVM on training rows released as ``X R + N(0, sigma^2)`` (no calibration).

    The test rows are projected with the same public ``R``, without noise. Rep ``r`` draws ``R``,
    the SVM's seed and the noise, in that order, from ``stream(seed, (*key, r))``.
    """
    X_train, X_test = check_array(X_train, name="X_train"), check_array(X_test, name="X_test")
    errs = []
    for rep in range(check_integer(n_reps, "n_reps")):
        rng = stream(seed, (*key, rep))
        R = dppro.gaussian_projection(X_train.shape[1], n_components, random_state=rng)
        clf = LinearSVC(dual=False, random_state=sklearn_seed(rng))
        clf.fit(dppro.project_and_perturb(X_train, R, sigma, random_state=rng), y_train)
        errs.append(float(np.mean(clf.predict(X_test @ R) != y_test)))
    return float(np.mean(errs))
