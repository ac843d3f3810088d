import re

import nbformat
import pytest

from dpnb.parameters import (
    REPOSITORY,
    check_notebook_parameters,
    check_parameters,
    coerce,
    output_path,
    parameter_names,
    read_value,
)


def namespace(**values):
    ns = {"__annotations__": {"seed": int, "epsilon": float, "dims": list[int], "name": str, "limit": int | None}}
    ns.update(
        {
            "seed": 1,
            "epsilon": 1.0,
            "dims": [1, 2],
            "name": "x",
            "limit": None,
            "In": [],
            "np": __import__("numpy"),
            "check_parameters": check_parameters,
            "_": 3,
        }
    )
    ns.update(values)
    return ns


def test_accepts_declared_parameters_and_ignores_modules_functions_and_ipython_names():
    check_parameters(namespace())
    check_parameters(namespace(epsilon=2, limit=5, dims=(3,)))  # an int is a valid float; tuples as lists


def test_unknown_names_are_refused_with_the_known_ones_listed():
    with pytest.raises(ValueError, match="unknown parameter.*epsilo;.*seed, epsilon, dims, name, limit"):
        check_parameters(namespace(epsilo=0.5))


@pytest.mark.parametrize(
    "name, value",
    [("seed", 1.0), ("seed", True), ("epsilon", "1"), ("dims", [1.5]), ("dims", 3), ("name", 1), ("limit", "a")],
)
def test_wrong_types_name_the_parameter(name, value):
    with pytest.raises(TypeError, match=f"parameter {name} must be"):
        check_parameters(namespace(**{name: value}))


def test_bad_namespace():
    with pytest.raises(TypeError):
        check_parameters([])
    with pytest.raises(ValueError, match="no annotated parameters"):
        check_parameters({"x": 1})
    ns = namespace()
    del ns["seed"]
    with pytest.raises(ValueError, match="seed is annotated but has no value"):
        check_parameters(ns)
    ns = namespace()
    ns["__annotations__"]["odd"] = set
    ns["odd"] = {1}
    check_parameters(ns)
    ns["__annotations__"]["odd"] = "not a type"
    with pytest.raises(TypeError, match="unsupported parameter annotation"):
        check_parameters(ns)


def test_output_path_resolves_relative_paths_against_the_repository(tmp_path):
    assert output_path("results/x") == REPOSITORY / "results" / "x"
    assert output_path(str(tmp_path)) == tmp_path
    assert (REPOSITORY / "dpnb" / "parameters.py").is_file()
    with pytest.raises(TypeError):
        output_path(3)


@pytest.mark.parametrize(
    "text, annotation, expected",
    [
        ("1e-6", float, 1e-6),
        ("1e6", float, 1e6),
        ("inf", float, float("inf")),
        ("-inf", float, float("-inf")),
        ("2", float, 2.0),
        ("1e3", int, 1000),
        ("[1e-5, 1]", list[float], [1e-5, 1.0]),
        ("[4, 8.0]", list[int], [4, 8]),
        ("007", str, "007"),
        ("None", str | None, None),
        ("null", int | None, None),
        ("5", int | None, 5),
        ("true", bool, True),
    ],
)
def test_command_line_values_take_the_annotated_type(text, annotation, expected):
    value = coerce(read_value(text), annotation, "x", text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    "text, annotation",
    [("1.5", int), ("abc", float), ("true", int), ("1", bool), ("[1, x]", list[float]), ("3", list[int]), ("a", int)],
)
def test_values_that_would_lose_something_are_refused_naming_the_parameter(text, annotation):
    with pytest.raises(TypeError, match=f"parameter x must be .*, got {re.escape(text)}$"):
        coerce(read_value(text), annotation, "x", text)


def test_unreadable_values_are_refused():
    with pytest.raises(ValueError, match="cannot read"):
        read_value("[0.1")
    with pytest.raises(TypeError):
        read_value(0.1)


def test_notebook_parameters_are_converted_and_checked_without_a_kernel(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell("rate: float = 0.5  # a probability\nlabel: str | None = None  # a name")
    params.metadata["tags"] = ["parameters"]
    check = nbformat.v4.new_code_cell(
        "from dpnb.parameters import check_parameters\ncheck_parameters(globals())\n"
        "if not 0 < rate < 1:\n    raise ValueError(f'rate must lie in (0, 1), got {rate}')"
    )
    nb.cells = [params, check]
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    assert parameter_names(path) == ["rate", "label"]  # papermill alone misses label (str | None)
    checked = check_notebook_parameters(path, {"rate": read_value("1e-6"), "label": 7}, {"label": "7"})
    assert checked == {"rate": 1e-6, "label": "7"}
    with pytest.raises(ValueError, match=r"rate must lie in \(0, 1\), got 2.0"):
        check_notebook_parameters(path, {"rate": 2})
    with pytest.raises(TypeError, match="parameter rate must be float, got 'x'"):
        check_notebook_parameters(path, {"rate": "x"})
