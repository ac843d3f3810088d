"""Sensitivity bounds audited over a grid: worst-case pairs evaluated exactly, adversarial searches.

A chapter states sensitivity bounds for every size: "the mean of ``n`` rows in ``[-a, a]^d`` moves by
at most ``2da/n``". It audits each in two ways, under the neighbour relation its proof uses:

1. the **worst-case pair** of the derivation, evaluated exactly at every point of a grid (a ratio
   ``change / bound`` of 1 means the bound is reached, above 1 that it is refuted);
2. an **adversarial search** (:func:`dpnb.privacy.audit.search_sensitivity`, batched, started from
   the same pair and from random pairs) at a few small points. A search can refute a bound, never
   prove one.

Each bound is one :class:`AuditedBound` with named fields. A *point* is a tuple of integers whose
first entry is the number of rows ``n`` (for example ``(n, d, k)``); every factory field is called
with the point unpacked, ``field(*point)``. :func:`evaluate_grid` runs the audits (each search on
its own stream ``stream(seed, (key, name, *point))``) and :func:`grid_table` tabulates them;
:func:`pair_change` is the exact change of a query on one pair.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpnb.ground.streams import stream
from dpnb.ground.validation import check_integer
from dpnb.privacy.audit import NeighbourRelation, SensitivityAudit, output_distance, search_sensitivity_batched

# A change above bound * (1 + EXCEEDS_RTOL) refutes the bound; below it, the difference is round-off.
EXCEEDS_RTOL = 1e-9


def _second_entry(*point) -> int:
    return point[1]


@dataclass(frozen=True)
class AuditedBound:
    """One sensitivity bound, with everything its audit needs.

    Parameters
    ----------
    name : str
        Short id shown in the table (e.g. ``"prop3"``); unique within one :func:`evaluate_grid` call.
    relation : NeighbourRelation
        The neighbour relation of the bound's proof (what the search moves along).
    query : callable
        ``query(*point) -> f``, the query at that point; ``f(X)`` maps one dataset ``(n, width)`` to
        any array (or, with ``stacks=True``, a stack ``(m, n, width)`` to the stack of outputs).
    bound : callable
        ``bound(*point) -> float > 0``, the claimed sensitivity at that point.
    worst_pair : callable or None
        ``worst_pair(*point) -> (X, X_prime)``, the derivation's neighbouring pair, each of shape
        ``(n, width)``. None when the derivation names none (the grid then only searches).
    grid : sequence of points
        Where the worst-case pair is evaluated exactly.
    search_points : sequence of points
        Where the adversarial search runs (small sizes: it is a local search).
    norm : 1, 2, 'inf', 'spectral' or callable(a, b) -> float
        Distance between outputs, as in :func:`~dpnb.privacy.audit.search_sensitivity`.
    width : callable
        ``width(*point) -> int``, the row width searched; by default the point's second entry.
    axes : sequence of str or None
        A name per point entry for the coverage text (``("N", "M", "K")``); None hides an entry.
    neighbours : str
        The relation in words, for the table (default: the relation's class name).
    stacks : bool
        Whether ``query(*point)`` already maps a stack of datasets to a stack of outputs; if not, the
        batched search loops over the stack.
    search_as : str or None
        Name of an earlier bound on the *same* query, relation, norm and search points whose searches
        this one reuses (a second bound on the same change needs no second search).
    start_from_pair : bool
        Whether the search starts from the worst-case pair (besides the random starts).
    search_digits : int or None
        Decimals of this bound's search ratios in the table (None: the table's default), for a
        search whose maximum is only reproducible to fewer digits.
    """

    name: str
    relation: NeighbourRelation
    query: Callable
    bound: Callable
    worst_pair: Callable | None
    grid: Sequence[tuple]
    search_points: Sequence[tuple]
    norm: object = 1
    width: Callable = _second_entry
    axes: Sequence[str | None] = ()
    neighbours: str = ""
    stacks: bool = False
    search_as: str | None = None
    start_from_pair: bool = True
    search_digits: int | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.relation, NeighbourRelation):
            raise TypeError(f"{self.name}: relation must be a NeighbourRelation (e.g. ReplaceRowBox(-1, 1))")
        for key in ("query", "bound", "width"):
            if not callable(getattr(self, key)):
                raise TypeError(f"{self.name}: {key} must be a callable of the point, e.g. lambda n, d, k: ...")
        if self.worst_pair is not None and not callable(self.worst_pair):
            raise TypeError(f"{self.name}: worst_pair must be a callable of the point, or None")
        if self.worst_pair is None and self.start_from_pair:
            object.__setattr__(self, "start_from_pair", False)
        object.__setattr__(self, "grid", _points(self.grid, f"{self.name}: grid", allow_empty=self.worst_pair is None))
        object.__setattr__(self, "search_points", _points(self.search_points, f"{self.name}: search_points"))
        if self.worst_pair is None and self.grid:
            raise ValueError(f"{self.name}: a grid needs a worst_pair to evaluate; give one or leave grid empty")
        output_distance(np.zeros(1), np.zeros(1), self.norm)  # validates the norm
        lengths = {len(p) for p in self.grid + self.search_points}
        if len(lengths) > 1:
            raise ValueError(f"{self.name}: every point must have the same length, got lengths {sorted(lengths)}")
        if self.axes:
            if len(self.axes) != lengths.pop():
                raise ValueError(f"{self.name}: axes must name each entry of a point (or None), got {self.axes!r}")
            if not all(a is None or (isinstance(a, str) and a) for a in self.axes):
                raise ValueError(f"{self.name}: axes must be non-empty strings or None, got {self.axes!r}")
        if self.search_digits is not None:
            check_integer(self.search_digits, f"{self.name}: search_digits", minimum=0)
        if not isinstance(self.neighbours, str):
            raise TypeError(f"{self.name}: neighbours must be a string")
        if not self.neighbours:
            object.__setattr__(self, "neighbours", type(self.relation).__name__)


def _points(points, what: str, allow_empty: bool = False) -> tuple:
    if isinstance(points, (str, bytes)) or not isinstance(points, Sequence):
        raise TypeError(f"{what} must be a sequence of points (tuples of integers, n first)")
    out = []
    for p in points:
        if (
            not isinstance(p, tuple)
            or not p
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in p)
        ):
            raise ValueError(f"{what}: each point must be a non-empty tuple of integers, got {p!r}")
        if p[0] < 1:
            raise ValueError(f"{what}: a point's first entry is the number of rows n >= 1, got {p!r}")
        out.append(tuple(int(v) for v in p))
    if not out and not allow_empty:
        raise ValueError(f"{what} must hold at least one point")
    return tuple(out)


def span(values, digits: int = 3) -> str:
    """``"lo-hi"`` of ``values`` at ``digits`` decimals, or one number when they agree up to round-off."""
    values = np.asarray(list(values), dtype=float)
    if values.size == 0:
        raise ValueError("span needs at least one value")
    check_integer(digits, "digits", minimum=0)
    lo, hi = values.min(), values.max()
    return f"{lo:.{digits}f}" if np.isclose(lo, hi, rtol=1e-9) else f"{lo:.{digits}f}-{hi:.{digits}f}"


@dataclass(frozen=True)
class GridAudit:
    """The audit of one :class:`AuditedBound`: exact pair ratios on the grid and search ratios.

    Attributes
    ----------
    bound : AuditedBound
    pair_ratios : dict
        ``point -> change on the worst-case pair / bound`` over ``bound.grid``.
    search_ratios : dict
        ``point -> largest change found / bound`` over ``bound.search_points``.
    searches : dict
        ``point -> SensitivityAudit`` (shared with the bound named by ``search_as``, if any).
    """

    bound: AuditedBound
    pair_ratios: dict
    search_ratios: dict
    searches: dict = field(repr=False)

    @property
    def max_ratio(self) -> float:
        """Largest ratio, pairs and searches together."""
        return max([*self.pair_ratios.values(), *self.search_ratios.values()])

    @property
    def exceeds(self) -> bool:
        """Whether a pair or a search moved the query beyond the bound (beyond round-off)."""
        return self.max_ratio > 1 + EXCEEDS_RTOL

    def coverage(self) -> str:
        """The grid's extent per named axis, e.g. ``"N 2-1000, M 2-64, K 1-64"``."""
        points = self.bound.grid or self.bound.search_points
        axes = self.bound.axes or tuple(f"axis {i}" for i in range(len(points[0])))
        parts = []
        for i, axis in enumerate(axes):
            if axis is not None:
                lo, hi = min(p[i] for p in points), max(p[i] for p in points)
                parts.append(f"{axis} {lo}" if lo == hi else f"{axis} {lo}-{hi}")
        return ", ".join(parts)

    def pair_span(self, digits: int = 3) -> str:
        """Range of the worst-case pair's ratios (``"-"`` without a pair)."""
        return span(self.pair_ratios.values(), digits) if self.pair_ratios else "-"

    def search_span(self, digits: int = 3) -> str:
        """Range of the search ratios (at the bound's own ``search_digits`` when it sets them)."""
        return span(self.search_ratios.values(), self._search_digits(digits))

    def _search_digits(self, digits: int) -> int:
        return digits if self.bound.search_digits is None else self.bound.search_digits

    def summary(self, digits: int = 3) -> str:
        """One line for a claims table: both ratio ranges, the grid covered and the number of searches."""
        pair = f"worst-case pair / bound {self.pair_span(digits)} ({self.coverage()}); " if self.pair_ratios else ""
        return f"{pair}search max / bound {self.search_span(digits)} ({len(self.search_ratios)} search points)"


