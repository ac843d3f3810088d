"""``make run``: execute every notebook with papermill and gather the claims.

Each notebook ``notebooks/<stem>.ipynb`` is executed into ``<output>/<stem>.ipynb`` with its
``output_dir`` parameter pointed at ``<output>/<stem>``, where it writes ``claims.json``. The
claims of all notebooks are gathered into ``<output>/claims.json`` and summarised.
Papermill outputs never go back into ``notebooks/``.

Profiles: ``fast`` runs each notebook's own defaults (its ``parameters`` cell); any other
profile name is looked up in ``notebooks/profiles/<stem>.yml`` (a mapping
``<profile>: {parameter: value}``) and overrides only the parameters it lists. A notebook with
no entry for the profile runs with its defaults, and the summary says so. ``-p NAME VALUE``
overrides one parameter (value parsed as YAML) in every selected notebook. Every name is
checked against the notebook's parameters cell before anything runs.

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
import json
import sys
import time
from pathlib import Path

from .claims import VERDICTS, collect
from .portability import environment
from .report import markdown_table

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


class UsageError(ValueError):
    """A request ``make run`` refuses before running anything (unknown profile or parameter)."""


def notebook_paths(notebooks_dir=NOTEBOOKS) -> list[Path]:
    """The committed notebooks, in file-name order."""
    return sorted(Path(notebooks_dir).glob("*.ipynb"))


def _profiles(stem: str, notebooks_dir) -> dict:
    import yaml

    path = Path(notebooks_dir) / "profiles" / f"{stem}.yml"
    profiles = yaml.safe_load(path.read_text()) if path.is_file() else {}
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
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    unknown = sorted(set(names) - set(declared))
    if unknown:
        raise UsageError(
            f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; its parameters are: {', '.join(declared)}"
        )


THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# glibc's allocator in every kernel: keep freed memory for reuse instead of returning it to the system and faulting
# fresh zeroed pages in again for the next array of the same size. Measured at paper size, one process: system time
# 6.0 -> 1.3 s on a truncated component_analysis run, a Table 5 trial of ron_gauss 4 % faster. Arrays above 32 MB
# (glibc's largest mmap threshold) are still mapped and unmapped; other platforms ignore the variables.
ALLOCATOR = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
    "MALLOC_TRIM_THRESHOLD_": str(4 * 2**30),
    "MALLOC_TOP_PAD_": str(512 * 2**20),
}


def execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None = None) -> Path:
    """Run one notebook with papermill into ``output``; returns its claims file.

    ``blas_threads`` limits the kernel's BLAS/OpenMP threads, and ``ALLOCATOR`` tunes its memory
    allocator (both set in this process's environment while the notebook runs, which the kernel
    inherits, and restored afterwards). Neither changes a result.
    """
    import papermill

    from .pairing import QuietKernelManager

    out_dir = output / notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    params = {**parameters, "output_dir": str(out_dir.resolve())}
    with environment({**dict.fromkeys(THREAD_VARIABLES, str(blas_threads) if blas_threads else ""), **ALLOCATOR}):
        papermill.execute_notebook(
            str(notebook),
            str(output / notebook.name),
            parameters=params,
            cwd=str(notebook.parent),
            progress_bar=False,
            log_output=False,
            kernel_name="python3",
            kernel_manager_class=QuietKernelManager,
        )
    return out_dir / "claims.json"


def _timed_execute(notebook: Path, output: Path, parameters: dict, blas_threads: int | None) -> tuple[Path, float]:
    start = time.perf_counter()
    claims = execute(notebook, output, parameters, blas_threads)
    return claims, time.perf_counter() - start


def longest_first(notebooks: list[Path], previous: dict) -> list[Path]:
    """``notebooks`` ordered by the previous run's wall seconds, longest first; unknown ones first, in order."""
    return sorted(notebooks, key=lambda nb: -previous.get(nb.stem, float("inf")))


def _previous_seconds(output: Path, profile: str, notebooks_dir=NOTEBOOKS) -> dict:
    """Wall seconds per notebook of the last run of ``profile`` into ``output``, else the committed measurements."""
    path = output / "run.json"
    if path.is_file():
        record = json.loads(path.read_text())
        if record.get("profile") == profile:
            return record.get("seconds", {})
    import yaml

    committed = Path(notebooks_dir) / "profiles" / "wall_seconds.yml"
    measured = yaml.safe_load(committed.read_text()) if committed.is_file() else {}
    return (measured or {}).get(profile, {})


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

    from .sweep import dask_client

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


def _parse_overrides(pairs) -> dict:
    import yaml

    return {name: yaml.safe_load(value) for name, value in pairs or []}


def plan(notebooks: list[Path], profile: str, overrides: dict, notebooks_dir) -> tuple[dict, list[str]]:
    """The parameters of every notebook, and the notebooks that have no entry for ``profile``.

    Raises :class:`UsageError` for an unknown profile or parameter name, before anything runs.
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
        parameters[nb.stem] = {**params, **overrides}
        check_parameter_names(nb, parameters[nb.stem])
    return parameters, defaults


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
        help="override one parameter in every selected notebook (value parsed as YAML)",
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
    notebooks = [p for p in notebook_paths(notebooks_dir) if args.only is None or p.stem in args.only]
    if not notebooks:
        known = ", ".join(p.stem for p in notebook_paths(notebooks_dir))
        print(f"no notebooks to run; notebooks: {known}", file=sys.stderr)
        return 2
    try:
        parameters, defaults = plan(notebooks, args.profile, _parse_overrides(args.parameter), notebooks_dir)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    output.mkdir(parents=True, exist_ok=True)
    notebooks = longest_first(notebooks, _previous_seconds(output, args.profile, notebooks_dir))
    claim_files, failed, seconds = [], [], {}
    where = args.scheduler or (f"{args.workers} workers" if args.workers > 1 else "in process")
    with tqdm(total=len(notebooks), desc=f"notebooks ({args.profile}, {where})", unit="nb", file=sys.stdout) as bar:

        def on_done(stem, claims, wall):
            if isinstance(claims, BaseException):
                failed.append(stem)
                first = str(claims).splitlines()[0] if str(claims) else ""
                tqdm.write(f"FAILED {stem}: {type(claims).__name__}: {first}")
            else:
                claim_files.append(claims)
                seconds[stem] = round(wall, 1)
            bar.set_postfix_str(stem)
            bar.update()

        execute_all(notebooks, output, parameters, args.workers, args.scheduler, on_done)
    order = {nb.stem: i for i, nb in enumerate(notebook_paths(notebooks_dir))}
    claim_files.sort(key=lambda path: order.get(path.parent.name, len(order)))
    record = {"profile": args.profile, "workers": args.workers, "scheduler": args.scheduler, "seconds": seconds}
    (output / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    claims = collect(claim_files)
    (output / "claims.json").write_text(json.dumps(claims, indent=2) + "\n")
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
    print(f"\nexecuted notebooks and claims: {output}")
    if failed:
        print(f"failed notebooks: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
