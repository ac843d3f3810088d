import numpy as np
import pytest

from dpnb.numerics.evaluation import Interval, decimals_for, format_interval, interval, summarize, tied_with_best


@pytest.mark.parametrize(
    "half, digits", [(0.0251, 2), (0.0149, 3), (0.25, 1), (3.2, 0), (12.0, 0), (39287.0, -4), (0.001, 4), (0.0019, 4)]
)
def test_decimals_follow_the_half_width(half, digits):
    assert decimals_for(half) == digits


def test_format_interval():
    assert format_interval(0.73024, 0.0251) == "0.73 ± 0.03"
    assert format_interval(0.73024, 0.0149) == "0.730 ± 0.015"
    assert format_interval(1234.7, 31.0) == "1230 ± 30"
    assert format_interval(563927.0, 39287.0) == "560000 ± 40000"
    assert format_interval(17.3, 1.2) == "17.3 ± 1.2"
    assert format_interval(2.5, 0) == "2.5 (no spread)"
    assert format_interval(0.8329999999999999, 3e-16) == "0.833 (no spread)"


@pytest.mark.parametrize(
    "bad, error",
    [
        (0.0, ValueError),
        (-1.0, ValueError),
        (np.inf, ValueError),
        (np.nan, ValueError),
        ("1", TypeError),
        (True, TypeError),
    ],
)
def test_decimals_reject(bad, error):
    with pytest.raises(error):
        decimals_for(bad)


def test_interval_covers_the_mean_at_its_level():
    rng = np.random.default_rng(0)
    hits = sum(interval(rng.normal(1.0, 2.0, 20)).contains(1.0) for _ in range(2000))
    # 95% coverage; with 2000 repetitions a binomial 99.9% band is about +-0.016
    assert abs(hits / 2000 - 0.95) < 0.016
    est = interval([1.0, 2.0, 3.0])
    assert isinstance(est, Interval) and est.n == 3 and est.mean == 2.0 and est.half_width > 0
    with pytest.raises(ValueError):
        interval([1.0])


def test_summarize_rows():
    rows = summarize({"a": [1.0, 1.1, 0.9], "b": np.array([[2.0, 2.2]])})
    assert [r["method"] for r in rows] == ["a", "b"]
    assert rows[0]["shown"] == str(interval([1.0, 1.1, 0.9]))
    with pytest.raises(TypeError):
        summarize([])


def test_tied_with_best_numbers_tie_within_roundoff_only():

    a = 0.1 + 0.2
    assert tied_with_best([a, 0.3, 0.2]) == [0, 1]  # 0.1 + 0.2 and 0.3 differ in the last bit
    assert tied_with_best([0.3, a, 0.2]) == [0, 1]  # which one round-off makes larger does not matter
    assert tied_with_best([0.3, 0.3 * (1 + 1e-6)]) == [1]  # a real difference is not a tie
    assert tied_with_best({"x": 2.0, "y": 1.0, "z": 1.0}, higher_is_better=False) == ["y", "z"]
    assert tied_with_best(np.array([1.0, 1.0 + 1e-12, -1.0])) == [0, 1]


def test_tied_with_best_intervals_tie_when_they_overlap():

    scores = {
        "a": Interval(0.80, 0.78, 0.82, 10),
        "b": Interval(0.77, 0.75, 0.79, 10),
        "c": Interval(0.7, 0.69, 0.71, 10),
    }
    assert tied_with_best(scores) == ["a", "b"]
    assert tied_with_best(scores, higher_is_better=False) == ["c"]
    assert tied_with_best({"a": Interval(0.80, 0.78, 0.82, 10), "exact": 0.775}) == ["a"]


def _near_ties(rng, n):
    """Scores with exact ties, round-off-close pairs, real differences, infinities and zeros of either sign."""
    base = rng.choice([0.0, -0.0, 1.0, -1.0, 0.3, 1e300, -1e-300, 1.7976931348623157e308, np.inf, -np.inf], size=n)
    with np.errstate(over="ignore"):  # the largest double times (1 + 1e-6) is inf, a value like any other here
        nudged = base * (1 + rng.choice([0.0, 1e-16, 5e-10, 1e-9, 2e-9, 1e-6], size=n) * rng.choice([-1, 1], size=n))
    return np.where(rng.random(n) < 0.5, nudged, rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12, size=n))


@pytest.mark.parametrize("seed", range(40))
def test_tied_with_best_on_a_float_array_is_the_rule_applied_score_by_score(seed):
    """The array path (one pass of NumPy operations) gives exactly the tied set of the per-score path (lists)."""
    rng = np.random.default_rng(seed)
    values = _near_ties(rng, int(rng.integers(1, 60)))
    rtol = float(rng.choice([0.0, 1e-9, 1e-3]))
    with np.errstate(over="ignore"):
        single = values.astype(np.float32)  # 1e300 becomes inf
    for higher in (True, False):
        for array in (values, single, np.repeat(values, 2)[::2]):  # contiguous, float32, strided
            expected = tied_with_best([float(v) for v in array], higher_is_better=higher, rtol=rtol)
            assert tied_with_best(array, higher_is_better=higher, rtol=rtol) == expected


def test_tied_with_best_takes_the_array_path_for_plain_float_arrays_only(monkeypatch):
    """A plain 1-d float array with a Python-number rtol never calls the per-score function; a masked array or a
    NumPy-scalar rtol goes score by score, as before (a masked score is not a number; a float32 rtol rounds)."""
    import warnings

    from dpnb.numerics import evaluation

    assert tied_with_best(np.array([1.0, 1.0 + 1e-8]), rtol=np.float32(1e-9)) == [0, 1]  # float32 arithmetic
    with pytest.raises(TypeError):
        tied_with_best(np.ma.masked_array([1.0, 5.0, 2.0], mask=[0, 1, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # v ± slack overflowing to inf warns on neither path
        assert tied_with_best(np.array([1.7976931348623157e308, 1.0])) == [0]

    def refuse(*args):
        raise AssertionError("the per-score path ran")

    monkeypatch.setattr(evaluation, "_score_interval", refuse)
    assert tied_with_best(np.array([2.0, 1.0, 2.0]), rtol=0) == [0, 2]
    assert tied_with_best(np.array([2.0, 1.0], dtype=np.float32), higher_is_better=False) == [1]


def test_tied_with_best_on_a_float_array_refuses_what_the_per_score_path_refuses():
    with pytest.raises(ValueError, match="NaN"):
        tied_with_best(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="empty"):
        tied_with_best(np.array([], dtype=float))
    with pytest.raises(ValueError, match="rtol"):
        tied_with_best(np.array([1.0]), rtol=1.0)


@pytest.mark.parametrize(
    ("scores", "error"),
    [([], ValueError), ([1.0, float("nan")], ValueError), ("ab", TypeError), ([1.0, "x"], TypeError), (3.0, TypeError)],
)
def test_tied_with_best_refuses_bad_scores(scores, error):

    with pytest.raises(error):
        tied_with_best(scores)
