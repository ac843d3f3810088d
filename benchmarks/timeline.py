"""Where a pytest session's time goes: every test's start and end on each worker, summed into phases.

Record ``make test`` (or any pytest run, with or without xdist) by loading this module as a plugin::

    PYTEST_ADDOPTS="-p benchmarks.timeline --timeline build/timeline" make test

Each process (the xdist workers, or the one pytest process) appends one JSON line per test to
``<folder>/<worker>.jsonl``: the test's id, its wall-clock start and end, and the CPU seconds the worker used
meanwhile (its own and those of the child processes it waited for: the kernels a notebook test starts). The
xdist controller, which only relays the workers' reports, records nothing. Then::

    python -m benchmarks.timeline build/timeline

prints, per phase (:data:`PHASES`), the worker-seconds its tests held a worker, their share, and the CPU
seconds the worker used meanwhile; and per worker, its busy seconds within the session's span. A worker
holds one test at a time, so the phases' worker-seconds add up to the busy time, and ``span x workers -
busy`` is the time a worker had no test (start-up, the last test's tail).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

#: phase -> the test-id test deciding membership (the first phase that matches takes the test)
PHASES = {
    "notebooks under nbval": lambda nodeid: nodeid.startswith("notebooks/"),
    "notebooks under papermill (reordered)": lambda nodeid: "test_papermill_run_on_another_machine" in nodeid,
    "hypothesis properties": lambda nodeid: nodeid.startswith("tests/papers/test_properties.py"),
    "runner, sweep and cluster processes": lambda nodeid: nodeid.startswith("tests/tools/"),
    "other tests": lambda nodeid: True,
}

_state: dict = {}


def pytest_addoption(parser):
    parser.addoption("--timeline", default=None, metavar="FOLDER", help="append each test's start and end here")


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def pytest_runtest_logstart(nodeid, location):
    if _state.get("folder") is not None:
        _state["start"] = (nodeid, time.time(), _cpu_seconds())


def pytest_runtest_logfinish(nodeid, location):
    folder = _state.get("folder")
    if folder is None or _state.get("start", (None,))[0] != nodeid:
        return
    _, start, cpu = _state["start"]
    record = {"id": nodeid, "start": start, "end": time.time(), "cpu": _cpu_seconds() - cpu}
    with open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")


def pytest_configure(config):
    folder = config.getoption("timeline", None)
    controller = getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")
    if folder and not controller:
        _state["folder"] = Path(folder)
        _state["folder"].mkdir(parents=True, exist_ok=True)


def read(folder) -> dict:
    """Worker name -> its records in time order, from ``folder``'s ``*.jsonl`` files."""
    folder = Path(folder)
    records = {
        path.stem: sorted(
            (json.loads(line) for line in path.read_text().splitlines() if line), key=lambda r: r["start"]
        )
        for path in sorted(folder.glob("*.jsonl"))
    }
    if not any(records.values()):
        raise ValueError(
            f"{folder} holds no timeline records: run pytest with -p benchmarks.timeline --timeline {folder}"
        )
    return records


def summarize(records: dict) -> tuple[list, list, float]:
    """Rows per phase and per worker, and the session's span in seconds (first start to last end).

    A test's CPU seconds are those its worker used from the test's start to its end, a reaped child's (a kernel's)
    included.

    Examples
    --------
    >>> recs = {"gw0": [{"id": "notebooks/a.ipynb::Cell 0", "start": 0.0, "end": 4.0, "cpu": 3.0},
    ...                 {"id": "tests/x.py::t", "start": 4.0, "end": 5.0, "cpu": 1.0}],
    ...         "gw1": [{"id": "tests/tools/y.py::t", "start": 1.0, "end": 3.0, "cpu": 1.5}]}
    >>> phases, workers, span = summarize(recs)
    >>> [(p["phase"], p["worker-seconds"], p["CPU seconds"]) for p in phases if p["tests"]]
    [('notebooks under nbval', 4.0, 3.0), ('runner, sweep and cluster processes', 2.0, 1.5), ('other tests', 1.0, 1.0)]
    >>> [(w["worker"], w["busy seconds"], w["idle seconds"]) for w in workers], span
    ([('gw0', 5.0, 0.0), ('gw1', 2.0, 3.0)], 5.0)
    """
    first = min(r["start"] for recs in records.values() for r in recs)
    span = max(r["end"] for recs in records.values() for r in recs) - first
    totals = {phase: [0, 0.0, 0.0] for phase in PHASES}
    workers = []
    for worker, recs in records.items():
        for r in recs:
            phase = next(name for name, member in PHASES.items() if member(r["id"]))
            totals[phase][0] += 1
            totals[phase][1] += r["end"] - r["start"]
            totals[phase][2] += r["cpu"]
        busy = sum(r["end"] - r["start"] for r in recs)
        workers.append({"worker": worker, "tests": len(recs), "busy seconds": busy, "idle seconds": span - busy})
    held = sum(t[1] for t in totals.values())
    phases = [
        {"phase": phase, "tests": n, "worker-seconds": seconds, "share": seconds / held, "CPU seconds": cpu}
        for phase, (n, seconds, cpu) in totals.items()
    ]
    return phases, workers, span


def main(argv=None) -> int:
    from dpnb.reporting.report import markdown_table

    parser = argparse.ArgumentParser(prog="python -m benchmarks.timeline", description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the --timeline folder of a pytest run")
    args = parser.parse_args(argv)
    phases, workers, span = summarize(read(args.folder))
    print(f"session span {span:.0f} s on {len(workers)} worker(s)\n")
    print(markdown_table(phases, precision=2))
    print()
    print(markdown_table(workers, precision=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
