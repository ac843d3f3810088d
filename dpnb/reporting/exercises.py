"""Answer checks for the exercises: the student edition checks an answer without showing it.

An exercise with a checkable answer (a number, or a list of numbers) records it in the chapter's
solution cell with :func:`answer`, which prints the answer's *fingerprint*: a hash of the value
rounded to the digits the exercise asks for. ``make student`` removes the solution cell and puts
in its place a check cell, one :func:`check` line per answer, built from those printed lines; the
student replaces ``None`` with their own value and runs it. The fingerprint does not show the
answer (it can only be confirmed by guessing it, as with any checker).

Examples
--------
>>> answer("demo-1", 20, digits=2)
answer demo-1: 4b51fd5f4989aa37 (2 significant digits)
>>> check("demo-1", 20.4, "4b51fd5f4989aa37", digits=2)
demo-1: correct
>>> check("demo-1", 21, "4b51fd5f4989aa37", digits=2)
demo-1: not yet (compared at 2 significant digits)
"""

from __future__ import annotations

import hashlib
import numbers
import re

import numpy as np

ANSWER_LINE = re.compile(
    r"^answer (?P<key>[\w.-]+): (?P<fingerprint>[0-9a-f]{16}) \((?P<digits>\d+) significant digits\)$"
)


def _canonical(value, digits: int) -> str:
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or not 1 <= digits <= 15:
        raise ValueError(f"digits must be a whole number from 1 to 15, got {digits!r}")
    values = np.asarray(value, dtype=float).ravel() if not isinstance(value, str) else None
    if values is None or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"an answer must be a finite number or a non-empty list of them, got {value!r}")
    return ",".join(f"{v + 0.0:.{digits - 1}e}" for v in values)


def fingerprint(value, digits: int) -> str:
    """16 hex digits of SHA-256 over ``value`` rounded to ``digits`` significant digits (lists: each entry)."""
    return hashlib.sha256(_canonical(value, digits).encode()).hexdigest()[:16]


def answer(key: str, value, *, digits: int) -> None:
    """Print the fingerprint line of an exercise's answer (in a solution cell; ``make student`` reads it)."""
    if not isinstance(key, str) or not re.fullmatch(r"[\w.-]+", key):
        raise ValueError(f"key must be letters, digits, '.', '_' or '-', like 'dppro-3', got {key!r}")
    print(f"answer {key}: {fingerprint(value, digits)} ({digits} significant digits)")


def check(key: str, value, expected: str, *, digits: int) -> None:
    """Print whether ``value`` is the answer whose fingerprint is ``expected`` (``None``: not answered yet)."""
    if value is None:
        print(f"{key}: no answer yet (replace None with yours)")
    elif fingerprint(value, digits) == expected:
        print(f"{key}: correct")
    else:
        print(f"{key}: not yet (compared at {digits} significant digits)")


def check_cell(outputs_text: str) -> str | None:
    """The student's check cell for the answer lines printed in ``outputs_text``, or None if there are none."""
    found = [m.groupdict() for line in outputs_text.splitlines() if (m := ANSWER_LINE.match(line.strip()))]
    if not found:
        return None
    lines = [
        "# Check your answers: replace each None with your value, then run this cell.",
        "from dpnb.reporting.exercises import check",
        "",
    ]
    for a in found:
        lines.append(f'check("{a["key"]}", None, "{a["fingerprint"]}", digits={a["digits"]})')
    return "\n".join(lines)
