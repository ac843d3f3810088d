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
not a record, a field missing) counts as not run, with a warning naming it. Every record and the
table are replaced atomically, so an interrupted sweep (Ctrl-C: one line, exit status 130) or a
killed worker leaves no half-written file; a finished point is never run again, even when Dask
recomputes the result of a worker that died. The key does not cover the task's code: after
changing the notebook or function, sweep into a new folder. A failed point is reported with its
parameters and stops nothing else; the command exits with status 1 if any point failed (2 if the
sweep was refused before running).

Parameters come from ``-p name=value[,value...]`` (repeatable) and/or a YAML file, ``--grid
grid.yml``, mapping each name to a list of values (a single value is a one-value list; write a
list-valued parameter as a list of lists, ``sizes: [[10, 20]]``). Values are read as YAML, except
that ``1e-5`` and ``inf`` are floats as in Python. ``-p`` overrides the file for the names it
gives. Seeds are ``--seeds 0..9`` (inclusive), ``--seeds 0,3,7`` or ``--seeds 5``. Every grid
point gets every seed.

Notebook tasks
--------------
The notebook (``.ipynb``) is executed with papermill in its own folder, with the point's
parameters, ``seed`` and ``output_dir`` (the point's folder) injected; its kernel's own log is
discarded (:class:`dpnb.tools.pairing.QuietKernelManager`) and the cells' printed output goes to the
point's ``task.log``. Before anything runs, the grid's names are checked against the notebook's
parameters cell: an unknown name is refused with one line that lists the notebook's parameters.
Metrics: each claim of the ``claims.json`` the notebook writes gives the columns
``verdict.<id>`` and ``measured.<id>``; a ``metrics.json`` the notebook writes into
``output_dir`` (an object mapping names to numbers, strings or booleans) gives one column per
name.

Function tasks
--------------
A function taking the parameters as keyword arguments and ``seed``, and returning a dict of
scalars (the metrics), becomes a task by name once registered::

    # mypackage/experiments.py
    from dpnb.tools.sweep import register

    @register
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
``processes`` shape the local cluster otherwise. :func:`register` names functions, and
:func:`expand_grid`, :func:`point_key` and :func:`run_point` are the pieces a sweep is made of.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import inspect
import itertools
import json
import numbers
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dpnb.book.parameters import parameter_names, read_value, read_yaml

_NOTEBOOK_LOCK = threading.Lock()  # see NotebookTask.run
_UMASK = os.umask(0o022)  # read the process's umask (only possible by setting it) and restore it at once
os.umask(_UMASK)
ROOT = Path(__file__).resolve().parents[2]
VERSIONED = ("numpy", "scipy", "scikit-learn", "dpnb")
TABLE = "results.parquet"
LOG = "task.log"
RESULT = "result.json"
# Columns the sweep itself writes; no parameter or metric may take these names.
RESERVED = frozenset(
    {"task", "seed", "status", "error", "git_revision", "seconds", "key", "log", *(f"version.{p}" for p in VERSIONED)}
)

_REGISTRY: dict[str, Callable] = {}


# --------------------------------------------------------------------------- tasks


def register(function=None, *, name=None):
    """Register a function as a sweep task, runnable as ``python -m dpnb.tools.sweep module:name``.

    Use as ``@register`` or ``@register(name="short")``.

    Parameters
    ----------
    function : callable
        Takes the grid's parameters as keyword arguments and ``seed`` (an int), and returns a dict
        mapping metric names to scalars (numbers, strings, booleans or None).
    name : str, optional
        The name after ``module:``; the function's qualified name by default.

    Returns
    -------
    The function itself, unchanged.

    Raises
    ------
    TypeError
        ``function`` is not callable or has no ``seed`` argument, or ``name`` is not a string.
    ValueError
        ``name`` is empty or contains ``:``.
    """
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        if not name or ":" in name:
            raise ValueError(f"name must be non-empty and without ':', got {name!r}")

    def decorate(f):
        _check_function(f)
        _REGISTRY[f"{f.__module__}:{name or f.__qualname__}"] = f
        return f

    return decorate if function is None else decorate(function)


def _check_function(f) -> None:
    if not callable(f):
        raise TypeError(f"a sweep task must be callable, got {type(f).__name__}")
    if "seed" not in inspect.signature(f).parameters:
        raise TypeError(f"{getattr(f, '__qualname__', f)} must take a `seed` argument to be a sweep task")


def _registered_name(f) -> str:
    return next((label for label, g in _REGISTRY.items() if g is f), f"{f.__module__}:{f.__qualname__}")


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
        return _scalars(self.function(**params, seed=seed), f"the return value of {self.name}")


class NotebookError(RuntimeError):
    """A notebook cell raised; the message is that exception's type and message."""


@dataclass(frozen=True)
class NotebookTask:
    """A notebook executed by papermill once per grid point, with ``seed`` and ``output_dir`` injected."""

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
        import papermill

        from dpnb.book.claims import read_claims
        from dpnb.tools.pairing import QuietKernelManager

        try:
            # nbclient drives its kernel from an asyncio loop; two threads of one worker process
            # starting kernels at once can cancel each other's start-up, so a process runs one
            # notebook at a time (worker processes still run in parallel).
            with _NOTEBOOK_LOCK:
                papermill.execute_notebook(
                    str(self.path),
                    str(folder / "notebook.ipynb"),
                    parameters={**params, "seed": seed, "output_dir": str(folder)},
                    cwd=str(self.path.parent),
                    kernel_name="python3",
                    kernel_manager_class=QuietKernelManager,
                    progress_bar=False,
                    stdout_file=log,
                    stderr_file=log,
                )
        except papermill.PapermillExecutionError as exc:
            raise NotebookError(f"{exc.ename}: {exc.evalue}") from exc
        metrics = {}
        if (folder / "claims.json").is_file():
            for claim in read_claims(folder / "claims.json"):
                metrics[f"verdict.{claim['id']}"] = claim["verdict"]
                metrics[f"measured.{claim['id']}"] = claim["measured"]
        if (folder / "metrics.json").is_file():
            metrics.update(_scalars(json.loads((folder / "metrics.json").read_text()), "metrics.json"))
        return metrics


def resolve_task(task):
    """The task that ``task`` names.

    Parameters
    ----------
    task : str, Path, callable, FunctionTask or NotebookTask
        A notebook path ending in ``.ipynb``; ``"module:name"`` of a function registered with
        :func:`register` in ``module``; or a function taking ``seed``.

    Raises
    ------
    TypeError
        ``task`` is of none of these kinds, or a function without a ``seed`` argument.
    ValueError
        No notebook at the path, or no registered function of that name.
    """
    if isinstance(task, (FunctionTask, NotebookTask)):
        return task
    if callable(task):
        _check_function(task)
        return FunctionTask(task, _registered_name(task))
    if not isinstance(task, (str, Path)):
        raise TypeError(f"task must be a notebook path, 'module:function' or a function, got {type(task).__name__}")
    if str(task).endswith(".ipynb"):
        path = Path(task).resolve()
        if not path.is_file():
            raise ValueError(f"no notebook at {task}")
        return NotebookTask(path)
    module, colon, _ = str(task).partition(":")
    if not colon or not module:
        raise ValueError(f"task {task!r} is neither a notebook (.ipynb) nor 'module:function'")
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"cannot import {module} for task {task}: {exc}") from None
    if task not in _REGISTRY:
        known = [label for label in _REGISTRY if label.startswith(f"{module}:")]
        raise ValueError(
            f"{task} is not a registered sweep function (decorate it with @dpnb.tools.sweep.register); "
            f"registered in {module}: {', '.join(known) or 'none'}"
        )
    return FunctionTask(_REGISTRY[task], str(task))


