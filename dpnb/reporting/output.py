"""Text output of a notebook cell in one piece, and the installed source lines a notebook quotes.

nbval compares a cell's outputs one by one; text printed in several writes can reach the
notebook as one stream output on one machine and as several on another (ipykernel flushes on a
timer). :func:`emit` writes a cell's text in a single call. :func:`source_lines` reads the lines
of an installed library's function that a notebook audits, so the notebook shows the code it
ran, not a copy.
"""

from __future__ import annotations

import inspect
import sys


def emit(*lines: str) -> None:
    """Write ``lines`` to stdout, one per line, in one call (one stream output on every machine)."""
    if not all(isinstance(line, str) for line in lines):
        raise TypeError("emit writes text: every line must be a str (format numbers first)")
    sys.stdout.write("\n".join(lines) + "\n")


def source_lines(obj, markers) -> list[str]:
    """The stripped source lines of ``obj`` that contain any of ``markers``, each with its continuation lines.

    A line ending in ``\\`` or ``(`` continues on the next one, which is included.

    Parameters
    ----------
    obj : function, method, class or module
        Anything ``inspect.getsource`` reads.
    markers : sequence of str
        Substrings to look for.
    """
    if isinstance(markers, str) or not all(isinstance(m, str) and m for m in markers):
        raise TypeError("markers must be a sequence of non-empty strings")
    lines = [line.strip() for line in inspect.getsource(obj).splitlines()]
    picked = []
    for i, line in enumerate(lines):
        if any(marker in line for marker in markers):
            picked.append(line)
            while picked[-1].endswith(("\\", "(")) and i + 1 < len(lines):
                i += 1
                picked.append(lines[i])
    return picked