def pair_change(query, X, X_prime, norm=1) -> float:
    """``||query(X) - query(X_prime)||``, the exact change of ``query`` on one pair of datasets.

    ``norm`` as in :func:`~dpnb.privacy.audit.search_sensitivity` (1 and 2 act on the flattened output).
    """
    if not callable(query):
        raise TypeError(f"query must be a callable of a dataset, got {type(query).__name__}")
    return output_distance(query(X), query(X_prime), norm)


def _stacked(query):
    """The query over a stack of datasets ``(m, n, d)``: what a batched search evaluates in one call."""
    return lambda S: np.stack([np.asarray(query(X), dtype=float) for X in S])


def evaluate_grid(bounds, *, seed, n_starts: int, n_steps: int, key: str = "search") -> dict[str, GridAudit]:
    """Audit every bound: its worst-case pair on its grid, and a batched search at each search point.

    Parameters
    ----------
    bounds : sequence of AuditedBound
        Names unique; a bound with ``search_as`` follows the bound it names.
    seed : int
        Root seed; the search of bound ``name`` at ``point`` draws from ``stream(seed, (key, name, *point))``.
    n_starts, n_steps : int
        Random starts (besides the worst-case pair) and local steps of each search.
    key : str
        First part of every search's stream key.

    Returns
    -------
    dict
        ``name -> GridAudit``, in the order of ``bounds``.
    """
    bounds = list(bounds)
    if not bounds or not all(isinstance(b, AuditedBound) for b in bounds):
        raise TypeError("bounds must be a non-empty sequence of AuditedBound")
    check_integer(seed, "seed", minimum=0)
    n_starts = check_integer(n_starts, "n_starts")
    n_steps = check_integer(n_steps, "n_steps", minimum=0)
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty string, got {key!r}")
    results: dict[str, GridAudit] = {}
    for b in bounds:
        if b.name in results:
            raise ValueError(f"bound names must be unique; {b.name!r} appears twice")
        pair_ratios = {p: pair_change(b.query(*p), *b.worst_pair(*p), b.norm) / b.bound(*p) for p in b.grid}
        if b.search_as is not None:
            searches = _reused_searches(b, results)
        else:
            searches = {p: _search(b, p, seed, n_starts, n_steps, key) for p in b.search_points}
        search_ratios = {p: searches[p].max_found / b.bound(*p) for p in b.search_points}
        results[b.name] = GridAudit(b, pair_ratios, search_ratios, searches)
    return results


