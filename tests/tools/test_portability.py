import subprocess
import sys

import nbformat
import pytest

from dpnb.tools import portability
from dpnb.tools.executor import execute_notebook


def test_configurations_emulate_other_kernels_and_simd():
    configs = portability.configurations()
    assert set(configs) == {"sandybridge-1thread", "prescott-2threads-nosimd", "reordered"}
    assert configs["sandybridge-1thread"]["OPENBLAS_CORETYPE"] == "Sandybridge"
    assert configs["prescott-2threads-nosimd"]["OPENBLAS_NUM_THREADS"] == "2"
    assert configs["prescott-2threads-nosimd"]["OPENBLAS_THREAD_TIMEOUT"] == "4"  # its idle thread sleeps at once


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


@pytest.mark.notebook
def test_a_kernel_started_inside_sees_the_emulated_machine(tmp_path):
    nb = _notebook("import os, threadpoolctl, numpy\nprint(os.environ['OPENBLAS_CORETYPE'])")
    with portability.numerical_environment("sandybridge-1thread"):
        execute_notebook(nb, cwd=tmp_path)
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


def test_exec_runs_a_command_in_the_configuration(capsys):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpnb.tools.portability",
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
    # the usage error in this process: the entry point's sys.exit(main()) is exercised above
    assert portability.main(["exec"]) == 2 and "usage" in capsys.readouterr().err


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


_REORDERING_CHECK = """
import numpy as np, scipy.linalg
rng = np.random.default_rng(0)
A = rng.standard_normal((7, 7)); S = A @ A.T; x = rng.standard_normal(4001) * 1e3
plain = {"sum": float(np.sum(x)), "norm": float(np.linalg.norm(x)), "dot": float(np.dot(x, x))}
w, V = np.linalg.eigh(S); U, s, Vh = np.linalg.svd(A); top = scipy.linalg.eigh(S, subset_by_index=[5, 6])
checks = [
    np.allclose(V @ np.diag(w) @ V.T, S), np.allclose(U @ np.diag(s) @ Vh, A),
    np.allclose(S @ np.linalg.solve(S, x[:7]), x[:7]),
    np.allclose(top[1] @ np.diag(top[0]) @ top[1].T, V[:, 5:] @ np.diag(w[5:]) @ V[:, 5:].T),
    np.sum(np.ones(10**6)) == 10**6, np.array_equal(np.linalg.eigvalsh(np.diag([3.0, 1.0, 2.0])), [1.0, 2.0, 3.0]),
    np.array_equal(np.sum(np.arange(12.0).reshape(3, 4), axis=1), [6.0, 22.0, 38.0]),
]
print(all(checks), plain["sum"].hex(), plain["norm"].hex(), plain["dot"].hex())
"""


def _run_check(env):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _REORDERING_CHECK], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_reordered_configuration_changes_roundoff_not_mathematics():
    import os

    config = portability.configurations()["reordered"]
    assert str(portability.REORDER_HOOK) in config["PYTHONPATH"].split(os.pathsep)
    native = _run_check({**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    reordered = _run_check({**os.environ, **config})
    assert native[0] == "True" and reordered[0] == "True"  # same mathematics, exact results stay exact
    assert native[1:] != reordered[1:]  # other round-off: a 4001-term sum, norm or dot rarely keeps every bit


@pytest.mark.notebook
def test_a_kernelspec_starts_its_kernels_in_the_configuration_and_leaves_this_process_alone(tmp_path, monkeypatch):
    import json
    import os

    from nbclient import NotebookClient

    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    folder = portability.write_kernelspec("prescott-2threads-nosimd", tmp_path)
    spec = json.loads((folder / "kernel.json").read_text())
    assert folder.name == "dpnb-prescott-2threads-nosimd" and spec["argv"][0] == sys.executable
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    nb = _notebook("import os\nprint(os.environ['OPENBLAS_CORETYPE'], os.environ['OPENBLAS_NUM_THREADS'])")
    NotebookClient(nb, kernel_name=folder.name, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert portability.text_outputs(nb) == [(1, "[stdout] Prescott 2\n")]
    assert "OPENBLAS_CORETYPE" not in os.environ
    with pytest.raises(ValueError, match="unknown configuration 'x86'"):
        portability.write_kernelspec("x86", tmp_path)
    bad = subprocess.run(
        [sys.executable, "-m", "dpnb.tools.portability", "kernelspec", "x86", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "usage" in bad.stderr and "reordered" in bad.stderr
