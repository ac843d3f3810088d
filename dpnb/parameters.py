"""Checks for a notebook's ``parameters`` cell, run in the cell right after it.

Every parameter is written ``name: type = value  # what it is``. Papermill shows the type and
the comment in ``papermill --help-notebook``; :func:`check_parameters` then checks, before
anything runs, that each value has its annotated type and that no name was injected that the
notebook does not know (a misspelt ``-p epsilo 0.5`` would otherwise be silently ignored).
Range checks follow in the same cell with :mod:`dpnb.validation`, naming the parameter.

Runners use the same cells before any kernel starts: :func:`read_value` reads a command-line
value, :func:`coerce` converts it to the parameter's annotated type, and
:func:`check_notebook_parameters` runs a notebook's parameters cell and the validation cell after
it on the values a run would inject, so a bad value is refused before anything runs.
"""

from __future__ import annotations

import math
import numbers
import re
import types
import typing
from pathlib import Path

import yaml

# Names IPython puts in every user namespace.
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def _describe(annotation) -> str:
    return getattr(annotation, "__name__", None) if isinstance(annotation, type) else str(annotation)


def check_parameters(namespace: dict) -> None:
    """Check a notebook's parameters against their annotations; refuse unknown names.

    Parameters
    ----------
    namespace : dict
        The notebook's ``globals()``, right after the parameters cell (and papermill's injected
        cell). Module-level annotations are in ``namespace["__annotations__"]``.

    Raises
    ------
    TypeError
        A parameter's value does not have its annotated type (``int`` accepts integers only,
        ``float`` any real number).
    ValueError
        The parameters cell declares nothing, or a name was injected that it does not declare.
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


def _run_parameters_cell(notebook) -> tuple[dict, str | None]:
    """The namespace after a notebook's parameters cell ran (empty if it has none), and its validation cell."""
    source, validation = _parameter_cells(notebook)
    namespace: dict = {"__name__": "__main__"}
    if source is not None:
        exec(compile(source, f"{notebook} (parameters cell)", "exec", dont_inherit=True), namespace)
    return namespace, validation


def parameter_names(notebook) -> list[str]:
    """The names a notebook's parameters cell declares, in its order (annotated ones and plain assignments).

    Papermill's own reader skips a parameter whose annotation it cannot parse (``str | None``); this
    list does not.
    """
    import papermill

    namespace, _ = _run_parameters_cell(notebook)
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
    namespace, validation = _run_parameters_cell(notebook)
    annotations = namespace.get("__annotations__") or {}
    texts = texts or {}
    out = {
        name: coerce(value, annotations[name], name, texts.get(name)) if name in annotations else value
        for name, value in values.items()
    }
    if validation is not None:
        namespace.update(out)
        exec(compile(validation, f"{notebook} (validation cell)", "exec", dont_inherit=True), namespace)
    return out


REPOSITORY = Path(__file__).resolve().parent.parent


def output_path(output_dir):
    """The folder for a notebook's outputs: a relative ``output_dir`` is taken from the repository root.

    So ``output_dir = "results/dppro"`` names the same folder whether the notebook is run by
    ``make run``, by nbval from ``notebooks/``, or by papermill launched anywhere.
    """
    if not isinstance(output_dir, (str, Path)):
        raise TypeError(f"output_dir must be a path string, got {type(output_dir).__name__}")
    path = Path(output_dir).expanduser()
    return path if path.is_absolute() else REPOSITORY / path
