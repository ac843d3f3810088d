"""Checks for a notebook's ``parameters`` cell, run in the one-line cell right after it.

Every parameter is written ``name: type = value  # range: what it is``. The range, where there
is one, opens the comment and ends at the first colon:

- ``in [0, inf)``, ``in (0, 1)``: an interval (``inf``, ``-inf`` and any Python number as ends);
- ``one of digits, mnist_subset``: the allowed strings;
- for a ``list[...]`` parameter the range applies to each value, and ``, 2+ values`` or
  ``, 2+ increasing`` after it asks for at least that many (strictly increasing) values.

A ``str`` parameter is never empty. So the range is declared where the parameter is, papermill
shows it in ``papermill --help-notebook``, and :func:`check_parameters` checks types, ranges and
unknown names (a misspelt ``-p epsilo 0.5`` would otherwise be silently ignored) in one call,
naming the parameter. Checks that tie two parameters together follow that call in the same cell.

Runners use the same cells before any kernel starts: :func:`read_value` reads a command-line
value, :func:`coerce` converts it to the parameter's annotated type, and
:func:`check_notebook_parameters` runs a notebook's parameters cell and the validation cell after
it on the values a run would inject, so a bad value is refused before anything runs.
"""

from __future__ import annotations

import ast
import io
import linecache
import math
import numbers
import re
import tokenize
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import yaml

# Names IPython puts in every user namespace.
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def _describe(annotation) -> str:
    return getattr(annotation, "__name__", None) if isinstance(annotation, type) else str(annotation)


@dataclass(frozen=True)
class Range:
    """What a parameter's comment allows: an interval, a set of strings, a list's least length."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    min_values: int = 0
    increasing: bool = False
    text: str = ""

    def check(self, name: str, value) -> None:
        """Raise ValueError, naming ``name`` and this range, where ``value`` lies outside it."""
        if value is None:
            return
        values = value if isinstance(value, (list, tuple)) else None
        if values is not None:
            if len(values) < self.min_values:
                raise ValueError(
                    f"parameter {name} must list at least {self.min_values} value(s) ({self.text}), got {value!r}"
                )
            if self.increasing and any(b <= a for a, b in zip(values, values[1:])):
                raise ValueError(f"parameter {name} must be strictly increasing ({self.text}), got {value!r}")
        for item in values if values is not None else [value]:
            if isinstance(item, str):
                if not item:
                    raise ValueError(f"parameter {name} must not be empty")
                if self.choices is not None and item not in self.choices:
                    raise ValueError(f"parameter {name} must be {self.text}, got {item!r}")
            elif isinstance(item, numbers.Real) and not isinstance(item, bool) and self.choices is None:
                if math.isnan(item) or not self._inside(item):
                    raise ValueError(f"parameter {name} must be {self.text}, got {item!r}")

    def _inside(self, x: float) -> bool:
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above and below


_INTERVAL = re.compile(r"in\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])")
_COUNT = re.compile(r",\s*(\d+)\+\s*(values|increasing)")


def _number(text: str, comment: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"cannot read the range end {text!r} in {comment!r}; write a number, inf or -inf") from None


def parse_range(comment: str) -> Range | None:
    """The :class:`Range` a parameter's comment opens with (None where it opens with none).

    >>> parse_range("in (0, inf), 2+ increasing: privacy budgets").increasing
    True
    """
    text = comment.lstrip("#").strip()
    if not (text.startswith("in ") or text.startswith("in[") or text.startswith("in(") or text.startswith("one of ")):
        return None
    spec, colon, _ = text.partition(":")
    if not colon:
        raise ValueError(f"a parameter range ends with a colon before the help text: {comment!r}")
    spec = spec.strip()
    count = _COUNT.search(spec)
    head = spec[: count.start()].strip() if count else spec
    if count and spec[count.end() :].strip():
        raise ValueError(f"cannot read the parameter range {spec!r}")
    fields: dict = {"text": spec}
    if count:
        fields.update(min_values=int(count.group(1)), increasing=count.group(2) == "increasing")
    if head.startswith("one of "):
        choices = tuple(c.strip() for c in head[len("one of ") :].split(","))
        if not all(choices):
            raise ValueError(f"cannot read the choices in {spec!r}")
        return Range(choices=choices, **fields)
    interval = _INTERVAL.fullmatch(head)
    if interval is None:
        raise ValueError(f"cannot read the parameter range {spec!r}; write e.g. 'in [1, inf)' or 'one of a, b'")
    low, high = _number(interval.group(2), comment), _number(interval.group(3), comment)
    return Range(
        low=low,
        high=high,
        low_open=interval.group(1) == "(",
        high_open=interval.group(4) == ")",
        **fields,
    )


def parameter_ranges(source: str) -> dict[str, Range | None]:
    """Each parameter the cell ``source`` declares -> the :class:`Range` its comment opens with."""
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    ranges = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            comment = comments.get(node.end_lineno)
            ranges[node.target.id] = parse_range(comment) if comment else None
    return ranges


_DECLARATION = re.compile(r"^\w+\s*:[^=\n]+=", re.M)


def _cached_cells() -> list[str]:
    """Sources of the cells IPython has compiled, oldest first, from its compiler's cell cache.

    A kernel asked not to store history (nbval executes every cell with ``store_history=False``)
    leaves ``In`` empty, but IPython still caches each cell's source in :mod:`linecache` under a
    per-cell file name, which its compiler records.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return []
    shell = get_ipython()
    cells = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(cells, dict):
        return []
    return ["".join(entry[2]) for name, entry in list(linecache.cache.items()) if name in cells and len(entry) > 2]


