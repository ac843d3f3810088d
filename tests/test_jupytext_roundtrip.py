"""Saving a notebook in JupyterLab, or syncing it with jupytext, leaves an unedited pair byte-identical.

JupyterLab saves the ``.md`` sources through jupytext's contents manager, which writes both files of
the pair with the filters of ``notebooks/jupytext.toml``: these tests save every chapter through that
manager rooted where ``make lab`` roots the server (``notebooks/``: the manager looks for its
configuration only inside its root, so the file must live there), with no browser, and run the
jupytext command line from the repository root, on a copy of the repository's pairs.
"""

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md")
ids = [p.stem for p in SOURCES]


@pytest.fixture()
def pairs(tmp_path):
    """A copy of notebooks/jupytext.toml and every notebook pair, laid out as in the repository."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "jupytext.toml", tmp_path / "notebooks" / "jupytext.toml")
    for source in SOURCES:
        for path in (source, source.with_suffix(".ipynb")):
            shutil.copy(path, tmp_path / "notebooks" / path.name)
    return tmp_path


def _manager(root):
    """The contents manager jupytext's server extension gives JupyterLab, rooted as ``make lab`` roots it."""
    from jupytext import AsyncTextFileContentsManager

    config = json.loads((ROOT / "lab" / "jupyter_server_config.json").read_text())["ContentsManager"]
    return AsyncTextFileContentsManager(root_dir=str(root / "notebooks"), **config)


def _bytes(root, stem):
    return {suffix: (root / "notebooks" / f"{stem}{suffix}").read_bytes() for suffix in (".md", ".ipynb")}


@pytest.mark.parametrize("stem", ids)
def test_saving_in_lab_changes_no_byte(pairs, stem):
    before = _bytes(pairs, stem)
    manager = _manager(pairs)
    model = asyncio.run(manager.get(f"{stem}.md"))
    assert model["type"] == "notebook", "the .md source must open as a notebook"
    asyncio.run(manager.save(model, f"{stem}.md"))
    after = _bytes(pairs, stem)
    for suffix in before:
        assert after[suffix] == before[suffix], f"saving {stem}.md in Lab rewrote {stem}{suffix}"


@pytest.mark.parametrize("stem", ids)
def test_an_edit_saved_in_lab_keeps_the_metadata_the_book_and_nbval_use(pairs, stem):
    import jupytext

    manager = _manager(pairs)
    model = asyncio.run(manager.get(f"{stem}.md"))
    cells = model["content"]["cells"]
    code = next(c for c in cells if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", []))
    code["source"] += "\n_ = None  # an edit"
    asyncio.run(manager.save(model, f"{stem}.md"))
    for path in (pairs / "notebooks" / f"{stem}.md", pairs / "notebooks" / f"{stem}.ipynb"):
        saved = jupytext.read(path)
        original = jupytext.read(ROOT / "notebooks" / path.name)
        assert [c.metadata.get("tags") for c in saved.cells] == [c.metadata.get("tags") for c in original.cells]
        assert [c.metadata.get("mystnb") for c in saved.cells] == [c.metadata.get("mystnb") for c in original.cells]
        assert saved.metadata.get("kernelspec") == original.metadata.get("kernelspec")
    text = (pairs / "notebooks" / f"{stem}.md").read_text()
    assert text.startswith("---\njupytext:\n") and "_ = None  # an edit" in text


@pytest.mark.slow  # make check: test_saving_in_lab_changes_no_byte (jupytext writes each pair) and test_pair_in_sync
def test_jupytext_sync_changes_no_byte(pairs):
    before = {stem: _bytes(pairs, stem) for stem in ids}
    subprocess.run(
        [sys.executable, "-m", "jupytext", "--sync", *(f"notebooks/{stem}.md" for stem in ids)],
        cwd=pairs,
        check=True,
        capture_output=True,
    )
    changed = [
        f"{stem}{suffix}"
        for stem in ids
        for suffix, data in _bytes(pairs, stem).items()
        if data != before[stem][suffix]
    ]
    assert changed == [], f"jupytext --sync rewrote {changed}"


@pytest.mark.parametrize("stem", ids)
def test_kernelspec_is_the_one_lab_starts(stem):
    """Lab rewrites a notebook's kernelspec with the running kernel's on start (and marks it modified)."""
    import jupytext
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    for path in (ROOT / "notebooks" / f"{stem}.md", ROOT / "notebooks" / f"{stem}.ipynb"):
        kernelspec = jupytext.read(path).metadata["kernelspec"]
        assert kernelspec == {"display_name": spec.display_name, "language": spec.language, "name": "python3"}
