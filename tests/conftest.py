import logging
import os

import pytest

# One BLAS thread: the suite runs two pytest workers on two cores, and fixed thread counts
# keep floating-point reductions reproducible.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


@pytest.fixture(autouse=True)
def _kernels_only_in_notebook_tests(request, monkeypatch):
    """Fail a test that starts a Jupyter kernel in this process unless it is marked ``notebook``.

    ``make check`` deselects the ``notebook`` tests (pyproject.toml's markers); this keeps the mark true to what
    a test does. The test runs to its end, so an error it expects cannot hide the launch; kernels started by
    another process (a worker pool, a subprocess) are not seen here and are marked by reading the test.
    """
    if request.node.get_closest_marker("notebook"):
        yield
        return
    from jupyter_client.provisioning import LocalProvisioner

    launches = []
    launch = LocalProvisioner.launch_kernel

    async def recording_launch(self, cmd, **kwargs):
        launches.append(cmd)
        return await launch(self, cmd, **kwargs)

    monkeypatch.setattr(LocalProvisioner, "launch_kernel", recording_launch)
    yield
    if launches:
        pytest.fail(f"{request.node.nodeid} started a Jupyter kernel: mark it @pytest.mark.notebook", pytrace=False)


@pytest.fixture(scope="module")
def dask_client():
    """A Dask client on a LocalCluster of one worker thread in this process (tasks see this module's globals)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=logging.ERROR
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
