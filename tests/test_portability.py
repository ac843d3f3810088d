import subprocess
import sys

import nbformat
import pytest

from dpnb import portability
from dpnb.pairing import execute_notebook


def test_configurations_emulate_other_kernels_and_simd():
    configs = portability.configurations()
    assert set(configs) == {"sandybridge-1thread", "prescott-2threads-nosimd"}
    assert configs["sandybridge-1thread"]["OPENBLAS_CORETYPE"] == "Sandybridge"
    assert configs["prescott-2threads-nosimd"]["OPENBLAS_NUM_THREADS"] == "2"


def test_numerical_environment_sets_and_restores(monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    import os

    with portability.numerical_environment("sandybridge-1thread"):
        assert os.environ["OPENBLAS_CORETYPE"] == "Sandybridge" and os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OPENBLAS_CORETYPE" not in os.environ and os.environ["OPENBLAS_NUM_THREADS"] == "7"
    with pytest.raises(ValueError, match="unknown configuration 'x86'"):
        with portability.numerical_environment("x86"):
            pass


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# title"), *map(nbformat.v4.new_code_cell, sources)]
    return nb


def test_a_kernel_started_inside_sees_the_emulated_machine(tmp_path):
    nb = _notebook("import os, threadpoolctl, numpy\nprint(os.environ['OPENBLAS_CORETYPE'])")
    with portability.numerical_environment("sandybridge-1thread"):
        execute_notebook(nb, tmp_path)
    assert portability.text_outputs(nb) == [(1, "[stdout] Sandybridge\n")]


def test_output_differences_names_the_cell():
    a = _notebook("1", "2")
    b = _notebook("1", "2")
    a.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x = 0.1234\n")]
    b.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x = 0.1235\n")]
    assert portability.output_differences(a, a) == []
    (problem,) = portability.output_differences(a, b)
    assert problem.startswith("code cell 2:") and "0.1234" in problem and "0.1235" in problem
    assert portability.output_differences(a, _notebook("1")) == ["2 code cells expected, 1 executed"]
    injected = _notebook("x = 1", "1", "2")
    injected.cells[1].metadata["tags"] = ["injected-parameters"]
    injected.cells[3].outputs = a.cells[2].outputs
    assert portability.output_differences(a, injected) == []


def test_exec_runs_a_command_in_the_configuration():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpnb.portability",
            "exec",
            "sandybridge-1thread",
            sys.executable,
            "-c",
            "import os; print(os.environ['OPENBLAS_NUM_THREADS'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "1"
    bad = subprocess.run([sys.executable, "-m", "dpnb.portability", "exec"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_a_print_split_into_pieces_compares_equal():
    a, b = _notebook("1"), _notebook("1")
    a.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x = 1\ny = 2\n")]
    b.cells[1].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="x = 1\ny"),
        nbformat.v4.new_output("stream", name="stdout", text=" = 2\n"),
    ]
    assert portability.output_differences(a, b) == []
    b.cells[1].outputs[1]["name"] = "stderr"
    assert portability.output_differences(a, b) != []
