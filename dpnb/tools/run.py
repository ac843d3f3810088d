"""``make run``: execute every notebook with its parameters and gather the claims.

Each notebook ``notebooks/<stem>.ipynb`` is executed (:func:`dpnb.tools.executor.execute_notebook`,
parameters injected as papermill injects them) into ``<output>/<stem>.ipynb`` with its
``output_dir`` parameter pointed at ``<output>/<stem>``, where it writes ``claims.json``. The
claims of all notebooks are gathered into ``<output>/claims.json``; the screen shows a progress bar,
then the verdict counts per notebook and the failures, and the per-claim table goes to
``<output>/claims.md`` (``--claims`` prints it too). Executed copies never go back into ``notebooks/``.

One folder, one set of parameters: ``--output`` defaults to ``results/<profile>``, and a run with
``-p`` overrides to ``results/<profile>+<name>=<value>...`` (characters other than letters, digits
and ``._=-`` written ``_``), so results of another profile or other overrides never mix.
``<output>/run.json`` records the folder's ``profile`` and ``overrides`` (the ``-p`` values as
typed), and a run into a folder holding another profile's or other overrides' results is refused,
naming the folder it should use.

Results are merged, never lost: ``<output>/claims.json`` holds, per notebook, the claims of its
last successful run. A notebook not selected (``--only``) keeps its claims; a notebook whose run
fails keeps its earlier claims, and ``<output>/run.json`` records under ``notebooks`` each
notebook's ``status`` (``ok``, ``failed`` or ``interrupted``), ``profile``, ``seconds``,
``error`` and whether its claims are ``current`` or ``stale`` (from an earlier run). Each failure
is one line naming the notebook, the cell and the exception. The output folder is checked
(creatable, writable, no folder in the place of a results file, and not in use by another run:
``<output>/.lock``) before anything runs; the results files are written together at the end, each
replaced atomically, and one that cannot be written (a full disk) is one ``error:`` line, exit
status 1, the earlier files left as they were.

Ctrl-C or SIGTERM stops the run: the running notebooks' kernels are shut down, those notebooks are
recorded ``interrupted``, nothing else starts, the claims that finished are saved, and the exit
status is 130 (SIGINT) or 143 (SIGTERM), whatever the workers.

Profiles: ``fast`` runs each notebook's own defaults (its ``parameters`` cell); any other
profile name is looked up in ``notebooks/profiles/<stem>.yml`` (a mapping
``<profile>: {parameter: value}``) and overrides only the parameters it lists. A notebook with
no entry for the profile runs with its defaults, and the summary says so. ``-p NAME VALUE``
overrides one parameter in every selected notebook (``--parameters "NAME VALUE ..."`` gives
several in one argument, as ``make run P=...`` does): the value is read as YAML (``1e-5``,
``inf`` and ``-inf`` as floats, as in Python) and converted to the parameter's annotated type.
Every name, type and range is checked against the notebook's parameters cell and the validation
cell after it before any kernel starts (:func:`dpnb.reporting.parameters.check_notebook_parameters`); so
is every ``--only`` name. A parameter the run sets itself (``output_dir``) is refused, naming the
option to use. A profile file that is not valid YAML, or holds a tag such as ``!!python/object``,
is refused with one line naming the file and the line.

Workers: by default the notebooks run two at a time (``--workers 2``), as tasks on a Dask
``LocalCluster`` of worker processes. Every notebook's kernel is limited to one BLAS/OpenMP thread,
whatever the number of workers, so that N workers use N cores without oversubscription and the run
scales with the workers (outputs do not depend on the thread count: every chapter also limits BLAS to one
thread itself, and ``make test`` starts its kernels with one and with two). ``--workers 1`` runs them one
after another in this process. ``--scheduler tcp://host:port`` sends them to an existing Dask cluster
instead (its workers need this repository and its environment).
The longest notebooks start first, by the wall times of the previous run of the same profile into
the same output folder (``<output>/run.json``, which also records this run's times), or, on a
machine with no such run, by the measured times committed in ``notebooks/profiles/wall_seconds.yml``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

from dpnb.reporting.claims import VERDICTS, read_claims
from dpnb.reporting.parameters import check_notebook_parameters, parameter_names, read_value
from dpnb.reporting.report import markdown_table
from dpnb.tools.executor import (
    ALLOCATOR,
    STOP_POLL,
    NotebookFailed,
    NotebookInterrupted,
    execute_notebook,
    failure_reason,
)
from dpnb.tools.grid import read_yaml_file
from dpnb.tools.records import write_atomic_all

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: Parameters the run sets itself -> the option that chooses them instead.
OWNED = {"output_dir": "--output DIR (each notebook writes into DIR/<stem>)"}
#: The files the run writes at the end, in its output folder.
RESULTS = ("claims.json", "claims.md", "run.json")
#: Seconds a stopped run waits for its running notebooks to shut their kernels down and report.
STOP_GRACE = 60.0


class UsageError(ValueError):
    """A request ``make run`` refuses before running anything (unknown profile, notebook or parameter, bad value,
    unusable output folder)."""


def notebook_paths(notebooks_dir=NOTEBOOKS) -> list[Path]:
    """The committed notebooks, in file-name order."""
    return sorted(Path(notebooks_dir).glob("*.ipynb"))


def _read_yaml(path: Path):
    try:
        return read_yaml_file(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _profiles(stem: str, notebooks_dir) -> dict:
    path = Path(notebooks_dir) / "profiles" / f"{stem}.yml"
    profiles = _read_yaml(path) if path.is_file() else {}
    if not isinstance(profiles, dict):
        raise UsageError(f"{path} must map profile names to parameter mappings")
    return profiles


def available_profiles(stems, notebooks_dir=NOTEBOOKS) -> list[str]:
    """``fast`` and every profile named in the notebooks' profile files."""
    names = {name for stem in stems for name in _profiles(stem, notebooks_dir)}
    return ["fast", *sorted(names - {"fast"})]


