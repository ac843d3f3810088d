"""Jupytext pairs: execute a notebook's Markdown source into its committed ``.ipynb``.

The ``.md`` (MyST) file is the one people edit; the ``.ipynb`` carries outputs for nbval.
:func:`execute_pair` rebuilds the ``.ipynb`` from the source and runs it in the notebook's
folder exactly as nbval will (same working directory, no injected parameters), with the one
notebook executor (:func:`dpnb.tools.executor.execute_notebook`, which writes nothing itself here),
dropping volatile metadata and keeping cell ids stable, so that re-running a notebook changes the
committed file only where its outputs change. :func:`pair_mismatches` is the sync check the
tests run.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from dpnb.tools.executor import NotebookFailed, execute_notebook

VOLATILE_CELL_METADATA = ("execution", "papermill", "collapsed", "scrolled")


def _strip_volatile(nb) -> None:
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
    nb.metadata.pop("papermill", None)


def _stable_ids(nb, previous) -> None:
    """Give cells the id they had in ``previous`` when their source is unchanged, else one derived from it."""
    reuse: dict[str, list[str]] = {}
    for cell in previous.cells if previous is not None else []:
        if "id" in cell:
            reuse.setdefault(cell.source, []).append(cell.id)
    taken = set()
    for cell in nb.cells:
        candidates = [i for i in reuse.get(cell.source, []) if i not in taken]
        if candidates:
            cell.id = candidates[0]
        else:
            digest = hashlib.sha256(f"{cell.cell_type}\x1f{cell.source}".encode()).hexdigest()
            cell.id = next(digest[s : s + 8] for s in range(0, 56) if digest[s : s + 8] not in taken)
        taken.add(cell.id)


def _pair_paths(source) -> tuple[Path, Path]:
    """The ``.md`` source (a path, or a stem inside ``notebooks/``) and its ``.ipynb``."""
    source = Path(source)
    if source.suffix != ".md":
        source = Path("notebooks") / f"{source.name}.md"
    return source, source.with_suffix(".ipynb")


def execute_pair(source, timeout: int = 900) -> Path:
    """Execute ``notebooks/<stem>.md`` and write ``notebooks/<stem>.ipynb`` with its outputs.

    Parameters
    ----------
    source : path to the ``.md`` source (or its stem inside ``notebooks/``)
    timeout : int
        Seconds allowed per cell.
    """
    import jupytext
    import nbformat

    source, target = _pair_paths(source)
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    nb = jupytext.read(source)
    previous = nbformat.read(target, as_version=4) if target.is_file() else None
    execute_notebook(nb, cwd=source.parent, timeout=timeout)  # no parameters: nothing injected
    _strip_volatile(nb)
    _stable_ids(nb, previous)
    jupytext.write(nb, target, fmt="ipynb")
    return target


def restyle_pair(source) -> Path:
    """Rewrite ``notebooks/<stem>.ipynb`` from its ``.md`` source without executing it.

    For edits that change no code: Markdown prose, labels, captions and cell metadata. Every code
    cell keeps the outputs and execution count of the committed cell with the same source, matched
    in order; if any code cell's source changed, nothing is written and the notebook must be
    executed (:func:`execute_pair`).

    Raises
    ------
    ValueError
        If the code cells of the source differ from those of the committed notebook.
    """
    import jupytext
    import nbformat

    source, target = _pair_paths(source)
    if not source.is_file() or not target.is_file():
        raise FileNotFoundError(f"restyling needs both {source} and {target}")
    nb = jupytext.read(source)
    previous = nbformat.read(target, as_version=4)
    new_code = [c for c in nb.cells if c.cell_type == "code"]
    old_code = [c for c in previous.cells if c.cell_type == "code"]
    changed = [i for i, (a, b) in enumerate(zip(new_code, old_code)) if a.source != b.source]
    if len(new_code) != len(old_code) or changed:
        where = f"code cell {changed[0]}" if changed else f"{len(new_code)} code cells vs {len(old_code)}"
        raise ValueError(f"{source} changes code ({where}); execute it instead: make notebook NB={source.stem}")
    for new, old in zip(new_code, old_code):
        new.outputs, new.execution_count = old.outputs, old.execution_count
    if "language_info" in previous.metadata:
        nb.metadata["language_info"] = previous.metadata["language_info"]
    _strip_volatile(nb)
    _stable_ids(nb, previous)
    jupytext.write(nb, target, fmt="ipynb")
    return target


#: Cell metadata the book and nbval use, which both files of a pair must hold alike.
PAIRED_CELL_METADATA = ("tags", "mystnb")


def pair_mismatches(source, notebook) -> list[str]:
    """Differences between a ``.md`` source and its ``.ipynb``: header, cell types, sources, tags and ``mystnb``.

    The header's ``kernelspec`` and jupytext ``formats`` and each cell's :data:`PAIRED_CELL_METADATA`
    must agree: a tool that drops them from one file (a Lab save, ``jupytext --sync`` with other
    filters) breaks the book's captions and cross-references without changing any code.
    """
    import jupytext

    a, b = jupytext.read(source), jupytext.read(notebook)
    problems = []
    for key in ("kernelspec", "jupytext"):
        left, right = a.metadata.get(key, {}), b.metadata.get(key, {})
        if key == "jupytext":
            left, right = left.get("formats"), right.get("formats")
        if left != right or not left:
            problems.append(f"notebook metadata {key!r} differs or is missing: {left!r} vs {right!r}")
    if len(a.cells) != len(b.cells):
        problems.append(f"{len(a.cells)} cells in {Path(source).name} vs {len(b.cells)} in {Path(notebook).name}")
    for i, (ca, cb) in enumerate(zip(a.cells, b.cells)):
        if ca.cell_type != cb.cell_type or ca.source.strip() != cb.source.strip():
            problems.append(f"cell {i} differs ({ca.cell_type} vs {cb.cell_type}): {ca.source[:60]!r}")
        else:
            for key in PAIRED_CELL_METADATA:
                if ca.metadata.get(key) != cb.metadata.get(key):
                    problems.append(f"cell {i} {key} differs: {ca.metadata.get(key)!r} vs {cb.metadata.get(key)!r}")
    return problems


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Execute notebook pairs (.md source -> .ipynb with outputs)")
    parser.add_argument("sources", nargs="+", help="notebooks/<stem>.md files or stems")
    parser.add_argument(
        "--restyle", action="store_true", help="prose/metadata edits only: keep the committed outputs, do not execute"
    )
    args = parser.parse_args(argv)
    for s in args.sources:
        try:
            print(f"wrote {restyle_pair(s) if args.restyle else execute_pair(s)}")
        except ValueError as err:
            parser.exit(2, f"error: {err}\n")
        except NotebookFailed as err:  # the kernel's traceback, then the one line; the committed pair is untouched
            parser.exit(1, f"{err.__cause__ or ''}\nerror: {s} did not run: {err}; nothing written\n")


if __name__ == "__main__":
    main()
