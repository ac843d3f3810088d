"""Parameter sweeps: a notebook or a Python function over a grid of parameters x seeds, on Dask.

A sweep runs one *task* once per *grid point* -- one combination of parameter values and one
seed -- as tasks on a Dask distributed cluster, and gathers one tidy table with a row per point.

Running a sweep on this machine
-------------------------------
A notebook, with every combination of two epsilons and two projection sizes, for seeds 0 to 9::

    python -m dpnb.tools.sweep notebooks/dppro.ipynb -p epsilon=0.5,1.0 -p n_components=5,10 \\
        --seeds 0..9 --output results/sweeps/dppro

This starts a local cluster of 2 worker processes (``--workers N`` for more), shows a progress
bar, and writes into ``--output``:

- ``results.parquet``: one row per grid point, with the columns ``task``, the parameters,
  ``seed``, ``status`` (``ok`` or ``error``), ``error`` (the exception's type and message),
  the metrics, ``version.numpy``, ``version.scipy``, ``version.scikit-learn``,
  ``version.dpnb``, ``git_revision`` (``+dirty`` when the checkout had uncommitted changes),
  ``seconds``, ``key`` and ``log``;
- ``points/<key>/``: one folder per grid point with ``task.log`` (everything the point printed,
  and the traceback if it failed), ``result.json``, and for a notebook the executed
  ``notebook.ipynb`` and whatever the notebook wrote to its ``output_dir``.

The ``key`` is a hash of the task's name, the parameters and the seed. Running the same command
again resumes: points that finished are not rerun, points that failed or never ran are, and the
table is written anew from the points' records on disk (for the points of the grid asked for;
other points in the folder are left out of it). A ``result.json`` that cannot be used (truncated,
not a record, a field missing) or that was changed after the sweep wrote it (each record carries a
checksum of its content, written with it; one written before records had it is used as it is)
counts as not run and runs again, with a warning naming it. Every record and the table are
replaced atomically, so an interrupted sweep (Ctrl-C: one line, exit status 130) or a killed
worker leaves no half-written file; a finished point is never run again, even when Dask
recomputes the result of a worker that died. The key does not cover the task's code: after
changing the notebook or function, sweep into a new folder. A failed point is reported with its
parameters and stops nothing else; the command exits with status 1 if any point failed (2 if the
sweep was refused before running).

Parameters come from ``-p name=value[,value...]`` (repeatable) and/or a YAML file, ``--grid
grid.yml``, mapping each name to a list of values (a single value is a one-value list; write a
list-valued parameter as a list of lists, ``sizes: [[10, 20]]``). Values are read as YAML, except
that ``1e-5`` and ``inf`` are floats as in Python. ``-p`` overrides the file for the names it
gives; a grid file that is not valid YAML, or holds a tag such as ``!!python/object``, is refused
with one line naming the file and the line. Seeds are ``--seeds 0..9`` (inclusive), ``--seeds
0,3,7`` or ``--seeds 5``. Every grid point gets every seed.

Notebook tasks
--------------
The notebook (``.ipynb``) is executed in its own folder by the one notebook executor
(:func:`dpnb.tools.executor.execute_notebook`), with the point's parameters, ``seed`` and
``output_dir`` (the point's folder) injected as papermill injects them; its kernel's own log is
discarded and the cells' printed output goes to the point's ``task.log``. A failing cell is the
point's error in one line, ``cell In [N]: Name: message``. Before anything runs, the grid's names
are checked against the notebook's parameters cell: an unknown name is refused with one line that
lists the notebook's parameters.
Metrics: each claim of the ``claims.json`` the notebook writes gives the columns
``verdict.<id>`` and ``measured.<id>``; a ``metrics.json`` the notebook writes into
``output_dir`` (an object mapping names to numbers, strings or booleans) gives one column per
name.

Function tasks
--------------
Any plain function taking the parameters as keyword arguments and ``seed``, and returning a dict
of scalars (the metrics), is a task, named ``module:function``; its module needs nothing from the
sweep::

    # mypackage/experiments.py
    def gauss_error(epsilon: float, n_samples: int, seed: int) -> dict:
        ...
        return {"error": error, "sigma": sigma}

    python -m dpnb.tools.sweep mypackage.experiments:gauss_error -p epsilon=0.1,1 -p n_samples=100 \\
        --seeds 0..4 --output results/sweeps/gauss

The module must be importable where the workers run (on this machine: from the current folder
or the environment). Worker processes are the default; for notebook tasks, or functions that
release the GIL, ``--threads`` runs the workers as threads of the command's process, which
starts faster.

Running on a cluster
--------------------
Start a scheduler and workers on the machines (``dask scheduler`` on one, ``dask worker
tcp://host:8786 --nthreads 1`` on each), in this repository's environment (``.venv``, or the
same pinned versions) and with a function task's module importable by the scheduler and the
workers alike (the scheduler unpickles the tasks too; e.g. ``PYTHONPATH=/path/to/repo``), then
point the sweep at the scheduler::

    python -m dpnb.tools.sweep notebooks/dppro.ipynb -p epsilon=0.5,1.0 --seeds 0..99 \\
        --scheduler tcp://host:8786 --output /scratch/sweeps/dppro

The output folder and the notebook must be at the same paths on a file system that the workers
and the command share, since the workers write each point's files there and resuming reads them
back. A point that could not run on a worker (its module missing there, a worker killed) is a
failed point like any other; its ``task.log`` says why.

Python
------
:func:`run_sweep` does the same from Python and returns the table as a pandas DataFrame::

    from dpnb.tools.sweep import run_sweep
    table = run_sweep("notebooks/dppro.ipynb", {"epsilon": [0.5, 1.0]}, range(10), "results/sweeps/dppro")

``scheduler`` may be an address or an existing ``distributed.Client``; ``n_workers`` and
``processes`` shape the local cluster otherwise. :func:`sweep_records` returns the points' records
instead. :func:`resolve_task`, :func:`dpnb.tools.grid.expand_grid`, :func:`dpnb.tools.grid.point_key`
and :func:`run_point` are the pieces a sweep is made of; :mod:`dpnb.tools.records` stores the points.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import logging
import numbers
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dpnb.reporting.parameters import parameter_names
from dpnb.tools.executor import NotebookFailed, execute_notebook, failure_reason
from dpnb.tools.grid import check_grid, expand_grid, parse_assignment, parse_seeds, point_key, read_grid, scalars
from dpnb.tools.records import (
    LOG,
    RESERVED,
    RESULT,
    ROOT,
    TABLE,
    finished,
    git_revision,
    read_record,
    versions,
    write_record,
    write_table,
)

# --------------------------------------------------------------------------- tasks


def check_function(function) -> None:
    """Refuse what cannot be a function task: anything but a plain function (``def``) whose parameters can be passed
    by keyword and include ``seed``.

    Raises
    ------
    TypeError
        ``function`` is not a plain function (a class, a builtin, a method, a ``functools.partial``...), takes
        positional-only parameters, or has no ``seed`` argument.
    """
    if not inspect.isfunction(function):
        raise TypeError(
            f"a sweep task must be a plain function (def name(..., seed): ...), got {type(function).__name__}"
        )
    parameters = inspect.signature(function).parameters
    positional = [p.name for p in parameters.values() if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    if positional:
        raise TypeError(f"{function.__qualname__} takes positional-only {', '.join(positional)}; the sweep names all")
    if "seed" not in parameters:
        raise TypeError(f"{function.__qualname__} must take a `seed` argument to be a sweep task")


@dataclass(frozen=True)
class FunctionTask:
    """A Python function run once per grid point: ``function(**params, seed=seed)`` -> dict of metrics."""

    function: Callable
    name: str

    def check(self, names) -> None:
        """Refuse grid names that the function does not take (unless it takes ``**kwargs``)."""
        parameters = inspect.signature(self.function).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return
        unknown = sorted(set(names) - set(parameters))
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {', '.join(unknown)} for {self.name}; it takes: "
                f"{', '.join(p for p in parameters if p != 'seed')}"
            )

    def run(self, params: dict, seed: int, folder: Path, log) -> dict:
        """Call the function; its return value must be a dict of scalars."""
        return scalars(self.function(**params, seed=seed), f"the return value of {self.name}")


@dataclass(frozen=True)
class NotebookTask:
    """A notebook executed once per grid point (:func:`dpnb.tools.executor.execute_notebook`), with the point's
    parameters, ``seed`` and ``output_dir`` injected."""

    path: Path

    @property
    def name(self) -> str:
        """The notebook's path relative to the repository root (absolute if outside it)."""
        try:
            return self.path.relative_to(ROOT).as_posix()
        except ValueError:
            return self.path.as_posix()

    def check(self, names) -> None:
        """Refuse names that the notebook's parameters cell does not declare, before anything runs."""
        declared = parameter_names(self.path)
        missing = [n for n in ("seed", "output_dir") if n not in declared]
        if missing:
            raise ValueError(f"{self.name} cannot be swept: its parameters cell must declare {' and '.join(missing)}")
        if "output_dir" in names:
            raise ValueError("output_dir is set by the sweep (each grid point's folder); remove it from the grid")
        unknown = sorted(set(names) - set(declared))
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {', '.join(unknown)} for {self.name}; its parameters are: {', '.join(declared)}"
            )

    def run(self, params: dict, seed: int, folder: Path, log) -> dict:
        """Execute the notebook into ``folder``; metrics from its ``claims.json`` and ``metrics.json``."""
        from dpnb.reporting.claims import read_claims

        execute_notebook(
            self.path,
            output=folder / "notebook.ipynb",
            parameters={**params, "seed": seed, "output_dir": str(folder)},
            log=log,
        )
        metrics = {}
        if (folder / "claims.json").is_file():
            for claim in read_claims(folder / "claims.json"):
                metrics[f"verdict.{claim['id']}"] = claim["verdict"]
                metrics[f"measured.{claim['id']}"] = claim["measured"]
        if (folder / "metrics.json").is_file():
            metrics.update(scalars(json.loads((folder / "metrics.json").read_text()), "metrics.json"))
        return metrics


