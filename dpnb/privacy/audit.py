"""Empirical privacy audits.

Two tools, both used by every paper notebook:

1. :func:`search_sensitivity` -- an adversarial search over neighbouring datasets for the
   largest ``||f(X) - f(X')||``. A search can only give a *lower* bound on the true
   sensitivity, so it refutes a published bound (when it exceeds it) but never proves one; the
   notebooks pair it with a derivation.
2. :func:`audit_epsilon` -- a statistical audit that runs a mechanism many times on a fixed
   neighbouring pair and returns a one-sided lower confidence bound on the epsilon it really
   satisfies (Clopper-Pearson on the best threshold event, threshold chosen on a separate
   half of the samples so the bound stays valid).

Neighbour relations are small objects that know how to draw a valid pair ``(X, X')`` and
how to move it while keeping it valid; subclass :class:`NeighbourRelation` for a new one.

For queries that evaluate a whole stack of datasets, :func:`search_sensitivity_batched` advances
all starts of the search in lockstep and evaluates every start's candidate pair in one query
call; for mechanisms that draw many outputs per call, ``audit_epsilon(batched=True)`` draws all
runs on a dataset in one mechanism call (the same draws as the serial audit for such mechanisms).

Neighbour notions are named once, in ``NEIGHBOURS`` (``"replace-row"``,
``"change-attribute"``, ``"add-remove-row"``): every ``neighbours=`` keyword of dpnb takes one of
these names and validates it with :func:`check_neighbours`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from dpnb.ground.validation import (
    check_bounds,
    check_choice,
    check_delta,
    check_fraction,
    check_integer,
    check_positive,
    check_random_state,
)


# --------------------------------------------------------------------------------------
# Neighbour relations
# --------------------------------------------------------------------------------------
class NeighbourRelation(ABC):
    """A neighbour relation on ``n x d`` datasets over a data domain.

    Subclasses implement :meth:`random_row`, :meth:`project_row` and :meth:`neighbour`.
    The search keeps the differing row index at 0 without loss of generality for queries
    symmetric in the rows; pass ``row_index`` to :func:`search_sensitivity` otherwise.

    The row-stack methods :meth:`random_rows`, :meth:`project_rows`, :meth:`perturb_rows` and
    :meth:`neighbours` serve the batched search; by default they loop over the one-row methods,
    and a subclass may override them with vectorised versions of the same moves.
    """

    description: str = ""

    @abstractmethod
    def random_row(self, d: int, rng: np.random.Generator) -> np.ndarray:
        """A random point of the domain (starts of the search)."""

    @abstractmethod
    def project_row(self, row: np.ndarray) -> np.ndarray:
        """The nearest point of the domain to ``row``."""

    def neighbour(self, X: np.ndarray, i: int, candidate: np.ndarray) -> np.ndarray:
        """``X`` with row ``i`` replaced by the projection of ``candidate``."""
        X2 = X.copy()
        X2[i] = self.project_row(candidate)
        return X2

    def perturb_row(self, row: np.ndarray, rng: np.random.Generator, step: float) -> np.ndarray:
        """A random local move of one row, projected back to the domain."""
        return self.project_row(row + step * rng.standard_normal(row.shape))

    def random_rows(self, m: int, d: int, rng: np.random.Generator) -> np.ndarray:
        """``m`` random points of the domain, shape ``(m, d)``."""
        return np.stack([self.random_row(d, rng) for _ in range(m)])

    def project_rows(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`project_row` applied to each row of an ``(m, d)`` stack."""
        return np.stack([self.project_row(row) for row in rows])

    def perturb_rows(self, rows: np.ndarray, rng: np.random.Generator, steps: np.ndarray) -> np.ndarray:
        """``perturb_row`` applied to each row of an ``(m, d)`` stack, row ``k`` with ``steps[k]``."""
        return np.stack([self.perturb_row(row, rng, step) for row, step in zip(rows, steps)])

    def neighbours(self, X: np.ndarray, i: int, candidates: np.ndarray) -> np.ndarray:
        """:meth:`neighbour` on a stack: ``X`` of shape ``(m, n, d)``, one candidate row per dataset."""
        if type(self).neighbour is NeighbourRelation.neighbour:
            X2 = X.copy()
            X2[:, i] = self.project_rows(candidates)
            return X2
        return np.stack([self.neighbour(x, i, c) for x, c in zip(X, candidates)])


