import numpy as np
import pytest

from dpnb.numerics.evaluation import interval
from dpnb.reporting.estimates import exact_vs_estimate, format_rate


def test_exact_vs_estimate_row():
    rng = np.random.default_rng(0)
    samples = rng.normal(0.3, 0.1, 10_000)
    row = exact_vs_estimate("normal mean", 0.3, samples)
    est = interval(samples, 0.999)
    assert row["setting"] == "normal mean"
    assert row["MC estimate (99.9% CI)"] == str(est)
    assert row["exact inside CI"] is True
    assert row["exact"] == "0.3000"  # half-width ~0.003: 3 decimals for the estimate, one more for the exact value
    far = exact_vs_estimate("normal mean", 0.5, samples, confidence=0.95)
    assert far["exact inside CI"] is False and "MC estimate (95% CI)" in far


@pytest.mark.parametrize(
    "args, error",
    [(("", 0.1, [1.0, 2.0]), ValueError), (("x", np.nan, [1.0, 2.0]), ValueError), (("x", 0.1, [1.0]), ValueError)],
)
def test_exact_vs_estimate_rejects(args, error):
    with pytest.raises(error):
        exact_vs_estimate(*args)


def test_format_rate():
    assert format_rate(500, 1000) == "0.50 [0.47, 0.53]"
    text = format_rate(0, 2000)
    assert text.startswith("0.00") and text.endswith("]")
    # a certainly positive rate shows its positive lower end
    low = float(format_rate(3, 2000).split("[")[1].split(",")[0])
    assert low > 0
    assert format_rate(2000, 2000).startswith("1.00")


@pytest.mark.parametrize(
    "count, total, error", [(-1, 10, ValueError), (11, 10, ValueError), (1, 0, ValueError), (1.5, 10, TypeError)]
)
def test_format_rate_rejects(count, total, error):
    with pytest.raises(error):
        format_rate(count, total)