def profile_parameters(stem: str, profile: str, notebooks_dir=NOTEBOOKS) -> dict | None:
    """Parameters that ``profile`` overrides for notebook ``stem``.

    Returns ``{}`` for ``fast`` (the defaults) and None when the notebook has no entry for the
    profile (it then runs with its defaults).
    """
    if not isinstance(profile, str) or not profile:
        raise UsageError("profile must be a non-empty name such as 'fast' or 'paper'")
    if profile == "fast":
        return {}
    profiles = _profiles(stem, notebooks_dir)
    if profile not in profiles:
        return None
    params = profiles[profile] or {}
    if not isinstance(params, dict):
        raise UsageError(f"profile {profile!r} of {stem} must map parameter names to values")
    return params


def check_parameter_names(notebook: Path, names) -> None:
    """Refuse names that the notebook's ``parameters`` cell does not declare."""
    declared = parameter_names(notebook)
    unknown = sorted(set(names) - set(declared))
    if unknown:
        raise UsageError(
            f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; its parameters are: {', '.join(declared)}"
        )


def execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None = None, stop=None) -> Path:
    """Run one notebook into ``output`` with ``parameters`` and ``output_dir`` injected; returns its claims file.

    The notebook runs in its own folder (:func:`dpnb.tools.executor.execute_notebook`) and is written,
    executed, to ``output/<name>.ipynb``, also when a cell fails. ``blas_threads`` limits the kernel's
    BLAS/OpenMP threads (None leaves them as they are) and :data:`dpnb.tools.executor.ALLOCATOR` tunes its
    memory allocator; neither changes a result, nor this process's environment. Once ``stop`` (a
    :class:`threading.Event`) is set, the kernel is shut down.

    Raises
    ------
    NotebookInterrupted
        ``stop`` was set.
    NotebookFailed
        A cell raised (the message names the cell and the exception), the kernel died, or the
        notebook ran to the end without writing ``claims.json``.
    """
    out_dir = output / notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    claims = out_dir / "claims.json"
    claims.unlink(missing_ok=True)  # an earlier run's file must not pass for this run's
    execute_notebook(
        notebook,
        output=output / notebook.name,
        parameters={**parameters, "output_dir": str(out_dir.resolve())},
        blas_threads=blas_threads,
        environment=ALLOCATOR,
        stop=stop,
    )
    if not claims.is_file():
        raise NotebookFailed(f"ran to the end but wrote no {claims.name} into its output_dir")
    return claims


