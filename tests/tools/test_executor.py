"""The one notebook executor: injection, environment, logs, outputs and one-line failures."""

import io
import os

import nbformat
import pytest
from tool_helpers import new_notebook, process_gone, write_notebook

from dpnb.tools.executor import (
    THREAD_VARIABLES,
    NotebookFailed,
    execute_notebook,
    failure_reason,
    kernel_environment,
)

PARAMETERS = "scale: int = 1  # a count"


def _stdout(nb) -> list[str]:
    return ["".join(o.text for o in c.outputs if o.output_type == "stream") for c in nb.cells if c.cell_type == "code"]


@pytest.mark.notebook
def test_parameters_are_injected_after_the_parameters_cell_and_only_when_given(tmp_path):
    path = write_notebook(tmp_path / "a.ipynb", PARAMETERS, "import os\nprint(scale, os.getcwd())")
    before = path.read_text()
    plain = execute_notebook(path)
    assert _stdout(plain) == ["", f"1 {tmp_path}\n"]  # the notebook's folder is the kernel's
    assert "papermill" not in plain.metadata and all("tags" not in c.metadata for c in plain.cells[1:])
    (tmp_path / "elsewhere").mkdir()
    injected = execute_notebook(path, parameters={"scale": 7}, cwd=tmp_path / "elsewhere")
    assert _stdout(injected) == ["", "", f"7 {tmp_path / 'elsewhere'}\n"]
    assert injected.cells[1].metadata.tags == ["injected-parameters"]
    assert injected.metadata.papermill.parameters == {"scale": 7}
    assert "tags" not in injected.cells[2].metadata  # the executor adds no metadata to the notebook's own cells
    assert path.read_text() == before  # the file executed is never written


@pytest.mark.notebook
def test_a_notebook_in_memory_runs_in_place_and_the_output_file_is_written(tmp_path):
    nb = new_notebook("", "print(2 + 3)")
    assert execute_notebook(nb, output=tmp_path / "out.ipynb", cwd=tmp_path) is nb
    assert _stdout(nb) == ["5\n"] and _stdout(nbformat.read(tmp_path / "out.ipynb", as_version=4)) == ["5\n"]


@pytest.mark.notebook
def test_the_kernel_gets_its_threads_and_environment_and_this_process_keeps_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    monkeypatch.delenv("DPNB_EXECUTOR_TEST", raising=False)
    source = "import os\nprint(os.environ['OPENBLAS_NUM_THREADS'], os.environ.get('DPNB_EXECUTOR_TEST'))"
    nb = execute_notebook(new_notebook("", source), blas_threads=2, environment={"DPNB_EXECUTOR_TEST": "on"})
    assert _stdout(nb) == ["2 on\n"]
    assert _stdout(execute_notebook(new_notebook("", source))) == ["7 None\n"]  # None leaves them as they are
    assert os.environ["OPENBLAS_NUM_THREADS"] == "7" and "DPNB_EXECUTOR_TEST" not in os.environ


def test_kernel_environment_checks_the_thread_count(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert all(kernel_environment(3)[name] == "3" for name in THREAD_VARIABLES)
    assert kernel_environment(None, {"OMP_NUM_THREADS": "", "X_EXECUTOR": "1"})["OMP_NUM_THREADS"] == "5"
    for bad, error in [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)]:
        with pytest.raises(error, match="blas_threads must be an integer >= 1"):
            kernel_environment(bad)
    with pytest.raises(TypeError, match="environment must be a dict of variables or None, got list"):
        kernel_environment(None, [("OMP_NUM_THREADS", "1")])