def _parameters_source(namespace: dict) -> str | None:
    """The parameters cell's source: the last cell run that declares annotated names.

    Read from IPython's input history (``In``), or, where the kernel kept none, from the cells its
    compiler cached (:func:`_cached_cells`).
    """
    history = namespace.get("In")
    for sources in (history if isinstance(history, list) else [], _cached_cells()):
        for source in reversed(sources):
            if isinstance(source, str) and _DECLARATION.search(source) and "check_parameters(" not in source:
                return source
    return None


def check_parameters(namespace: dict, source: str | None = None) -> None:
    """Check a notebook's parameters against their annotations and ranges; refuse unknown names.

    Parameters
    ----------
    namespace : dict
        The notebook's ``globals()``, right after the parameters cell (and papermill's injected
        cell). Module-level annotations are in ``namespace["__annotations__"]``.
    source : str, optional
        The parameters cell's source, for the ranges in its comments. By default it is read from
        IPython's input history (``In``), where a notebook's cells are.

    Raises
    ------
    TypeError
        A parameter's value does not have its annotated type (``int`` accepts integers only,
        ``float`` any real number).
    ValueError
        The parameters cell declares nothing, a name was injected that it does not declare, a
        value lies outside its declared range, or the cell's source cannot be found.
    """
    if not isinstance(namespace, dict):
        raise TypeError(f"namespace must be the notebook's globals() dict, got {type(namespace).__name__}")
    annotations = namespace.get("__annotations__") or {}
    if not annotations:
        raise ValueError("the parameters cell declares no annotated parameters; write `name: type = value  # help`")
    unknown = sorted(
        name
        for name, value in namespace.items()
        if not name.startswith("_")
        and name not in annotations
        and name not in _IPYTHON_NAMES
        and not isinstance(value, types.ModuleType)
        and not callable(value)
    )
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; this notebook's parameters are: {', '.join(annotations)}"
        )
    for name, annotation in annotations.items():
        if name not in namespace:
            raise ValueError(f"parameter {name} is annotated but has no value; give it a default")
        if not _matches(namespace[name], annotation):
            raise TypeError(f"parameter {name} must be {_describe(annotation)}, got {namespace[name]!r}")
    source = source if source is not None else _parameters_source(namespace)
    if source is None:
        raise ValueError(
            "cannot find the parameters cell's source (no IPython input history); "
            "pass it: check_parameters(globals(), source)"
        )
    ranges = parameter_ranges(source)
    for name in annotations:
        if name not in ranges:
            raise ValueError(f"parameter {name} is not declared in the parameters cell's source")
        if ranges[name] is not None:
            ranges[name].check(name, namespace[name])
        elif isinstance(namespace[name], str) and not namespace[name]:
            raise ValueError(f"parameter {name} must not be empty")


