"""Emulate other machines: re-execute a notebook under other numerical configurations.

Round-off differs between CPUs: OpenBLAS picks different kernels, NumPy dispatches different
SIMD loops, and BLAS thread counts change summation order. A committed output deserves exact
comparison only if it does not move under such changes. :func:`configurations` names the
emulations (``make test`` runs ``reordered`` and ``prescott-2threads-nosimd``);
:func:`output_differences` compares two executions' text outputs cell by cell (what nbval compares:
streams, ``text/plain`` and ``text/markdown``).

``python -m dpnb.tools.portability notebooks/dppro.ipynb`` executes a notebook under every
configuration and lists the cells whose text differs from the committed outputs;
``python -m dpnb.tools.portability exec CONFIG COMMAND ...`` runs a command in configuration ``CONFIG``;
``python -m dpnb.tools.portability kernelspec CONFIG DIR`` writes a Jupyter kernel ``dpnb-CONFIG`` whose
kernels start in that configuration (``make test`` runs nbval on it, in the same pytest session as the
unit tests).
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


REORDER_HOOK = Path(__file__).resolve().parent / "_reordered"


def _float_array(*arrays) -> bool:
    import numpy as np

    return all(isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in arrays)


def install_reordering() -> None:
    """Replace NumPy's and SciPy's reductions and decompositions by reordered equivalents.

    Each replacement computes the same mathematical result in another order: the reduced axes (a
    product's inner dimension, a decomposed matrix's rows and columns) are rotated by half their
    length, copied, and the permutation undone where the result carries it (eigenvectors,
    singular vectors). Results that are exact in floating point (sums of small integers, a
    diagonal matrix's eigenvalues) stay exact; everything else changes at round-off scale, as on a
    CPU that reduces in another order (AVX-512 against AVX2). A text output that changes under it
    sits on a knife edge. Only floating-point ``ndarray`` arguments in the default layouts are
    reordered; anything else is passed through. The ``@`` operator cannot be replaced: the
    configuration that installs this also switches OpenBLAS's kernels.
    """
    import numpy as np
    import scipy.linalg

    orig = {
        "sum": np.sum,
        "mean": np.mean,
        "norm": np.linalg.norm,
        "dot": np.dot,
        "matmul": np.matmul,
        "eigh": np.linalg.eigh,
        "eigvalsh": np.linalg.eigvalsh,
        "svd": np.linalg.svd,
        "solve": np.linalg.solve,
        "scipy_eigh": scipy.linalg.eigh,
    }

    def rolled(n):
        return np.roll(np.arange(n), n // 2)

    def permuted(a, axes):
        for axis in axes:
            a = np.take(a, rolled(a.shape[axis]), axis=axis)
        return a

    def reduced_axes(a, axis):
        if axis is None:
            return range(a.ndim)
        return [ax % a.ndim for ax in (axis if isinstance(axis, tuple) else (axis,))]

    def reduction(name):
        def reordered(a, axis=None, *args, **kwargs):
            if _float_array(a) and a.ndim and not args and "where" not in kwargs and "out" not in kwargs:
                return orig[name](permuted(a, reduced_axes(a, axis)), axis=axis, **kwargs)
            return orig[name](a, axis, *args, **kwargs)

        return reordered

    def norm(x, ord=None, axis=None, keepdims=False):
        if _float_array(x) and x.ndim:  # every norm is invariant under permuting the axes it reduces
            x = permuted(x, reduced_axes(x, axis))
        return orig["norm"](x, ord=ord, axis=axis, keepdims=keepdims)

    def product(name):
        def reordered(a, b, *args, **kwargs):
            if _float_array(a, b) and not args and not kwargs and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2:
                p = rolled(a.shape[-1])
                return orig[name](a[..., p], b[p])
            return orig[name](a, b, *args, **kwargs)

        return reordered

    def square(a):
        return a.ndim == 2 and a.shape[0] == a.shape[1] and _float_array(a)

    eigh_result, svd_result = type(orig["eigh"](np.eye(1))), type(orig["svd"](np.eye(1)))

    def eigh(a, UPLO="L"):
        if not square(a):
            return orig["eigh"](a, UPLO)
        p = rolled(a.shape[0])
        w, v = orig["eigh"](a[np.ix_(p, p)], UPLO)
        return eigh_result(w, v[np.argsort(p)])

    def eigvalsh(a, UPLO="L"):
        if not square(a):
            return orig["eigvalsh"](a, UPLO)
        p = rolled(a.shape[0])
        return orig["eigvalsh"](a[np.ix_(p, p)], UPLO)

    def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
        if not _float_array(a) or a.ndim != 2 or hermitian:
            return orig["svd"](a, full_matrices, compute_uv, hermitian)
        p, q = rolled(a.shape[0]), rolled(a.shape[1])
        out = orig["svd"](a[np.ix_(p, q)], full_matrices, compute_uv)
        if not compute_uv:
            return out
        u, s, vh = out
        return svd_result(u[np.argsort(p)], s, vh[:, np.argsort(q)])

    def solve(a, b):
        if not square(a) or not _float_array(b) or b.ndim > 2:
            return orig["solve"](a, b)
        p = rolled(a.shape[0])
        return orig["solve"](a[p], b[p])

    def scipy_eigh(a, b=None, *args, **kwargs):
        if b is not None or args or not square(np.asarray(a)):
            return orig["scipy_eigh"](a, b, *args, **kwargs)
        p = rolled(a.shape[0])
        out = orig["scipy_eigh"](a[np.ix_(p, p)], **kwargs)
        if kwargs.get("eigvals_only"):
            return out
        w, v = out
        return w, v[np.argsort(p)]

    np.sum, np.mean = reduction("sum"), reduction("mean")
    np.linalg.norm, np.dot, np.matmul = norm, product("dot"), product("matmul")
    np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.solve = eigh, eigvalsh, svd, solve
    scipy.linalg.eigh = scipy_eigh


def configurations() -> dict[str, dict[str, str]]:
    """Environment overrides emulating other machines, by name.

    ``sandybridge-1thread``: OpenBLAS's Sandy Bridge (AVX, no FMA) kernels on one thread.
    ``prescott-2threads-nosimd``: OpenBLAS's SSE3 kernels on two threads, and NumPy's dispatched
    SIMD loops (AVX2/AVX-512 on x86-64, SVE/ASIMD extensions on arm64) switched off. Every chapter
    limits BLAS to one thread in its imports cell (``threadpool_limits(1)``, checked by
    ``tests/test_notebooks.py``), so no output depends on the machine's core count; what runs before
    the limit (the imports) runs on the kernel's two threads. Its idle BLAS
    thread sleeps after ``2^4`` cycles (``OPENBLAS_THREAD_TIMEOUT=4``, OpenBLAS's least) instead of
    spinning for ``2^28`` (about a tenth of a second) after every call: ``make test`` runs this kernel
    beside other busy processes on as many cores as threads, where a spinning thread takes the core
    that the other thread, or another test, needs. How the work is split between the two threads,
    and so the round-off, does not depend on it.
    ``reordered``: every Python process starts with :func:`install_reordering`, so reductions and
    decompositions run in another order, and OpenBLAS runs its Piledriver kernels (AVX with FMA3,
    blocked unlike the host's, Sandy Bridge's or Prescott's) on one thread. The two emulated CPUs
    can only take SIMD away; this one changes round-off the way a wider-vector CPU does (another
    order of the same operations), so a knife edge is caught on any host.
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
            "OPENBLAS_THREAD_TIMEOUT": "4",
            "NPY_DISABLE_CPU_FEATURES": _dispatched_simd_features(),
        },
        "reordered": {
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REORDER_HOOK), os.environ.get("PYTHONPATH", "")])),
            "OPENBLAS_CORETYPE": "Piledriver",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
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


