import re

import nbformat
import pytest

from dpnb.reporting.parameters import (
    REPOSITORY,
    check_notebook_parameters,
    check_parameters,
    coerce,
    output_path,
    parameter_names,
    parameter_ranges,
    parse_range,
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
            "In": [
                "",
                "seed: int = 1\nepsilon: float = 1.0\ndims: list[int] = [1]\n"
                "name: str = 'x'\nlimit: int | None = None\n",
            ],
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
    ns["In"][1] += "odd: set = {1}\n"
    check_parameters(ns)
    ns["__annotations__"]["odd"] = "not a type"
    with pytest.raises(TypeError, match="unsupported parameter annotation"):
        check_parameters(ns)


def test_output_path_resolves_relative_paths_against_the_repository(tmp_path):
    assert output_path("results/x") == REPOSITORY / "results" / "x"
    assert output_path(str(tmp_path)) == tmp_path
    assert (REPOSITORY / "dpnb" / "reporting" / "parameters.py").is_file()
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
        "from dpnb.reporting.parameters import check_parameters\ncheck_parameters(globals())\n"
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


CELL = """seed: int = 1  # in [0, inf): root of the streams
epsilon: float = 1.0  # in (0, inf): privacy budget
dims: list[int] = [1, 2]  # in [1, 3], 2+ increasing: dimensions
name: str = "x"  # one of x, y: which data
limit: int | None = None  # in [1, 10]: optional cap
"""


def ranged(**values):
    ns = namespace(**values)
    ns["In"] = ["", CELL]
    return ns


def test_ranges_declared_in_the_comments_are_checked_naming_the_parameter():
    check_parameters(ranged())
    check_parameters(ranged(limit=10, dims=[1, 3], seed=0))
    for name, value, message in [
        ("seed", -1, r"seed must be in \[0, inf\), got -1"),
        ("epsilon", 0.0, r"epsilon must be in \(0, inf\)"),
        ("epsilon", float("inf"), r"epsilon must be in \(0, inf\)"),
        ("epsilon", float("nan"), "epsilon must be"),
        ("dims", [1], "dims must list at least 2"),
        ("dims", [2, 2], "dims must be strictly increasing"),
        ("dims", [1, 4], r"dims must be in \[1, 3\], 2\+ increasing, got 4"),
        ("name", "z", "name must be one of x, y"),
        ("name", "", "name must not be empty"),
        ("limit", 11, "limit must be in"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_parameters(ranged(**{name: value}))


def test_the_source_is_found_after_papermills_injected_cell_or_passed():
    ns = ranged(seed=-1)
    ns["In"] = ["", CELL, "seed = -1\n", "check_parameters(globals())"]
    with pytest.raises(ValueError, match="seed must be in"):
        check_parameters(ns)
    ns["In"] = []
    with pytest.raises(ValueError, match="cannot find the parameters cell"):
        check_parameters(ns)
    with pytest.raises(ValueError, match="seed must be in"):
        check_parameters(ns, CELL)


def test_the_source_is_found_in_the_compiled_cells_without_history(monkeypatch):
    # nbval runs cells with store_history=False: In stays empty, but IPython caches each cell's source
    import linecache
    import types

    import IPython

    cells = {
        "<cell-1>": CELL,
        "<cell-2>": "from dpnb.reporting.parameters import check_parameters\ncheck_parameters(globals())\n",
    }
    for name, source in cells.items():
        monkeypatch.setitem(linecache.cache, name, (len(source), None, source.splitlines(True), name))
    monkeypatch.setitem(linecache.cache, "/some/module.py", (1, None, ["other: int = 1\n"], "/some/module.py"))
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={"<cell-1>": 1, "<cell-2>": 1}))
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    ns = ranged(seed=-1)
    ns["In"] = [""]
    with pytest.raises(ValueError, match="seed must be in"):
        check_parameters(ns)
    ok = ranged()
    ok["In"] = []
    check_parameters(ok)  # the cached cell's ranges accept the defaults
    shell.compile._filename_map = {}  # a module file in linecache is not a cell
    with pytest.raises(ValueError, match="cannot find the parameters cell"):
        check_parameters(ns)


@pytest.mark.parametrize(
    "comment, message",
    [
        ("# in [0, 1)", "ends with a colon"),
        ("# in [0 1]: x", "cannot read the parameter range"),
        ("# in [zero, 1]: x", "cannot read the range end"),
        ("# one of a, : x", "cannot read the choices"),
        ("# in [0, 1], 2+ things: x", "cannot read the parameter range"),
    ],
)
def test_unreadable_ranges_are_refused(comment, message):
    with pytest.raises(ValueError, match=message):
        parse_range(comment)


def test_comments_without_a_range_declare_none():
    assert parse_range("# the paper's value (a note)") is None
    assert parameter_ranges("x: int = 1  # index: which one\ny = 2\n") == {"x": None}
