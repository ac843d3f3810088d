"""Plumbing shared by the tests of the tools: small notebooks on disk, the run's and the sweep's commands."""

import os
import subprocess
import sys

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


def sweep_command(folder, module: str, source: str, *args, extra_env=None, **popen) -> subprocess.Popen:
    """``python -m dpnb.tools.sweep ARGS --output folder/out`` started with ``source`` as the importable ``module``.

    The task module lies in ``folder`` (on the command's ``PYTHONPATH``), which it finds as ``$FAULT_TEST_DIR``;
    ``extra_env`` adds environment variables; stdout and stderr are pipes of text.
    """
    (folder / f"{module}.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(folder), "FAULT_TEST_DIR": str(folder), **(extra_env or {})}
    command = [sys.executable, "-m", "dpnb.tools.sweep", *args, "--output", str(folder / "out")]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **popen)


def run_command(*args, **popen) -> subprocess.Popen:
    """``python -m dpnb.tools.run ARGS`` started in a session of its own (a signal can reach its whole process
    group, as Ctrl-C does); stdout and stderr are pipes of text."""
    command = [sys.executable, "-m", "dpnb.tools.run", *map(str, args)]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **popen
    )


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting to be reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