@pytest.mark.notebook
def test_a_failing_cell_is_one_line_with_the_kernel_traceback_as_cause_and_the_output_still_written(tmp_path):
    path = write_notebook(
        tmp_path / "bad.ipynb", PARAMETERS, "print('before')", "raise ArithmeticError('negative bound\\nmore')", "1"
    )
    log = io.StringIO()
    with pytest.raises(NotebookFailed) as failed:
        execute_notebook(path, output=tmp_path / "out.ipynb", parameters={"scale": 2}, log=log)
    assert str(failed.value) == "cell In [4]: ArithmeticError: negative bound"  # [2] is the injected cell
    assert failure_reason(failed.value) == str(failed.value)
    assert "Traceback" in str(failed.value.__cause__)
    assert log.getvalue().startswith("before\n") and "ArithmeticError: negative bound" in log.getvalue()
    assert "Traceback" in log.getvalue() and "\x1b[" not in log.getvalue()  # the kernel's, without colour codes
    written = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert written.cells[3].outputs[0].output_type == "error" and written.cells[4].execution_count is None


@pytest.mark.notebook
def test_a_dead_kernel_and_a_timeout_are_one_line_failures(tmp_path):
    with pytest.raises(NotebookFailed, match=r"^DeadKernelError: Kernel died$"):
        execute_notebook(new_notebook("", "import os\nos._exit(1)"), cwd=tmp_path)
    with pytest.raises(NotebookFailed, match=r"^CellTimeoutError: .*timed out"):
        execute_notebook(new_notebook("", "import time\ntime.sleep(30)"), cwd=tmp_path, timeout=1)


def test_bad_arguments_are_refused_before_a_kernel_starts(tmp_path):
    with pytest.raises(TypeError, match="notebook must be a path or a NotebookNode, got dict"):
        execute_notebook({"cells": []})
    with pytest.raises(TypeError, match="parameters must be a dict or None, got list"):
        execute_notebook(new_notebook("", "1"), parameters=[("scale", 1)])
    with pytest.raises(FileNotFoundError):
        execute_notebook(tmp_path / "missing.ipynb")


def test_failure_reason_is_one_line():
    assert failure_reason(ValueError("first\nsecond")) == "ValueError: first"
    assert failure_reason(ValueError("\n  indented first\n")) == "ValueError: indented first"
    assert failure_reason(KeyboardInterrupt()) == "KeyboardInterrupt"
    assert failure_reason(NotebookFailed("cell In [3]: KeyError: 'x'")) == "cell In [3]: KeyError: 'x'"


@pytest.mark.notebook
def test_a_set_stop_shuts_the_kernel_down_and_raises_interrupted(tmp_path):
    import threading
    import time

    from dpnb.tools.executor import NotebookInterrupted

    pid_file = tmp_path / "pid"
    nb = new_notebook(
        "", f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))", "import time\ntime.sleep(60)"
    )
    stop = threading.Event()

    def stop_once_running():  # the kernel wrote its pid: the second cell is running or about to
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()

    threading.Thread(target=stop_once_running).start()
    start = time.monotonic()
    with pytest.raises(NotebookInterrupted, match="^stopped: its kernel was shut down$"):
        execute_notebook(nb, cwd=tmp_path, stop=stop, output=tmp_path / "out.ipynb")
    assert time.monotonic() - start < 40
    assert process_gone(int(pid_file.read_text()))  # the kernel is gone, not orphaned
    assert (tmp_path / "out.ipynb").is_file()  # the executed part is still written
    with pytest.raises(NotebookInterrupted, match="^stopped before it started$"):
        execute_notebook(new_notebook("", "1"), cwd=tmp_path, stop=stop)  # a set stop starts no kernel
    with pytest.raises(TypeError, match="stop must be a threading.Event or None, got bool"):
        execute_notebook(new_notebook("", "1"), stop=True)


@pytest.mark.notebook
def test_an_interrupted_cell_is_interrupted_not_failed(tmp_path):
    from dpnb.tools.executor import NotebookInterrupted

    with pytest.raises(NotebookInterrupted, match=r"^cell In \[1\]: KeyboardInterrupt$"):
        execute_notebook(new_notebook("", "raise KeyboardInterrupt"), cwd=tmp_path)
