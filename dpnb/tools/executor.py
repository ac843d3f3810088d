"""The one notebook executor: every tool that runs a notebook's kernel runs it here.

:func:`execute_notebook` executes a notebook in a given folder with nbclient, optionally with
parameters injected after its ``parameters`` cell (papermill's injection, no other papermill
machinery), the kernel's BLAS/OpenMP threads and environment set for that kernel alone, its own
log discarded (:class:`QuietKernelManager`), and the cells' printed output copied to a log as they
finish. A cell that raises, a kernel that dies or a timeout becomes one :class:`NotebookFailed`
whose message is one line (:func:`failure_reason`); a run stopped from outside (``stop``, a signal) shuts the
kernel down at once and raises :class:`NotebookInterrupted`. Callers:

- ``make notebook`` (:mod:`dpnb.tools.pairing`): no parameters, nothing written here; the pair
  is written by the caller, so no injected cell or papermill metadata can reach it;
- ``make run`` (:func:`dpnb.tools.run.execute`): profile parameters, one BLAS thread and
  :data:`ALLOCATOR`, into ``results/<profile>/``, stopped by Ctrl-C or SIGTERM;
- the sweep (:class:`dpnb.tools.sweep.NotebookTask`): one grid point's parameters, its log;
- :mod:`dpnb.tools.portability`: a committed notebook under an emulated machine's environment.

nbclient drives its kernel from an asyncio loop, and two threads of one process starting kernels
at once can cancel each other's start-up: a process executes one notebook at a time (a lock), and
parallel runs use several processes. The loop runs in a thread of its own, never in the main thread:
there nbclient would take over SIGINT and SIGTERM (shutting the kernel down and letting the caller
go on to its next notebook), while the caller's own handlers should decide what a signal means.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import threading
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from dpnb.ground.validation import check_integer
from dpnb.tools.records import write_atomic

#: The variables that set a kernel's BLAS/OpenMP threads.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: glibc's allocator in every kernel of make run: keep freed memory for reuse instead of returning it to the system and
#: faulting fresh zeroed pages in again for the next array of the same size (a chapter that allocates arrays of one
#: size in a loop then pays the page faults once, not once per array, which is system time). Arrays above 32 MB
#: (glibc's largest mmap threshold) are still mapped and unmapped; other platforms ignore the variables.
ALLOCATOR = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
    "MALLOC_TRIM_THRESHOLD_": str(4 * 2**30),
    "MALLOC_TOP_PAD_": str(512 * 2**20),
}
_LOCK = threading.Lock()
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython's colours in a traceback


class QuietKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel's own stderr (ipykernel's start-up and shutdown log) is discarded."""

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        kw["stderr"] = subprocess.DEVNULL
        return await super()._async_launch_kernel(kernel_cmd, **kw)


class NotebookFailed(RuntimeError):
    """A notebook's run failed; the message is one line: the cell and the exception (picklable, unlike some)."""


class NotebookInterrupted(NotebookFailed):
    """A notebook's run was stopped from outside (``stop`` was set, or its kernel was interrupted); its kernel is
    shut down."""


#: How often a running notebook looks at its ``stop`` event (seconds).
STOP_POLL = 0.1