def _reused_searches(b: AuditedBound, results: dict) -> dict:
    if b.search_as not in results:
        raise ValueError(f"{b.name}: search_as={b.search_as!r} must name an earlier bound")
    other = results[b.search_as].bound
    if other.relation is not b.relation or other.search_points != b.search_points or other.norm != b.norm:
        raise ValueError(f"{b.name}: search_as={b.search_as!r} needs the same relation, norm and search points")
    return results[b.search_as].searches


def _search(b: AuditedBound, point: tuple, seed, n_starts: int, n_steps: int, key: str) -> SensitivityAudit:
    query = b.query(*point)
    return search_sensitivity_batched(
        query if b.stacks else _stacked(query),
        b.relation,
        point[0],
        b.width(*point),
        norm=b.norm,
        claimed=b.bound(*point),
        n_starts=n_starts,
        n_steps=n_steps,
        starts=[b.worst_pair(*point)] if b.start_from_pair else None,
        random_state=stream(seed, (key, b.name, *point)),
    )


def grid_table(results: dict[str, GridAudit], digits: int = 3) -> list[dict]:
    """One row per audited bound: bound, relation, grid, pair ratio range, search ratio range, exceeds.

    The rows are for :func:`dpnb.reporting.report.markdown_table`; ratios are text at ``digits``
    decimals (a bound's ``search_digits`` overrides them for its searches).
    """
    if not isinstance(results, dict) or not results or not all(isinstance(r, GridAudit) for r in results.values()):
        raise TypeError("results must be the non-empty dict evaluate_grid returns")
    check_integer(digits, "digits", minimum=0)
    return [
        {
            "bound": name,
            "relation": r.bound.neighbours,
            "grid": r.coverage(),
            "worst-case pair / bound": r.pair_span(digits),
            "search max / bound": r.search_span(digits),
            "exceeds": r.exceeds,
        }
        for name, r in results.items()
    ]