def resolve_task(task):
    """The task that ``task`` names.

    Parameters
    ----------
    task : str, Path, function, FunctionTask or NotebookTask
        A notebook path ending in ``.ipynb``; ``"module:name"``, the function ``name`` of the
        importable ``module`` (the task's name is that string); or a function (its name is
        ``"<its module>:<its qualified name>"``). A function task is a plain function taking the
        grid's parameters by keyword and ``seed`` (:func:`check_function`), returning a dict of scalars.

    Raises
    ------
    TypeError
        ``task`` is of none of these kinds, or names something that is not a plain function taking ``seed``.
    ValueError
        No notebook at the path, a module that does not import, or no such name in it.
    """
    if isinstance(task, (FunctionTask, NotebookTask)):
        return task
    if callable(task):
        check_function(task)
        return FunctionTask(task, f"{task.__module__}:{task.__qualname__}")
    if not isinstance(task, (str, Path)):
        raise TypeError(f"task must be a notebook path, 'module:function' or a function, got {type(task).__name__}")
    if str(task).endswith(".ipynb"):
        path = Path(task).resolve()
        if not path.is_file():
            raise ValueError(f"no notebook at {task}")
        return NotebookTask(path)
    module_name, colon, name = str(task).partition(":")
    if not colon or not module_name or not name.isidentifier():
        raise ValueError(f"task {task!r} is neither a notebook (.ipynb) nor 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name} for task {task}: {exc}") from None
    if not hasattr(module, name):
        raise ValueError(f"{module_name} has no function {name} (task {task})")
    check_function(getattr(module, name))
    return FunctionTask(getattr(module, name), str(task))