# --------------------------------------------------------------------------- grids


def _plain(value, what: str):
    """``value`` as JSON-able Python (numpy scalars unwrapped, tuples as lists); TypeError otherwise."""
    if getattr(value, "ndim", None) == 0:  # numpy scalars and 0-d arrays, numpy.bool_ included
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, what) for v in value]
    raise TypeError(f"{what} is a {type(value).__name__}; use numbers, strings, booleans, None or lists of them")


def _scalars(metrics, what: str) -> dict:
    """Check that ``metrics`` maps names to scalars; returns it with numpy scalars unwrapped."""
    if not isinstance(metrics, dict) or not all(isinstance(k, str) for k in metrics):
        raise TypeError(f"{what} must be a dict mapping metric names to scalars, got {type(metrics).__name__}")
    out = {k: _plain(v, f"metric {k!r} in {what}") for k, v in metrics.items()}
    lists = [k for k, v in out.items() if isinstance(v, list)]
    if lists:
        raise TypeError(f"metric(s) {', '.join(lists)} in {what} are lists; return one scalar per name")
    return out


def check_grid(grid) -> dict[str, list]:
    """Validate a grid: a mapping from parameter name to a list of values (a lone value is a list of one).

    Raises
    ------
    TypeError
        ``grid`` is not a mapping, or a value is not a number, string, boolean, None or list of them.
    ValueError
        A name is not an identifier or is reserved (``seed``, the table's columns), or a list of
        values is empty or repeats a value.
    """
    if not isinstance(grid, dict):
        raise TypeError(f"grid must be a dict mapping parameter names to lists of values, got {type(grid).__name__}")
    out = {}
    for name, values in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"grid name {name!r} is not a parameter name")
        if name == "seed":
            raise ValueError("seed is not a grid parameter; give the seeds separately (--seeds, seeds=)")
        if name in RESERVED:
            raise ValueError(f"{name} is a column of the result table; rename the parameter")
        if getattr(values, "ndim", None) == 1:  # numpy arrays, pandas series
            values = values.tolist()
        values = _plain(list(values) if isinstance(values, (list, tuple, range)) else [values], f"grid value of {name}")
        if not values:
            raise ValueError(f"grid parameter {name} has no values")
        texts = [json.dumps(v) for v in values]
        if len(set(texts)) < len(texts):
            raise ValueError(f"grid parameter {name} repeats a value: {values}")
        out[name] = values
    return out


