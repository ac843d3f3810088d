"""A local Dask cluster in a session of its own: a terminal's Ctrl-C reaches only the process that started it.

Ctrl-C sends SIGINT to the terminal's whole foreground process group. Worker processes in that group would each
stop with a traceback, and keeping them out of it by starting them with SIGINT ignored (which they inherit) leaves a
window, while they start, in which the starting process ignores it too and a Ctrl-C is lost (a blocked signal mask
is no help: spawned processes start with an empty one). Here the scheduler and its workers run under a child
process started in a new session, so no terminal signal reaches them, and the starting process keeps its own
SIGINT handling at every moment. The child prints the scheduler's address, then closes the cluster and exits when
its standard input closes: when the parent closes it, or dies (so a killed parent leaves no orphan cluster).

``python -m dpnb.tools.cluster N`` is that child (N one-thread worker processes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile


@contextlib.contextmanager
def detached_cluster(n_workers: int, timeout: float = 60.0):
    """The scheduler address of a new ``LocalCluster`` of ``n_workers`` one-thread worker processes in its own session.

    Parameters
    ----------
    n_workers : int
        Worker processes (one thread each).
    timeout : float
        Seconds the cluster may take to close when the block ends; then its process group is killed. If the block
        ends with an exception (Ctrl-C included), the cluster's process group is terminated at once.

    Yields
    ------
    str
        The scheduler's address, for ``distributed.Client(address)``.

    Raises
    ------
    RuntimeError
        If the cluster does not start; the message carries the cluster's own error output.

    Examples
    --------
    >>> from distributed import Client
    >>> with detached_cluster(1) as address, Client(address) as client:  # doctest: +SKIP
    ...     client.submit(sum, [1, 2]).result()
    3
    """
    if not isinstance(n_workers, int) or isinstance(n_workers, bool) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
    with tempfile.TemporaryFile("w+") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "dpnb.tools.cluster", str(n_workers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
        )
        ended = False
        try:
            address = child.stdout.readline().strip()
            if not address:
                child.wait(timeout)
                log.seek(0)
                raise RuntimeError(f"the local Dask cluster did not start:\n{log.read().strip()}")
            yield address
            ended = True
        finally:
            child.stdin.close()  # the cluster closes and its process exits
            if not ended:  # interrupted or failed, perhaps while the cluster starts: do not wait for it
                _signal_group(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(child.pid, signal.SIGKILL)
                child.wait()


def _signal_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the process group ``pid`` leads (the cluster's session), if any of it is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signum)


def main(argv=None) -> int:
    """Start the cluster, print the scheduler's address, and close it when standard input closes."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: python -m dpnb.tools.cluster N_WORKERS (a positive integer)", file=sys.stderr)
        return 2
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=int(argv[0]),
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