# --------------------------------------------------------------------------- one grid point, on a worker


class _ThreadStreams:
    """Stand-ins for ``sys.stdout``/``sys.stderr`` sending each running point's writes to its own log.

    Worker threads share one process's streams, so ``contextlib.redirect_stdout`` would mix points;
    here each thread has its own target, and the originals return when the last point finishes.
    """

    _lock = threading.Lock()
    _users = 0
    _saved = None
    _local = threading.local()

    class _Stream:
        def __init__(self, default, local):
            self._default, self._local = default, local

        def write(self, text):
            return (getattr(self._local, "log", None) or self._default).write(text)

        def flush(self):
            (getattr(self._local, "log", None) or self._default).flush()

        def __getattr__(self, name):
            return getattr(self._default, name)

    @classmethod
    @contextlib.contextmanager
    def to(cls, log):
        with cls._lock:
            if cls._users == 0:
                cls._saved = sys.stdout, sys.stderr
                sys.stdout, sys.stderr = cls._Stream(sys.stdout, cls._local), cls._Stream(sys.stderr, cls._local)
            cls._users += 1
        cls._local.log = log
        try:
            yield
        finally:
            cls._local.log = None
            with cls._lock:
                cls._users -= 1
                if cls._users == 0:
                    sys.stdout, sys.stderr = cls._saved