class _Loader(yaml.SafeLoader):
    """YAML that reads ``1e-5`` and ``inf`` as floats, as Python does (YAML 1.1 needs ``1.0e-5`` and ``.inf``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+|inf|Inf|INF)$"),
    list("-+0123456789.iI"),
)


def read_value(text: str):
    """A value from the command line or a profile file: YAML, except that ``1e-5`` and ``inf`` are floats.

    Raises
    ------
    ValueError
        ``text`` is not valid YAML (an unclosed bracket or quote).
    """
    if not isinstance(text, str):
        raise TypeError(f"a parameter value to read must be text, got {type(text).__name__}")
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        raise ValueError(f"cannot read {text!r}; quote strings with commas, brackets or colons") from None


def read_yaml(text: str):
    """A YAML document read like :func:`read_value` (profile and grid files)."""
    return yaml.load(text, Loader=_Loader)


class _Mismatch(Exception):
    """``value`` cannot be converted to the annotation without losing something."""


def _convert(value, annotation, *, strict: bool = False):
    """``value`` as the annotated type; :class:`_Mismatch` where that would lose something.

    ``strict`` (a value already in the notebook) converts only what needs no reading: an integer
    where ``float`` is asked. Otherwise (a value from the command line) also a whole float where
    ``int`` is asked, a numeric string where ``float`` is, and ``"None"`` where None is allowed.
    """
    origin = typing.get_origin(annotation)
    is_none = value is None or (not strict and value == "None")
    if annotation is typing.Any:
        return value
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if type(None) in options and is_none:
            return None
        for option in options:
            try:
                return _convert(value, option, strict=strict)
            except _Mismatch:
                continue
        raise _Mismatch
    if annotation is None or annotation is type(None):
        if is_none:
            return None
        raise _Mismatch
    if origin in (list, tuple):  # papermill injects lists (it writes a tuple as a string)
        (inner, *_) = typing.get_args(annotation) or (typing.Any,)
        if not isinstance(value, (list, tuple)):
            raise _Mismatch
        return [_convert(v, inner, strict=strict) for v in value]
    if origin is dict:
        if isinstance(value, dict):
            return value
        raise _Mismatch
    if isinstance(value, bool) or annotation is bool:
        if annotation is bool and isinstance(value, bool):
            return value
        raise _Mismatch
    if annotation is int:
        if isinstance(value, numbers.Integral):
            return int(value)
        if not strict and isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
            return int(value)  # -p n_samples 1e6
        raise _Mismatch
    if annotation is float:
        if isinstance(value, numbers.Real):
            return float(value)
        if not strict and isinstance(value, str):
            try:
                return float(value)  # nan, -inf, 1E+5
            except ValueError:
                raise _Mismatch from None
        raise _Mismatch
    if isinstance(annotation, type):
        if isinstance(value, annotation):
            return value
        raise _Mismatch
    raise TypeError(
        f"unsupported parameter annotation {annotation!r}; use int, float, str, bool, list[...] or X | None"
    )


def _matches(value, annotation) -> bool:
    """Whether a notebook's ``value`` has its annotated type (``float`` accepts integers too)."""
    try:
        _convert(value, annotation, strict=True)
    except _Mismatch:
        return False
    return True