class ReplaceRowBox(NeighbourRelation):
    """Replace one row by any row of the box ``[low, high]^d`` (the neighbours ``"replace-row"``).

    ``low, high`` (positional): the public ``bounds`` pair, scalars or per-column arrays,
    validated by :func:`dpnb.ground.validation.check_bounds`.
    """

    def __init__(self, low=-1.0, high=1.0, /):
        self.low, self.high = check_bounds((low, high), name="the box (low, high)")
        self.description = f"replace one row inside the box [{low}, {high}]^d"

    def _bounds(self, d):
        return np.broadcast_to(self.low, (d,)), np.broadcast_to(self.high, (d,))

    def random_row(self, d, rng):
        low, high = self._bounds(d)
        u = rng.random(d)
        if rng.random() < 0.5:  # half the starts at vertices, where box-bounded extremes usually sit
            u = np.round(u)
        return low + u * (high - low)

    def project_row(self, row):
        return np.clip(row, self.low, self.high)

    def perturb_row(self, row, rng, step):
        low, high = self._bounds(row.size)
        new = row + step * (high - low) * rng.standard_normal(row.shape)
        if rng.random() < 0.3:  # snap one coordinate to a face of the box
            j = rng.integers(row.size)
            new[j] = low[j] if rng.random() < 0.5 else high[j]
        return self.project_row(new)

    def random_rows(self, m, d, rng):
        low, high = self._bounds(d)
        u = rng.random((m, d))
        vertex = rng.random(m) < 0.5  # as random_row: half the rows at vertices
        u[vertex] = np.round(u[vertex])
        return low + u * (high - low)

    def project_rows(self, rows):
        return self.project_row(rows)  # np.clip broadcasts over the stack

    def perturb_rows(self, rows, rng, steps):
        m, d = rows.shape
        low, high = self._bounds(d)
        new = rows + np.asarray(steps, dtype=float)[:, None] * (high - low) * rng.standard_normal(rows.shape)
        snap = np.flatnonzero(rng.random(m) < 0.3)  # as perturb_row: snap one coordinate to a face
        j = rng.integers(d, size=snap.size)
        new[snap, j] = np.where(rng.random(snap.size) < 0.5, low[j], high[j])
        return self.project_rows(new)


class ReplaceRowL2Ball(NeighbourRelation):
    """Replace one row by any row of L2 norm <= ``data_norm`` (``on_sphere``: norm exactly ``data_norm``)."""

    def __init__(self, data_norm=1.0, on_sphere: bool = False):
        self.data_norm = check_positive(data_norm, "data_norm")
        self.on_sphere = bool(on_sphere)
        shape = "sphere" if on_sphere else "ball"
        self.description = f"replace one row inside the L2 {shape} of radius {data_norm}"

    def random_row(self, d, rng):
        v = rng.standard_normal(d)
        v *= self.data_norm / np.linalg.norm(v)
        return v if self.on_sphere or rng.random() < 0.5 else v * rng.random() ** (1 / d)

    def project_row(self, row):
        return self.project_rows(row[None, :])[0]

    def perturb_row(self, row, rng, step):
        return self.project_row(row + step * self.data_norm * rng.standard_normal(row.shape))

    def random_rows(self, m, d, rng):
        v = rng.standard_normal((m, d))
        v *= self.data_norm / np.linalg.norm(v, axis=1, keepdims=True)
        if not self.on_sphere:  # as random_row: half the rows moved inside, radius u^(1/d)
            inside = np.flatnonzero(rng.random(m) < 0.5)
            v[inside] *= rng.random((inside.size, 1)) ** (1 / d)
        return v

    def project_rows(self, rows):
        norm = np.linalg.norm(rows, axis=1, keepdims=True)
        scale = np.divide(self.data_norm, norm, out=np.ones_like(norm), where=norm > 0)
        out = rows * (scale if self.on_sphere else np.minimum(scale, 1.0))
        if self.on_sphere:
            out[norm[:, 0] == 0, 0] = self.data_norm  # the zero row goes to radius * e_1
        return out

    def perturb_rows(self, rows, rng, steps):
        noise = np.asarray(steps, dtype=float)[:, None] * self.data_norm * rng.standard_normal(rows.shape)
        return self.project_rows(rows + noise)


class ChangeOneAttribute(ReplaceRowBox):
    """Change a single attribute of a single record within ``[low, high]`` (the neighbours ``"change-attribute"``)."""

    def __init__(self, low=0.0, high=1.0, /, attribute: int | None = None):
        super().__init__(low, high)
        self.attribute = attribute
        self.description = f"change one attribute of one record within [{low}, {high}]"

    def neighbour(self, X, i, candidate):
        X2 = X.copy()
        j = self.attribute if self.attribute is not None else int(np.argmax(np.abs(candidate - X[i])))
        X2[i, j] = self.project_row(candidate)[j]
        return X2


