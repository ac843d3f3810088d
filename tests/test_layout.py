"""The package's wings: each module imports only its own wing and the ones below; old flat paths still work."""

import ast
import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import dpnb

PACKAGE = Path(dpnb.__file__).parent
FLOORS = ("ground", "numerics", "privacy", "papers", "book", "tools")


def _imports(path: Path) -> set[str]:
    """The dpnb modules a file imports (absolute names; the package uses no relative imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write the absolute dpnb.<wing> path"
            if node.module and node.module.split(".")[0] == "dpnb":
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "dpnb")
    return found


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else None


def test_every_module_sits_in_a_wing():
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"modules outside the wings: {loose}"
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(FLOORS)


def _upward(path: Path, floor: str) -> list[str]:
    """What ``path``, a module of ``floor``, imports from a wing above it (or through an old flat path)."""
    found = []
    for module in sorted(_imports(path)):
        wing = _wing(module)
        if wing is None and module != "dpnb":
            found.append(f"{path.name} uses the old path {module}")
        elif wing is not None and FLOORS.index(wing) > FLOORS.index(floor):
            found.append(f"{path.name} imports {module}")
    return found


@pytest.mark.parametrize("floor", FLOORS)
def test_no_module_imports_a_wing_above_its_own(floor):
    assert [line for path in sorted((PACKAGE / floor).rglob("*.py")) for line in _upward(path, floor)] == []


def test_the_import_rule_catches_upward_and_old_paths(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from dpnb.tools.sweep import run_sweep\nimport dpnb.stats\nfrom dpnb.ground import streams\n")
    assert _upward(path, "papers") == ["m.py uses the old path dpnb.stats", "m.py imports dpnb.tools.sweep"]
    assert _upward(path, "tools") == ["m.py uses the old path dpnb.stats"]


def test_moved_table_names_every_module_once_in_its_wing():
    modules = {p.stem: p.parent.name for p in PACKAGE.glob("*/*.py") if p.stem != "__init__"}
    for old, wing in dpnb.MOVED.items():
        assert modules.get(old) == wing, f"dpnb.{old} should be dpnb.{wing}.{old}"


def test_old_flat_paths_give_the_moved_module_with_a_deprecation_warning():
    new = importlib.import_module("dpnb.papers.dppro")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("dpnb.dppro")
    assert old is new and old.__name__ == "dpnb.papers.dppro"
    assert any(
        issubclass(w.category, DeprecationWarning) and "moved to dpnb.papers.dppro" in str(w.message) for w in caught
    )
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dpnb.no_such_module")


def test_old_from_import_form_in_a_fresh_interpreter():
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "try:\n    from dpnb.mechanisms import gaussian_sigma\nexcept DeprecationWarning as w:\n    print(w)\n"
        "warnings.simplefilter('ignore')\nfrom dpnb.mechanisms import gaussian_sigma\n"
        "from dpnb import stats\nprint(gaussian_sigma.__module__, stats.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "dpnb.mechanisms moved to dpnb.privacy.mechanisms; import it from there",
        "dpnb.privacy.mechanisms dpnb.numerics.stats",
    ]


def test_the_api_reference_documents_every_module_under_its_wing():
    """One page a wing (book/api/<wing>.md), each module on its own wing's page, the estimators' page first."""
    book = Path(__file__).resolve().parents[1] / "book"
    documented = {}
    for page in sorted((book / "api").glob("*.md")):
        for line in page.read_text().splitlines():
            if line.startswith(".. automodule::"):
                documented[line.split("::")[1].strip()] = page.stem
    modules = sorted(f"dpnb.{p.parent.name}.{p.stem}" for p in PACKAGE.glob("*/*.py") if not p.stem.startswith("_"))
    assert sorted(documented) == modules
    assert all(module.split(".")[1] == page for module, page in documented.items())
    toc = (book / "_toc.yml").read_text()
    pages = re.findall(r"file: book/api/(\w+)", toc)
    assert pages[0] == "estimators" and sorted(pages[1:]) == sorted(FLOORS)


def test_old_module_paths_still_run_with_python_m():
    result = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-m", "dpnb.pairing", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith("usage: ")
    assert "dpnb.pairing moved to dpnb.tools.pairing; run python -m dpnb.tools.pairing" in result.stderr
