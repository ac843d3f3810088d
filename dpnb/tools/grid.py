"""Grids of a sweep: parameter values x seeds, checked, expanded and keyed; read from the command line or YAML."""

from __future__ import annotations

import hashlib
import itertools
import json
import numbers
from pathlib import Path

import yaml

from dpnb.reporting.parameters import read_value, read_yaml
from dpnb.tools.records import RESERVED


def plain(value, what: str):
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
        return [plain(v, what) for v in value]
    raise TypeError(f"{what} is a {type(value).__name__}; use numbers, strings, booleans, None or lists of them")


def scalars(metrics, what: str) -> dict:
    """Check that ``metrics`` maps names to scalars; returns it with numpy scalars unwrapped."""
    if not isinstance(metrics, dict) or not all(isinstance(k, str) for k in metrics):
        raise TypeError(f"{what} must be a dict mapping metric names to scalars, got {type(metrics).__name__}")
    out = {k: plain(v, f"metric {k!r} in {what}") for k, v in metrics.items()}
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
        values = plain(list(values) if isinstance(values, (list, tuple, range)) else [values], f"grid value of {name}")
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


def read_yaml_file(path):
    """The YAML document in the file ``path``, read as :func:`dpnb.reporting.parameters.read_yaml` reads values.

    Raises
    ------
    ValueError
        The file is not valid YAML or holds a tag that plain data has no use for (``!!python/object/...``,
        which is never constructed): one line naming the file, the line and the problem.
    """
    try:
        return read_yaml(Path(path).read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{path}, line {mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: {problem}; write plain YAML (mappings, lists, numbers, strings)") from None


def read_grid(path) -> dict:
    """A grid from a YAML file mapping parameter names to lists of values (:func:`read_yaml_file`).

    Raises
    ------
    ValueError
        The file is not valid YAML or holds a tag; the message names the file and the line.
    TypeError
        The document is not a mapping.
    """
    grid = read_yaml_file(path)
    if not isinstance(grid, dict):
        raise TypeError(f"{path} must map parameter names to lists of values")
    return grid