def _header(task, params: dict, seed: int) -> str:
    """The first line of a point's log: what ran."""
    return f"{task.name} seed={seed} {json.dumps(params)}"


def run_point(task, params: dict, seed: int, key: str, folder) -> dict:
    """Run one grid point into ``folder``; never raises for a failing task.

    A point whose ``result.json`` already says ``ok`` is not run again: its record is returned.

    Returns
    -------
    dict
        The point's record (also written to ``folder/result.json``): ``key``, ``task``,
        ``params``, ``seed``, ``status``, ``error``, ``metrics``, ``versions``,
        ``git_revision``, ``seconds``.
    """
    folder = Path(folder)
    done = finished(folder, key, warn=False)
    if done is not None:  # Dask recomputes a lost result (its worker died): a finished point is not run again
        return done
    folder.mkdir(parents=True, exist_ok=True)
    record = {"key": key, "task": task.name, "params": params, "seed": seed}
    start = time.perf_counter()
    with open(folder / LOG, "w") as log, _ThreadStreams.to(log):
        print(_header(task, params, seed), flush=True)
        try:
            metrics = task.run(params, seed, folder, log)
            clashes = sorted(set(metrics) & (RESERVED | set(params)))
            if clashes:
                raise ValueError(f"metric name(s) {', '.join(clashes)} clash with parameters or table columns")
            record.update(status="ok", error=None, metrics=metrics)
        except Exception as exc:  # noqa: BLE001 -- a failing point is recorded, the others go on
            if not isinstance(exc, NotebookFailed):  # a notebook's failure: the kernel's traceback is in the log
                traceback.print_exc(file=log)
            record.update(status="error", error=failure_reason(exc), metrics={})
        print(f"status: {record['status']}", flush=True)
    record.update(versions=versions(), git_revision=git_revision(), seconds=time.perf_counter() - start)
    write_record(folder / RESULT, record)
    return record


# --------------------------------------------------------------------------- the sweep, on the client


def _is_client(value) -> bool:
    from distributed import Client

    return isinstance(value, Client)


@contextlib.contextmanager
def dask_client(scheduler, n_workers: int, processes: bool):
    """A ``distributed.Client``: the one given, one connected to an address, or one on a new local cluster.

    Local worker processes run in a session of their own (:func:`dpnb.tools.cluster.detached_cluster`), so a
    Ctrl-C at any moment reaches only this process, which closes the cluster; local worker threads run here.
    """
    import logging

    from distributed import Client, LocalCluster

    from dpnb.tools.cluster import detached_cluster

    if isinstance(scheduler, Client):
        yield scheduler
    elif scheduler is not None:
        with Client(scheduler) as client:
            yield client
    elif processes:
        with detached_cluster(n_workers) as address, Client(address) as client:
            yield client
    else:
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=False,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client


def _describe(params: dict, seed: int) -> str:
    return " ".join([*(f"{k}={v}" for k, v in params.items()), f"seed={seed}"])