def longest_first(notebooks: list[Path], previous: dict) -> list[Path]:
    """``notebooks`` ordered by the previous run's wall seconds, longest first; unknown ones first, in order."""
    return sorted(notebooks, key=lambda nb: -previous.get(nb.stem, float("inf")))


def _previous_seconds(output: Path, profile: str, notebooks_dir=NOTEBOOKS) -> dict:
    """Wall seconds per notebook of the last run of ``profile`` into ``output``, else the committed measurements."""
    record = _read_json(output / "run.json", dict) or {}
    seconds, found = {}, False
    if record.get("profile") == profile and isinstance(record.get("seconds"), dict):
        seconds, found = dict(record["seconds"]), True
    for stem, entry in (record.get("notebooks") or {}).items():
        if isinstance(entry, dict) and entry.get("profile") == profile and entry.get("seconds") is not None:
            seconds[stem], found = entry["seconds"], True
    if found:
        return seconds
    committed = Path(notebooks_dir) / "profiles" / "wall_seconds.yml"
    measured = _read_yaml(committed) if committed.is_file() else {}
    return (measured or {}).get(profile, {})


def _read_json(path: Path, kind: type, warn: bool = True):
    """The JSON value in ``path`` if it is a ``kind``; None, with a warning naming the file, if unreadable."""
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        if warn:
            print(f"warning: {path} is unreadable ({exc}); it is rewritten from this run", file=sys.stderr)
        return None
    if not isinstance(value, kind):
        if warn:
            print(
                f"warning: {path} does not hold a JSON {kind.__name__}; it is rewritten from this run", file=sys.stderr
            )
        return None
    return value


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]", "_", text)


def default_output(profile: str, overrides: dict | None = None, root: Path = ROOT / "results") -> Path:
    """The folder of a run's results: ``root/<profile>``, and with overrides ``root/<profile>+<name>=<value>...``.

    >>> default_output("fast", {"delta": "1e-6"}, Path("results")).as_posix()
    'results/fast+delta=1e-6'
    """
    parts = [profile, *(f"{name}={text}" for name, text in (overrides or {}).items())]
    return Path(root) / "+".join(map(_slug, parts))


def check_folder_parameters(output: Path, profile: str, overrides: dict) -> None:
    """Refuse to run into ``output`` when it holds the results of another profile or other ``-p`` overrides.

    A folder holds one profile's results with one set of overrides (compared as values, so ``1e-6`` and
    ``0.000001`` are the same), as its ``run.json`` records them. A folder with results but no such record
    (written by an older runner, or damaged) is refused too.
    """
    has_results = any((output / name).exists() for name in ("claims.json", "run.json"))
    if not has_results:
        return
    record = _read_json(output / "run.json", dict, warn=False) or {}
    if "profile" not in record or not isinstance(record.get("overrides"), dict):
        raise UsageError(
            f"{output} holds results whose profile and overrides are not recorded (no usable run.json); "
            "remove the folder or choose another --output"
        )

    def values(texts):
        try:
            return {name: read_value(text) for name, text in texts.items()}
        except (TypeError, ValueError):
            return texts

    if record["profile"] == profile and values(record["overrides"]) == values(overrides):
        return
    held = " ".join([f"--profile {record['profile']}", *(f"-p {n} {t}" for n, t in record["overrides"].items())])
    asked = " ".join([f"--profile {profile}", *(f"-p {n} {t}" for n, t in overrides.items())])
    raise UsageError(
        f"{output} holds the results of {held}, not of {asked}; results of other parameters never share a "
        f"folder: run without --output (into {default_output(profile, overrides)}) or choose another --output"
    )


