import pytest

from dpnb.reporting.output import emit, source_lines


# fmt: off
def _sample(x):
    total = max(
        x, 1)
    label = "done"
    return total, label
# fmt: on


def test_emit_writes_one_block(capsys):
    emit("a", "b c")
    assert capsys.readouterr().out == "a\nb c\n"


def test_source_lines_with_continuation():
    assert source_lines(_sample, ["total = "]) == ["total = max(", "x, 1)"]
    assert source_lines(_sample, ["label", "return"]) == ['label = "done"', "return total, label"]
    assert source_lines(_sample, ["absent"]) == []


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: emit("a", 1.0), TypeError),
        (lambda: source_lines(_sample, "total"), TypeError),
        (lambda: source_lines(_sample, [""]), TypeError),
        (lambda: source_lines(42, ["x"]), TypeError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
