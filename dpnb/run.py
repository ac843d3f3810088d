"""``make run``: execute every notebook with papermill and gather the claims.

Each notebook ``notebooks/<stem>.ipynb`` is executed into ``<output>/<stem>.ipynb`` with its
``output_dir`` parameter pointed at ``<output>/<stem>``, where it writes ``claims.json``. The
claims of all notebooks are gathered into ``<output>/claims.json`` and summarised.
Papermill outputs never go back into ``notebooks/``.

Profiles: ``fast`` runs each notebook's own defaults (its ``parameters`` cell); any other
profile name is looked up in ``notebooks/profiles/<stem>.yml`` (a mapping
``<profile>: {parameter: value}``) and overrides only the parameters it lists.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .claims import VERDICTS, collect
from .report import markdown_table

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def notebook_paths(notebooks_dir=NOTEBOOKS) -> list[Path]:
    """The committed notebooks, in file-name order."""
    return sorted(Path(notebooks_dir).glob("*.ipynb"))


def profile_parameters(stem: str, profile: str, notebooks_dir=NOTEBOOKS) -> dict:
    """Parameters that ``profile`` overrides for notebook ``stem`` (empty for ``fast``)."""
    import yaml

    if not isinstance(profile, str) or not profile:
        raise ValueError("profile must be a non-empty name such as 'fast' or 'paper'")
    if profile == "fast":
        return {}
    path = Path(notebooks_dir) / "profiles" / f"{stem}.yml"
    profiles = yaml.safe_load(path.read_text()) if path.is_file() else {}
    if not isinstance(profiles, dict) or profile not in profiles:
        raise ValueError(f"notebook {stem!r} has no profile {profile!r}; add it to {path}")
    params = profiles[profile] or {}
    if not isinstance(params, dict):
        raise ValueError(f"profile {profile!r} in {path} must map parameter names to values")
    return params


def execute(notebook: Path, output: Path, parameters: dict) -> Path:
    """Run one notebook with papermill into ``output``; returns its claims file."""
    import papermill

    out_dir = output / notebook.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    params = {**parameters, "output_dir": str(out_dir.resolve())}
    papermill.execute_notebook(str(notebook), str(output / notebook.name), parameters=params,
                               cwd=str(notebook.parent), progress_bar=False, log_output=False,
                               kernel_name="python3")
    return out_dir / "claims.json"


def summarize(claims: list[dict]) -> str:
    """A Markdown table with one row per notebook: how many claims per verdict."""
    stems = list(dict.fromkeys(c["notebook"] for c in claims))
    rows = [{"notebook": s, **{v: sum(c["notebook"] == s and c["verdict"] == v for c in claims)
                               for v in VERDICTS}} for s in stems]
    rows.append({"notebook": "total", **{v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}})
    return markdown_table(rows, columns=["notebook", *VERDICTS])


def main(argv=None) -> int:
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="fast", help="fast (notebook defaults) or a profile name, e.g. paper")
    parser.add_argument("--output", default="results", help="folder for executed notebooks and claims")
    parser.add_argument("--only", nargs="*", default=None, help="notebook stems to run (default: all)")
    parser.add_argument("--notebooks", default=str(NOTEBOOKS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    output = Path(args.output).resolve()
    notebooks_dir = Path(args.notebooks)
    notebooks = [p for p in notebook_paths(notebooks_dir) if args.only is None or p.stem in args.only]
    if not notebooks:
        print("no notebooks to run", file=sys.stderr)
        return 2
    parameters = {nb.stem: profile_parameters(nb.stem, args.profile, notebooks_dir) for nb in notebooks}
    claim_files, failed = [], []
    with tqdm(notebooks, desc=f"notebooks ({args.profile})", unit="nb", file=sys.stdout) as bar:
        for nb in bar:
            bar.set_postfix_str(nb.stem)
            try:
                claim_files.append(execute(nb, output, parameters[nb.stem]))
            except Exception as exc:  # report every failing notebook, then fail
                failed.append(nb.stem)
                tqdm.write(f"FAILED {nb.stem}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    claims = collect(claim_files)
    (output / "claims.json").write_text(json.dumps(claims, indent=2) + "\n")
    print()
    print(summarize(claims) if claims else "no claims gathered")
    notable = [c for c in claims if c["verdict"] != "holds"]
    if notable:
        print()
        print(markdown_table(notable, columns=["notebook", "id", "source", "verdict", "measured"]))
    print(f"\nexecuted notebooks and claims: {output}")
    if failed:
        print(f"failed notebooks: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