@contextlib.contextmanager
def output_folder(output: Path):
    """Create ``output`` if needed, check it is writable, and hold ``<output>/.lock`` while the run writes.

    Raises
    ------
    UsageError
        The folder cannot be created or written, a results file's place is taken by a folder, or another run
        holds its lock.
    """
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {output}: {exc.strerror or exc}") from None
    if not os.access(output, os.W_OK | os.X_OK):
        raise UsageError(f"the output folder {output} is not writable; choose another --output")
    for name in RESULTS:
        if (output / name).exists() and not (output / name).is_file():
            raise UsageError(f"{output / name} is in the way of the results file {name}; remove it")
    try:
        lock = open(output / ".lock", "a")  # noqa: SIM115 -- held open for the whole run
    except OSError as exc:
        raise UsageError(
            f"the output folder {output} is not writable ({exc.strerror or exc}); choose another --output"
        ) from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another run is writing into {output} (it holds {output / '.lock'}); "
                "wait for it to finish or choose another --output"
            ) from None
        try:
            yield output
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class Stop:
    """What a signal asks of a run: set (a :class:`threading.Event`) by the first SIGINT or SIGTERM, which it
    remembers.

    Use it as a context manager in the main thread: it takes SIGINT and SIGTERM for the run and puts the previous
    handlers back after it. Elsewhere (a thread, a test) it only holds the event.

    Examples
    --------
    >>> stop = Stop()
    >>> stop.is_set(), stop.exit_status
    (False, None)
    >>> stop(signal.SIGTERM, None)
    >>> stop.is_set(), stop.exit_status
    (True, 143)
    """

    def __init__(self):
        self.event = threading.Event()
        self.signal = None
        self._previous = {}

    def __call__(self, signum, frame) -> None:
        if self.signal is None:
            self.signal = signal.Signals(signum)
        self.event.set()

    def is_set(self) -> bool:
        """Whether the run was asked to stop."""
        return self.event.is_set()

    @property
    def exit_status(self) -> int | None:
        """128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell reports it; None if none came."""
        return None if self.signal is None else 128 + int(self.signal)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self)
        return self

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()


@contextlib.contextmanager
def _stop_from(name: str):
    """On a Dask worker: a :class:`threading.Event` set once the cluster's ``distributed.Event`` ``name`` is set."""
    from distributed import Event, get_client

    stop, done = threading.Event(), threading.Event()
    remote = Event(name, client=get_client())

    def watch():
        while not done.is_set():
            try:
                if remote.wait(timeout=0.5):
                    stop.set()
                    return
            except Exception:  # noqa: BLE001 -- the scheduler went away: nobody is left to ask for a stop
                return

    watcher = threading.Thread(target=watch, name="dpnb-stop-watch", daemon=True)
    watcher.start()
    try:
        yield stop
    finally:
        done.set()


def _timed_execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None, stop=None):
    """:func:`execute` timed: ``(claims file, seconds)``."""
    start = time.perf_counter()
    claims = execute(notebook, output, parameters, blas_threads, stop)
    return claims, time.perf_counter() - start


def _execute_on_worker(notebook: Path, output: Path, parameters: dict, blas_threads: int | None, stop_name: str):
    """A Dask task: :func:`_timed_execute` stopped by the cluster's event ``stop_name``; a failure is returned as
    ``(exception, None)``, not raised, so that the worker logs no traceback of its own."""
    with _stop_from(stop_name) as stop:
        try:
            return _timed_execute(notebook, output, parameters, blas_threads, stop)
        except Exception as exc:  # noqa: BLE001 -- reported by the client, one line
            return exc, None