def check_seeds(seeds) -> list[int]:
    """Validate seeds: a non-empty sequence (list, tuple, range) of distinct non-negative ints.

    Raises
    ------
    TypeError
        ``seeds`` is not a sequence (a lone int is refused: write ``[5]`` or ``range(5)``) or holds a non-int.
    ValueError
        No seeds, a negative seed, or a repeated one.
    """
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a sequence of ints such as range(10) or [0, 3], got {type(seeds).__name__}")
    seeds = list(seeds)
    bad = [s for s in seeds if not isinstance(s, numbers.Integral) or isinstance(s, bool)]
    if bad:
        raise TypeError(f"seeds must be ints, got {bad[0]!r}")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty; give at least one seed")
    if min(seeds) < 0:
        raise ValueError(f"seeds must be non-negative, got {min(seeds)}")
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"seeds repeat a value: {seeds}")
    return seeds


def expand_grid(grid, seeds) -> list[tuple[dict, int]]:
    """Every grid point: the product of the grid's values (in the grid's order), each with every seed.

    Returns
    -------
    list of (params, seed)
        Seeds vary fastest; an empty grid gives one point per seed.
    """
    grid, seeds = check_grid(grid), check_seeds(seeds)
    combos = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    return [(params, seed) for params in combos for seed in seeds]


