"""Small notebooks on disk for the tests of the tools that execute them (run, sweep, pairing, portability)."""

import nbformat


def new_notebook(parameters: str, *cells: str):
    """A Python 3 notebook: a cell tagged ``parameters`` (none if ``parameters`` is empty), then a cell per source."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in ([parameters] if parameters else []) + list(cells)]
    if parameters:
        nb.cells[0].metadata["tags"] = ["parameters"]
    return nb


def write_notebook(path, parameters: str, *cells: str):
    """:func:`new_notebook` written to ``path``; returns ``path``."""
    nbformat.write(new_notebook(parameters, *cells), path)
    return path
