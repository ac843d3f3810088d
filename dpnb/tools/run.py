"""``make run``: execute every notebook with its parameters and gather the claims.

Each notebook ``notebooks/<stem>.ipynb`` is executed (:func:`dpnb.tools.executor.execute_notebook`,
parameters injected as papermill injects them) into ``<output>/<stem>.ipynb`` with its
``output_dir`` parameter pointed at ``<output>/<stem>``, where it writes ``claims.json``. The
claims of all notebooks are gathered into ``<output>/claims.json`` and summarised.
Executed copies never go back into ``notebooks/``.

Results are merged, never lost: ``<output>/claims.json`` holds, per notebook, the claims of its
last successful run. A notebook not selected (``--only``) keeps its claims; a notebook whose run
fails keeps its earlier claims, and ``<output>/run.json`` records under ``notebooks`` each
notebook's ``status`` (``ok``, ``failed`` or ``interrupted``), ``profile``, ``seconds``,
``error`` and whether its claims are ``current`` or ``stale`` (from an earlier run). Each failure
is one line naming the notebook, the cell and the exception. The output folder is checked
(creatable, writable, and not in use by another run: ``<output>/.lock``) before anything runs,
and every results file is replaced atomically.

Profiles: ``fast`` runs each notebook's own defaults (its ``parameters`` cell); any other
profile name is looked up in ``notebooks/profiles/<stem>.yml`` (a mapping
``<profile>: {parameter: value}``) and overrides only the parameters it lists. A notebook with
no entry for the profile runs with its defaults, and the summary says so. ``-p NAME VALUE``
overrides one parameter in every selected notebook: the value is read as YAML (``1e-5`` and
``inf`` as floats, as in Python) and converted to the parameter's annotated type. Every name,
type and range is checked against the notebook's parameters cell and the validation cell after
it before any kernel starts (:func:`dpnb.book.parameters.check_notebook_parameters`); so is every
``--only`` name.

Workers: by default the notebooks run two at a time (``--workers 2``), as tasks on a Dask
``LocalCluster`` of worker processes. Every notebook's kernel is limited to one BLAS/OpenMP thread,
whatever the number of workers, so that N workers use N cores without oversubscription and the run
scales with the workers (outputs do not depend on the thread count: ``make test`` checks them under
one and two threads). ``--workers 1`` runs them one after another in this process. ``--scheduler tcp://host:port`` sends
them to an existing Dask cluster instead (its workers need this repository and its environment).
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
import sys
import time
from pathlib import Path

from dpnb.book.claims import VERDICTS, read_claims
from dpnb.book.parameters import check_notebook_parameters, parameter_names, read_value, read_yaml
from dpnb.book.report import markdown_table
from dpnb.tools.executor import ALLOCATOR, NotebookFailed, execute_notebook, failure_reason
from dpnb.tools.records import write_atomic

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


class UsageError(ValueError):
    """A request ``make run`` refuses before running anything (unknown profile, notebook or parameter, bad value,
    unusable output folder)."""


def notebook_paths(notebooks_dir=NOTEBOOKS) -> list[Path]:
    """The committed notebooks, in file-name order."""
    return sorted(Path(notebooks_dir).glob("*.ipynb"))


def _profiles(stem: str, notebooks_dir) -> dict:
    path = Path(notebooks_dir) / "profiles" / f"{stem}.yml"
    profiles = read_yaml(path.read_text()) if path.is_file() else {}
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


def execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None = None) -> Path:
    """Run one notebook into ``output`` with ``parameters`` and ``output_dir`` injected; returns its claims file.

    The notebook runs in its own folder (:func:`dpnb.tools.executor.execute_notebook`) and is written,
    executed, to ``output/<name>.ipynb``, also when a cell fails. ``blas_threads`` limits the kernel's
    BLAS/OpenMP threads (None leaves them as they are) and :data:`dpnb.tools.executor.ALLOCATOR` tunes its
    memory allocator; neither changes a result, nor this process's environment.

    Raises
    ------
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
    )
    if not claims.is_file():
        raise NotebookFailed(f"ran to the end but wrote no {claims.name} into its output_dir")
    return claims


def _timed_execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None) -> tuple[Path, float]:
    start = time.perf_counter()
    claims = execute(notebook, output, parameters, blas_threads)
    return claims, time.perf_counter() - start


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
    measured = read_yaml(committed.read_text()) if committed.is_file() else {}
    return (measured or {}).get(profile, {})