class LabelledBall(NeighbourRelation):
    """Rows ``(x, y)``: ``x`` in the L2 ball of radius ``data_norm`` (all but the last column) and a
    real label ``|y| <= label_bound`` in the last column; replace one whole row (RON-Gauss's
    supervised setting, Sec. 4.3)."""

    def __init__(self, label_bound=1.0, data_norm=1.0):
        self.label_bound = check_positive(label_bound, "label_bound")
        self.ball = ReplaceRowL2Ball(data_norm)
        self.description = f"replace one (x, y) with ||x|| <= {data_norm}, |y| <= {label_bound}"

    def random_row(self, d, rng):
        return np.append(self.ball.random_row(d - 1, rng), rng.uniform(-self.label_bound, self.label_bound))

    def project_row(self, row):
        return self.project_rows(row[None, :])[0]

    def random_rows(self, m, d, rng):
        labels = rng.uniform(-self.label_bound, self.label_bound, m)
        return np.column_stack([self.ball.random_rows(m, d - 1, rng), labels])

    def project_rows(self, rows):
        labels = np.clip(rows[:, -1], -self.label_bound, self.label_bound)
        return np.column_stack([self.ball.project_rows(rows[:, :-1]), labels])

    def perturb_rows(self, rows, rng, steps):
        # the one-row move (NeighbourRelation.perturb_row): Gaussian steps, then the projection
        return self.project_rows(rows + np.asarray(steps, dtype=float)[:, None] * rng.standard_normal(rows.shape))


class LabelledBox(NeighbourRelation):
    """Rows ``(z, c)``: features in the box ``[low, high]`` (all but the last column) and a class
    label ``c`` in ``{0, ..., n_classes - 1}`` (last column); the replacement may change the class."""

    def __init__(self, low=-1.0, high=1.0, /, n_classes: int = 2):
        self.box = ReplaceRowBox(low, high)
        self.n_classes = check_integer(n_classes, "n_classes", minimum=2)
        self.description = f"replace one labelled row in [{low}, {high}]^d (its class may change)"

    def random_row(self, d, rng):
        return np.append(self.box.random_row(d - 1, rng), rng.integers(0, self.n_classes))

    def project_row(self, row):
        label = float(np.clip(np.round(row[-1]), 0, self.n_classes - 1))
        return np.append(self.box.project_row(row[:-1]), label)

    def perturb_row(self, row, rng, step):
        new = np.append(self.box.perturb_row(row[:-1], rng, step), row[-1])
        if rng.random() < 0.3:
            new[-1] = rng.integers(0, self.n_classes)
        return self.project_row(new)

    def random_rows(self, m, d, rng):
        return np.column_stack([self.box.random_rows(m, d - 1, rng), rng.integers(0, self.n_classes, size=m)])

    def project_rows(self, rows):
        labels = np.clip(np.round(rows[:, -1]), 0, self.n_classes - 1)
        return np.column_stack([self.box.project_rows(rows[:, :-1]), labels])

    def perturb_rows(self, rows, rng, steps):
        new = np.column_stack([self.box.perturb_rows(rows[:, :-1], rng, steps), rows[:, -1]])
        relabel = np.flatnonzero(rng.random(len(rows)) < 0.3)  # as perturb_row: a new class with probability 0.3
        new[relabel, -1] = rng.integers(0, self.n_classes, size=relabel.size)
        return self.project_rows(new)


class FlipOneBit(NeighbourRelation):
    """Binary data in {0, 1}^d; neighbours differ in one attribute of one record."""

    description = "flip one binary attribute of one record"

    def random_row(self, d, rng):
        return rng.integers(0, 2, size=d).astype(float)

    def project_row(self, row):
        return (row >= 0.5).astype(float)

    def perturb_row(self, row, rng, step):
        new = row.copy()
        flips = max(1, int(round(step * row.size / 4)))
        idx = rng.choice(row.size, size=min(flips, row.size), replace=False)
        new[idx] = 1 - new[idx]
        return new

    def neighbour(self, X, i, candidate):
        X2 = X.copy()
        diff = np.flatnonzero(candidate != X[i])
        j = int(diff[0]) if diff.size else 0
        X2[i, j] = 1 - X2[i, j]
        return X2


