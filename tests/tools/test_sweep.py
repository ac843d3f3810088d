import json
import logging
import subprocess
import sys
import threading

import nbformat
import numpy as np
import pandas as pd
import pytest
from tool_helpers import sweep_command, write_notebook

from dpnb.tools import sweep
from dpnb.tools.grid import expand_grid, parse_assignment, parse_seeds, point_key, read_grid

CALLS = []
_CALLS_LOCK = threading.Lock()


def square(x, seed, offset=0):
    """A task that prints, counts its calls, and fails at x = 3."""
    with _CALLS_LOCK:
        CALLS.append((x, seed))
    print(f"squaring {x}")
    if x == 3:
        raise ValueError("x=3 is refused")
    return {"y": x * x + offset, "seed_parity": np.int64(seed % 2), "even": np.bool_(x % 2 == 0)}


def bad_return(seed):
    return [seed]


def no_seed(x):
    return {"x": x}


def positional_only(x, /, seed):
    return {"x": x}


NOT_A_FUNCTION = {"x": 1}


def _notebook(folder):
    body = (
        "import json, pathlib\n"
        "from dpnb.reporting.claims import ClaimTable, verdict\n"
        "if alpha < 0:\n"
        "    raise ValueError('alpha must be non-negative')\n"
        "print('alpha is', alpha)\n"
        "t = ClaimTable('demo', [('c1', 'Demo Lemma 1', 'alpha bound')])\n"
        "t.add('c1', '1', str(alpha), verdict(alpha <= 1))\n"
        "t.write_json(output_dir)\n"
        "pathlib.Path(output_dir, 'metrics.json').write_text(json.dumps({'twice': 2 * alpha + seed}))"
    )
    return write_notebook(folder / "demo.ipynb", 'alpha: float = 1.0\nseed: int = 0\noutput_dir: str = "unused"', body)


def test_expand_grid_order_and_values():
    points = expand_grid({"a": [1, 2], "b": "x", "c": np.array([0.5, 1.5])}, range(2))
    assert points == [({"a": a, "b": "x", "c": c}, s) for a in (1, 2) for c in (0.5, 1.5) for s in (0, 1)]
    assert all(type(p["c"]) is float for p, _ in points)
    assert expand_grid({}, [4, 7]) == [({}, 4), ({}, 7)]
    assert expand_grid({"sizes": [[10, 20], [5]]}, [0]) == [({"sizes": [10, 20]}, 0), ({"sizes": [5]}, 0)]


def test_point_key_is_stable_and_distinct():
    key = point_key("t", {"a": 1, "b": 2.0}, 3)
    assert key == point_key("t", {"b": 2.0, "a": 1}, 3) and len(key) == 16
    assert (
        len(
            {
                key,
                point_key("t", {"a": 1, "b": 2.0}, 4),
                point_key("u", {"a": 1, "b": 2.0}, 3),
                point_key("t", {"a": 1.0, "b": 2.0}, 3),
            }
        )
        == 4
    )


def test_command_line_values(tmp_path):
    assert parse_seeds("0..9") == list(range(10))
    assert parse_seeds("3,1") == [3, 1] and parse_seeds("5") == [5]
    assert parse_assignment("epsilon=1e-5,inf,0.5,2") == ("epsilon", [1e-5, float("inf"), 0.5, 2])
    assert parse_assignment("sizes=[1,2],[3]") == ("sizes", [[1, 2], [3]])
    assert parse_assignment("name=abc,'1',true") == ("name", ["abc", "1", True])
    (tmp_path / "grid.yml").write_text("delta: [1e-6, 1.0e-5]\nmode: paper\n")
    assert read_grid(tmp_path / "grid.yml") == {"delta": [1e-6, 1e-5], "mode": "paper"}
    for bad in ("9..0", "a", "1..x", ""):
        with pytest.raises(ValueError, match="seeds"):
            parse_seeds(bad)
    for bad in ("epsilon", "=1", "epsilon=", "epsilon=[1"):
        with pytest.raises(ValueError, match="-p"):
            parse_assignment(bad)


