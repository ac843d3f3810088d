import pytest

from dpnb.numerics.evaluation import Interval, interval
from dpnb.reporting.best_settings import best_score, shown, sole_best_and_close, summarize_best, tied_settings


def test_tied_settings_follow_the_tie_rule():
    by_p = {2: [1.0, 1.1, 0.9], 4: [1.05, 1.0, 1.1], 8: [5.0, 5.1, 4.9]}
    assert tied_settings(by_p) == [8]
    assert tied_settings(by_p, higher_is_better=False) == [2, 4]
    assert tied_settings({1: [3.0], 2: [3.0]}) == [1, 2]  # exact numbers tie within round-off only
    assert tied_settings({1: [3.0], 2: [3.001]}) == [2]


def test_best_score_and_shown():
    assert best_score({2: [1.0, 1.2], 4: [2.0, 2.2]}) == interval([2.0, 2.2])
    assert best_score({2: [1.0, 1.2], 4: [2.0, 2.2]}, higher_is_better=False) == interval([1.0, 1.2])
    assert best_score({7: [0.5]}) == 0.5
    assert shown(0.25) == "0.25 (no spread)"
    assert shown(interval([1.0, 1.1, 0.9])) == str(interval([1.0, 1.1, 0.9]))
    with pytest.raises(TypeError):
        shown("0.3")


def test_summarize_best_rows():
    results = {"real": {10: [0.9]}, "ours": {2: [0.80, 0.82, 0.81], 4: [0.5, 0.52, 0.51]}}
    rows = summarize_best(results, reference={"ours": ".81"}, setting="k")
    assert [r["method"] for r in rows] == ["real", "ours"]
    assert rows[1]["k tied with the best"] == "2"
    assert rows[1]["paper reports"] == ".81" and rows[0]["paper reports"] == "-"
    assert rows[1]["we measure"] == str(interval([0.80, 0.82, 0.81]))
    assert rows[1]["mean"] == pytest.approx(0.81) and isinstance(rows[1]["best"], Interval)
    assert "paper reports" not in summarize_best(results)[0]
    low = summarize_best(results, higher_is_better=False)
    assert low[1]["p tied with the best"] == "4"


@pytest.mark.parametrize(
    "results, error",
    [({}, TypeError), ([1], TypeError), ({"a": {}}, TypeError), ({"a": {1: []}}, ValueError)],
)
def test_summarize_best_rejects(results, error):
    with pytest.raises(error):
        summarize_best(results)


def test_summarize_best_rejects_bad_options():
    with pytest.raises(ValueError, match="setting"):
        summarize_best({"a": {1: [1.0]}}, setting="")
    with pytest.raises(TypeError, match="reference"):
        summarize_best({"a": {1: [1.0]}}, reference=[".3"])


def test_sole_best_and_close():
    results = {
        "real": {9: [0.80]},
        "ours": {2: [0.79, 0.81, 0.80]},
        "theirs": {2: [0.50, 0.52, 0.51]},
    }
    rows = summarize_best(results)
    assert sole_best_and_close(rows, "ours", ["theirs"], "real")
    assert not sole_best_and_close(rows, "theirs", ["ours"], "real")  # not the best
    # best, but the reference lies outside its interval
    far = summarize_best({**results, "real": {9: [0.95]}})
    assert not sole_best_and_close(far, "ours", ["theirs"], "real")
    # tied with a competitor: not alone
    tied = summarize_best({**results, "theirs": {2: [0.80, 0.80, 0.81]}})
    assert not sole_best_and_close(tied, "ours", ["theirs"], "real")
    # lower is better
    assert sole_best_and_close(rows, "theirs", ["ours"], "theirs", higher_is_better=False)
    with pytest.raises(ValueError, match="no row"):
        sole_best_and_close(rows, "ours", ["missing"], "real")
