"""CPU-time budgets: run a fit in a child process and stop it once it has used its budget.

The libraries' DP-PCA (diffprivlib's ``PCA``, OpenDP's PCA) sample eigenvectors by rejection, at a
cost that grows exponentially with ``epsilon * n``: the comparison chapter runs each of their fits
under :class:`TimeBudget`, which reports :class:`Unfinished` when a fit does not finish in time.
:func:`run_with_budget` is the runner underneath: the budget is the child's CPU time on one BLAS
thread, so whether a fit finishes does not depend on how busy the machine is.
"""

from __future__ import annotations

import importlib
import multiprocessing
import time
from dataclasses import dataclass

import psutil
from threadpoolctl import threadpool_limits

from dpnb.ground.validation import check_positive


@dataclass(frozen=True)
class Unfinished:
    """A fit that gave no result: it ran out of its time budget (``reason`` says so) or raised."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def _child(sender, function, args, preload) -> None:
    try:
        for module in preload:
            importlib.import_module(module)
    except ImportError as exc:
        preload_error = exc
    else:
        preload_error = None
    sender.send(("ready", None))  # imports done: the budget starts now
    try:
        if preload_error is not None:
            raise preload_error
        with threadpool_limits(1):  # CPU seconds of one thread, whatever the machine's BLAS
            message = ("ok", function(*args))
    except Exception as exc:  # reported to the parent as a result
        message = ("error", f"failed: {type(exc).__name__}: {exc}")
    try:
        sender.send(message)
    except Exception as exc:  # e.g. an unpicklable return value
        sender.send(("error", f"failed: {type(exc).__name__}: {exc}"))
    sender.close()


STARTUP_SECONDS = 300.0  # at most this long for a child to start and import what it runs (not part of a budget)
WALL_FACTOR = 10.0  # a child still running after this many times its CPU budget in wall time is stopped (hung)


def _context(module: str):
    """Processes started from a clean server (``forkserver``, which imports ``module``: the budgeted function's,
    so each child starts with it loaded), else spawned; never forked from this process.

    Forking a process that runs threads (a Jupyter kernel, BLAS, a library's runtime) can copy a held
    lock into the child, which then hangs: a fit would be reported as out of time for no reason of its own.
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([module])
        return context
    return multiprocessing.get_context("spawn")


def run_with_budget(function, args=(), seconds: float = 10.0, preload=()):
    """``function(*args)`` in a child process, killed once it has used ``seconds`` of CPU time.

    The budget is CPU time of the child (one BLAS thread), not wall time, so whether a fit finishes
    does not depend on how busy the machine is; a child that is still running after ``WALL_FACTOR``
    times the budget in wall time (e.g. blocked, using no CPU) is stopped too.

    Parameters
    ----------
    function : callable
        Module-level (picklable): the child is started from a clean process, not forked from this one.
    args : tuple
        Its arguments (a generator among them is copied into the child, so the result is the
        same as an in-process call's).
    seconds : float
        CPU-time budget.
    preload : sequence of str
        Modules the child imports before the budget starts (those ``function`` imports when called).

    Returns
    -------
    The function's value, or :class:`Unfinished` with the reason ``"did not finish within T s"``
    or ``"failed: <exception>"``. The budget counts from the moment the child has started and imported
    what it runs (``preload`` included; at most ``STARTUP_SECONDS``), so it measures the fit alone. The child is always
    gone when this returns.
    """
    seconds = check_positive(seconds, "seconds")
    context = _context(function.__module__)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, function, args, tuple(preload)), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(STARTUP_SECONDS):
            status, payload = "error", f"failed: the child process did not start within {STARTUP_SECONDS:g} s"
        else:
            receiver.recv()  # "ready"
            status, payload = _wait(receiver, process.pid, seconds)
    except EOFError:
        status, payload = "error", "failed: the child process exited without a result"
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
    if status == "ok":
        return payload
    return Unfinished(f"did not finish within {seconds:g} s" if status == "timeout" else payload)


def _cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def _wait(receiver, pid: int, seconds: float) -> tuple:
    """The child's message, or ``("timeout", None)`` once it used ``seconds`` of CPU time (or hung)."""
    start_wall = time.monotonic()
    try:
        start_cpu = _cpu_seconds(pid)
    except psutil.NoSuchProcess:  # it already exited after sending "ready": its message or the end of the pipe follows
        start_cpu = 0.0
    while not receiver.poll(0.02):
        try:
            used = _cpu_seconds(pid) - start_cpu
        except psutil.NoSuchProcess:  # it exited; the next poll sees its message or the end of the pipe
            continue
        if used > seconds or time.monotonic() - start_wall > WALL_FACTOR * seconds:
            return "timeout", None
    return receiver.recv()


class TimeBudget:
    """Run slow fits under :func:`run_with_budget`, and skip fits that cannot finish either.

    A fit of ``name`` that ran out of time at budget ``epsilon`` on ``n`` rows ends that method
    for every later call with the same ``n`` and ``epsilon`` at least as large (other seeds
    included): the rejection samplers' expected cost grows with ``epsilon * n``, so those fits
    are reported with the same :class:`Unfinished` without being started.

    Parameters
    ----------
    seconds : float
        CPU-time budget of each fit (one BLAS thread), as :func:`run_with_budget` counts it.
    """

    def __init__(self, seconds: float):
        self.seconds = check_positive(seconds, "seconds")
        self._out_of_time: dict = {}

    def run(self, name: str, n: int, epsilon: float, function, *args, preload=()):
        """``function(*args)`` under the budget (``preload``: see :func:`run_with_budget`), or the
        :class:`Unfinished` of an earlier fit."""
        earlier = self._out_of_time.get((name, n))
        if earlier is not None and epsilon >= earlier[0]:
            return earlier[1]
        result = run_with_budget(function, args, self.seconds, preload)
        if isinstance(result, Unfinished) and result.reason.startswith("did not finish"):
            self._out_of_time[(name, n)] = (epsilon, result)
        return result
