"""Checks every notebook pair: sync, committed-output hygiene, structure, and a papermill run.

nbval (second pytest run in ``make test``) re-executes the committed ``.ipynb`` files and
compares their outputs; these tests cover what nbval does not.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from dpnb.claims import read_claims
from dpnb.pairing import pair_mismatches
from dpnb.run import execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = json.loads((Path(__file__).parent / "expected_verdicts.json").read_text())
SECTIONS = ["Claims", "Derivations", "Implementation", "Empirical checks", "Reproduction", "Verdicts"]
ids = [p.stem for p in NOTEBOOKS]


def test_every_source_has_a_notebook_and_vice_versa():
    sources = {p.stem for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md"}
    assert sources == set(ids), "each notebooks/<stem>.md needs its executed <stem>.ipynb and vice versa"
    assert set(EXPECTED) == set(ids), "tests/expected_verdicts.json must list every notebook"


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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    names = set()
    for stmt in ast.parse(tagged[0].source).body:  # only `name = <literal>`: no computation
        assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, "parameters cell: one assignment per line"
        ast.literal_eval(stmt.value)
        names.add(stmt.targets[0].id)
    assert {"seed", "output_dir"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_sections_in_order(path):
    nb = nbformat.read(path, as_version=4)
    headings = [line.lstrip("#").strip() for c in nb.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if re.match(r"^#{1,2} ", line)]
    positions = []
    for section in SECTIONS:
        hits = [i for i, h in enumerate(headings) if h.lower().split(":")[0].strip().startswith(section.lower())
                or re.match(rf"^\d+\.?\s+{section.lower()}", h.lower())]
        assert hits, f"missing a '## {section}' section"
        positions.append(hits[0])
    assert positions == sorted(positions), f"sections out of order: {SECTIONS}"
    assert any(h.lower().startswith("errata") or "errata" in h.lower()
               for c in nb.cells if c.cell_type == "markdown" for h in c.source.splitlines() if h.startswith("#"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_papermill_run_reproduces_verdicts(path, tmp_path):
    claims_file = execute(path, tmp_path, {})
    claims = read_claims(claims_file)
    assert claims and all(c["notebook"] == path.stem for c in claims)
    assert {c["id"]: c["verdict"] for c in claims} == EXPECTED[path.stem]
