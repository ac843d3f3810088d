"""Faults of a sweep: a killed worker, damaged or hand-edited records, an interrupt, a failing write; none loses or
hides a result."""

import json
import os
import signal
import time

import pandas as pd
import pytest
from tool_helpers import sweep_command

from dpnb.tools import records, sweep
from dpnb.tools.grid import point_key

RUNS = []


def count(x, seed):
    """Counts its calls (workers are threads of this process in these tests)."""
    RUNS.append((x, seed))
    return {"y": 10 * x + seed}


def _table_matches_records(out):
    """Every row of results.parquet says what its point's result.json says."""
    table = pd.read_parquet(out / records.TABLE)
    for _, row in table.iterrows():
        record = json.loads((out / "points" / row["key"] / records.RESULT).read_text())
        assert (row["status"], row["seconds"]) == (record["status"], record["seconds"])
        assert {k: row[k] for k in record["metrics"]} == record["metrics"]
    return table


KILLER = """
import os, signal, time
from pathlib import Path

DONE_HERE = 0


def work(seed):
    # The first task to start after its worker process finished two others kills that process (once per sweep).
    global DONE_HERE
    folder = Path(os.environ["FAULT_TEST_DIR"])
    time.sleep(0.3)
    if DONE_HERE >= 2:
        try:
            os.close(os.open(folder / "killed", os.O_CREAT | os.O_EXCL))
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
    DONE_HERE += 1
    with open(folder / "calls", "a") as calls:
        calls.write(f"{seed}\\n")
    return {"pid": os.getpid()}
"""