def _execute(task, todo, scheduler, n_workers, processes, progress, done) -> list[dict]:
    """Submit the points ``todo`` (key, params, seed, folder); gather their records as they finish."""
    from distributed import as_completed
    from tqdm import tqdm

    records = []
    with (
        dask_client(scheduler, n_workers, processes) as client,
        tqdm(
            total=done + len(todo),
            initial=done,
            desc=f"sweep {task.name}",
            unit="point",
            disable=not progress,
            file=sys.stdout,
        ) as bar,
    ):
        futures = {
            client.submit(run_point, task, params, seed, key, str(folder), pure=False): (key, params, seed, folder)
            for key, params, seed, folder in todo
        }
        for future in as_completed(list(futures)):
            key, params, seed, folder = futures.pop(future)
            if future.status == "finished":
                record = future.result()
            else:  # the worker died or the task could not be shipped: record it here
                exc = future.exception()
                record = {
                    "key": key,
                    "task": task.name,
                    "params": params,
                    "seed": seed,
                    "status": "error",
                    "error": failure_reason(exc),
                    "metrics": {},
                    "versions": {},
                    "git_revision": None,
                    "seconds": None,
                }
                folder.mkdir(parents=True, exist_ok=True)
                (folder / LOG).write_text(
                    f"{_header(task, params, seed)}\nthe point did not run on a worker: {type(exc).__name__}: {exc}\n"
                )
                write_record(folder / RESULT, record)
            # Release the result at once: a worker that dies later must not make Dask recompute a finished point.
            future.release()
            if record["status"] != "ok" and progress:
                bar.write(f"failed: {_describe(params, seed)}: {record['error']} (log: {folder / LOG})")
            records.append(record)
            bar.update()
    return records


def run_sweep(
    task, grid, seeds, output, *, scheduler=None, n_workers: int = 2, processes: bool = True, progress: bool = True
):
    """Run ``task`` at every grid point x seed on Dask; resume what an earlier run left; return the table.

    Parameters
    ----------
    task : str, Path or function
        A notebook (``.ipynb``), ``"module:name"`` of a plain function, or the function itself: it
        takes the parameters and ``seed`` and returns a dict of scalars (:func:`resolve_task`).
    grid : dict
        Parameter name -> list of values (a lone value counts as one); ``{}`` sweeps seeds only.
    seeds : sequence of int
        Every grid point runs once per seed, e.g. ``range(10)``.
    output : str or Path
        Folder for ``results.parquet`` and ``points/<key>/``; created if missing. Points whose
        ``result.json`` says ``ok`` are not rerun.
    scheduler : None, str or distributed.Client
        None starts a LocalCluster for the sweep; an address (``"tcp://host:8786"``) or a client
        uses that cluster.
    n_workers : int
        Workers of the LocalCluster (one thread each); ignored with ``scheduler``.
    processes : bool
        LocalCluster workers as processes (default) or as threads of this process.
    progress : bool
        Show a progress bar and a line per failed point.

    Returns
    -------
    pandas.DataFrame
        The table also written to ``output/results.parquet``: one row per point, in grid order,
        with ``status`` ``"ok"`` or ``"error"`` (then ``error`` says why).

    Raises
    ------
    TypeError, ValueError
        Bad task, grid, seeds, output or worker count, or grid names the task does not take;
        raised before anything runs.
    """
    return write_table(*_sweep(task, grid, seeds, output, scheduler, n_workers, processes, progress))


def sweep_records(
    task, grid, seeds, output, *, scheduler=None, n_workers: int = 2, processes: bool = True, progress: bool = True
) -> list[dict]:
    """Run a sweep as :func:`run_sweep` does (writing its table too); return the points' records in grid order.

    Each record is what the point's ``result.json`` holds: ``key``, ``task``, ``params``, ``seed``,
    ``status``, ``error``, ``metrics`` (the task's dict, as JSON gives it back), ``versions``,
    ``git_revision`` and ``seconds``. Code below the tools, which imports no tool, takes this
    function from its caller to run its points on a sweep (``sweep={"runner": sweep_records, ...}`` in
    :func:`dpnb.chapters.comparison.run_grid`).
    """
    records, output = _sweep(task, grid, seeds, output, scheduler, n_workers, processes, progress)
    write_table(records, output)
    return records


