"""The sweep's record store: one ``result.json`` per grid point, the ``results.parquet`` table, atomic writes.

Every file here is replaced atomically (:func:`write_atomic`): a reader sees the old file or the
new one, never a part, so an interrupted sweep or run leaves no half-written record or table. A
record carries a checksum of its own content (:func:`write_record`), so one changed after it was
written -- edited by hand -- is told from one the sweep wrote; a record that cannot be used, or whose
checksum does not match, counts as not run (:func:`read_record`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

_UMASK = os.umask(0o022)  # read the process's umask (only possible by setting it) and restore it at once
os.umask(_UMASK)
ROOT = Path(__file__).resolve().parents[2]
#: The packages whose versions every record and table row carries.
VERSIONED = ("numpy", "scipy", "scikit-learn", "dpnb")
TABLE = "results.parquet"
LOG = "task.log"
RESULT = "result.json"
# Columns the sweep itself writes; no parameter or metric may take these names.
RESERVED = frozenset(
    {"task", "seed", "status", "error", "git_revision", "seconds", "key", "log", *(f"version.{p}" for p in VERSIONED)}
)


def _temporary(path: Path, content, write=None) -> str:
    """``content`` written to a new temporary file beside ``path`` (flushed to disk); its name. Nothing is left
    behind if the write fails."""
    import tempfile

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
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


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
    write_atomic_all({path: content}, write)


def write_atomic_all(files: dict, write=None) -> None:
    """Write several files as :func:`write_atomic` does, all of them before any replaces its old version.

    A failure while writing (a full disk) or a folder in a file's place leaves every file as it was; only a
    failing ``os.replace`` after the first (which needs no space) could leave some replaced. An ``OSError``
    names the file it was writing, not the temporary one.

    Parameters
    ----------
    files : dict
        Path -> content, replaced in this order.
    write : callable, optional
        As for :func:`write_atomic`, used for every file.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomic_all({folder / "a.txt": "1\\n", folder / "b.txt": "2\\n"})
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt', 'b.txt']
    """
    temporaries = []
    try:
        for path, content in files.items():
            path = Path(path)
            temporaries.append((_temporary(path, content, write), path))
        for _, path in temporaries:  # a folder in a file's place fails the first replace, not a later one
            if path.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        for temporary, path in temporaries:
            try:
                os.replace(temporary, path)
            except OSError as exc:
                if exc.errno is None:
                    raise
                raise type(exc)(exc.errno, exc.strerror, str(path)) from None  # name the file, not the temporary
    finally:
        for temporary, _ in temporaries:  # the ones not moved into place
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def record_checksum(record: dict) -> str:
    """SHA-256 (hex) of ``record`` without its ``checksum`` field, as canonical JSON (sorted keys, no spaces).

    The same after a JSON round trip (floats are written as their shortest exact repr).

    >>> record_checksum({"b": 1.5, "a": [1, None]}) == record_checksum({"a": [1, None], "b": 1.5, "checksum": "x"})
    True
    """
    body = {name: value for name, value in record.items() if name != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_record(path: Path, record: dict) -> None:
    """Write a point's record atomically with its ``checksum`` (set in ``record`` too), so a point interrupted
    while saving counts as not run and a record edited afterwards is detected."""
    record["checksum"] = record_checksum(record)
    write_atomic(path, json.dumps(record, indent=1) + "\n")


def versions() -> dict:
    """The installed versions of the packages a result depends on (:data:`VERSIONED`); None where missing."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in VERSIONED:
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out


def git_revision() -> str | None:
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
    of the wrong type, belongs to another point (``key``), or whose ``checksum`` does not match its
    content (changed after :func:`write_record` wrote it) counts as not run: None, and with ``warn``
    a line on stderr naming the file. A record with no ``checksum`` was written before records had one
    and is used as it is (folders swept then resume without running their points again).
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
        if not isinstance(record.get("checksum", ""), str):
            raise ValueError("wrong type or value of checksum")
        if "checksum" in record and record["checksum"] != record_checksum(record):
            raise ValueError("it was changed after the sweep wrote it: its checksum does not match its content")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        if warn:
            print(f"warning: {path} is unusable ({exc}); the point counts as not run", file=sys.stderr)
        return None
    return record


def finished(folder: Path, key: str | None = None, warn: bool = True) -> dict | None:
    """The usable record in ``folder`` if its point finished (status ``ok``), else None."""
    record = read_record(folder, key, warn)
    return record if record is not None and record["status"] == "ok" else None


def write_table(records: list[dict], output: Path):
    """Write ``output/results.parquet`` (atomically) and return it read back: one row per record, columns in a fixed
    order; mixed-type object columns become text."""
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