def _read_json(path: Path, kind: type):
    """The JSON value in ``path`` if it is a ``kind``; None, with a warning naming the file, if unreadable."""
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"warning: {path} is unreadable ({exc}); it is rewritten from this run", file=sys.stderr)
        return None
    if not isinstance(value, kind):
        print(f"warning: {path} does not hold a JSON {kind.__name__}; it is rewritten from this run", file=sys.stderr)
        return None
    return value


@contextlib.contextmanager
def output_folder(output: Path):
    """Create ``output`` if needed, check it is writable, and hold ``<output>/.lock`` while the run writes.

    Raises
    ------
    UsageError
        The folder cannot be created or written, or another run holds its lock.
    """
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {output}: {exc.strerror or exc}") from None
    if not os.access(output, os.W_OK | os.X_OK):
        raise UsageError(f"the output folder {output} is not writable; choose another --output")
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


def execute_all(notebooks, output: Path, parameters: dict, workers: int, scheduler: str | None, on_done):
    """Run every notebook, sequentially here or as Dask tasks; ``on_done(stem, claims_or_exc, seconds)`` each.

    Parameters
    ----------
    notebooks : list of Path
        In the order to start them: each worker thread runs one notebook at a time, and the next in
        the list starts when one finishes.
    workers : int
        1 runs them one after another in this process; more starts a LocalCluster of that many
        worker processes (ignored when ``scheduler`` is given). Each kernel gets one BLAS thread.
    scheduler : str or None
        Address of an existing Dask scheduler.
    """
    if workers == 1 and scheduler is None:
        for nb in notebooks:
            try:
                on_done(nb.stem, *_timed_execute(nb, output, parameters[nb.stem], 1))
            except Exception as exc:  # report every failing notebook, then fail
                on_done(nb.stem, exc, None)
        return
    from distributed import as_completed

    from dpnb.tools.sweep import dask_client

    with dask_client(scheduler, workers, processes=True) as client:
        waiting = list(notebooks)
        slots = max(1, sum(client.nthreads().values()))

        def submit(nb):
            return client.submit(
                _timed_execute, nb, output, parameters[nb.stem], 1, pure=False, key=f"notebook-{nb.stem}"
            )

        # One notebook per worker thread at a time, the next submitted as one finishes: the cluster runs them
        # in exactly the given order (longest first), which Dask does not promise for tasks queued together.
        futures = {submit(nb): nb for nb in waiting[:slots]}
        del waiting[:slots]
        running = as_completed(list(futures))
        for future in running:
            stem = futures[future].stem
            if waiting:
                nb = waiting.pop(0)
                new = submit(nb)
                futures[new] = nb
                running.add(new)
            if future.status == "finished":
                claims, seconds = future.result()
                on_done(stem, claims, seconds)
            else:
                on_done(stem, future.exception(), None)


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
    """``-p`` pairs as (name -> value read as YAML, name -> text as typed)."""
    values, texts = {}, {}
    for name, text in pairs or []:
        try:
            values[name] = read_value(text)
        except ValueError as exc:
            raise UsageError(f"-p {name}: {exc}") from None
        texts[name] = text
    return values, texts