def point_key(task_name: str, params: dict, seed: int) -> str:
    """A stable 16-hex-digit key of one grid point: a hash of the task's name, the parameters and the seed."""
    text = json.dumps({"task": task_name, "params": params, "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_seeds(text: str) -> list[int]:
    """Seeds from the command line: ``"0..9"`` (inclusive), ``"0,3,7"`` or ``"5"``."""
    first, dots, last = text.partition("..")
    try:
        seeds = list(range(int(first), int(last) + 1)) if dots else [int(s) for s in text.split(",")]
    except ValueError:
        raise ValueError(f"--seeds takes 'first..last', a comma-separated list or one int, got {text!r}") from None
    if not seeds:
        raise ValueError(f"--seeds {text} is an empty range; write first..last with first <= last")
    return seeds


def parse_assignment(text: str) -> tuple[str, list]:
    """One ``-p name=v1,v2`` argument as ``(name, [v1, v2])``; values are read as YAML (``1e-5``, ``inf`` floats)."""
    name, equals, values = text.partition("=")
    name = name.strip()
    if not equals or not name.isidentifier():
        raise ValueError(f"-p takes name=value[,value...], got {text!r}")
    try:
        parsed = read_value(f"[{values}]")
    except ValueError:
        raise ValueError(f"cannot read the values of -p {text!r}; quote strings with commas or brackets") from None
    if not parsed:
        raise ValueError(f"-p {name}= gives no value")
    return name, parsed


def read_grid(path) -> dict:
    """A grid from a YAML file mapping parameter names to lists of values."""
    grid = read_yaml(Path(path).read_text())
    if not isinstance(grid, dict):
        raise TypeError(f"{path} must map parameter names to lists of values")
    return grid


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


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in VERSIONED:
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out


def _git_revision() -> str | None:
    """The commit of the checkout this package runs from, ``+dirty`` if tracked files changed; None outside git."""

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()

    try:
        revision = git("rev-parse", "HEAD")
        return revision + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _one_line(exc: BaseException) -> str:
    """``"Type: first line of the message"`` (a notebook's error already reads so)."""
    lines = str(exc).strip().splitlines()
    if isinstance(exc, NotebookError):
        return lines[0]
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def write_atomic(path, content, write=None) -> None:
    """Replace ``path`` with ``content`` at once: readers see the old file or the new one, never a part.

    The content goes to a temporary file in the same folder, which then replaces ``path``
    (``os.replace``); if anything fails on the way, ``path`` is untouched and the temporary file
    removed.

    Parameters
    ----------
    path : str or Path
        The file to write.
    content : str or object
        Text to write, or whatever ``write`` takes.
    write : callable, optional
        ``write(content, temporary_path)`` writes a file by other means (e.g. a parquet table).
    """
    import tempfile

    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # the permissions of a file written the ordinary way, not mkstemp's 0600
        with os.fdopen(fd, "w") as handle:
            if write is None:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
        if write is not None:
            write(content, temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _write_json(path: Path, record: dict) -> None:
    """Write atomically, so a point interrupted while saving counts as not run."""
    write_atomic(path, json.dumps(record, indent=1) + "\n")


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
    done = _finished(folder, key, warn=False)
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
            traceback.print_exc(file=log)
            record.update(status="error", error=_one_line(exc), metrics={})
        print(f"status: {record['status']}", flush=True)
    record.update(versions=_versions(), git_revision=_git_revision(), seconds=time.perf_counter() - start)
    _write_json(folder / RESULT, record)
    return record


# --------------------------------------------------------------------------- the sweep, on the client


# What a readable record holds: key -> the types its value may have.
_RECORD = {
    "key": (str,),
    "task": (str,),
    "params": (dict,),
    "seed": (int,),
    "status": (str,),
    "error": (str, type(None)),
    "metrics": (dict,),
    "versions": (dict,),
    "git_revision": (str, type(None)),
    "seconds": (int, float, type(None)),
}


def read_record(folder, key: str | None = None, warn: bool = True) -> dict | None:
    """The record in ``folder/result.json``, or None if there is none or it cannot be used.

    A record that is not valid JSON (a truncated file), not an object, lacks a field, has a field
    of the wrong type, or belongs to another point (``key``) counts as not run: None, and with
    ``warn`` a line on stderr naming the file.
    """
    path = Path(folder) / RESULT
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        if not isinstance(record, dict):
            raise ValueError(f"it holds a JSON {type(record).__name__}, not an object")
        missing = [name for name in _RECORD if name not in record]
        if missing:
            raise ValueError(f"it lacks {', '.join(missing)}")
        wrong = [name for name, kinds in _RECORD.items() if not isinstance(record[name], kinds)]
        if wrong or record["status"] not in ("ok", "error"):
            raise ValueError(f"wrong type or value of {', '.join(wrong or ['status'])}")
        if key is not None and record["key"] != key:
            raise ValueError(f"it is the record of point {record['key']}, not {key}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        if warn:
            print(f"warning: {path} is unusable ({exc}); the point counts as not run", file=sys.stderr)
        return None
    return record


def _finished(folder: Path, key: str | None = None, warn: bool = True) -> dict | None:
    record = read_record(folder, key, warn)
    return record if record is not None and record["status"] == "ok" else None


def _is_client(value) -> bool:
    from distributed import Client

    return isinstance(value, Client)


@contextlib.contextmanager
def dask_client(scheduler, n_workers: int, processes: bool):
    """A ``distributed.Client``: the one given, one connected to an address, or one on a new LocalCluster."""
    import logging

    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        yield scheduler
    elif scheduler is not None:
        with Client(scheduler) as client:
            yield client
    else:
        with _workers_ignore_interrupts():
            cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=processes,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
        with cluster, Client(cluster) as client:
            yield client


@contextlib.contextmanager
def _workers_ignore_interrupts():
    """Ignore SIGINT while worker processes start, so they inherit that: Ctrl-C reaches the whole process group,
    and only this process should answer it (closing the cluster), not each worker with a traceback."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
                    "error": _one_line(exc),
                    "metrics": {},
                    "versions": {},
                    "git_revision": None,
                    "seconds": None,
                }
                folder.mkdir(parents=True, exist_ok=True)
                (folder / LOG).write_text(
                    f"{_header(task, params, seed)}\nthe point did not run on a worker: {type(exc).__name__}: {exc}\n"
                )
                _write_json(folder / RESULT, record)
            # Release the result at once: a worker that dies later must not make Dask recompute a finished point.
            future.release()
            if record["status"] != "ok" and progress:
                bar.write(f"failed: {_describe(params, seed)}: {record['error']} (log: {folder / LOG})")
            records.append(record)
            bar.update()
    return records


def _table(records: list[dict], output: Path):
    """One row per record, columns in a fixed order; mixed-type object columns become text."""
    import pandas as pd

    rows, metrics = [], {}
    for r in records:
        metrics.update(dict.fromkeys(r["metrics"]))
        rows.append(
            {
                "task": r["task"],
                **r["params"],
                "seed": r["seed"],
                "status": r["status"],
                "error": r["error"],
                **r["metrics"],
                **{f"version.{p}": r["versions"].get(p) for p in VERSIONED},
                "git_revision": r["git_revision"],
                "seconds": r["seconds"],
                "key": r["key"],
                "log": str(Path("points") / r["key"] / LOG),
            }
        )
    params = list(dict.fromkeys(k for r in records for k in r["params"]))
    columns = [
        "task",
        *params,
        "seed",
        "status",
        "error",
        *metrics,
        *(f"version.{p}" for p in VERSIONED),
        "git_revision",
        "seconds",
        "key",
        "log",
    ]
    table = pd.DataFrame(rows, columns=columns)
    for column in table.columns:
        values = table[column]
        kinds = {type(v) for v in values[values.notna()]} if pd.api.types.is_object_dtype(values.dtype) else set()
        if len(kinds) > 1 and not kinds <= {int, float, bool}:
            table[column] = values.map(str).where(values.notna(), None)
    write_atomic(output / TABLE, table, lambda t, path: t.to_parquet(path, engine="pyarrow", index=False))
    return pd.read_parquet(output / TABLE, engine="pyarrow")


def run_sweep(
    task, grid, seeds, output, *, scheduler=None, n_workers: int = 2, processes: bool = True, progress: bool = True
):
    """Run ``task`` at every grid point x seed on Dask; resume what an earlier run left; return the table.

    Parameters
    ----------
    task : str, Path or callable
        A notebook (``.ipynb``), ``"module:name"`` of a function registered with :func:`register`,
        or a function taking the parameters and ``seed`` and returning a dict of scalars.
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
        record = _finished(folder, key)
        if record is None:
            todo.append((key, params, seed, folder))
        else:
            records[key] = record
    if todo:
        for record in _execute(task, todo, scheduler, n_workers, processes, progress, done=len(records)):
            records[record["key"]] = record
    # The table is what the points' records on disk say (a record is written before it is returned).
    on_disk = [read_record(output / "points" / key, key, warn=False) or records[key] for key, _, _ in planned]
    return _table(on_disk, output)


def main(argv=None) -> int:
    """``python -m dpnb.tools.sweep``: see the module docstring."""
    parser = argparse.ArgumentParser(
        prog="python -m dpnb.tools.sweep",
        description=__doc__.splitlines()[0],
        epilog="example: python -m dpnb.tools.sweep notebooks/dppro.ipynb -p epsilon=0.5,1 --seeds 0..9 "
        "-o results/sweeps/dppro. Output layout, resuming and clusters: python -m pydoc dpnb.tools.sweep",
    )
    parser.add_argument("task", help="a notebook (.ipynb) or module:function registered with dpnb.tools.sweep.register")
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
    # Run the importable dpnb.tools.sweep, not this __main__ copy: workers unpickle its functions by name,
    # and functions register themselves in its registry.
    from dpnb.tools.sweep import main as _main

    sys.exit(_main())
