"""Checks for a notebook's ``parameters`` cell, run in the cell right after it.

Every parameter is written ``name: type = value  # what it is``. Papermill shows the type and
the comment in ``papermill --help-notebook``; :func:`check_parameters` then checks, before
anything runs, that each value has its annotated type and that no name was injected that the
notebook does not know (a misspelt ``-p epsilo 0.5`` would otherwise be silently ignored).
Range checks follow in the same cell with :mod:`dpnb.validation`, naming the parameter.
"""

from __future__ import annotations

import numbers
import types
import typing
from pathlib import Path

# Names IPython puts in every user namespace.
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def _matches(value, annotation) -> bool:
    origin = typing.get_origin(annotation)
    if annotation is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in typing.get_args(annotation))
    if annotation is None or annotation is type(None):
        return value is None
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(annotation) or (typing.Any,)
        return isinstance(value, (list, tuple)) and all(_matches(v, inner) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    raise TypeError(
        f"unsupported parameter annotation {annotation!r}; use int, float, str, bool, list[...] or X | None"
    )


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
