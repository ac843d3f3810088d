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


def pytest_collection_modifyitems(config, items):
    """Notebook executions first: they are the longest items, and the short tests fill the workers' last minutes."""
    items.sort(key=lambda item: not (item.path.suffix == ".ipynb" or item.get_closest_marker("notebook")))


def pytest_xdist_make_scheduler(config, log):
    """With nbval on two or more workers (``make test``), each notebook's cells go to one worker, in order.

    nbval runs a notebook's cells as separate items on one kernel, so they must not be spread across workers;
    every other test is its own unit, as in ``--dist load``. (``--dist loadgroup`` with an ``xdist_group`` mark
    would say the same, but pytest-xdist 3.8 under pytest 9.2 drops the groups without a word: it writes them into a
    node-id field pytest no longer reads.) Units with more items go first, so the notebooks start first.
    """
    if not config.getoption("nbval", False):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class NotebookScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.endswith(".ipynb") else nodeid

    return NotebookScheduling(config, log)
