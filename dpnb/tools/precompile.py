"""Compile the package's numba kernels into their on-disk cache once, before many processes need them at once.

The compiled passes (``@numba.njit(cache=True)`` in :mod:`dpnb.ground.compiled`, :mod:`dpnb.numerics.bingham` and
:mod:`dpnb.papers.ron_gauss`) are compiled on their first call for that call's argument types (one *specialization*
per combination of dtypes and memory layouts), then saved next to their source (``__pycache__``), from where later
processes load them in milliseconds. A fresh checkout has no such cache, and ``make test`` starts many processes at
once (two pytest workers, their notebook kernels, Dask workers, the runner's subprocesses): each compiled the kernels
it called before another had saved them, and since numba rewrites a kernel's whole cache index on every save,
concurrent saves also lose each other's entries. On this project's 2-core machine that cost about 120 CPU seconds
per fresh ``make test``; compiling each specialization once, here, costs about 30.

``python -m dpnb.tools.precompile [--jobs N]`` compiles every specialization listed in ``kernel_signatures.txt``
(beside this module: one ``module.kernel<TAB>argument types`` per line), split over ``N`` processes with all of a
kernel's specializations in one of them (so that no two processes write one index). A listed signature that its
kernel no longer accepts is reported and skipped: it costs only the time it would have saved. Where the cache is
current, the whole run takes about 2 s. ``python -m dpnb.tools.precompile --record`` rewrites the list from the
caches of the package's kernels: run it after ``make test`` when a kernel, or the types its callers pass, change.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import importlib.util
import multiprocessing
import pkgutil
import sys
from pathlib import Path

SIGNATURES = Path(__file__).with_name("kernel_signatures.txt")
HEADER = (
    "# The numba kernels' specializations that make test compiles: python -m dpnb.tools.precompile compiles them\n"
    "# into the on-disk cache first; python -m dpnb.tools.precompile --record rewrites this file from that cache.\n"
)


def parse_signature(text: str) -> tuple:
    """The argument types written as ``repr`` prints a numba signature, e.g. ``(Array(float64, 1, 'C', False,
    aligned=True), int64)``, evaluated with numba's type names only (no builtins).

    Examples
    --------
    >>> parse_signature("(int64, bool)")
    (int64, bool)
    """
    from numba.core import types

    names = {k: v for k, v in vars(types).items() if not k.startswith("_")} | {"bool": types.boolean}
    try:
        value = eval(text, {"__builtins__": {}}, names)  # noqa: S307 - numba type names only, no builtins
    except Exception as exc:
        raise ValueError(f"not a numba signature: {text!r} ({type(exc).__name__}: {exc})") from None
    value = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(t, types.Type) for t in value):
        raise ValueError(f"not a numba signature: {text!r}")
    return value


def read_signatures(path) -> dict[str, list[str]]:
    """``module.kernel`` -> its listed signatures, in file order (``#`` lines and blank lines skipped).

    Raises ``ValueError`` naming the line for a line that is not ``name<TAB>signature`` or whose name has no module.
    """
    out: dict[str, list[str]] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, signature = line.partition("\t")
        if not tab or "." not in name or not signature.strip():
            raise ValueError(f"{path}:{number}: expected 'module.kernel<TAB>signature', got {line!r}")
        out.setdefault(name, []).append(signature)
    return out


def write_signatures(signatures: dict[str, list[str]], path) -> None:
    """Write ``signatures`` in :func:`read_signatures`' format, sorted, under :data:`HEADER`."""
    lines = [f"{name}\t{sig}" for name in sorted(signatures) for sig in sorted(signatures[name])]
    Path(path).write_text(HEADER + "\n".join(lines) + "\n")


def cached_kernels(package: str = "dpnb") -> dict:
    """``module.kernel`` -> every numba dispatcher defined in ``package`` that caches to disk (``cache=True``).

    Only modules whose source mentions ``numba.njit`` are imported.
    """
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    root = importlib.import_module(package)
    found = {}
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        if "numba.njit" not in Path(spec.origin).read_text():
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, Dispatcher)
                and obj.py_func.__module__ == info.name
                and not isinstance(obj._cache, NullCache)
            ):
                found[f"{info.name}.{name}"] = obj
    return found