@pytest.mark.parametrize(
    ("grid", "seeds", "error", "match"),
    [
        ([("x", [1])], [0], TypeError, "grid must be a dict"),
        ({"x": [object()]}, [0], TypeError, "grid value of x is a object"),
        ({"x": {1: 2}}, [0], TypeError, "grid value of x is a dict"),
        ({"x": []}, [0], ValueError, "x has no values"),
        ({"x": [1, 1]}, [0], ValueError, "x repeats a value"),
        ({"seed": [1]}, [0], ValueError, "seeds separately"),
        ({"status": [1]}, [0], ValueError, "column of the result table"),
        ({"not a name": [1]}, [0], ValueError, "not a parameter name"),
        ({"x": [1]}, 5, TypeError, "sequence of ints"),
        ({"x": [1]}, "0..3", TypeError, "sequence of ints"),
        ({"x": [1]}, [0.5], TypeError, "seeds must be ints"),
        ({"x": [1]}, [], ValueError, "seeds is empty"),
        ({"x": [1]}, [-1], ValueError, "non-negative"),
        ({"x": [1]}, [2, 2], ValueError, "repeat"),
    ],
)
def test_bad_grids_and_seeds(grid, seeds, error, match):
    with pytest.raises(error, match=match):
        expand_grid(grid, seeds)


def test_bad_tasks_and_arguments(tmp_path):
    for bad, match in [
        (no_seed, "must take a `seed` argument"),
        (positional_only, "positional-only x"),
        (sweep.FunctionTask, "plain function"),
        (print, "plain function"),
    ]:
        with pytest.raises(TypeError, match=match):
            sweep.run_sweep(bad, {}, [0], tmp_path)
    with pytest.raises(TypeError, match="task must be"):
        sweep.run_sweep(3.5, {}, [0], tmp_path)
    with pytest.raises(ValueError, match="neither a notebook"):
        sweep.resolve_task("square")
    with pytest.raises(ValueError, match="neither a notebook"):
        sweep.resolve_task(f"{__name__}:bad-return")
    with pytest.raises(ValueError, match="no notebook at"):
        sweep.resolve_task(tmp_path / "missing.ipynb")
    with pytest.raises(ValueError, match="cannot import"):
        sweep.resolve_task("no_such_module_xyz:f")
    with pytest.raises(ValueError, match=rf"{__name__} has no function cube"):
        sweep.resolve_task(f"{__name__}:cube")
    with pytest.raises(TypeError, match="seed"):
        sweep.resolve_task(f"{__name__}:no_seed")
    with pytest.raises(TypeError, match="plain function"):
        sweep.resolve_task(f"{__name__}:NOT_A_FUNCTION")
    assert sweep.resolve_task(f"{__name__}:square").function is square
    assert sweep.resolve_task(f"{__name__}:square").name == f"{__name__}:square" == sweep.resolve_task(square).name
    assert sweep.resolve_task(f"{__name__}:bad_return").function is bad_return
    with pytest.raises(ValueError, match=rf"unknown parameter\(s\) z for {__name__}:square; it takes: x, offset"):
        sweep.run_sweep(square, {"x": [1], "z": [2]}, [0], tmp_path)
    with pytest.raises(TypeError, match="output must be a folder"):
        sweep.run_sweep(square, {"x": [1]}, [0], 3)
    with pytest.raises(TypeError, match="n_workers must be an int"):
        sweep.run_sweep(square, {"x": [1]}, [0], tmp_path, n_workers=2.0)
    with pytest.raises(ValueError, match="at least 1"):
        sweep.run_sweep(square, {"x": [1]}, [0], tmp_path, n_workers=0)
    with pytest.raises(TypeError, match="scheduler must be"):
        sweep.run_sweep(square, {"x": [1]}, [0], tmp_path, scheduler=8786)
    assert not (tmp_path / "points").exists()