class AddRemoveRows(NeighbourRelation):
    """Add/remove neighbours (the paper's Definition 1) for a search over fixed-shape arrays.

    Rows carry a trailing *presence* column: every row of ``X`` is present (1); the neighbour
    ``X'`` is ``X`` with row ``i`` marked absent (0), i.e. that record removed (adding is the
    same pair read the other way). Queries must count only the present rows: pass the presence
    column as row weights (e.g. ``moments_vector(Z[..., :-1], weights=Z[..., -1])`` of
    :mod:`dpnb.papers.component_analysis`; a sum with 0/1 weights is the sum over the present
    rows). The other columns follow ``inner``, any replace-one relation.
    """

    def __init__(self, inner: NeighbourRelation):
        if not isinstance(inner, NeighbourRelation):
            raise TypeError(f"inner must be a NeighbourRelation, got {type(inner).__name__}")
        self.inner = inner
        self.description = f"add/remove one row; rows: {inner.description}"

    def random_row(self, d, rng):
        return np.append(self.inner.random_row(d - 1, rng), 1.0)

    def project_row(self, row):
        return np.append(self.inner.project_row(np.asarray(row, dtype=float)[:-1]), 1.0)

    def neighbour(self, X, i, candidate):
        X2 = X.copy()
        X2[i, -1] = 0.0
        return X2

    def random_rows(self, m, d, rng):
        return np.column_stack([self.inner.random_rows(m, d - 1, rng), np.ones(m)])

    def project_rows(self, rows):
        return np.column_stack([self.inner.project_rows(np.asarray(rows, dtype=float)[:, :-1]), np.ones(len(rows))])

    def perturb_rows(self, rows, rng, steps):
        # the one-row move (NeighbourRelation.perturb_row): Gaussian steps, then the projection
        return self.project_rows(rows + np.asarray(steps, dtype=float)[:, None] * rng.standard_normal(rows.shape))

    def neighbours(self, X, i, candidates):
        """Row ``i`` marked absent in every dataset of the stack ``X`` (the candidates play no part)."""
        X2 = X.copy()
        X2[:, i, -1] = 0.0
        return X2


# The neighbour notions by name: every ``neighbours=`` keyword in dpnb takes one of these keys
# (validated by :func:`check_neighbours`); the value is the relation that searches that notion
# (other domains of the same notion: ReplaceRowL2Ball, LabelledBall, LabelledBox and
# dpnb.papers.component_analysis.OneHotRows replace a row; FlipOneBit changes an attribute).
NEIGHBOURS = {
    "replace-row": ReplaceRowBox,
    "change-attribute": ChangeOneAttribute,
    "add-remove-row": AddRemoveRows,
}


def check_neighbours(value, supported=tuple(NEIGHBOURS)) -> str:
    """Return ``value`` after checking it names a neighbour notion of ``NEIGHBOURS`` in ``supported``.

    ``supported`` lists the notions the caller implements (every key by default); the error names
    them (TypeError for a non-string).
    """
    unknown = [name for name in supported if name not in NEIGHBOURS]
    if unknown:
        raise ValueError(f"supported names {unknown} are not neighbour notions; use keys of {tuple(NEIGHBOURS)}")
    return check_choice(value, "neighbours", supported)