def test_a_killed_worker_reruns_no_finished_point_and_the_table_agrees_with_the_records(tmp_path, monkeypatch):
    # 8 points on 2 worker processes: one process runs at least 4, so a worker is killed holding finished results
    # (before the fix Dask recomputed them: points ran twice and the table kept the first run's record).
    args = ("killer:work", "--seeds", "0..7", "--workers", "2")
    run = sweep_command(tmp_path, "killer", KILLER, *args)
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    assert (tmp_path / "killed").exists()
    calls = sorted(int(line) for line in (tmp_path / "calls").read_text().split())
    assert calls == list(range(8)), "a finished point ran again"
    table = _table_matches_records(tmp_path / "out")
    assert list(table["status"]) == ["ok"] * 8
    monkeypatch.syspath_prepend(str(tmp_path))
    again = sweep.run_sweep("killer:work", {}, range(8), tmp_path / "out", progress=False)  # resumes: runs nothing
    assert sorted(int(line) for line in (tmp_path / "calls").read_text().split()) == calls
    assert again.equals(table) and _table_matches_records(tmp_path / "out").equals(table)


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda text: text[: len(text) // 2], "unusable"),  # truncated mid-string
        (lambda text: "[1, 2]", "holds a JSON list"),
        (lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "metrics"}), "lacks metrics"),
        (lambda text: json.dumps({**json.loads(text), "metrics": [1]}), "wrong type or value of metrics"),
        (lambda text: json.dumps({**json.loads(text), "key": "0123456789abcdef"}), "record of point 0123456789abcdef"),
        # edited by hand: still a well-formed record, but its checksum no longer matches
        (lambda text: text.replace('"y": 20', '"y": 21'), "changed after the sweep wrote it"),
        (lambda text: json.dumps({**json.loads(text), "checksum": 7}), "wrong type or value of checksum"),
    ],
)
def test_an_unusable_record_counts_as_not_run_with_a_warning_naming_it(tmp_path, dask_client, capsys, damage, problem):
    out = tmp_path / "out"
    sweep.run_sweep(count, {"x": [1, 2]}, [0], out, scheduler=dask_client, progress=False)
    key = point_key(sweep.resolve_task(count).name, {"x": 2}, 0)
    path = out / "points" / key / records.RESULT
    path.write_text(damage(path.read_text()))
    RUNS.clear()
    capsys.readouterr()
    table = sweep.run_sweep(count, {"x": [1, 2]}, [0], out, scheduler=dask_client, progress=False)
    assert RUNS == [(2, 0)]  # the damaged point ran again, the other did not
    assert list(table["y"]) == [10, 20] and list(table["status"]) == ["ok", "ok"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(path) in err[0] and problem in err[0] and "counts as not run" in err[0]
    assert records.read_record(out / "points" / key, key)["metrics"] == {"y": 20}


SLOW = """
import time

def slow(seed):
    if seed:
        time.sleep(900)  # still running when the test interrupts, however long the cluster took to start
    return {"y": seed}
"""


def _slow_sweep(tmp_path, extra_env=None):
    """A sweep of ``SLOW`` over seeds 0 and 1 in a session of its own (a signal can reach its whole group, as Ctrl-C
    does), started as from a shell: SIGINT at its default, whatever an earlier test left in this worker."""
    return sweep_command(
        tmp_path,
        "slowtask",
        SLOW,
        "slowtask:slow",
        "--seeds",
        "0..1",
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        extra_env=extra_env,
    )


# slow: a sweep in a child process, interrupted; make check keeps the in-process faults (damaged records, a
# failing write) and test_a_killed_worker_reruns_no_finished_point_and_the_table_agrees_with_the_records
@pytest.mark.slow
def test_an_interrupt_prints_one_line_and_leaves_nothing_half_written(tmp_path):
    # Ctrl-C reaches the whole process group: the command and its worker processes.
    run = _slow_sweep(tmp_path)
    points = tmp_path / "out" / "points"
    # Interrupt once seed 0 is saved (the cluster is up; the next test interrupts its start). A loaded machine
    # can take minutes to start the workers, hence the long wait.
    deadline = time.monotonic() + 600
    while not list(points.glob("*/result.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(run.pid, signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert stderr.splitlines() == [
        f"interrupted: the points that finished are saved in {points}; the same command resumes"
    ]
    assert [p.parent.name for p in points.glob("*/result.json")] == [point_key("slowtask:slow", {}, 0)]
    assert not list(tmp_path.rglob("*.partial")) and not (tmp_path / "out" / records.TABLE).exists()


SLOW_START = """
import time

time.sleep(float(__import__("os").environ.get("SLOW_START_SECONDS", "0")))
"""


# slow: a sweep in a child process whose workers take 20 s to start
@pytest.mark.slow
def test_an_interrupt_while_the_cluster_starts_stops_the_sweep_and_leaves_no_process(tmp_path):
    import psutil

    # Each worker imports this module before it reports for work, so the cluster's start lasts 20 s: the
    # Ctrl-C below lands inside it.
    (tmp_path / "slowstart.py").write_text(SLOW_START)
    env = {"DASK_DISTRIBUTED__WORKER__PRELOAD": '["slowstart"]', "SLOW_START_SECONDS": "20"}
    run = _slow_sweep(tmp_path, env)
    deadline = time.monotonic() + 120
    workers = []
    while time.monotonic() < deadline and not workers:
        descendants = psutil.Process(run.pid).children(recursive=True)
        workers = [p for p in descendants if "--multiprocessing-fork" in " ".join(p.cmdline())]
        time.sleep(0.1)
    assert workers, "no worker process started within 120 s"
    started = time.monotonic()
    os.killpg(run.pid, signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert time.monotonic() - started < 20, "the sweep waited for the cluster instead of stopping"
    assert run.returncode == 130
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    points = tmp_path / "out" / "points"
    assert stderr.splitlines() == [
        f"interrupted: the points that finished are saved in {points}; the same command resumes"
    ]
    assert not list(tmp_path.rglob("result.json")) and not list(tmp_path.rglob("*.partial"))
    gone, alive = psutil.wait_procs(descendants, timeout=60)
    assert not alive, f"left running: {[p.cmdline() for p in alive]}"


def test_a_failing_table_write_leaves_the_previous_table(tmp_path, dask_client, monkeypatch):
    out = tmp_path / "out"
    sweep.run_sweep(count, {"x": [1]}, [0], out, scheduler=dask_client, progress=False)
    before = (out / records.TABLE).read_bytes()

    def write_half_then_fail(self, path, **kwargs):
        with open(path, "wb") as handle:
            handle.write(before[: len(before) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", write_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        sweep.run_sweep(count, {"x": [1, 2]}, [0], out, scheduler=dask_client, progress=False)
    assert (out / records.TABLE).read_bytes() == before
    assert not list(out.rglob("*.partial"))


def test_write_atomic_keeps_the_old_file_when_the_replace_fails(tmp_path, monkeypatch):
    path = tmp_path / "claims.json"
    records.write_atomic(path, "old\n")
    assert path.read_text() == "old\n" and oct(path.stat().st_mode & 0o777) != oct(0o600)

    def fail(*args):
        raise OSError("killed mid-write")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="killed mid-write"):
        records.write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["claims.json"]
