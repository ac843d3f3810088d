import os
import subprocess
import sys

import pytest

from dpnb.tools.cluster import detached_cluster


def test_bad_worker_counts_are_refused():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_workers must be a positive integer"):
            with detached_cluster(bad):
                pass
    usage = subprocess.run([sys.executable, "-m", "dpnb.tools.cluster", "x"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in usage.stderr


# slow: starts a cluster
@pytest.mark.slow
def test_the_cluster_runs_tasks_and_its_processes_end_with_the_block():
    import psutil
    from distributed import Client

    with detached_cluster(1) as address, Client(address) as client:
        assert client.submit(sum, [1, 2]).result() == 3
        (cluster,) = [p for p in psutil.Process().children() if "dpnb.tools.cluster" in p.cmdline()]
        processes = [cluster, *cluster.children(recursive=True)]
        # its own session: a terminal's Ctrl-C, sent to this process's group, cannot reach it
        assert os.getsid(cluster.pid) == cluster.pid != os.getsid(0) and len(processes) >= 2
    gone, alive = psutil.wait_procs(processes, timeout=30)
    assert not alive


# slow: starts a cluster process
@pytest.mark.slow
def test_a_cluster_that_cannot_start_is_one_error_with_its_output(tmp_path, monkeypatch):
    (tmp_path / "brokenpreload.py").write_text("raise RuntimeError('this worker cannot start')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__PRELOAD", '["brokenpreload"]')
    with pytest.raises(RuntimeError, match="did not start") as error:
        with detached_cluster(1, timeout=120):
            pass
    assert "this worker cannot start" in str(error.value)
