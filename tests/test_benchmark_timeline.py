"""benchmarks.timeline: the plugin records every test of a real pytest run, and the summary adds up."""

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import timeline

ROOT = Path(__file__).resolve().parent.parent


def test_the_examples_run():
    assert doctest.testmod(timeline).failed == 0


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two xdist workers"])
def test_a_recorded_run_is_summarized_by_phase_and_worker(tmp_path, capsys, workers):
    (tmp_path / "tests" / "tools").mkdir(parents=True)
    (tmp_path / "tests" / "tools" / "test_a.py").write_text("import time\n\ndef test_slow():\n    time.sleep(0.3)\n")
    (tmp_path / "tests" / "test_b.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    folder = tmp_path / "timeline"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "benchmarks.timeline", "--timeline", str(folder), *workers]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    records = timeline.read(folder)
    assert set(records) <= {"gw0", "gw1"} if workers else set(records) == {"main"}
    assert sorted(r["id"] for recs in records.values() for r in recs) == [  # each test once: no controller copy
        "tests/test_b.py::test_one",
        "tests/test_b.py::test_two",
        "tests/tools/test_a.py::test_slow",
    ]
    phases, worker_rows, span = timeline.summarize(records)
    by_phase = {p["phase"]: p for p in phases}
    assert by_phase["runner, sweep and cluster processes"]["tests"] == 1
    assert by_phase["runner, sweep and cluster processes"]["worker-seconds"] >= 0.3
    assert by_phase["other tests"]["tests"] == 2
    assert sum(p["share"] for p in phases) == pytest.approx(1.0)
    assert all(0 < w["busy seconds"] <= span + 1e-6 for w in worker_rows)
    assert timeline.main([str(folder)]) == 0
    assert "| runner, sweep and cluster processes | 1 |" in capsys.readouterr().out


def test_a_folder_without_records_is_refused_naming_the_option(tmp_path):
    with pytest.raises(ValueError, match="--timeline"):
        timeline.read(tmp_path)