def replace_row(rows, new_row, index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(X, X_prime)``: the dataset ``rows`` (a matrix or a list of equal-length rows) and a copy with row
    ``index`` replaced by ``new_row`` -- a replace-one pair, as every chapter's worst-case constructions build
    them (no domain check: the constructions place their rows on the boundary on purpose)."""
    X = np.array(rows, dtype=float)
    if X.ndim != 2 or len(X) < 1:
        raise ValueError(f"rows must be a non-empty list of equal-length rows, got shape {X.shape}")
    new_row = np.asarray(new_row, dtype=float)
    if new_row.shape != X.shape[1:]:
        raise ValueError(f"new_row must have {X.shape[1]} entries, got shape {new_row.shape}")
    X_prime = X.copy()
    X_prime[check_integer(index, "index", minimum=0, maximum=len(X) - 1)] = new_row
    return X, X_prime


# --------------------------------------------------------------------------------------
# Adversarial sensitivity search
# --------------------------------------------------------------------------------------
def output_distance(a, b, norm) -> float:
    """The distance between two query outputs that sensitivity audits measure.

    ``norm`` is 1, 2 or ``"inf"`` (of the flattened difference), ``"spectral"`` (the largest
    singular value of a matrix difference) or a callable ``(a, b) -> float``.
    """
    if callable(norm):
        return float(norm(a, b))
    diff = np.ravel(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    if norm == 1:
        return float(np.abs(diff).sum())
    if norm == 2:
        return float(np.sqrt(diff @ diff))
    if norm == np.inf or norm == "inf":
        return float(np.abs(diff).max())
    if norm == "spectral":
        D = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
        return float(np.linalg.norm(D, 2))
    raise ValueError(f"norm must be 1, 2, 'inf', 'spectral' or a callable, got {norm!r}")


def _pair_distances(query, X, Xp, norm) -> np.ndarray:
    """:func:`output_distance` between ``query(X[k])`` and ``query(Xp[k])`` for each ``k``, in one ``query`` call."""
    m = len(X)
    both = np.asarray(query(np.concatenate([X, Xp])))
    if both.shape[:1] != (2 * m,):
        raise ValueError(f"a batched query must return one output per dataset ({2 * m}), got shape {both.shape}")
    a, b = both[:m], both[m:]
    if callable(norm):
        return np.array([float(norm(x, y)) for x, y in zip(a, b)])
    diff = a.astype(float) - b.astype(float)
    if norm == "spectral":
        return np.linalg.norm(diff, 2, axis=(-2, -1))
    flat = diff.reshape(m, -1)
    if norm == 1:
        return np.abs(flat).sum(axis=1)
    if norm == 2:
        return np.sqrt(np.einsum("ij,ij->i", flat, flat))
    return np.abs(flat).max(axis=1)  # 'inf' (the norm was validated before)


def _search_batched(query, relation, X, Xp, n_steps, row_index, norm, rng):
    """(1+1) evolution strategies from every start pair of ``X``, ``Xp`` (shape ``(m, n, d)``) in lockstep.

    Each step perturbs every start's pair as :func:`search_sensitivity` does and evaluates all ``2 m``
    datasets in one ``query`` call. Returns the final distances and pairs.
    """
    m, n, d = X.shape
    value = _pair_distances(query, X, Xp, norm)
    step = np.full(m, 0.5)
    for _ in range(n_steps):
        X2 = relation.perturb_rows(X.reshape(m * n, d), rng, np.repeat(step, n)).reshape(m, n, d)
        Xp2 = relation.neighbours(X2, row_index, relation.perturb_rows(Xp[:, row_index], rng, step))
        v2 = _pair_distances(query, X2, Xp2, norm)
        better = v2 > value
        X[better], Xp[better], value[better] = X2[better], Xp2[better], v2[better]
        step = np.where(better, np.minimum(step * 1.5, 2.0), np.maximum(step * 0.9, 1e-4))
    return value, X, Xp


@dataclass
class SensitivityAudit:
    """Outcome of :func:`search_sensitivity`.

    Attributes
    ----------
    max_found : float
        Largest distance found (a lower bound on the true sensitivity).
    claimed : float or None
        The published bound being audited.
    X, X_prime : ndarray
        The neighbouring pair that attains ``max_found``.
    n_evaluations : int
        Number of query pairs evaluated.
    """

    max_found: float
    claimed: float | None
    X: np.ndarray
    X_prime: np.ndarray
    norm: object
    n_evaluations: int
    history: list = field(default_factory=list, repr=False)

    @property
    def ratio(self) -> float:
        """``max_found / claimed`` (nan when no bound was claimed)."""
        return float("nan") if not self.claimed else self.max_found / self.claimed

    @property
    def exceeds(self) -> bool:
        """True when the search found a pair beyond the claimed bound (beyond rounding)."""
        return self.claimed is not None and self.max_found > self.claimed * (1 + 1e-9) + 1e-12

    def summary(self, precision: int = 4) -> str:
        """One line: found vs claimed, at fixed precision."""
        if self.claimed is None:
            return f"max found {self.max_found:.{precision}f} ({self.n_evaluations} evaluations)"
        verdict = "EXCEEDS the claimed bound" if self.exceeds else "within the claimed bound"
        return (
            f"max found {self.max_found:.{precision}f} vs claimed {self.claimed:.{precision}f} "
            f"(ratio {self.ratio:.{precision}f}): {verdict}"
        )


def search_sensitivity(
    query: Callable,
    relation: NeighbourRelation,
    n: int,
    d: int,
    *,
    norm=2,
    claimed: float | None = None,
    n_starts: int = 20,
    n_steps: int = 200,
    starts=None,
    row_index: int = 0,
    random_state=None,
) -> SensitivityAudit:
    """Search for the neighbouring pair maximising ``||query(X) - query(X')||``, one start after another.

    Random starts (plus any given ``starts``) are improved by a (1+1) evolution strategy
    with a 1/5-success step-size rule: each step moves every row of ``X`` and the replacement
    row, projects them back to the domain and keeps the move if the distance grew.
    :func:`search_sensitivity_batched` runs the same strategy on all starts at once.

    Parameters
    ----------
    query : callable
        ``query(X) -> array``; any output shape.
    relation : NeighbourRelation
    n, d : int
        Dataset size and dimension searched over.
    norm : 1, 2, 'inf', 'spectral' or callable(a, b) -> float
        Distance between outputs; 1 and 2 act on the flattened output (entrywise).
    claimed : float, optional
        The published sensitivity, reported beside the search result.
    n_starts, n_steps : int
        Random restarts and local steps per start.
    starts : iterable of (X, X_prime), optional
        Hand-crafted starting pairs (e.g. a suspected worst case) tried before random ones.
    row_index : int
        Index of the row that differs.
    random_state : None, int or Generator
    """
    n, d, n_starts, n_steps, claimed, start_pairs, rng = _check_search(
        relation, n, d, n_starts, n_steps, row_index, norm, claimed, starts, random_state
    )
    best = (-np.inf, None, None)
    evaluations = 0
    history = []
    for _ in range(n_starts):
        X = np.stack([relation.random_row(d, rng) for _ in range(n)])
        start_pairs.append((X, relation.neighbour(X, row_index, relation.random_row(d, rng))))

    for X, Xp in start_pairs:
        fX = query(X)
        value = output_distance(fX, query(Xp), norm)
        evaluations += 2
        step = 0.5
        for _ in range(n_steps):
            X2 = np.stack([relation.perturb_row(r, rng, step) for r in X])
            Xp2 = relation.neighbour(X2, row_index, relation.perturb_row(Xp[row_index], rng, step))
            v2 = output_distance(query(X2), query(Xp2), norm)
            evaluations += 2
            if v2 > value:
                X, Xp, value = X2, Xp2, v2
                step = min(step * 1.5, 2.0)
            else:
                step = max(step * 0.9, 1e-4)
        history.append(value)
        if value > best[0]:
            best = (value, X, Xp)
    return SensitivityAudit(
        max_found=float(best[0]),
        claimed=claimed,
        X=best[1],
        X_prime=best[2],
        norm=norm,
        n_evaluations=evaluations,
        history=history,
    )


def search_sensitivity_batched(
    query: Callable,
    relation: NeighbourRelation,
    n: int,
    d: int,
    *,
    norm=2,
    claimed: float | None = None,
    n_starts: int = 20,
    n_steps: int = 200,
    starts=None,
    row_index: int = 0,
    random_state=None,
) -> SensitivityAudit:
    """:func:`search_sensitivity` with every start advanced in lockstep and evaluated in one ``query`` call.

    ``query`` maps a stack of datasets, shape ``(m, n, d)``, to the stack of their outputs (first
    axis ``m``); each step evaluates every start's candidate pair in one call, with the relation's
    row-stack moves (:meth:`NeighbourRelation.perturb_rows`). The same search strategy and
    parameters as :func:`search_sensitivity`; the random draws come in another order, so at equal
    seed the result differs from the one-start-at-a-time search's.
    """
    n, d, n_starts, n_steps, claimed, start_pairs, rng = _check_search(
        relation, n, d, n_starts, n_steps, row_index, norm, claimed, starts, random_state
    )
    X = relation.random_rows(n_starts * n, d, rng).reshape(n_starts, n, d)
    Xp = relation.neighbours(X, row_index, relation.random_rows(n_starts, d, rng))
    X = np.concatenate([np.array([a for a, _ in start_pairs]).reshape(-1, n, d), X])
    Xp = np.concatenate([np.array([b for _, b in start_pairs]).reshape(-1, n, d), Xp])
    values, X, Xp = _search_batched(query, relation, X, Xp, n_steps, row_index, norm, rng)
    k = int(np.argmax(values))
    return SensitivityAudit(
        max_found=float(values[k]),
        claimed=claimed,
        X=X[k],
        X_prime=Xp[k],
        norm=norm,
        n_evaluations=2 * len(values) * (n_steps + 1),
        history=[float(v) for v in values],
    )


def _check_search(relation, n, d, n_starts, n_steps, row_index, norm, claimed, starts, random_state):
    """The validated arguments of both searches: ``n, d, n_starts, n_steps, claimed, start pairs, rng``."""
    if not isinstance(relation, NeighbourRelation):
        raise ValueError("relation must be a NeighbourRelation instance (e.g. ReplaceRowBox())")
    n, d, n_starts = (check_integer(v, name) for v, name in ((n, "n"), (d, "d"), (n_starts, "n_starts")))
    n_steps = check_integer(n_steps, "n_steps", minimum=0)
    if not (0 <= row_index < n):
        raise ValueError(f"row_index must be in [0, n={n}), got {row_index}")
    if claimed is not None:
        claimed = float(claimed)
    output_distance(np.zeros(1), np.zeros(1), norm)  # validates `norm` before any work
    rng = check_random_state(random_state)
    start_pairs = [(np.array(a, dtype=float), np.array(b, dtype=float)) for a, b in (starts or [])]
    for X, Xp in start_pairs:
        if X.shape != (n, d) or Xp.shape != (n, d):
            raise ValueError(f"start pairs must have shape ({n}, {d}), got {X.shape} and {Xp.shape}")
    return n, d, n_starts, n_steps, claimed, start_pairs, rng


# --------------------------------------------------------------------------------------
# Statistical epsilon audit
# --------------------------------------------------------------------------------------
@dataclass
class EpsilonAudit:
    """Outcome of :func:`audit_epsilon`.

    ``epsilon_lower`` is a one-sided lower confidence bound (level ``1 - alpha``) on the epsilon
    the mechanism satisfies at ``delta``; ``claimed`` is the epsilon it advertises.
    """

    epsilon_lower: float
    claimed: float | None
    delta: float
    alpha: float
    threshold: float
    direction: str
    counts: tuple
    n_samples: int

    @property
    def violates(self) -> bool:
        """True when the lower bound exceeds the advertised epsilon: a refuted guarantee."""
        return self.claimed is not None and self.epsilon_lower > self.claimed

    def summary(self, precision: int = 3) -> str:
        base = (
            f"epsilon >= {self.epsilon_lower:.{precision}f} with confidence {1 - self.alpha:.2f} "
            f"({self.n_samples} runs per dataset)"
        )
        if self.claimed is None:
            return base
        return base + (f"; claimed {self.claimed:.{precision}f}: " + ("VIOLATED" if self.violates else "consistent"))


def _event_epsilons(k_num, k_den, m, delta, confidence) -> np.ndarray:
    """``log((P_lower[k_num] - delta) / P_upper[k_den])`` (0 where that is undefined) element by element, for two
    same-shape integer arrays of counts out of ``m`` runs.

    ``P_lower`` and ``P_upper`` are the ends of :func:`dpnb.numerics.stats.clopper_pearson`'s interval at
    ``confidence``, from the same SciPy Beta quantiles (so the same values), one per distinct count instead of
    two Python-level calls per pair.
    """
    a = (1 - confidence) / 2
    counts = np.unique(np.concatenate([k_num.ravel(), k_den.ravel()]))
    some, not_all = counts > 0, counts < m
    low, high = np.zeros(counts.size), np.ones(counts.size)
    low[some] = _st.beta.ppf(a, counts[some], m - counts[some] + 1)
    high[not_all] = _st.beta.ppf(1 - a, counts[not_all] + 1, m - counts[not_all])
    num = low[np.searchsorted(counts, k_num)] - delta
    den = high[np.searchsorted(counts, k_den)]
    out = np.zeros(num.shape)
    ok = (num > 0) & (den > 0)
    out[ok] = np.log(num[ok] / den[ok])
    return out


def _checked_halves(pair, half: str) -> list[np.ndarray]:
    """The two statistics of ``pair`` as float vectors of one value per run (shape ``(runs,)`` or ``(runs, 1)``) and
    of one positive number of runs, else ``ValueError`` naming the ``half``."""
    out = []
    for x in pair:
        x = np.asarray(x, dtype=float)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim != 1:
            raise ValueError(f"the {half} halves must hold one statistic value per run, got shape {x.shape}")
        out.append(x)
    if out[0].size < 1 or any(x.size != out[0].size for x in out):
        raise ValueError(f"the {half} halves must hold the same positive number of runs, got {[x.size for x in out]}")
    return out


def threshold_audit(selection, evaluation, thresholds, *, claimed=None, delta=0.0, alpha=0.05) -> EpsilonAudit:
    """The event ``{s > t}`` or ``{s < t}`` chosen on one half of the runs, evaluated on the other.

    ``selection`` and ``evaluation`` are pairs ``(statistic on X, statistic on X')`` of equal-size
    halves. Over ``thresholds``, both sides and both orders of the pair, the selection half picks
    the event maximising the plug-in bound; the evaluation half then gives
    ``epsilon >= log((P_lower[S] - delta) / P_upper[S'])`` with Clopper-Pearson bounds at level
    ``1 - alpha/2`` each, valid with probability at least ``1 - alpha`` because the event does not
    depend on the evaluation half. Shared by :func:`audit_epsilon` and
    :func:`dpnb.privacy.audit_power.audit_epsilon_tails`.
    """
    confidence = 1 - check_fraction(alpha, "alpha", low_open=True)  # two one-sided bounds at alpha/2 each
    sorted_sel = [np.sort(x) for x in _checked_halves(selection, "selection")]
    m_sel = sorted_sel[0].size
    evaluation = _checked_halves(evaluation, "evaluation")
    m_ev = evaluation[0].size
    thresholds = list(thresholds)
    if not thresholds:
        raise ValueError("thresholds is empty: pass at least one threshold to choose the event from")
    t_all = np.asarray(thresholds, dtype=float)
    above = [m_sel - np.searchsorted(x, t_all, side="right") for x in sorted_sel]
    below = [np.searchsorted(x, t_all, side="left") for x in sorted_sel]
    events = [(side, num, den) for side in ("above", "below") for num, den in ((0, 1), (1, 0))]
    counts = {"above": above, "below": below}
    plug_in = _event_epsilons(
        np.stack([counts[side][num] for side, num, _ in events], axis=1),
        np.stack([counts[side][den] for side, _, den in events], axis=1),
        m_sel,
        delta,
        confidence,
    )
    best = int(np.argmax(plug_in))  # the first largest, in the order (threshold, side, order of the pair)
    t, (side, num, den) = thresholds[best // len(events)], events[best % len(events)]
    k = [int(np.sum(x > t)) if side == "above" else int(np.sum(x < t)) for x in evaluation]
    eps_lb = max(0.0, float(_event_epsilons(np.array([k[num]]), np.array([k[den]]), m_ev, delta, confidence)[0]))
    label = f"{'X' if num == 0 else 'X_prime'} over {'X_prime' if num == 0 else 'X'}, statistic {side} threshold"
    return EpsilonAudit(
        epsilon_lower=eps_lb,
        claimed=None if claimed is None else float(claimed),
        delta=float(delta),
        alpha=float(alpha),
        threshold=float(t),
        direction=label,
        counts=(k[num], k[den]),
        n_samples=int(m_sel + m_ev),
    )


def audit_epsilon(
    mechanism: Callable,
    X,
    X_prime,
    *,
    n_samples: int = 10_000,
    statistic=None,
    claimed: float | None = None,
    delta: float = 0.0,
    alpha: float = 0.05,
    n_thresholds: int = 50,
    random_state=None,
    batched: bool = False,
) -> EpsilonAudit:
    """One-sided lower confidence bound on the epsilon of ``mechanism`` on one neighbouring pair.

    The mechanism runs ``n_samples`` times on each dataset; outputs are mapped to a scalar
    by ``statistic``. The first half of the runs chooses the event ``{s > t}`` or ``{s < t}``
    (and which dataset is in the numerator) maximising a plug-in epsilon; the second half
    evaluates it: with Clopper-Pearson bounds at level ``1 - alpha/2`` on each probability,
    ``epsilon >= log((P_lower[M(A) in S] - delta) / P_upper[M(B) in S])`` holds with
    probability at least ``1 - alpha``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng) -> array or float``.
    X, X_prime : array_like
        A neighbouring pair.
    statistic : callable, optional
        Output -> float. Default: the flattened output projected on the difference of mean
        outputs estimated from the selection half.
    claimed : float, optional
        Advertised epsilon, for :attr:`EpsilonAudit.violates`.
    delta : float
        Advertised delta (0 for pure DP).
    alpha : float
        One minus the confidence level of the bound.
    batched : bool
        Opt-in fast path: ``mechanism(data, rng, size)`` returns ``size`` outputs stacked along a
        first axis, and ``statistic`` (if given) maps the stack of flattened outputs, shape
        ``(size, k)``, to ``size`` scalars. A mechanism whose ``size`` draws are those of ``size``
        separate calls (as :func:`dpnb.privacy.mechanisms.laplace_mechanism` with ``size``) gives the
        serial path's result exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from dpnb.privacy.audit import audit_epsilon
    >>> from dpnb.privacy.mechanisms import laplace_mechanism
    >>> def count(data, rng, size):  # a counting query, sensitivity 1, released with half the noise it needs
    ...     return laplace_mechanism(np.sum(data), 1.0, 2.0, random_state=rng, size=size)
    >>> result = audit_epsilon(count, [0, 1, 1], [0, 1, 0], n_samples=20_000, claimed=1.0, random_state=0,
    ...                        batched=True)
    >>> result.violates  # the lower bound exceeds the claimed epsilon = 1: a refuted guarantee
    True
    """
    n_samples = check_integer(n_samples, "n_samples", minimum=20)
    check_fraction(alpha, "alpha", low_open=True)
    if delta != 0:
        delta = check_delta(delta)
    rng = check_random_state(random_state)
    if batched:
        outs = [np.reshape(mechanism(D, rng, n_samples), (n_samples, -1)) for D in (X, X_prime)]
    else:
        outs = [np.array([np.ravel(mechanism(D, rng)) for _ in range(n_samples)]) for D in (X, X_prime)]
    half = n_samples // 2
    sel = [o[:half] for o in outs]
    ev = [o[half:] for o in outs]
    if statistic is None:
        direction_vec = sel[1].mean(axis=0) - sel[0].mean(axis=0)
        if not np.any(direction_vec):
            direction_vec = np.ones_like(direction_vec)
        stat = lambda out: out @ direction_vec  # noqa: E731
        s_sel = [stat(o) for o in sel]
        s_ev = [stat(o) for o in ev]
    elif batched:
        s_sel = [np.asarray(statistic(part), dtype=float).reshape(len(part)) for part in sel]
        s_ev = [np.asarray(statistic(part), dtype=float).reshape(len(part)) for part in ev]
    else:
        s_sel = [np.array([statistic(o) for o in part]) for part in sel]
        s_ev = [np.array([statistic(o) for o in part]) for part in ev]

    pooled = np.concatenate(s_sel)
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.01, 0.99, n_thresholds)))
    return threshold_audit(s_sel, s_ev, thresholds, claimed=claimed, delta=delta, alpha=alpha)
