"""The student edition: every chapter without its solutions, as notebooks and as a book.

``python -m dpnb.tools.student`` (``make student``) writes, into a folder git ignores
(``build/student`` by default):

- ``notebooks/<stem>.md`` and ``notebooks/<stem>.ipynb``: each chapter with its solutions removed:
  the ``:::{admonition} Solutions`` block of the Exercises section and the solution code cell after
  it (tagged ``hide-cell``, opening with ``# Solutions``); the exercises, and every other cell with its
  committed outputs, are kept. Where the solution cell printed answer fingerprints
  (:func:`dpnb.reporting.exercises.answer`), a check cell takes its place, one
  :func:`dpnb.reporting.exercises.check` line per answer for the student to fill in and run;
- ``notebooks/bug_reports/``: the scripts a chapter offers for download, unchanged;
- ``book/``: the course book built from those notebooks (``--no-book`` skips it).

The instructor edition is the repository itself. A chapter whose Exercises section does not follow the
convention of ``notebooks/README.md`` (a Solutions admonition, then one solution cell) is refused with
a message naming it, so no solution can slip through under another shape.

Examples
--------
>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[
...     nbformat.v4.new_markdown_cell("## Exercises\\n\\n1. Derive.\\n\\n:::{admonition} Solutions\\n"
...                                   ":class: dropdown\\n1. Done.\\n:::\\n"),
...     nbformat.v4.new_code_cell("# Solutions, re-executed by `make test`.\\nprint(1)",
...                               metadata={"tags": ["hide-cell"]})])
>>> [c.source for c in strip_solutions(nb, "demo").cells]
['## Exercises\\n\\n1. Derive.\\n']
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from dpnb.reporting.exercises import check_cell

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = "## Exercises"
SOLUTIONS_OPEN = re.compile(r"^:::\{admonition\} Solutions[^\n]*\n", re.M)
SOLUTION_CELL = "# Solutions"


def _solution_block(text: str) -> tuple[int, int] | None:
    """Start and end offsets of the Solutions admonition in ``text`` (its closing ``:::`` line included)."""
    opening = SOLUTIONS_OPEN.search(text)
    if opening is None:
        return None
    closing = re.compile(r"^:::[ \t]*$\n?", re.M).search(text, opening.end())
    if closing is None:
        raise ValueError("a Solutions admonition is never closed (no ':::' line after it)")
    return opening.start(), closing.end()


def strip_solutions(nb, name: str):
    """A copy of the notebook ``nb`` without its solutions (prose and code); ``name`` names it in errors.

    Raises ``ValueError`` unless the notebook has exactly one Exercises section holding one Solutions
    admonition and one solution code cell (tagged ``hide-cell``, source opening with ``# Solutions``),
    and no solution text anywhere else.
    """
    import copy

    import nbformat

    nb = copy.deepcopy(nb)
    starts = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and EXERCISES in c.source]
    if len(starts) != 1:
        raise ValueError(f"{name}: expected one '{EXERCISES}' section, found {len(starts)}")
    blocks, solution_cells = 0, []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            span = _solution_block(cell.source)
            if span is not None:
                if i < starts[0]:
                    raise ValueError(f"{name}: a Solutions admonition before the Exercises section (cell {i})")
                cell.source = (cell.source[: span[0]] + cell.source[span[1] :]).rstrip("\n") + "\n"
                blocks += 1
                if _solution_block(cell.source) is not None:
                    raise ValueError(f"{name}: more than one Solutions admonition in cell {i}")
        elif cell.cell_type == "code" and cell.source.lstrip().startswith(SOLUTION_CELL):
            if "hide-cell" not in cell.get("metadata", {}).get("tags", []) or i < starts[0]:
                raise ValueError(f"{name}: solution cell {i} must be tagged hide-cell and follow the Exercises")
            solution_cells.append(i)
    if blocks != 1 or len(solution_cells) != 1:
        raise ValueError(
            f"{name}: expected one Solutions admonition and one solution cell in the Exercises section, "
            f"found {blocks} and {len(solution_cells)} (see notebooks/README.md, Exercises)"
        )
    (index,) = solution_cells
    printed = "".join(o.get("text", "") for o in nb.cells[index].get("outputs", []) if o.get("name") == "stdout")
    checks = check_cell(printed)
    if checks is None:
        del nb.cells[index]
    else:
        # a fixed id (nbformat requires one): the same edition every time
        nb.cells[index] = nbformat.v4.new_code_cell(checks, id="answer-checks")
    nb.cells = [c for c in nb.cells if c.source.strip()]
    return nb


def chapters(notebooks: Path) -> list[Path]:
    """The chapters' ``.ipynb`` files (each paired with its ``.md`` source), in name order."""
    return sorted(p for p in notebooks.glob("*.ipynb") if p.with_suffix(".md").is_file())


def write_edition(out: Path, notebooks: Path = ROOT / "notebooks") -> list[str]:
    """Write every chapter's student pair into ``out/notebooks``; return the stems written."""
    import jupytext
    import nbformat

    target = out / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    stems = []
    for path in chapters(notebooks):
        nb = strip_solutions(nbformat.read(path, as_version=4), path.stem)
        nbformat.write(nb, target / path.name)
        jupytext.write(nb, target / f"{path.stem}.md", fmt="md:myst")
        stems.append(path.stem)
    shutil.copy(notebooks / "jupytext.toml", target / "jupytext.toml")
    if (notebooks / "bug_reports").is_dir():  # scripts a chapter offers for download ({download}`bug_reports/...`)
        shutil.copytree(notebooks / "bug_reports", target / "bug_reports", ignore=shutil.ignore_patterns("__pycache__"))
    return stems


def build_book(out: Path) -> None:
    """Build the course book from the student notebooks into ``out/book`` (offline, warnings as errors)."""
    out = out.resolve()  # jupyter-book reads --config and --toc relative to the book's folder, not the caller's
    subprocess.run([sys.executable, str(ROOT / "book" / "verdicts.py")], check=True)  # the landing page's table
    shutil.copytree(ROOT / "book", out / "book", dirs_exist_ok=True)
    (out / "data").mkdir(exist_ok=True)
    shutil.copy(ROOT / "data" / "README.md", out / "data" / "README.md")  # the book's data page includes it
    subprocess.run(
        [
            str(Path(sys.executable).parent / "jupyter-book"),
            "build",
            str(out),
            "--config",
            str(out / "book" / "_config.yml"),
            "--toc",
            str(out / "book" / "_toc.yml"),
            "--path-output",
            str(out / "book"),
            "--builder",
            "html",
            "-W",
            "-n",
            "--keep-going",
            "-q",
        ],
        check=True,
    )


def solution_leaks(html_dir: Path, notebooks: Path = ROOT / "notebooks") -> list[str]:
    """Pages of a built student book that still show a solution: its admonition title, its cell, or a line of it.

    A line counts when it is one of the instructor edition's solution lines (prose or code) of 40 or more
    characters; an empty list means the book holds no solution. The package's pages (``book/api/`` and the
    highlighted sources under ``_modules/``) are not searched: they show the package's code and docstrings,
    which hold no solution but do hold this tool's own markers and, at times, a solution's import line.
    """
    import nbformat

    lines = set()
    for path in chapters(notebooks):
        for cell in nbformat.read(path, as_version=4).cells:
            span = _solution_block(cell.source) if cell.cell_type == "markdown" else None
            text = cell.source[span[0] : span[1]] if span else ""
            if cell.cell_type == "code" and cell.source.lstrip().startswith(SOLUTION_CELL):
                text = cell.source
            lines.update(line.strip() for line in text.splitlines()[1:] if len(line.strip()) >= 40)
    leaks = []
    for page in sorted(html_dir.rglob("*.html")):
        if page.relative_to(html_dir).parts[:2] == ("book", "api") or page.relative_to(html_dir).parts[0] == "_modules":
            continue
        html = page.read_text(errors="replace")
        if (
            "Solutions, re-executed" in html
            or ">Solutions<" in html
            or any(line in html for line in lines if "$" not in line)
        ):
            leaks.append(str(page.relative_to(html_dir)))
    return leaks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write the student edition: every chapter without its solutions")
    parser.add_argument("--output", default="build/student", help="folder to write (default build/student)")
    parser.add_argument("--no-book", action="store_true", help="write the notebooks only, not the book")
    args = parser.parse_args(argv)
    out = Path(args.output)
    try:
        stems = write_edition(out)
    except (ValueError, OSError) as exc:
        parser.exit(2, f"error: {exc}\n")
    print(f"student notebooks: {len(stems)} chapters in {out / 'notebooks'} (solutions removed)")
    if not args.no_book:
        build_book(out)
        leaks = solution_leaks(out / "book" / "_build" / "html")
        if leaks:
            parser.exit(1, f"error: the student book still shows solutions on {', '.join(leaks)}\n")
        print(f"student book: open {out / 'book' / '_build' / 'html' / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
