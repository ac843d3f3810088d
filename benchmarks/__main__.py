"""Run every benchmark case and print a table: ``python -m benchmarks [--repeat N] [--only TEXT]``."""

import argparse
import importlib
import pkgutil
import time
import tracemalloc
from pathlib import Path

from benchmarks import results
from benchmarks.gram_floor import machine
from dpnb.reporting.report import markdown_table


def modules():
    folder = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        if info.name.startswith("bench_"):
            yield info.name[6:], importlib.import_module(f"benchmarks.{info.name}")


def discover():
    for short, module in modules():
        for name, fn in module.CASES.items():
            yield f"{short}: {name}", fn


def measure(fn, repeat):
    fn()  # warm-up (imports, caches)
    best = min(_timed(fn) for _ in range(repeat))
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run cases whose name contains this text")
    args = parser.parse_args()
    rows = []
    for name, fn in discover():
        if args.only in name:
            seconds, peak = measure(fn, args.repeat)
            rows.append({"case": name, "best seconds": seconds, "peak MiB (tracemalloc)": peak / 2**20})
            print(f"{name}: {seconds:.4f} s, {peak / 2**20:.1f} MiB", flush=True)
    print()
    print(machine(threads=None))
    print(markdown_table(rows, precision=4))
    results.write("cases", rows, machine=machine(threads=None), repeat=args.repeat, only=args.only)
    seconds = {row["case"]: row["best seconds"] for row in rows}
    for short, module in modules():  # a module's own summary (e.g. ratios) when all its cases ran
        mine = {name: seconds.get(f"{short}: {name}") for name in module.CASES}
        if hasattr(module, "summarize") and None not in mine.values():
            print("\n".join(module.summarize(mine)))


if __name__ == "__main__":
    main()
