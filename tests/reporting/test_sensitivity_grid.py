import numpy as np
import pytest

from dpnb.chapters.foundations import ball_pair, box_pair
from dpnb.privacy.audit import ReplaceRowBox, ReplaceRowL2Ball
from dpnb.reporting.sensitivity_grid import AuditedBound, GridAudit, evaluate_grid, grid_table, pair_change, span

BOX = ReplaceRowBox(-1.0, 1.0)


def mean_bound(claimed=lambda n, d: 2 * d / n, **fields):
    """The mean of n rows in [-1, 1]^d: L1 sensitivity 2d/n, reached by ones vs row 0 at -1."""
    spec = dict(
        name="mean",
        relation=BOX,
        query=lambda n, d: lambda X: X.mean(axis=-2),
        bound=claimed,
        worst_pair=box_pair,
        grid=[(2, 1), (10, 3), (100, 8)],
        search_points=[(3, 2)],
        axes=("N", "M"),
        stacks=True,
    )
    spec.update(fields)
    return AuditedBound(**spec)


def run(*bounds, seed=7):
    return evaluate_grid(bounds, seed=seed, n_starts=2, n_steps=20)


def test_a_reached_bound_has_ratio_one_everywhere():
    result = run(mean_bound())["mean"]
    assert result.pair_ratios == pytest.approx({(2, 1): 1.0, (10, 3): 1.0, (100, 8): 1.0})
    assert result.search_ratios[(3, 2)] == pytest.approx(1.0)  # the search starts from the reaching pair
    assert not result.exceeds
    assert result.coverage() == "N 2-100, M 1-8"
    assert result.summary() == (
        "worst-case pair / bound 1.000 (N 2-100, M 1-8); search max / bound 1.000 (1 search points)"
    )


def test_a_bound_too_small_is_refuted_by_the_pair():
    result = run(mean_bound(claimed=lambda n, d: d / n))["mean"]
    assert result.max_ratio == pytest.approx(2.0)
    assert result.exceeds


def test_the_search_refutes_without_a_pair():
    # no pair, no grid: a random search still finds a change above half the true sensitivity
    result = run(mean_bound(claimed=lambda n, d: d / (2 * n), worst_pair=None, grid=[]))["mean"]
    assert result.pair_ratios == {}
    assert result.pair_span() == "-"
    assert result.exceeds
    assert result.summary().startswith("search max / bound ")


def test_a_serial_query_is_stacked_for_the_batched_search():
    serial = mean_bound(query=lambda n, d: lambda X: X.mean(axis=0), stacks=False)
    assert run(serial)["mean"].search_ratios[(3, 2)] == pytest.approx(1.0)


def test_searches_are_reproducible_and_keyed_by_name_and_point():
    def found(bound, seed=7):  # the pair each search ends on (no steps: the random starts themselves)
        result = evaluate_grid([bound], seed=seed, n_starts=2, n_steps=0)[bound.name]
        return {p: a.X for p, a in result.searches.items()}

    bound = mean_bound(start_from_pair=False, search_points=[(3, 2), (4, 2)])
    first = found(bound)
    np.testing.assert_array_equal(first[(3, 2)], found(bound)[(3, 2)])
    assert not np.array_equal(first[(3, 2)], found(bound, seed=8)[(3, 2)])
    assert not np.array_equal(first[(3, 2)], found(mean_bound(name="other", start_from_pair=False))[(3, 2)])
    assert not np.array_equal(first[(3, 2)][:3], first[(4, 2)][:3])


def test_search_as_reuses_the_search_of_an_earlier_bound():
    loose = mean_bound(name="mean-loose", claimed=lambda n, d: 4 * d / n, search_as="mean")
    results = run(mean_bound(), loose)
    assert results["mean-loose"].searches is results["mean"].searches
    assert results["mean-loose"].search_ratios[(3, 2)] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="earlier bound"):
        run(loose, mean_bound())
    with pytest.raises(ValueError, match="same relation"):
        run(mean_bound(), mean_bound(name="other", search_as="mean", search_points=[(4, 2)]))


def test_l2_norm_and_width():
    # X^T X / n for unit rows: Frobenius sensitivity sqrt(2)/n, reached by e1 vs e2 (the ball pair)
    bound = AuditedBound(
        "cov",
        ReplaceRowL2Ball(1.0),
        lambda n, d: lambda X: X.T @ X / n,
        lambda n, d: np.sqrt(2) / n,
        ball_pair,
        grid=[(2, 2), (5, 4)],
        search_points=[(3, 3)],
        norm=2,
        width=lambda n, d: d,
        neighbours="unit ball",
    )
    result = run(bound)["cov"]
    assert result.pair_ratios == pytest.approx({(2, 2): 1.0, (5, 4): 1.0})
    assert not result.exceeds
    assert grid_table({"cov": result})[0]["relation"] == "unit ball"