def test_function_sweep_table_failures_and_resume(tmp_path, dask_client, capsys):
    CALLS.clear()
    streams = sys.stdout, sys.stderr
    table = sweep.run_sweep(square, {"x": [1, 2, 3], "offset": 10}, [0, 1], tmp_path, scheduler=dask_client)
    assert (sys.stdout, sys.stderr) == streams  # the per-thread log routing is gone
    assert sorted(CALLS) == [(x, s) for x in (1, 2, 3) for s in (0, 1)]
    assert "failed: x=3 offset=10 seed=0: ValueError: x=3 is refused" in capsys.readouterr().out
    assert list(table.columns) == [
        "task",
        "x",
        "offset",
        "seed",
        "status",
        "error",
        "y",
        "seed_parity",
        "even",
        "version.numpy",
        "version.scipy",
        "version.scikit-learn",
        "version.dpnb",
        "git_revision",
        "seconds",
        "key",
        "log",
    ]
    assert table.equals(pd.read_parquet(tmp_path / "results.parquet"))
    assert list(zip(table["x"], table["seed"], strict=True)) == [(x, s) for x in (1, 2, 3) for s in (0, 1)]
    assert list(table["status"]) == ["ok"] * 4 + ["error"] * 2
    assert list(table["error"].iloc[4:]) == ["ValueError: x=3 is refused"] * 2 and table["error"].iloc[:4].isna().all()
    assert list(table["y"].iloc[:4]) == [11, 11, 14, 14] and table["y"].iloc[4:].isna().all()
    assert list(table["seed_parity"].iloc[:4]) == [0, 1, 0, 1]
    assert list(table["even"].iloc[:4]) == [False, False, True, True]
    assert (table["task"] == f"{__name__}:square").all() and (table["offset"] == 10).all()
    assert (table["version.numpy"] == np.__version__).all()
    assert table["git_revision"].str.fullmatch(r"[0-9a-f]{40}(\+dirty)?").all()
    assert table["key"].is_unique
    failed_log = (tmp_path / table["log"].iloc[4]).read_text()
    assert "squaring 3" in failed_log and "Traceback" in failed_log and "x=3 is refused" in failed_log
    assert "squaring 1" in (tmp_path / table["log"].iloc[0]).read_text()

    CALLS.clear()  # resume: only the failed points run again
    again = sweep.run_sweep(
        square, {"x": [1, 2, 3], "offset": 10}, [0, 1], tmp_path, scheduler=dask_client, progress=False
    )
    assert sorted(CALLS) == [(3, 0), (3, 1)]
    assert again.drop(columns="seconds").equals(table.drop(columns="seconds"))

    CALLS.clear()  # a finished sweep runs nothing, not even a cluster
    done = sweep.run_sweep(square, {"x": [1, 2]}, [0], tmp_path / "b", scheduler=dask_client, progress=False)
    assert (
        sweep.run_sweep(square, {"x": [2, 1]}, [0], tmp_path / "b", scheduler="tcp://127.0.0.1:9", progress=False)
        .drop(columns="seconds")
        .equals(done.iloc[::-1].reset_index(drop=True).drop(columns="seconds"))
    )
    assert sorted(CALLS) == [(1, 0), (2, 0)]


def test_bad_return_value_is_a_failed_point(tmp_path, dask_client):
    table = sweep.run_sweep(bad_return, {}, [0], tmp_path, scheduler=dask_client, progress=False)
    assert list(table["status"]) == ["error"]
    assert table["error"].iloc[0].startswith(f"TypeError: the return value of {__name__}:bad_return must be a dict")


def test_mixed_type_column_is_written_as_text(tmp_path, dask_client):
    table = sweep.run_sweep(square, {"x": [2, "two"]}, [0], tmp_path, scheduler=dask_client, progress=False)
    assert list(table["x"]) == ["2", "two"] and list(table["status"]) == ["ok", "error"]
    assert table["error"].iloc[1].startswith("TypeError:")


@pytest.mark.notebook
def test_notebook_sweep(tmp_path, dask_client):
    path = _notebook(tmp_path)
    table = sweep.run_sweep(path, {"alpha": [-1.0, 2.0]}, [3], tmp_path / "out", scheduler=dask_client, progress=False)
    assert list(table["status"]) == ["error", "ok"]
    assert table["error"].iloc[0] == "cell In [3]: ValueError: alpha must be non-negative"  # [2]: the injected cell
    assert table["verdict.c1"].iloc[1] == "fails" and table["measured.c1"].iloc[1] == "2.0"
    assert table["twice"].iloc[1] == 7.0 and table["verdict.c1"].iloc[:1].isna().all()
    folder = tmp_path / "out" / "points" / table["key"].iloc[1]
    assert "alpha is 2.0" in (folder / "task.log").read_text()
    assert json.loads((folder / "result.json").read_text())["metrics"]["twice"] == 7.0
    executed = nbformat.read(folder / "notebook.ipynb", as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in executed.cells)
    failed_log = (tmp_path / "out" / table["log"].iloc[0]).read_text()
    assert "ValueError: alpha must be non-negative" in failed_log and "Traceback" in failed_log
    assert "\x1b[" not in failed_log and "dpnb/tools" not in failed_log  # the kernel's traceback, not the sweep's


