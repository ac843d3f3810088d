"""Jupytext pairs: execute a notebook's Markdown source into its committed ``.ipynb``.

The ``.md`` (MyST) file is the one people edit; the ``.ipynb`` carries outputs for nbval.
:func:`execute_pair` rebuilds the ``.ipynb`` from the source and runs it in the notebook's
folder, dropping volatile metadata (execution timestamps) so that re-running a notebook
changes the committed file only where its outputs change. :func:`pair_mismatches` is the
sync check the tests run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

VOLATILE_CELL_METADATA = ("execution", "papermill", "collapsed", "scrolled")


def _strip_volatile(nb) -> None:
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
    nb.metadata.pop("papermill", None)


def execute_pair(source, timeout: int = 900) -> Path:
    """Execute ``notebooks/<stem>.md`` and write ``notebooks/<stem>.ipynb`` with its outputs.

    Parameters
    ----------
    source : path to the ``.md`` source (or its stem inside ``notebooks/``)
    timeout : int
        Seconds allowed per cell.
    """
    import jupytext
    from nbclient import NotebookClient

    source = Path(source)
    if source.suffix != ".md":
        source = Path("notebooks") / f"{source.name}.md"
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    nb = jupytext.read(source)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(source.parent.resolve())}}).execute()
    _strip_volatile(nb)
    target = source.with_suffix(".ipynb")
    jupytext.write(nb, target, fmt="ipynb")
    return target


def pair_mismatches(source, notebook) -> list[str]:
    """Differences in cell types, sources and tags between a ``.md`` source and its ``.ipynb``."""
    import jupytext

    a, b = jupytext.read(source), jupytext.read(notebook)
    problems = []
    if len(a.cells) != len(b.cells):
        problems.append(f"{len(a.cells)} cells in {Path(source).name} vs {len(b.cells)} in {Path(notebook).name}")
    for i, (ca, cb) in enumerate(zip(a.cells, b.cells)):
        if ca.cell_type != cb.cell_type or ca.source.strip() != cb.source.strip():
            problems.append(f"cell {i} differs ({ca.cell_type} vs {cb.cell_type}): {ca.source[:60]!r}")
        elif ca.metadata.get("tags", []) != cb.metadata.get("tags", []):
            problems.append(f"cell {i} tags differ: {ca.metadata.get('tags')} vs {cb.metadata.get('tags')}")
    return problems


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Execute notebook pairs (.md source -> .ipynb with outputs)")
    parser.add_argument("sources", nargs="+", help="notebooks/<stem>.md files or stems")
    args = parser.parse_args(argv)
    for s in args.sources:
        print(f"wrote {execute_pair(s)}")


if __name__ == "__main__":
    main()
