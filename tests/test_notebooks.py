"""Checks every notebook pair: sync, committed-output hygiene, structure, and a papermill run.

The papermill run executes each notebook on an emulated other machine (every reduction and
decomposition reordered, OpenBLAS's Piledriver kernels on one thread: ``reordered`` in
:mod:`dpnb.tools.portability`) and requires its verdicts and every text output to equal the committed
ones. nbval (in the same pytest session in ``make test``) re-executes the committed ``.ipynb`` files
under another configuration (Prescott kernels, a kernel started with two BLAS threads, NumPy's SIMD dispatch
off) and compares again; every chapter limits BLAS to one thread in its imports cell, which a test here checks.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from dpnb.reporting.claims import read_claims
from dpnb.tools.pairing import pair_mismatches
from dpnb.tools.portability import numerical_environment, output_differences
from dpnb.tools.run import execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = {p.stem: json.loads(p.read_text()) for p in (Path(__file__).parent / "expected_verdicts").glob("*.json")}
SECTIONS = ["Claims", "Derivations", "Implementation", "Empirical checks", "Reproduction", "Verdicts"]
ids = [p.stem for p in NOTEBOOKS]


def test_every_source_has_a_notebook_and_vice_versa():
    sources = {p.stem for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md"}
    assert sources == set(ids), "each notebooks/<stem>.md needs its executed <stem>.ipynb and vice versa"
    assert set(EXPECTED) == set(ids), "tests/expected_verdicts/<stem>.json must exist for every notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_pair_in_sync(path):
    assert pair_mismatches(path.with_suffix(".md"), path) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_committed_outputs_are_clean(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "every code cell needs an execution count"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "execute top to bottom once"
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"], "stored error output"
    assert not [o for o in outputs if o.get("name") == "stderr"], "stored stderr (warnings?) output"
    assert "papermill" not in nb.metadata, "a papermill output was committed as the source pair"
    assert path.stat().st_size < 2_500_000, "keep figures small (dpi <= 80)"
    reprs = [
        o.data["text/plain"]
        for o in outputs
        if o.output_type == "execute_result" and "text/plain" in o.get("data", {}) and len(o.data) == 1
    ]
    assert not reprs, f"a cell's last value printed as an object repr (assign it or end with a print): {reprs[:3]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    names = set()
    lines = tagged[0].source.splitlines()
    for stmt in ast.parse(tagged[0].source).body:  # only `name: type = <literal>  # help`: no computation
        assert isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name), (
            "parameters cell: one annotated assignment per line, `name: type = value  # help`"
        )
        ast.literal_eval(stmt.value)
        assert "#" in lines[stmt.end_lineno - 1], f"parameter {stmt.target.id} needs a one-line comment"
        names.add(stmt.target.id)
    assert {"seed", "output_dir"} <= names
    import papermill

    shown = papermill.inspect_notebook(str(path))
    assert set(shown) == names, f"papermill cannot parse {sorted(names - set(shown))} (no '=' in a comment)"
    assert all(p["inferred_type_name"] != "None" and p["help"] for p in shown.values())
    following = nb.cells[nb.cells.index(tagged[0]) + 1]
    assert "check_parameters(globals())" in following.source, (
        "the cell after the parameters must validate them: check_parameters(globals()) and range checks"
    )


def _pins_one_blas_thread(source: str) -> bool:
    """Whether ``source`` calls ``threadpool_limits(1)`` (the integer literal 1) as a statement of its own (not
    inside a ``with`` or a def)."""
    return any(
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and getattr(stmt.value.func, "id", None) == "threadpool_limits"
        and len(stmt.value.args) == 1
        and isinstance(stmt.value.args[0], ast.Constant)
        and type(stmt.value.args[0].value) is int
        and stmt.value.args[0].value == 1
        and not stmt.value.keywords
        for stmt in ast.parse(source).body
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_the_import_cell_pins_one_blas_thread(path):
    """Outputs cannot depend on the machine's core count: the cell after the validation limits BLAS to one thread.

    nbval's kernel starts with two (``prescott-2threads-nosimd``), so a chapter without the pin would also run its
    small products on two threads beside the other pytest worker, several times slower (the primer's attack cell:
    1.6 s alone, 26 s beside one busy process).
    """
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    validation = next(i for i, c in enumerate(code) if "check_parameters(globals())" in c.source)
    assert _pins_one_blas_thread(code[validation + 1].source), (
        "the imports cell (after check_parameters) must call threadpool_limits(1) at its top level"
    )


@pytest.mark.parametrize(
    "source, pins",
    [
        ("threadpool_limits(1)", True),
        ("x = 1\nthreadpool_limits(1)  # a comment", True),
        ("threadpool_limits(2)", False),
        ("threadpool_limits(limits=1)", False),
        ("threadpool_limits(True)", False),
        ("threadpool_limits(1.0)", False),
        ("threadpool_limits(n)", False),
        ("with threadpool_limits(1):\n    pass", False),
        ("def f():\n    threadpool_limits(1)", False),
        ("import numpy as np", False),
    ],
)
def test_the_pin_check_reads_only_a_top_level_call(source, pins):
    assert _pins_one_blas_thread(source) is pins


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_sections_in_order(path):
    nb = nbformat.read(path, as_version=4)
    headings = [
        line.lstrip("#").strip()
        for c in nb.cells
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if re.match(r"^#{1,2} ", line)
    ]
    positions = []
    for section in SECTIONS:
        hits = [
            i
            for i, h in enumerate(headings)
            if h.lower().split(":")[0].strip().startswith(section.lower())
            or re.match(rf"^\d+\.?\s+{section.lower()}", h.lower())
        ]
        assert hits, f"missing a '## {section}' section"
        positions.append(hits[0])
    assert positions == sorted(positions), f"sections out of order: {SECTIONS}"
    assert any(
        h.lower().startswith("errata") or "errata" in h.lower()
        for c in nb.cells
        if c.cell_type == "markdown"
        for h in c.source.splitlines()
        if h.startswith("#")
    )


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_papermill_run_on_another_machine_reproduces_outputs_and_verdicts(path, tmp_path):
    with numerical_environment("reordered"):
        claims_file = execute(path, tmp_path, {})
    claims = read_claims(claims_file)
    assert claims and all(c["notebook"] == path.stem for c in claims)
    assert {c["id"]: c["verdict"] for c in claims} == EXPECTED[path.stem]
    committed = nbformat.read(path, as_version=4)
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    assert output_differences(committed, executed) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_profile_names_only_declared_parameters(path):
    from dpnb.tools.run import UsageError, available_profiles, plan

    profiles = available_profiles([p.stem for p in NOTEBOOKS], path.parent)
    assert "paper" in profiles, "make run PROFILE=paper needs a paper profile somewhere"
    for profile in profiles:
        try:
            plan([path], profile, {}, path.parent)
        except UsageError as exc:
            pytest.fail(f"profile {profile!r}: {exc}")
