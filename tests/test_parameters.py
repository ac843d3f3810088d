import pytest

from dpnb.parameters import REPOSITORY, check_parameters, output_path


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
