"""The three dependency descriptions must agree: pyproject.toml, constraints.txt, environment.yml."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _pins():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt must pin exact versions, got {line!r}"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_is_pinned_and_satisfies_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = _pins()
    deps = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    for dep in deps:
        req = Requirement(dep)
        name = canonicalize_name(req.name)
        if name == "dpnb":  # an extra built from other extras
            assert req.extras <= set(project["optional-dependencies"]), f"{dep} names an extra that does not exist"
            continue
        assert name in pins, f"{req.name} is not pinned in constraints.txt (run make constraints)"
        assert req.specifier.contains(pins[name]), f"{req.name}=={pins[name]} violates {req.specifier}"


def test_environment_yml_installs_the_same_thing():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert "python=3.11" in deps
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict))
    # no second list of packages: pip installs the project under the same constraints file
    assert pip_section == ["-c constraints.txt", "-e .[dev]"]
    conda_packages = {re.split(r"[=<>]", d)[0] for d in deps if isinstance(d, str)}
    assert conda_packages <= {"python", "pip", "make"}


def test_makefile_installs_with_constraints():
    makefile = (ROOT / "Makefile").read_text()
    assert "-c constraints.txt -e '.[$(EXTRAS)]'" in makefile and re.search(r"^EXTRAS \?= dev$", makefile, re.M)
    assert re.search(r"^test: venv", makefile, re.M) and re.search(r"^run: venv", makefile, re.M)


def test_runtime_dependencies_are_what_the_package_imports_to_release():
    """``pip install .`` gives the mechanisms and estimators; notebooks, tools, peers and the book are extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {canonicalize_name(Requirement(d).name) for d in project["dependencies"]}
    assert runtime == {"numpy", "scipy", "scikit-learn", "numba", "llvmlite", "threadpoolctl"}
    extras = project["optional-dependencies"]
    assert {"peers", "sweep", "notebooks", "test", "book", "lab", "dev"} <= set(extras)
    assert project["requires-python"].startswith(">=3.11,<3.14")


def test_supported_pythons_agree_in_pyproject_and_makefile():
    """requires-python, the version classifiers and make's check name the same minor versions (each tested)."""
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    admitted = SpecifierSet(project["requires-python"])
    minors = [f"3.{minor}" for minor in range(8, 20) if f"3.{minor}.0" in admitted]
    classified = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.fullmatch(r".* :: 3\.\d+", c)]
    assert classified == minors, f"classifiers {classified} but requires-python admits {minors}"
    makefile = (ROOT / "Makefile").read_text()
    low, high = re.search(r"\(3, (\d+)\) <= v < \(3, (\d+)\)", makefile).groups()
    assert [f"3.{minor}" for minor in range(int(low), int(high))] == minors, "make's version check differs"
    assert all(f"python{minor}" in makefile for minor in minors), "make's PYTHON search misses a supported version"
