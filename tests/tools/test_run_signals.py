"""Ctrl-C and SIGTERM stop ``make run`` with every worker count: the running notebooks are recorded ``interrupted``,
their kernels are shut down, nothing else starts, and the exit status is 130 or 143. Real signals, real processes."""

import json
import logging
import os
import signal
import time

import pytest
from tool_helpers import process_gone, run_command, write_notebook

from dpnb.tools import run


def _notebooks(folder, started):
    """a and b sleep after writing ``<stem> <kernel pid>`` into ``started``; c is quick."""
    folder.mkdir()
    for stem, sleep in (("a", 60), ("b", 60), ("c", 0)):
        write_notebook(
            folder / f"{stem}.ipynb",
            'output_dir: str = "unused"  # claims folder',
            f"import os, time\nopen({str(started)!r}, 'a').write('{stem} ' + str(os.getpid()) + '\\n')\n"
            f"time.sleep({sleep})",
            "from dpnb.reporting.claims import ClaimTable, verdict\n"
            f"t = ClaimTable('{stem}', [('c1', 'Demo 1', 'a demo')])\n"
            "t.add('c1', '1', '1', verdict(True))\nt.write_json(output_dir)",
        )
    return folder


def _started(path, count, deadline):
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return dict(line.split() for line in lines)
        time.sleep(0.1)
    raise AssertionError(f"{count} notebook(s) did not start in time")


@pytest.fixture(scope="module")
def tcp_scheduler():
    """A scheduler on loopback with one worker thread in this process, for a run given --scheduler."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.notebook  # make run in a child process: its kernels are not seen by conftest's check
@pytest.mark.parametrize(
    "workers, signum, running",
    [
        pytest.param("1", signal.SIGINT, 1, id="1 worker, Ctrl-C"),
        pytest.param("1", signal.SIGTERM, 1, id="1 worker, SIGTERM"),
        pytest.param("2", signal.SIGTERM, 2, id="2 workers, SIGTERM"),  # the workers get no signal themselves
        pytest.param("scheduler", signal.SIGINT, 1, id="a scheduler's worker, Ctrl-C"),
    ],
)
def test_a_signal_stops_the_run_shuts_the_kernels_down_and_starts_nothing_else(
    tmp_path, request, workers, signum, running
):
    started = tmp_path / "started"
    nbdir = _notebooks(tmp_path / "notebooks", started)
    out = tmp_path / "out"
    where = (
        ["--scheduler", request.getfixturevalue("tcp_scheduler")] if workers == "scheduler" else ["--workers", workers]
    )
    command = run_command("--notebooks", nbdir, "--output", out, *where)
    try:
        kernels = _started(started, running, time.monotonic() + 240)  # generous: the machine may be busy
        time.sleep(0.3)
        if signum == signal.SIGINT:
            os.killpg(command.pid, signum)  # Ctrl-C reaches the whole process group
        else:
            os.kill(command.pid, signum)  # as `kill PID` sends it
        _, stderr = command.communicate(timeout=120)
    finally:
        if command.poll() is None:
            command.kill()
    assert command.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == (
        f"interrupted by {signal.Signals(signum).name}: the claims of the 0 notebook(s) that finished are saved"
    )
    assert sorted(kernels) == ["a", "b"][:running]  # longest first is file-name order here; c never started
    assert all(process_gone(int(pid)) for pid in kernels.values()), "a kernel outlived the run"
    status = json.loads((out / "run.json").read_text())["notebooks"]
    assert {stem: entry["status"] for stem, entry in status.items()} == dict.fromkeys("abc", "interrupted")
    assert all(status[stem]["error"] == "stopped: its kernel was shut down" for stem in kernels)
    assert json.loads((out / "claims.json").read_text()) == []


def test_stop_takes_the_signals_for_the_run_and_gives_them_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with run.Stop() as stop:
        assert signal.getsignal(signal.SIGTERM) is stop
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)  # a second signal changes nothing: the first one decides
        assert stop.event.wait(5)
    assert (stop.signal, stop.exit_status) == (signal.SIGTERM, 143)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