def execute_all(
    notebooks, output: Path, parameters: dict, workers: int, scheduler: str | None, on_done, stop: Stop | None = None
):
    """Run every notebook, sequentially here or as Dask tasks; ``on_done(stem, claims_or_exc, seconds)`` each.

    Parameters
    ----------
    notebooks : list of Path
        In the order to start them: each worker thread runs one notebook at a time, and the next in
        the list starts when one finishes.
    workers : int
        1 runs them one after another in this process; more starts a LocalCluster of that many
        worker processes (ignored when ``scheduler`` is given). Each kernel gets one BLAS thread.
    scheduler : str or distributed.Client or None
        Address of an existing Dask scheduler (or a client of it).
    stop : Stop, optional
        Once set, no further notebook starts and the running ones are stopped (their kernels shut down, on
        the workers too, through a ``distributed.Event``): they report :class:`NotebookInterrupted`, and one
        that has not reported within :data:`STOP_GRACE` seconds is reported interrupted here. Notebooks that
        never started are not reported.
    """
    stop = stop or Stop()
    if workers == 1 and scheduler is None:
        for nb in notebooks:
            if stop.is_set():
                return
            try:
                on_done(nb.stem, *_timed_execute(nb, output, parameters[nb.stem], 1, stop.event))
            except Exception as exc:  # report every failing notebook, then fail
                on_done(nb.stem, exc, None)
        return
    from distributed import Event

    from dpnb.tools.sweep import dask_client

    with dask_client(scheduler, workers, processes=True) as client:
        name = f"dpnb-run-stop-{uuid.uuid4().hex}"
        remote = Event(name, client=client)
        waiting = list(notebooks)
        slots = max(1, sum(client.nthreads().values()))

        def submit(nb):
            return client.submit(
                _execute_on_worker, nb, output, parameters[nb.stem], 1, name, pure=False, key=f"notebook-{nb.stem}"
            )

        # One notebook per worker thread at a time, the next submitted as one finishes: the cluster runs them
        # in exactly the given order (longest first), which Dask does not promise for tasks queued together.
        running = {submit(nb): nb for nb in waiting[:slots]}
        del waiting[:slots]
        deadline = None
        try:
            while running:
                if stop.is_set() and deadline is None:
                    remote.set()
                    deadline = time.monotonic() + STOP_GRACE
                done = [future for future in running if future.done()]
                if not done:
                    if deadline is not None and time.monotonic() > deadline:
                        for future, nb in running.items():
                            future.cancel()
                            on_done(nb.stem, NotebookInterrupted("stopped: its worker did not answer"), None)
                        return
                    time.sleep(STOP_POLL)
                    continue
                for future in done:
                    stem = running.pop(future).stem
                    if waiting and not stop.is_set():
                        nb = waiting.pop(0)
                        running[submit(nb)] = nb
                    if future.status == "finished":
                        on_done(stem, *future.result())
                    else:
                        on_done(stem, future.exception(), None)
        finally:
            if deadline is not None:
                remote.clear()


def summarize(claims: list[dict]) -> str:
    """A Markdown table with one row per notebook: how many claims per verdict."""
    stems = list(dict.fromkeys(c["notebook"] for c in claims))
    rows = [
        {"notebook": s, **{v: sum(c["notebook"] == s and c["verdict"] == v for c in claims) for v in VERDICTS}}
        for s in stems
    ]
    rows.append({"notebook": "total", **{v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}})
    return markdown_table(rows, columns=["notebook", *VERDICTS])


def _parse_overrides(pairs) -> tuple[dict, dict]:
    """``-p`` pairs as (name -> value read as YAML, name -> text as typed); a name given twice is refused."""
    values, texts = {}, {}
    for name, text in pairs or []:
        if name in OWNED:
            raise UsageError(f"-p {name}: {name} is set by the run; use {OWNED[name]} instead")
        if name in texts:
            raise UsageError(f"-p {name} is given twice ({texts[name]} and {text}); give it once")
        try:
            values[name] = read_value(text)
        except ValueError as exc:
            raise UsageError(f"-p {name}: {exc}") from None
        texts[name] = text
    return values, texts