def recorded_signatures(kernels: dict) -> dict[str, list[str]]:
    """``module.kernel`` -> the signatures its on-disk cache holds for this machine's code generator."""
    out = {}
    for name, kernel in kernels.items():
        magic = kernel.targetctx.codegen().magic_tuple()
        index = kernel._cache._cache_file._load_index()  # {} when absent, stale or of another numba version
        sigs = sorted({repr(tuple(key[0])) for key in index if key[1] == magic})
        if sigs:
            out[name] = sigs
    return out


def _kernel(name: str):
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


def compile_kernels(signatures: dict[str, list[str]]) -> tuple[int, int, list[str]]:
    """Compile (or load from the cache) each listed specialization in this process.

    Returns ``(compiled, loaded, problems)``: the specializations compiled now, those loaded from the cache, and one
    line per listed kernel or signature that could not be compiled (a kernel that no longer exists, a signature it no
    longer accepts).
    """
    compiled = loaded = 0
    problems = []
    for name, sigs in signatures.items():
        try:
            kernel = _kernel(name)
        except (ImportError, AttributeError) as exc:
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        for sig in sigs:
            hits = kernel.stats.cache_hits.copy()
            try:
                kernel.compile(parse_signature(sig))
            except Exception as exc:  # a stale entry: numba's typing errors have many types
                problems.append(f"{name}{sig}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            if kernel.stats.cache_hits != hits:
                loaded += 1
            else:
                compiled += 1
    return compiled, loaded, problems


def split(signatures: dict[str, list[str]], jobs: int) -> list[dict[str, list[str]]]:
    """``signatures`` in at most ``jobs`` parts of about equal counts, each kernel's entries in one part.

    Examples
    --------
    >>> split({"m.a": ["x", "y", "z"], "m.b": ["x"], "m.c": ["x", "y"]}, 2)
    [{'m.a': ['x', 'y', 'z']}, {'m.c': ['x', 'y'], 'm.b': ['x']}]
    """
    parts: list[dict[str, list[str]]] = [{} for _ in range(max(1, min(jobs, len(signatures))))]
    for name in sorted(signatures, key=lambda n: (-len(signatures[n]), n)):
        min(parts, key=lambda p: sum(map(len, p.values()))).update({name: signatures[name]})
    return parts


def precompile(signatures: dict[str, list[str]], jobs: int = 1) -> tuple[int, int, list[str]]:
    """:func:`compile_kernels` over :func:`split`'s parts, each in a fresh process (``spawn``) when ``jobs > 1``."""
    parts = split(signatures, jobs)
    if len(parts) == 1:
        return compile_kernels(parts[0])
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(len(parts), mp_context=context) as pool:
        results = list(pool.map(compile_kernels, parts))
    return sum(r[0] for r in results), sum(r[1] for r in results), [p for r in results for p in r[2]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpnb.tools.precompile", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes to compile in (default 1)")
    parser.add_argument("--record", action="store_true", help=f"rewrite {SIGNATURES.name} from the kernels' caches")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.record:
        signatures = recorded_signatures(cached_kernels())
        write_signatures(signatures, SIGNATURES)
        print(f"{SIGNATURES}: {sum(map(len, signatures.values()))} specializations of {len(signatures)} kernels")
        return 0
    signatures = read_signatures(SIGNATURES)
    compiled, loaded, problems = precompile(signatures, args.jobs)
    print(f"numba kernels: {compiled} specializations compiled into the cache, {loaded} loaded from it")
    if problems:
        print(
            f"{len(problems)} listed kernels or signatures no longer compile (run python -m dpnb.tools.precompile "
            "--record after make test):\n  " + "\n  ".join(problems),
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