def _sweep(task, grid, seeds, output, scheduler, n_workers, processes, progress) -> tuple[list[dict], Path]:
    """Check the arguments, run the points not yet finished; the records on disk in grid order, and the folder."""
    task = resolve_task(task)
    points = expand_grid(grid, seeds)
    if not isinstance(output, (str, Path)):
        raise TypeError(f"output must be a folder path, got {type(output).__name__}")
    if not isinstance(n_workers, numbers.Integral) or isinstance(n_workers, bool):
        raise TypeError(f"n_workers must be an int, got {type(n_workers).__name__}")
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, got {n_workers}")
    if scheduler is not None and not isinstance(scheduler, str) and not _is_client(scheduler):
        raise TypeError(f"scheduler must be None, an address or a distributed.Client, got {type(scheduler).__name__}")
    task.check(check_grid(grid))
    output = Path(output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    planned = [(point_key(task.name, params, seed), params, seed) for params, seed in points]
    records, todo = {}, []
    for key, params, seed in planned:
        folder = output / "points" / key
        record = finished(folder, key)
        if record is None:
            todo.append((key, params, seed, folder))
        else:
            records[key] = record
    if todo:
        for record in _execute(task, todo, scheduler, n_workers, processes, progress, done=len(records)):
            records[record["key"]] = record
    # The table is what the points' records on disk say (a record is written before it is returned).
    return [read_record(output / "points" / key, key, warn=False) or records[key] for key, _, _ in planned], output


def _quiet_dask_logs() -> None:
    """Keep Dask's informational log lines (a connection closing as a cluster stops) off stderr: the ``distributed``
    logger at ``WARNING``. Set after importing ``distributed``, whose import sets that logger to ``INFO`` (its
    configuration): set before, the level was undone, and a late ``Batched Comm Closed`` line with its traceback
    could reach the command's stderr as its cluster stopped."""
    import distributed  # noqa: F401 - imported for its logging configuration, which this overrides

    logging.getLogger("distributed").setLevel(logging.WARNING)


def main(argv=None) -> int:
    """``python -m dpnb.tools.sweep``: see the module docstring."""
    _quiet_dask_logs()  # the command's output is its own lines
    parser = argparse.ArgumentParser(
        prog="python -m dpnb.tools.sweep",
        description=__doc__.splitlines()[0],
        epilog="example: python -m dpnb.tools.sweep notebooks/dppro.ipynb -p epsilon=0.5,1 --seeds 0..9 "
        "-o results/sweeps/dppro. Output layout, resuming and clusters: python -m pydoc dpnb.tools.sweep",
    )
    parser.add_argument("task", help="a notebook (.ipynb) or module:function, a function taking seed")
    parser.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="grid values of one parameter (repeatable)",
    )
    parser.add_argument("--grid", help="YAML file mapping parameter names to lists of values")
    parser.add_argument("--seeds", default="0", help="first..last (inclusive), a,b,c or one int (default 0)")
    parser.add_argument("-o", "--output", required=True, help="folder for results.parquet and points/")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, help="workers of the local cluster (default 2)")
    parser.add_argument("--threads", action="store_true", help="local workers as threads, not processes")
    args = parser.parse_args(argv)
    if args.scheduler and (args.workers or args.threads):
        parser.error("--workers and --threads configure the local cluster; the --scheduler's cluster has its own")
    try:
        grid = read_grid(args.grid) if args.grid else {}
        given = [parse_assignment(text) for text in args.parameter]
        names = [name for name, _ in given]
        if len(set(names)) < len(names):
            twice = sorted(n for n in set(names) if names.count(n) > 1)
            raise ValueError(f"-p gives a parameter twice: {', '.join(twice)}")
        grid.update(given)
        seeds = parse_seeds(args.seeds)
        table = run_sweep(
            args.task,
            grid,
            seeds,
            args.output,
            scheduler=args.scheduler,
            n_workers=args.workers or 2,
            processes=not args.threads,
        )
    except (TypeError, ValueError, OSError) as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    except KeyboardInterrupt:
        print(
            f"interrupted: the points that finished are saved in {Path(args.output) / 'points'}; "
            "the same command resumes",
            file=sys.stderr,
        )
        return 130
    failed = table[table["status"] != "ok"]
    print(f"{len(table) - len(failed)} of {len(table)} grid points ok; table: {Path(args.output) / TABLE}")
    params = list(table.columns[1 : list(table.columns).index("seed")])
    for _, row in failed.iterrows():
        print(
            f"failed: {_describe(row[params].to_dict(), row['seed'])}: {row['error']} "
            f"(log: {Path(args.output) / row['log']})",
            file=sys.stderr,
        )
    return 1 if len(failed) else 0


if __name__ == "__main__":
    # Run the importable dpnb.tools.sweep, not this __main__ copy: workers unpickle its tasks (FunctionTask,
    # NotebookTask, run_point) by module name.
    from dpnb.tools.sweep import main as _main

    sys.exit(_main())
