"""benchmarks.first_fit: every case is a valid statement of the child process, and a row sums a case's runs."""

import ast

import pytest

from benchmarks import first_fit


@pytest.mark.parametrize("name", sorted(first_fit.CASES))
def test_every_case_fits_an_estimator_the_child_imports(name):
    code = first_fit.CHILD.format(statement=first_fit.CASES[name])
    tree = ast.parse(code)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    called = ast.parse(first_fit.CASES[name]).body[0].value.func.value.func.id  # Estimator(...).fit(...)
    assert called in imported


def test_a_row_takes_the_fresh_first_fit_the_warmer_warm_fit_and_the_slowest_kernel():
    fresh = {"first": 3.0, "warm": 0.02, "compiles": {"_a": 1.5, "_b": 1.0}}
    cached = {"first": 0.3, "warm": 0.01, "compiles": {}}
    row = first_fit.summary("case", fresh, cached)
    assert row["first fit, fresh (CPU s)"] == 3.0 and row["first fit, cached (CPU s)"] == 0.3
    assert row["warm fit (CPU s)"] == 0.01 and row["fresh / warm"] == 300
    assert row["compiling (CPU s)"] == 2.5 and row["kernels compiled"] == 2
    assert row["slowest to compile"] == "_a (1.50 s)"


def test_a_case_that_compiles_nothing_has_no_slowest_kernel():
    run = {"first": 0.01, "warm": 0.01, "compiles": {}}
    assert first_fit.summary("case", run, run)["slowest to compile"] == ""
