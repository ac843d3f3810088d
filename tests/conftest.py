import logging
import os

import pytest

# One BLAS thread: the suite runs two pytest workers on two cores, and fixed thread counts
# keep floating-point reductions reproducible.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


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