def test_grid_table_rows_and_search_digits():
    results = run(mean_bound(), mean_bound(name="half", claimed=lambda n, d: d / n, search_digits=1))
    rows = grid_table(results)
    assert [r["bound"] for r in rows] == ["mean", "half"]
    assert rows[0] == {
        "bound": "mean",
        "relation": "ReplaceRowBox",
        "grid": "N 2-100, M 1-8",
        "worst-case pair / bound": "1.000",
        "search max / bound": "1.000",
        "exceeds": False,
    }
    assert rows[1]["worst-case pair / bound"] == "2.000"
    assert rows[1]["search max / bound"] == "2.0"
    assert rows[1]["exceeds"] is True


def test_axes_none_hides_an_entry():
    result = run(mean_bound(axes=("N", None)))["mean"]
    assert result.coverage() == "N 2-100"


def test_span():
    assert span([1.0, 1.0 + 1e-12]) == "1.000"
    assert span([0.5, 1.0], 2) == "0.50-1.00"
    with pytest.raises(ValueError, match="at least one"):
        span([])
    with pytest.raises(ValueError, match="digits"):
        span([1.0], -1)


@pytest.mark.parametrize(
    "fields, error, match",
    [
        ({"name": ""}, ValueError, "name"),
        ({"relation": "box"}, TypeError, "relation"),
        ({"query": 3}, TypeError, "query"),
        ({"bound": None}, TypeError, "bound"),
        ({"worst_pair": "pair"}, TypeError, "worst_pair"),
        ({"grid": []}, ValueError, "at least one point"),
        ({"grid": "abc"}, TypeError, "sequence of points"),
        ({"grid": [(2.5, 1)]}, ValueError, "tuple of integers"),
        ({"grid": [[2, 1]]}, ValueError, "tuple of integers"),
        ({"grid": [(0, 1)]}, ValueError, "number of rows"),
        ({"search_points": []}, ValueError, "at least one point"),
        ({"grid": [(2, 1, 1)]}, ValueError, "same length"),
        ({"axes": ("N",)}, ValueError, "axes"),
        ({"axes": ("N", "")}, ValueError, "axes"),
        ({"norm": 3}, ValueError, "norm"),
        ({"search_digits": -1}, ValueError, "search_digits"),
        ({"neighbours": 1}, TypeError, "neighbours"),
        ({"worst_pair": None}, ValueError, "needs a worst_pair"),
    ],
)
def test_bad_bounds_are_refused(fields, error, match):
    with pytest.raises(error, match=match):
        mean_bound(**fields)


def test_bad_evaluate_grid_arguments():
    with pytest.raises(TypeError, match="AuditedBound"):
        evaluate_grid([], seed=1, n_starts=1, n_steps=1)
    with pytest.raises(TypeError, match="AuditedBound"):
        evaluate_grid(["mean"], seed=1, n_starts=1, n_steps=1)
    with pytest.raises(ValueError, match="unique"):
        run(mean_bound(), mean_bound())
    with pytest.raises(ValueError, match="n_starts"):
        evaluate_grid([mean_bound()], seed=1, n_starts=0, n_steps=1)
    with pytest.raises(ValueError, match="seed"):
        evaluate_grid([mean_bound()], seed=-1, n_starts=1, n_steps=1)
    with pytest.raises(ValueError, match="key"):
        evaluate_grid([mean_bound()], seed=1, n_starts=1, n_steps=1, key="")
    with pytest.raises(TypeError, match="evaluate_grid"):
        grid_table({})
    assert isinstance(run(mean_bound())["mean"], GridAudit)


def test_pair_change():
    X, Xp = box_pair(4, 3)
    assert pair_change(lambda A: A.mean(axis=0), X, Xp) == pytest.approx(1.5)
    assert pair_change(lambda A: A.mean(axis=0), X, Xp, norm=2) == pytest.approx(np.sqrt(3) / 2)
    assert pair_change(lambda A: A.mean(axis=0), X, Xp, norm="inf") == pytest.approx(0.5)
    with pytest.raises(TypeError, match="query"):
        pair_change("mean", X, Xp)
    with pytest.raises(ValueError, match="norm"):
        pair_change(lambda A: A, X, Xp, norm=3)