def coerce(value, annotation, name: str, text: str | None = None):
    """``value`` converted to the parameter's annotated type, where nothing is lost.

    Integers are floats where ``float`` is asked (``-p epsilon 1``), whole floats are integers
    where ``int`` is asked (``-p n_samples 1e6``), ``"None"`` is None where the annotation allows
    it, and where ``str`` is asked the command-line ``text`` is taken as written (``-p name 007``).

    Parameters
    ----------
    value
        The value as read (:func:`read_value`).
    annotation
        The parameter's annotation in the parameters cell, e.g. ``float`` or ``list[int]``.
    name : str
        The parameter's name, for the message.
    text : str, optional
        The value as typed on the command line.

    Raises
    ------
    TypeError
        The value does not have, and cannot be converted to, the annotated type.
    """
    try:
        return _convert(value, annotation)
    except _Mismatch:
        pass
    if text is not None:
        try:
            return _convert(text, annotation)
        except _Mismatch:
            pass
    shown = text if text is not None else repr(value)
    raise TypeError(f"parameter {name} must be {_describe(annotation)}, got {shown}")


def _parameter_cells(notebook) -> tuple[str | None, str | None]:
    """The sources of a notebook's parameters cell and of the validation cell right after it (None if absent)."""
    import nbformat

    cells = [c for c in nbformat.read(str(notebook), as_version=4).cells if c.cell_type == "code"]
    for i, cell in enumerate(cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            after = cells[i + 1].source if i + 1 < len(cells) else ""
            return cell.source, after if "check_parameters(globals())" in after else None
    return None, None


def _run_parameters_cell(notebook) -> tuple[dict, str | None, str | None]:
    """The namespace after a notebook's parameters cell ran (empty without one), that cell and its validation cell."""
    source, validation = _parameter_cells(notebook)
    namespace: dict = {"__name__": "__main__"}
    if source is not None:
        exec(compile(source, f"{notebook} (parameters cell)", "exec", dont_inherit=True), namespace)
    return namespace, source, validation


def parameter_names(notebook) -> list[str]:
    """The names a notebook's parameters cell declares, in its order (annotated ones and plain assignments).

    Papermill's own reader skips a parameter whose annotation it cannot parse (``str | None``); this
    list does not.
    """
    import papermill

    namespace, _, _ = _run_parameters_cell(notebook)
    return list(dict.fromkeys([*(namespace.get("__annotations__") or {}), *papermill.inspect_notebook(str(notebook))]))


def check_notebook_parameters(notebook, values: dict, texts: dict | None = None) -> dict:
    """The values a run would inject into ``notebook``, converted and checked without starting a kernel.

    Each value is converted to its annotation in the notebook's parameters cell (:func:`coerce`);
    then the parameters cell and the validation cell right after it (the notebook contract: it
    starts with ``check_parameters(globals())`` and checks ranges) run in a fresh namespace with
    the values injected, as papermill would inject them.

    Parameters
    ----------
    notebook : str or Path
        The ``.ipynb`` file.
    values : dict
        Parameter name -> value as read (:func:`read_value`).
    texts : dict, optional
        Parameter name -> the value as typed on the command line, for ``str`` parameters.

    Returns
    -------
    dict
        ``values`` converted to their annotated types.

    Raises
    ------
    TypeError, ValueError
        What the conversion or the validation cell raised; the message names the parameter.
    """
    namespace, source, validation = _run_parameters_cell(notebook)
    annotations = namespace.get("__annotations__") or {}
    texts = texts or {}
    out = {
        name: coerce(value, annotations[name], name, texts.get(name)) if name in annotations else value
        for name, value in values.items()
    }
    if validation is not None:
        namespace.update(out)
        namespace["In"] = ["", source]  # the parameters cell, where check_parameters reads the ranges
        exec(compile(validation, f"{notebook} (validation cell)", "exec", dont_inherit=True), namespace)
    return out


REPOSITORY = Path(__file__).resolve().parents[2]


def output_path(output_dir):
    """The folder for a notebook's outputs: a relative ``output_dir`` is taken from the repository root.

    So ``output_dir = "results/dppro"`` names the same folder whether the notebook is run by
    ``make run``, by nbval from ``notebooks/``, or by papermill launched anywhere.
    """
    if not isinstance(output_dir, (str, Path)):
        raise TypeError(f"output_dir must be a path string, got {type(output_dir).__name__}")
    path = Path(output_dir).expanduser()
    return path if path.is_absolute() else REPOSITORY / path
