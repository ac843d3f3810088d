"""The package's wings: each module imports only its own wing and the ones below; no import circle."""

import ast
import re
from pathlib import Path

import pytest

import dpnb

PACKAGE = Path(dpnb.__file__).parent
FLOORS = ("ground", "numerics", "privacy", "papers", "reporting", "tools")
"""The wings from the ground up: a module imports its own wing and the ones before it."""
CHAPTERS = "chapters"
"""The rooms: one module per chapter, standing on the science wings; only notebooks and tests import them."""
UNDER_CHAPTERS = ("ground", "numerics", "privacy", "papers", "reporting")
WINGS = (*FLOORS[:-1], CHAPTERS, FLOORS[-1])
"""Every wing, in the API reference's order."""


def _imports(path: Path) -> set[str]:
    """The dpnb modules a file imports, at any depth (absolute names; the package uses no relative imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write the absolute dpnb.<wing> path"
            if node.module and node.module.split(".")[0] == "dpnb":
                if node.module.count(".") == 1:  # from dpnb.papers import dppro: the modules imported
                    found.update(f"{node.module}.{a.name}" for a in node.names)
                else:
                    found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "dpnb")
    return found


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else None


def test_every_module_sits_in_a_wing():
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"modules outside the wings: {loose}"
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(WINGS)


def _not_allowed(path: Path, wing: str) -> list[str]:
    """What ``path``, a module of ``wing``, imports against the rule (or from a path that is no wing)."""
    allowed = set(UNDER_CHAPTERS) | {CHAPTERS} if wing == CHAPTERS else set(FLOORS[: FLOORS.index(wing) + 1])
    found = []
    for module in sorted(_imports(path)):
        target = _wing(module)
        if target is None and module != "dpnb":
            found.append(f"{path.name} imports {module}, which is in no wing")
        elif target is not None and target not in allowed:
            found.append(f"{path.name} imports {module}")
    return found


@pytest.mark.parametrize("wing", WINGS)
def test_no_module_imports_a_wing_above_its_own_or_a_chapter(wing):
    assert [line for path in sorted((PACKAGE / wing).rglob("*.py")) for line in _not_allowed(path, wing)] == []


def test_the_import_rule_catches_upward_chapter_and_unknown_paths(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "from dpnb.tools.sweep import run_sweep\nimport dpnb.stats\nfrom dpnb.ground import streams\n"
        "from dpnb.chapters import dppro\n"
    )
    assert _not_allowed(path, "papers") == [
        "m.py imports dpnb.chapters.dppro",
        "m.py imports dpnb.stats, which is in no wing",
        "m.py imports dpnb.tools.sweep",
    ]
    assert _not_allowed(path, "tools") == [
        "m.py imports dpnb.chapters.dppro",
        "m.py imports dpnb.stats, which is in no wing",
    ]
    assert _not_allowed(path, "chapters") == [
        "m.py imports dpnb.stats, which is in no wing",
        "m.py imports dpnb.tools.sweep",
    ]


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a name imported from a package counts if it is a module)."""
    modules = {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_in_the_package():
    assert _circles(_module_graph()) == []


def test_the_circle_search_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


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
    assert pages[0] == "estimators" and sorted(pages[1:]) == sorted(WINGS)


def test_each_chapter_room_serves_a_notebook():
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    rooms = sorted(p.stem for p in (PACKAGE / CHAPTERS).glob("*.py") if p.stem != "__init__")
    assert [room for room in rooms if not (notebooks / f"{room}.md").is_file()] == []