def plan(
    notebooks: list[Path], profile: str, overrides: dict, notebooks_dir, texts: dict | None = None
) -> tuple[dict, list[str]]:
    """The parameters of every notebook, and the notebooks that have no entry for ``profile``.

    Each value is converted to the parameter's annotated type and checked by the notebook's own
    validation cell (:func:`dpnb.book.parameters.check_notebook_parameters`, with ``output_dir`` as
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
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="fast", help="fast (notebook defaults) or a profile name, e.g. paper")
    parser.add_argument("--output", default="results", help="folder for executed notebooks and claims")
    parser.add_argument("--only", nargs="*", default=None, help="notebook stems to run (default: all)")
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="override one parameter in every selected notebook (value read as YAML, converted to its annotated type)",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="notebooks run at once on a local Dask cluster (1: one after another)"
    )
    parser.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler, tcp://host:port")
    parser.add_argument("--notebooks", default=str(NOTEBOOKS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workers < 1:
        print(f"error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2

    output = Path(args.output).resolve()
    notebooks_dir = Path(args.notebooks)
    known = [p.stem for p in notebook_paths(notebooks_dir)]
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown:
        print(f"error: no notebook(s) {', '.join(unknown)}; notebooks: {', '.join(known)}", file=sys.stderr)
        return 2
    notebooks = [p for p in notebook_paths(notebooks_dir) if args.only is None or p.stem in args.only]
    if not notebooks:
        print(f"no notebooks to run; notebooks: {', '.join(known)}", file=sys.stderr)
        return 2
    try:
        overrides, texts = _parse_overrides(args.parameter)
        parameters, defaults = plan(notebooks, args.profile, overrides, notebooks_dir, texts)
        with output_folder(output):
            return _run(args, output, notebooks, parameters, defaults, known, tqdm)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args, output: Path, notebooks: list[Path], parameters: dict, defaults: list, known: list, tqdm) -> int:
    """Run the planned notebooks into the locked ``output``, merge and write the results, print the summary."""
    previous_claims = _read_json(output / "claims.json", list) or []
    previous_run = _read_json(output / "run.json", dict) or {}
    status = {stem: entry for stem, entry in (previous_run.get("notebooks") or {}).items() if isinstance(entry, dict)}
    had_claims = {c.get("notebook") for c in previous_claims if isinstance(c, dict)}
    notebooks = longest_first(notebooks, _previous_seconds(output, args.profile, args.notebooks))
    fresh, failed, seconds = {}, {}, {}
    where = args.scheduler or (f"{args.workers} workers" if args.workers > 1 else "in process")
    with tqdm(total=len(notebooks), desc=f"notebooks ({args.profile}, {where})", unit="nb", file=sys.stdout) as bar:

        def on_done(stem, claims, wall):
            try:
                if isinstance(claims, BaseException):
                    raise claims
                fresh[stem] = read_claims(claims)
                seconds[stem] = round(wall, 1)
            except Exception as exc:  # noqa: BLE001 -- one line per failing notebook, the others go on
                failed[stem] = failure_reason(exc)
                tqdm.write(f"FAILED {stem}: {failed[stem]} (executed notebook: {output / (stem + '.ipynb')})")
            bar.set_postfix_str(stem)
            bar.update()

        interrupted = False
        try:
            execute_all(notebooks, output, parameters, args.workers, args.scheduler, on_done)
        except KeyboardInterrupt:
            interrupted = True
    for nb in notebooks:
        stem = nb.stem
        entry = {"status": "ok", "profile": args.profile, "seconds": seconds.get(stem), "error": None}
        if stem not in fresh:
            reason = failed.get(stem, "interrupted before it finished")
            entry.update(status="failed" if stem in failed else "interrupted", error=reason)
        entry["claims"] = "current" if stem in fresh else ("stale" if stem in had_claims else "none")
        status[stem] = entry
    claims = merge_claims(previous_claims, fresh, known)
    record = {
        "profile": args.profile,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "seconds": seconds,
        "notebooks": {stem: status[stem] for stem in [*known, *sorted(set(status) - set(known))] if stem in status},
    }
    write_atomic(output / "run.json", json.dumps(record, indent=2) + "\n")
    write_atomic(output / "claims.json", json.dumps(claims, indent=2) + "\n")
    print()
    if defaults:
        print(f"profile {args.profile!r} has no entry for {', '.join(defaults)}: ran with their defaults\n")
    print(summarize(claims) if claims else "no claims gathered")
    notable = [c for c in claims if c["verdict"] != "holds"]
    if notable:
        print()
        print(markdown_table(notable, columns=["notebook", "id", "source", "verdict", "measured"]))
    if seconds:
        print("\nwall time per notebook: " + ", ".join(f"{stem} {s / 60:.1f} min" for stem, s in seconds.items()))
    ran = {nb.stem for nb in notebooks}
    earlier = [s for s in known if s not in ran and s in had_claims]
    if earlier:
        print(f"\nclaims kept from earlier runs (not run now): {', '.join(earlier)}")
    print(f"\nexecuted notebooks and claims: {output}")
    unfinished = [nb.stem for nb in notebooks if nb.stem not in fresh]
    for stem in unfinished:
        kept = "its earlier claims are kept, marked stale in run.json" if stem in had_claims else "it has no claims"
        print(f"{status[stem]['status']}: {stem}: {status[stem]['error']}; {kept}", file=sys.stderr)
    if interrupted:
        print(f"interrupted: the claims of the {len(fresh)} notebook(s) that finished are saved", file=sys.stderr)
        return 130
    if failed:
        print(f"failed notebooks: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