def split_parameters(argv: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Take every ``-p NAME VALUE`` (``--parameter``) and ``--parameters "NAME VALUE ..."`` out of ``argv``.

    The two words after ``-p`` are taken as they are, so a value that starts with a dash (``-inf``, ``-1``)
    reaches the typed check instead of being read as an option; ``--parameters`` splits its one argument as a
    shell would (quotes keep ``"[0.1, 0.2]"`` one value) into name-value pairs.

    >>> split_parameters(["-p", "low", "-inf", "--only", "a", "--parameters", "x 1 y '[1, 2]'"])
    (['--only', 'a'], [('low', '-inf'), ('x', '1'), ('y', '[1, 2]')])
    """
    rest, pairs, i = [], [], 0
    while i < len(argv):
        word = argv[i]
        if word in ("-p", "--parameter"):
            if i + 2 >= len(argv):
                raise UsageError(f"{word} takes a name and a value: {word} NAME VALUE")
            pairs.append((argv[i + 1], argv[i + 2]))
            i += 3
        elif word == "--parameters" or word.startswith("--parameters="):
            text = word.partition("=")[2] if "=" in word else (argv[i + 1] if i + 1 < len(argv) else None)
            if text is None:
                raise UsageError('--parameters takes one argument: --parameters "NAME VALUE [NAME VALUE ...]"')
            try:
                words = shlex.split(text)
            except ValueError as exc:
                raise UsageError(f"--parameters {text!r}: {exc}") from None
            if len(words) % 2:
                raise UsageError(f"--parameters {text!r} is not a list of NAME VALUE pairs (it has {len(words)} words)")
            pairs.extend(zip(words[::2], words[1::2], strict=True))
            i += 1 if "=" in word else 2
        elif word == "--":
            rest.extend(argv[i:])
            break
        else:
            rest.append(word)
            i += 1
    return rest, pairs


def plan(
    notebooks: list[Path], profile: str, overrides: dict, notebooks_dir, texts: dict | None = None
) -> tuple[dict, list[str]]:
    """The parameters of every notebook, and the notebooks that have no entry for ``profile``.

    Each value is converted to the parameter's annotated type and checked by the notebook's own
    validation cell (:func:`dpnb.reporting.parameters.check_notebook_parameters`, with ``output_dir`` as
    the run sets it); ``texts`` are the ``-p`` values as typed.

    Raises :class:`UsageError` for an unknown profile or parameter name, or a value of the wrong
    type or out of range (naming the notebook and the parameter), before anything runs.
    """
    stems = [nb.stem for nb in notebook_paths(notebooks_dir)]
    if profile not in available_profiles(stems, notebooks_dir):
        raise UsageError(
            f"unknown profile {profile!r}; profiles: {', '.join(available_profiles(stems, notebooks_dir))}"
        )
    parameters, defaults = {}, []
    for nb in notebooks:
        params = profile_parameters(nb.stem, profile, notebooks_dir)
        if params is None:
            defaults.append(nb.stem)
            params = {}
        owned = sorted(set(params) & set(OWNED))
        if owned:
            raise UsageError(
                f"profile {profile!r} of {nb.stem} sets {', '.join(owned)}, which the run sets itself; "
                f"remove it from notebooks/profiles/{nb.stem}.yml (use {OWNED[owned[0]]})"
            )
        values = {**params, **overrides}
        check_parameter_names(nb, values)
        try:
            checked = check_notebook_parameters(nb, {**values, "output_dir": nb.stem}, texts)
        except Exception as exc:  # noqa: BLE001 -- whatever the notebook's own checks raise refuses the run
            raise UsageError(f"{nb.stem}: {failure_reason(exc)}") from None
        parameters[nb.stem] = {name: checked[name] for name in values}
    return parameters, defaults


def merge_claims(previous: list, fresh: dict, order: list[str]) -> list[dict]:
    """Every notebook's claims: this run's where it ran (``fresh``: stem -> claims), the earlier ones otherwise.

    Notebooks come in ``order`` (file-name order), then any others of ``previous`` in their order there.
    """
    kept: dict[str, list] = {}
    for claim in previous:
        if isinstance(claim, dict) and isinstance(claim.get("notebook"), str):
            kept.setdefault(claim["notebook"], []).append(claim)
    merged = {**kept, **fresh}
    stems = [s for s in order if s in merged] + [s for s in merged if s not in order]
    return [claim for stem in stems for claim in merged[stem]]


def main(argv=None) -> int:
    """``python -m dpnb.tools.run``: see the module docstring. Returns the exit status (0 all ran, 1 a notebook
    failed or the results could not be written, 2 refused before running, 130/143 stopped by SIGINT/SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python -m dpnb.tools.run",
        description=__doc__.splitlines()[0],
        epilog="Results folders, merging, profiles and signals: python -m pydoc dpnb.tools.run",
    )
    parser.add_argument("--profile", default="fast", help="fast (notebook defaults) or a profile name, e.g. paper")
    parser.add_argument(
        "--output", default=None, help="folder for executed notebooks and claims (default: results/<profile>[+<-p>])"
    )
    parser.add_argument("--only", nargs="*", default=None, help="notebook stems to run (default: all)")
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override one parameter in every selected notebook (value read as YAML, converted to its annotated "
        "type; -inf and other values starting with a dash are values)",
    )
    parser.add_argument(
        "--parameters", metavar='"NAME VALUE ..."', help="several -p pairs in one argument (make run P=...)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="notebooks run at once on a local Dask cluster (1: one after another)"
    )
    parser.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler, tcp://host:port")
    parser.add_argument("--claims", action="store_true", help="print the per-claim table (always in claims.md)")
    parser.add_argument("--notebooks", default=str(NOTEBOOKS), help=argparse.SUPPRESS)
    try:
        rest, pairs = split_parameters(list(sys.argv[1:] if argv is None else argv))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(rest)
    pairs += [tuple(pair) for pair in args.parameter]
    if args.workers < 1:
        print(f"error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2

    notebooks_dir = Path(args.notebooks)
    known = [p.stem for p in notebook_paths(notebooks_dir)]
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown:
        print(f"error: no notebook(s) {', '.join(unknown)}; notebooks: {', '.join(known)}", file=sys.stderr)
        return 2
    notebooks = [p for p in notebook_paths(notebooks_dir) if args.only is None or p.stem in args.only]
    if not notebooks:
        print(f"error: no notebooks to run; notebooks: {', '.join(known)}", file=sys.stderr)
        return 2
    try:
        overrides, texts = _parse_overrides(pairs)
        parameters, defaults = plan(notebooks, args.profile, overrides, notebooks_dir, texts)
        output = Path(args.output).resolve() if args.output else default_output(args.profile, texts)
        with output_folder(output):
            check_folder_parameters(output, args.profile, texts)
            with Stop() as stop:  # until the results are written and reported: a signal then changes the status only
                return _run(args, output, notebooks, parameters, defaults, known, texts, stop)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(
    args, output: Path, notebooks: list[Path], parameters: dict, defaults: list, known: list, texts, stop: Stop
) -> int:
    """Run the planned notebooks into the locked ``output``, merge and write the results, print the summary."""
    from tqdm import tqdm

    previous_claims = _read_json(output / "claims.json", list) or []
    previous_run = _read_json(output / "run.json", dict) or {}
    status = {stem: entry for stem, entry in (previous_run.get("notebooks") or {}).items() if isinstance(entry, dict)}
    had_claims = {c.get("notebook") for c in previous_claims if isinstance(c, dict)}
    notebooks = longest_first(notebooks, _previous_seconds(output, args.profile, args.notebooks))
    fresh, failed, interrupted, seconds = {}, {}, {}, {}
    where = args.scheduler or (f"{args.workers} workers" if args.workers > 1 else "in process")
    with tqdm(total=len(notebooks), desc=f"notebooks ({args.profile}, {where})", unit="nb", file=sys.stdout) as bar:

        def on_done(stem, claims, wall):
            try:
                if isinstance(claims, BaseException):
                    raise claims
                fresh[stem] = read_claims(claims)
                seconds[stem] = round(wall, 1)
            except NotebookInterrupted as exc:
                interrupted[stem] = failure_reason(exc)
            except Exception as exc:  # noqa: BLE001 -- one line per failing notebook, the others go on
                if stop.is_set():  # what a stopped kernel left behind is no failure of the notebook
                    interrupted[stem] = f"stopped ({failure_reason(exc)})"
                else:
                    failed[stem] = failure_reason(exc)
                    tqdm.write(f"FAILED {stem}: {failed[stem]} (executed notebook: {output / (stem + '.ipynb')})")
            bar.set_postfix_str(stem)
            bar.update()

        execute_all(notebooks, output, parameters, args.workers, args.scheduler, on_done, stop)
    for nb in notebooks:
        stem = nb.stem
        entry = {"status": "ok", "profile": args.profile, "seconds": seconds.get(stem), "error": None}
        if stem not in fresh:
            if stem in failed:
                entry.update(status="failed", error=failed[stem])
            else:
                entry.update(status="interrupted", error=interrupted.get(stem, "stopped before it started"))
        entry["claims"] = "current" if stem in fresh else ("stale" if stem in had_claims else "none")
        status[stem] = entry
    claims = merge_claims(previous_claims, fresh, known)
    record = {
        "profile": args.profile,
        "overrides": texts,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "seconds": seconds,
        "notebooks": {stem: status[stem] for stem in [*known, *sorted(set(status) - set(known))] if stem in status},
    }
    table = claims_table(claims, args.profile, texts)
    try:
        write_atomic_all(
            {
                output / "claims.json": json.dumps(claims, indent=2) + "\n",
                output / "claims.md": table,
                output / "run.json": json.dumps(record, indent=2) + "\n",
            }
        )
    except OSError as exc:
        where = exc.filename or output
        print(
            f"error: cannot write the results into {output} ({where}: {exc.strerror or exc}); "
            f"the earlier results there are kept, this run's executed notebooks are in {output}",
            file=sys.stderr,
        )
        return 1
    print()
    if defaults:
        print(f"profile {args.profile!r} has no entry for {', '.join(defaults)}: ran with their defaults\n")
    print(summarize(claims) if claims else "no claims gathered")
    if args.claims:
        print()
        print(table, end="")
    ran = {nb.stem for nb in notebooks}
    earlier = [s for s in known if s not in ran and s in had_claims]
    if earlier:
        print(f"\nclaims kept from earlier runs (not run now): {', '.join(earlier)}")
    if seconds:
        print("\nwall time per notebook: " + ", ".join(f"{stem} {s / 60:.1f} min" for stem, s in seconds.items()))
    print(f"\nclaims: {output / 'claims.md'}; executed notebooks and claims.json: {output}")
    unfinished = [nb.stem for nb in notebooks if nb.stem not in fresh]
    for stem in unfinished:
        kept = "its earlier claims are kept, marked stale in run.json" if stem in had_claims else "it has no claims"
        print(f"{status[stem]['status']}: {stem}: {status[stem]['error']}; {kept}", file=sys.stderr)
    if stop.is_set():
        print(
            f"interrupted by {stop.signal.name}: the claims of the {len(fresh)} notebook(s) that finished are saved",
            file=sys.stderr,
        )
        return stop.exit_status
    if failed:
        print(f"failed notebooks: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def claims_table(claims: list[dict], profile: str, overrides: dict) -> str:
    """``claims.md``: a heading naming the profile and overrides, then one Markdown row per claim."""
    given = ", ".join(f"{name} = {text}" for name, text in overrides.items()) or "none"
    head = f"# Claims: profile {profile}, overrides: {given}\n\n"
    if not claims:
        return head + "no claims gathered\n"
    return head + markdown_table(claims, columns=["notebook", "id", "source", "verdict", "expected", "measured"]) + "\n"


if __name__ == "__main__":
    sys.exit(main())