def test_unknown_notebook_parameter_refused_in_one_line(tmp_path, capsys):
    path = _notebook(tmp_path)
    with pytest.raises(
        ValueError,
        match=r"unknown parameter\(s\) alpah for .*demo.ipynb; its parameters are: "
        r"alpha, seed, output_dir",
    ):
        sweep.run_sweep(path, {"alpah": [1.0]}, [0], tmp_path / "out")
    with pytest.raises(ValueError, match="output_dir is set by the sweep"):
        sweep.run_sweep(path, {"output_dir": ["x"]}, [0], tmp_path / "out")
    with pytest.raises(SystemExit) as stop:
        sweep.main([str(path), "-p", "alpah=1", "--output", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown parameter(s) alpah" in err
    assert not (tmp_path / "out" / "points").exists()


def test_command_line(tmp_path, capsys):
    (tmp_path / "grid.yml").write_text("x: [1, 3]\noffset: 5\n")
    out = tmp_path / "out"
    code = sweep.main(
        [
            f"{__name__}:square",
            "--grid",
            str(tmp_path / "grid.yml"),
            "-p",
            "x=2,3",
            "--seeds",
            "0..1",
            "--output",
            str(out),
            "--threads",
        ]
    )
    assert code == 1
    captured = capsys.readouterr()
    assert "2 of 4 grid points ok" in captured.out
    assert "failed: x=3 offset=5 seed=1: ValueError: x=3 is refused (log:" in captured.err
    table = pd.read_parquet(out / "results.parquet")
    assert list(zip(table["x"], table["seed"], table["status"], strict=True)) == [
        (2, 0, "ok"),
        (2, 1, "ok"),
        (3, 0, "error"),
        (3, 1, "error"),
    ]
    with pytest.raises(SystemExit):
        sweep.main([f"{__name__}:square", "--output", str(out), "--scheduler", "tcp://127.0.0.1:9", "--workers", "3"])


@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("x: !!python/object/apply:os.system ['touch {marker}']\n", 1, "could not determine a constructor"),
        ("x: [1, 2\noffset: 5\n", 2, "expected ',' or ']'"),
    ],
)
def test_a_grid_file_with_a_tag_or_bad_yaml_is_one_line_naming_file_and_line(tmp_path, capsys, text, line, problem):
    marker = tmp_path / "executed"
    grid = tmp_path / "grid.yml"
    grid.write_text(text.format(marker=marker))
    with pytest.raises(SystemExit) as stop:
        sweep.main([f"{__name__}:square", "--grid", str(grid), "--output", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"python -m dpnb.tools.sweep: error: {grid}, line {line}: ")
    assert problem in err[0] and not marker.exists() and not (tmp_path / "out").exists()


def test_the_command_keeps_dask_info_lines_off_stderr_after_importing_distributed():
    """Importing ``distributed`` sets its logger to INFO; the command's level, set after that import, holds."""
    code = (
        "import logging\n"
        "from dpnb.tools.sweep import _quiet_dask_logs\n"
        "_quiet_dask_logs()\n"
        "from distributed import Client, LocalCluster\n"
        "print(logging.getLogger('distributed.batched').getEffectiveLevel())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert int(done.stdout) == logging.WARNING


def test_module_entry_point(tmp_path):
    """``python -m dpnb.tools.sweep module:function`` runs a plain function of a module that imports nothing of dpnb."""
    source = "def half(x, seed):\n    print('halving', x)\n    return {'y': 1 / x + seed}\n"
    command = sweep_command(
        tmp_path, "tinytask", source, "tinytask:half", "-p", "x=0,2", "--seeds", "0..1", "--threads"
    )
    stdout, stderr = command.communicate(timeout=120)
    assert command.returncode == 1, stderr
    assert "2 of 4 grid points ok" in stdout
    logs = [tmp_path / "out" / "points" / point_key("tinytask:half", {"x": 0}, s) / "task.log" for s in (0, 1)]
    assert stderr.splitlines() == [
        f"failed: x=0 seed={s}: ZeroDivisionError: division by zero (log: {log})" for s, log in enumerate(logs)
    ]
    assert "halving 0" in logs[0].read_text()
    assert list(pd.read_parquet(tmp_path / "out" / "results.parquet")["y"].iloc[2:]) == [0.5, 1.5]


def test_sweep_records_are_the_points_records_in_grid_order(tmp_path, dask_client):
    records = sweep.sweep_records(square, {"x": [3, 2]}, [1, 0], tmp_path, scheduler=dask_client, progress=False)
    assert [(r["params"]["x"], r["seed"], r["status"]) for r in records] == [
        (3, 1, "error"),
        (3, 0, "error"),
        (2, 1, "ok"),
        (2, 0, "ok"),
    ]
    assert [r["metrics"] for r in records[2:]] == [
        {"y": 4, "seed_parity": 1, "even": True},
        {"y": 4, "seed_parity": 0, "even": True},
    ]
    assert records[0]["error"] == "ValueError: x=3 is refused"
    assert list(pd.read_parquet(tmp_path / "results.parquet")["key"]) == [r["key"] for r in records]


def test_a_folder_swept_before_is_resumed_under_the_same_task_name(tmp_path, dask_client):
    # A record as an earlier sweep of the comparison's trial task wrote it: it is found by its key (a hash of the
    # task name string, the parameters and the seed) and not run again; run, this point would fail (one row is too
    # few for the distance task).
    params = {"experiment": "distances", "epsilons": [1.0], "epsilon_index": 0, "repetition": 0, "n_rows": 1}
    key = "6065bad7187901c7"
    record = {"key": key, "task": "dpnb.chapters.comparison:trial", "params": params, "seed": 0, "status": "ok"}
    record.update(error=None, metrics={"score": 0.5}, versions={}, git_revision=None, seconds=1.0)
    (tmp_path / "points" / key).mkdir(parents=True)
    (tmp_path / "points" / key / "result.json").write_text(json.dumps(record))
    table = sweep.run_sweep(
        "dpnb.chapters.comparison:trial",
        {name: [value] for name, value in params.items()},
        [0],
        tmp_path,
        scheduler=dask_client,
        progress=False,
    )
    assert list(table["key"]) == [key] and list(table["score"]) == [0.5]
    assert sweep.resolve_task("dpnb.chapters.comparison:trial").function.__name__ == "trial"


def test_metrics_must_be_named_scalars():
    from dpnb.tools.grid import plain, scalars

    assert plain((np.float32(0.5), [np.int64(2)], None), "v") == [0.5, [2], None]
    assert scalars({"a": np.bool_(True), "b": "x"}, "m") == {"a": True, "b": "x"}
    for bad, match in [
        ([1], "must be a dict"),
        ({1: 2}, "must be a dict"),
        ({"a": [1]}, "are lists"),
        ({"a": object()}, "metric 'a' in m is a object"),
    ]:
        with pytest.raises(TypeError, match=match):
            scalars(bad, "m")


def test_finished_is_a_usable_record_of_an_ok_point(tmp_path, capsys):
    from dpnb.tools.records import finished, write_record

    record = {"key": "k", "task": "t", "params": {}, "seed": 0, "status": "error", "error": "E: x", "metrics": {}}
    record.update(versions={}, git_revision=None, seconds=None)
    assert finished(tmp_path) is None  # no record
    write_record(tmp_path / "result.json", record)
    assert finished(tmp_path, "k") is None  # a failed point
    write_record(tmp_path / "result.json", {**record, "status": "ok", "error": None})
    assert finished(tmp_path, "k")["status"] == "ok" and finished(tmp_path, "other", warn=False) is None
    assert capsys.readouterr().err == ""
