"""Emulate other machines: re-execute a notebook under other numerical configurations.

Round-off differs between CPUs: OpenBLAS picks different kernels, NumPy dispatches different
SIMD loops, and BLAS thread counts change summation order. A committed output deserves exact
comparison only if it does not move under such changes. :func:`configurations` names the
emulations ``make test`` runs; :func:`output_differences` compares two executions' text
outputs cell by cell (what nbval compares: streams, ``text/plain`` and ``text/markdown``).

``python -m dpnb.portability notebooks/dppro.ipynb`` executes a notebook under every
configuration and lists the cells whose text differs from the committed outputs;
``python -m dpnb.portability exec CONFIG COMMAND ...`` runs a command (``make test`` runs nbval
this way) in configuration ``CONFIG``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

TEXT_MIMES = ("text/plain", "text/markdown", "text/latex")


def _dispatched_simd_features() -> str:
    """NumPy's runtime-dispatched SIMD targets that this CPU has (the ones that can be disabled)."""
    import numpy._core._multiarray_umath as umath

    return " ".join(f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f))


def configurations() -> dict[str, dict[str, str]]:
    """Environment overrides emulating other machines, by name.

    ``sandybridge-1thread``: OpenBLAS's Sandy Bridge (AVX, no FMA) kernels on one thread.
    ``prescott-2threads-nosimd``: OpenBLAS's SSE3 kernels on two threads, and NumPy's dispatched
    SIMD loops (AVX2/AVX-512 on x86-64, SVE/ASIMD extensions on arm64) switched off.
    On arm64 ``OPENBLAS_CORETYPE`` names are x86 kernels; OpenBLAS then keeps its own choice and
    only the thread count and SIMD settings differ.
    """
    return {
        "sandybridge-1thread": {
            "OPENBLAS_CORETYPE": "Sandybridge",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        },
        "prescott-2threads-nosimd": {
            "OPENBLAS_CORETYPE": "Prescott",
            "OPENBLAS_NUM_THREADS": "2",
            "OMP_NUM_THREADS": "2",
            "NPY_DISABLE_CPU_FEATURES": _dispatched_simd_features(),
        },
    }


@contextlib.contextmanager
def environment(values: dict):
    """This process's environment with ``values`` set (empty values leave a variable as it is), restored after."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update({k: v for k, v in values.items() if v})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def numerical_environment(name: str):
    """Set the environment of configuration ``name`` for kernels started inside the block."""
    configs = configurations()
    if name not in configs:
        raise ValueError(f"unknown configuration {name!r}; choose one of {', '.join(configs)}")
    with environment(configs[name]):
        yield configs[name]


def text_outputs(nb) -> list[tuple[int, str]]:
    """``(code-cell number, text)`` of every code cell's text outputs, papermill's injected cell left out.

    Code cells are numbered from 1 in order, as nbval and the execution counts do.
    """
    out, number = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code" or "injected-parameters" in cell.metadata.get("tags", []):
            continue
        number += 1
        parts, last_stream = [], None
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":  # a print may arrive in pieces: merge them, as nbval does
                if last_stream == o.get("name"):
                    parts[-1] += o.get("text", "")
                else:
                    parts.append(f"[{o.get('name')}] {o.get('text', '')}")
                last_stream = o.get("name")
                continue
            last_stream = None
            if o.get("output_type") in ("execute_result", "display_data"):
                parts.extend(f"[{m}] {o['data'][m]}" for m in TEXT_MIMES if m in o.get("data", {}))
            elif o.get("output_type") == "error":
                parts.append(f"[error] {o.get('ename')}: {o.get('evalue')}")
        out.append((number, "".join(parts)))
    return out


def output_differences(expected, actual, limit: int = 300) -> list[str]:
    """The code cells whose text outputs differ between two executed notebooks, with a snippet each."""
    a, b = text_outputs(expected), text_outputs(actual)
    if len(a) != len(b):
        return [f"{len(a)} code cells expected, {len(b)} executed"]
    problems = []
    for (number, want), (_, got) in zip(a, b):
        if want != got:
            lines = [(x, y) for x, y in zip(want.splitlines(), got.splitlines()) if x != y]
            first = lines[0] if lines else (want[-limit:], got[-limit:])
            problems.append(f"code cell {number}: expected {first[0][:limit]!r}, got {first[1][:limit]!r}")
    return problems


def _exec(argv) -> int:
    if len(argv) < 2:
        print("usage: python -m dpnb.portability exec CONFIG COMMAND [ARG ...]", file=sys.stderr)
        return 2
    with numerical_environment(argv[0]):
        os.execvp(argv[1], argv[1:])
    return 1  # not reached: execvp replaces this process


def main(argv=None) -> int:
    import nbformat

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["exec"]:
        return _exec(argv[1:])

    from .pairing import execute_notebook

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", help="committed notebooks/<stem>.ipynb files")
    parser.add_argument(
        "--config", action="append", choices=list(configurations()), help="configuration(s) to run (default: all)"
    )
    args = parser.parse_args(argv)
    failed = False
    for path in map(Path, args.notebooks):
        committed = nbformat.read(path, as_version=4)
        for name in args.config or configurations():
            with numerical_environment(name):
                executed = execute_notebook(nbformat.read(path, as_version=4), path.parent)
            problems = output_differences(committed, executed)
            failed |= bool(problems)
            verdict = f"{len(problems)} cell(s) differ" if problems else "identical text outputs"
            print(f"{path.stem} [{name}]: {verdict}")
            for p in problems:
                print(f"  {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