def failure_reason(exc: BaseException) -> str:
    """One line: a :class:`NotebookFailed`'s message, else ``"Type: first line of the message"``."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    if isinstance(exc, NotebookFailed):
        return lines[0]
    return f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__


def kernel_environment(blas_threads: int | None = None, environment: dict | None = None) -> dict:
    """This process's environment with ``environment`` set (empty values leave a variable as it is) and, given
    ``blas_threads``, every BLAS/OpenMP thread variable set to it: what :func:`execute_notebook` starts a kernel in."""
    if blas_threads is not None:
        blas_threads = check_integer(blas_threads, "blas_threads")
    if environment is not None and not isinstance(environment, dict):
        raise TypeError(f"environment must be a dict of variables or None, got {type(environment).__name__}")
    values = {**(environment or {}), **dict.fromkeys(THREAD_VARIABLES, str(blas_threads or ""))}
    return {**os.environ, **{name: value for name, value in values.items() if value}}


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def execute_notebook(
    notebook,
    *,
    output=None,
    cwd=None,
    parameters: dict | None = None,
    timeout: int | None = None,
    blas_threads: int | None = None,
    environment: dict | None = None,
    kernel_name: str = "python3",
    log=None,
    stop=None,
):
    """Execute a notebook top to bottom in a fresh kernel; returns the executed notebook.

    Parameters
    ----------
    notebook : str, Path or nbformat.NotebookNode
        A ``.ipynb`` file, or a notebook in memory (executed in place).
    output : str or Path, optional
        Where to write the executed notebook (atomically), also when a cell failed; None writes nothing.
    cwd : str or Path, optional
        The kernel's working folder; by default the notebook file's folder (the current folder for
        a notebook in memory).
    parameters : dict, optional
        Values injected as a cell tagged ``injected-parameters`` after the cell tagged
        ``parameters``, as papermill injects them (and recorded in the notebook's ``papermill``
        metadata). None injects nothing and adds no metadata.
    timeout : int, optional
        Seconds allowed per cell; None allows any time.
    blas_threads : int, optional
        BLAS/OpenMP threads of the kernel (:data:`THREAD_VARIABLES`); None leaves them as they are.
    environment : dict, optional
        Further variables of the kernel's environment, e.g. :data:`ALLOCATOR`. This process's
        environment is not changed.
    kernel_name : str
    log : text file, optional
        Receives each cell's printed output as the cell finishes, and a failing cell's traceback
        (without colour codes).
    stop : threading.Event, optional
        Looked at every :data:`STOP_POLL` seconds while the notebook runs (anything with ``is_set()``): once
        set, the kernel is killed and shut down and :class:`NotebookInterrupted` is raised. A set
        ``stop`` starts no kernel.

    Raises
    ------
    NotebookInterrupted
        ``stop`` was set, or a cell raised ``KeyboardInterrupt`` (its kernel was interrupted).
    NotebookFailed
        A cell raised (``cell In [N]: Name: first line of the message``; the kernel's traceback is
        its ``__cause__``), the kernel died or a cell ran out of time.

    Examples
    --------
    >>> import nbformat, threading
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    >>> execute_notebook(nb, stop=threading.Event()).cells[0].outputs[0].text
    '42\\n'
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    if isinstance(notebook, (str, Path)):
        path = Path(notebook)
        nb = nbformat.read(path, as_version=4)
        cwd = path.parent if cwd is None else cwd
    elif isinstance(notebook, nbformat.NotebookNode):
        nb = notebook
    else:
        raise TypeError(f"notebook must be a path or a NotebookNode, got {type(notebook).__name__}")
    if parameters is not None:
        from papermill.parameterize import parameterize_notebook

        if not isinstance(parameters, dict):
            raise TypeError(f"parameters must be a dict or None, got {type(parameters).__name__}")
        nb.metadata.setdefault("papermill", nbformat.NotebookNode())
        untagged = [cell for cell in nb.cells if "tags" not in cell.metadata]
        for cell in untagged:  # papermill looks the tags up in every cell
            cell.metadata["tags"] = []
        nb = parameterize_notebook(nb, parameters, kernel_name=kernel_name)
        for cell in untagged:
            del cell.metadata["tags"]
    env = kernel_environment(blas_threads, environment)
    failed = []

    def on_cell_executed(cell, **_):
        if log is not None:
            log.write(_stream_text(cell))
            log.flush()

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        kernel_manager_class=QuietKernelManager,
        resources={"metadata": {"path": str(Path(cwd or ".").resolve())}},
        on_cell_executed=on_cell_executed,
        on_cell_error=lambda cell, **_: failed.append(cell),
    )
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise TypeError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    try:
        with _LOCK:
            _in_own_thread(_execute_until_stopped(client, env, stop))
    except NotebookInterrupted:
        raise
    except CellExecutionError as exc:
        count = failed[-1].execution_count if failed else "?"
        value = next((line for line in str(exc.evalue).splitlines() if line.strip()), "")
        if log is not None:
            errors = [o for cell in failed[-1:] for o in cell.outputs if o.output_type == "error"]
            log.write("".join(_ANSI.sub("", line) + "\n" for o in errors for line in o.traceback))
        kind = NotebookInterrupted if exc.ename == "KeyboardInterrupt" else NotebookFailed
        raise kind(f"cell In [{count}]: {exc.ename}" + (f": {value}" if value else "")) from exc
    except Exception as exc:  # a dead kernel, a timeout, a kernel that would not start
        raise NotebookFailed(failure_reason(exc)) from exc
    finally:
        if output is not None:
            write_atomic(output, nbformat.writes(nb))
    return nb


async def _execute_until_stopped(client, env: dict, stop):
    """``client.async_execute(env=env)``; once ``stop`` is set, the kernel is killed, shut down, and
    :class:`NotebookInterrupted` raised."""
    if stop is None:
        return await client.async_execute(env=env)
    if stop.is_set():
        raise NotebookInterrupted("stopped before it started")
    task = asyncio.ensure_future(client.async_execute(env=env))
    while not task.done():
        await asyncio.wait({task}, timeout=STOP_POLL)
        if stop.is_set() and not task.done():
            client.shutdown_kernel = "immediate"  # nbclient's clean-up then kills the kernel instead of asking it
            task.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):  # what the cancelled run raises on its way
                await task
            raise NotebookInterrupted("stopped: its kernel was shut down")
    return task.result()


def _in_own_thread(coroutine):
    """Run ``coroutine`` on a new event loop in a new thread and return its result (or raise its exception)."""
    outcome = {}

    def target():
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 -- handed to the calling thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="dpnb-notebook")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
