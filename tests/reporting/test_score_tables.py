import matplotlib

matplotlib.use("Agg")

import pytest

from dpnb.numerics.evaluation import interval
from dpnb.reporting.score_tables import (
    control_evidence,
    control_text,
    finished,
    is_control,
    plot_scores,
    private_intervals,
    repetitions_needed,
    repetitions_to_separate,
    score_cell,
    score_table,
    separation_text,
    versus_control,
)


class Stopped:
    def __str__(self):
        return "stopped after 5 s"


SCORES = {
    "real data (non-private)": {0.1: [0.9, 0.91, 0.92], 1.0: [0.9, 0.91, 0.92]},
    "data-free control": {0.1: [0.5, 0.52, 0.51], 1.0: [0.5, 0.52, 0.51]},
    "A": {0.1: [0.50, 0.53, 0.51], 1.0: [0.80, 0.81, 0.82]},
    "B": {0.1: [0.52, 0.50, 0.51], 1.0: [Stopped(), 0.7, 0.71]},
}


def test_finished_and_cells():
    assert finished([0.1, 2]) and not finished([0.1, Stopped()]) and not finished([True, 1.0])
    assert score_cell([0.80, 0.81, 0.82]) == str(interval([0.80, 0.81, 0.82]))
    assert score_cell([Stopped(), 0.7, 0.71]) == "stopped after 5 s (1 of 3 seeds)"
    assert score_cell([Stopped(), Stopped()]) == "stopped after 5 s"


def test_controls_left_out_of_private_intervals():
    assert is_control("data-free control") and is_control("real data (non-private)") and not is_control("A")
    assert list(private_intervals(SCORES, 1.0)) == ["A"]  # B did not finish at 1.0
    assert list(private_intervals(SCORES, 0.1)) == ["A", "B"]


def test_score_table_tied_sets():
    rows, tied = score_table(SCORES, [0.1, 1.0])
    assert [r["method"] for r in rows] == list(SCORES) and set(rows[0]) == {"method", "eps=0.1", "eps=1"}
    assert tied == {0.1: ["A", "B"], 1.0: ["A"]}
    assert score_table(SCORES, [0.1], higher_is_better=False)[1][0.1] == ["A", "B"]


def test_versus_control_and_evidence():
    outcome = versus_control(SCORES, "data-free control", [0.1, 1.0], higher_is_better=True)
    assert outcome[1.0] == (["A"], False, None)
    better, worse, pair = outcome[0.1]
    assert better == [] and not worse and pair is not None
    agrees, would_decide = control_evidence(outcome)
    assert agrees is None and "repetitions" in would_decide
    assert would_decide == repetitions_needed([pair])
    assert control_evidence({1.0: (["A"], False, None)}) == (True, None)
    assert control_evidence({1.0: ([], True, None)}) == (False, None)
    a, b = [1.0, 1.1, 0.9], [2.0, 2.1, 1.9]
    assert control_text({1.0: (["A"], False, None), 10.0: ([], False, (a, b))}, "above") == (
        "eps=1 above it: A; eps=10 above it: none (about 3 repetitions would separate them)"
    )


def test_repetitions_to_separate():
    a, b = [1.0, 1.1, 0.9], [2.0, 2.1, 1.9]
    assert repetitions_to_separate(a, b) == 3  # t(2) 0.2 / sqrt(3) = 0.50 < 1 = gap; t(1) 0.2 / sqrt(2) = 1.8
    assert repetitions_to_separate([1.0, 2.0], [1.0, 2.0]) is None
    far = repetitions_to_separate([0.0, 1.0, 2.0], [1.5, 2.5, 3.5])
    assert far is not None and far > 3
    assert separation_text([1.0, 2.0], [1.0, 2.0]) == "no number of repetitions up to 1000 would"
    assert separation_text([0.0, 1.0, 2.0], [1.5, 2.5, 3.5]) == f"about {far} repetitions would separate them"
    assert repetitions_needed([(a, b), ([0.0, 1.0, 2.0], [1.5, 2.5, 3.5])]) == f"about {far} repetitions"
    assert repetitions_needed([(a, b), ([1.0, 2.0], [1.0, 2.0])]) == "no number of repetitions up to 1000"
    with pytest.raises(ValueError, match="empty"):
        repetitions_needed([])


def test_plot_scores_runs():
    plot_scores(SCORES, [0.1, 1.0], "accuracy", log=True)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: score_cell([]), ValueError),
        (lambda: score_table({}, [0.1]), ValueError),
        (lambda: repetitions_to_separate([1.0], [1.0, 2.0]), ValueError),
        (lambda: repetitions_to_separate([1.0, 2.0], [1.0, 2.0], cap=1), ValueError),
        (lambda: versus_control(SCORES, "missing control", [0.1], higher_is_better=True), ValueError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
