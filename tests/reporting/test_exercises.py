"""Answer checks: the fingerprint rounds to the stated digits, the check cell reproduces the answer lines."""

import nbformat
import pytest

from dpnb.reporting.exercises import answer, check, check_cell, fingerprint
from dpnb.tools import student


def test_fingerprint_rounds_to_the_stated_digits():
    assert fingerprint(0.1234, 2) == fingerprint(0.12, 2) != fingerprint(0.13, 2)
    assert fingerprint([1, 2.0], 3) == fingerprint((1.0, 2.0004), 3) != fingerprint([2, 1], 3)
    assert fingerprint(-0.0, 1) == fingerprint(0.0, 1)
    assert len(fingerprint(7, 1)) == 16


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [], "20", [1, None]])
def test_an_answer_must_be_finite_numbers(value):
    with pytest.raises((ValueError, TypeError)):
        fingerprint(value, 2)


@pytest.mark.parametrize("digits", [0, 16, 2.0, True])
def test_digits_are_checked(digits):
    with pytest.raises(ValueError, match="digits"):
        fingerprint(1.0, digits)


def test_answer_and_check_round_trip(capsys):
    answer("demo-2", [0.25, 4], digits=2)
    line = capsys.readouterr().out.strip()
    cell = check_cell("some other output\n" + line + "\n")
    assert cell.splitlines()[-1] == f'check("demo-2", None, "{fingerprint([0.25, 4], 2)}", digits=2)'
    namespace = {}
    exec(cell.replace("None", "[0.25, 4.0]"), namespace)
    assert capsys.readouterr().out == "demo-2: correct\n"
    check("demo-2", None, fingerprint(1, 2), digits=2)
    check("demo-2", [0.3, 4], fingerprint([0.25, 4], 2), digits=2)
    assert capsys.readouterr().out.splitlines() == [
        "demo-2: no answer yet (replace None with yours)",
        "demo-2: not yet (compared at 2 significant digits)",
    ]
    assert check_cell("no answers here") is None
    with pytest.raises(ValueError, match="key"):
        answer("two words", 1, digits=1)


def test_the_student_edition_replaces_the_solution_cell_with_its_checks(capsys):
    answer("demo-1", 20, digits=2)
    printed = capsys.readouterr().out
    solution = nbformat.v4.new_code_cell(
        "# Solutions, re-executed by `make test`.\nanswer('demo-1', 20, digits=2)",
        metadata={"tags": ["hide-cell"]},
        outputs=[nbformat.v4.new_output("stream", name="stdout", text=printed)],
    )
    exercises = nbformat.v4.new_markdown_cell("## Exercises\n\n1. Find k.\n\n:::{admonition} Solutions\n20\n:::\n")
    out = student.strip_solutions(nbformat.v4.new_notebook(cells=[exercises, solution]), "demo")
    assert out.cells[-1].source == check_cell(printed) and "Solutions" not in out.cells[-1].source
    assert out.cells[-1].outputs == [] and "answer(" not in out.cells[-1].source