def write_kernelspec(name: str, directory) -> Path:
    """Write the kernel ``dpnb-<name>`` under ``directory/kernels``: this Python, started in configuration ``name``.

    Put ``directory`` on ``JUPYTER_PATH`` and ask for the kernel by name (nbval's ``--nbval-kernel-name``): only
    the kernels get the configuration's environment, not the process that starts them. Returns the kernel's folder.
    """
    import json

    configs = configurations()
    if name not in configs:
        raise ValueError(f"unknown configuration {name!r}; choose one of {', '.join(configs)}")
    folder = Path(directory) / "kernels" / f"dpnb-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python 3 (dpnb, emulated {name})",
        "language": "python",
        "env": {key: value for key, value in configs[name].items() if value},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return folder


def _exec(argv) -> int:
    if len(argv) < 2:
        print("usage: python -m dpnb.tools.portability exec CONFIG COMMAND [ARG ...]", file=sys.stderr)
        return 2
    with numerical_environment(argv[0]):
        os.execvp(argv[1], argv[1:])
    return 1  # not reached: execvp replaces this process


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["exec"]:
        return _exec(argv[1:])
    if argv[:1] == ["kernelspec"]:
        if len(argv) != 3 or argv[1] not in configurations():
            names = ", ".join(configurations())
            print(f"usage: python -m dpnb.tools.portability kernelspec CONFIG DIR (CONFIG: {names})", file=sys.stderr)
            return 2
        write_kernelspec(argv[1], argv[2])
        return 0

    import nbformat  # only here: the two subcommands above start without it (about 2 s of imports)

    from dpnb.tools.executor import execute_notebook

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
                executed = execute_notebook(nbformat.read(path, as_version=4), cwd=path.parent)
            problems = output_differences(committed, executed)
            failed |= bool(problems)
            verdict = f"{len(problems)} cell(s) differ" if problems else "identical text outputs"
            print(f"{path.stem} [{name}]: {verdict}")
            for p in problems:
                print(f"  {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
