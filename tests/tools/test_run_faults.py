"""Faults of ``make run``: a failing cell, an unusable or busy output folder, a partial run, a failing write,
bad values and names. None may lose or hide a result, and whatever can be refused is refused before a kernel starts."""

import fcntl
import json
import os

import pytest
from tool_helpers import write_notebook

from dpnb.tools import run


def _notebook(folder, stem, body="", marker=None):
    """A notebook with typed parameters and a validation cell; it writes one claim (measured: scale, rate)."""
    touch = f"open({str(marker)!r}, 'a').write('{stem}')\n" if marker else ""
    write_notebook(
        folder / f"{stem}.ipynb",
        "scale: int = 1  # a count\nrate: float = 0.5  # a probability\nlevels: list[float] = [0.1]  # levels\n"
        "label: str | None = None  # a name\noutput_dir: str = 'unused'  # claims folder",
        "from dpnb.book.parameters import check_parameters\n"
        "check_parameters(globals())\n"
        "if not 0 < rate < 1:\n"
        "    raise ValueError(f'rate must lie in (0, 1), got {rate}')",
        f"{touch}{body}from dpnb.book.claims import ClaimTable\n"
        f"t = ClaimTable('{stem}', [('c1', 'Demo 1', 'scale')])\n"
        "t.add('c1', '1', f'{scale} {rate} {levels} {label}', 'holds')\n"
        "t.write_json(output_dir)",
    )


def _main(nbdir, out, *args):
    return run.main(["--output", str(out), "--notebooks", str(nbdir), "--workers", "1", *args])


def _claims(out):
    return [(c["notebook"], c["measured"]) for c in json.loads((out / "claims.json").read_text())]


@pytest.fixture
def nbdir(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(folder, "alpha")
    _notebook(folder, "beta")
    return folder


@pytest.mark.notebook
def test_a_failing_cell_is_one_line_naming_notebook_cell_and_reason(nbdir, tmp_path, capsys):
    _notebook(nbdir, "alpha", body="raise ArithmeticError('the bound is negative')\n")
    out = tmp_path / "out"
    assert _main(nbdir, out, "--only", "alpha") == 1
    printed = capsys.readouterr()
    failures = [line for line in printed.out.splitlines() if "FAILED" in line]
    # In [1] parameters, In [2] papermill's injected values, In [3] validation, In [4] the failing cell
    assert failures == [
        f"FAILED alpha: cell In [4]: ArithmeticError: the bound is negative (executed notebook: {out / 'alpha.ipynb'})"
    ]
    assert "failed: alpha: cell In [4]: ArithmeticError: the bound is negative; it has no claims" in printed.err


@pytest.mark.parametrize("how", ["parent is a file", "not writable"])
def test_an_unusable_output_folder_is_refused_before_anything_runs(nbdir, tmp_path, capsys, monkeypatch, how):
    # Tests run as root, whom a read-only mode does not stop: the folder is made unusable another way.
    marker = tmp_path / "ran"
    _notebook(nbdir, "alpha", marker=marker)
    if how == "parent is a file":
        (tmp_path / "file").write_text("")
        out = tmp_path / "file" / "out"
        expected = f"error: cannot create the output folder {out}: Not a directory"
    else:
        out = tmp_path / "out"
        real = os.access
        monkeypatch.setattr(os, "access", lambda path, mode, **kw: path != out and real(path, mode, **kw))
        expected = f"error: the output folder {out} is not writable; choose another --output"
    assert _main(nbdir, out) == 2
    assert capsys.readouterr().err.splitlines() == [expected]
    assert not marker.exists()


@pytest.mark.notebook
def test_a_second_run_into_a_busy_folder_is_refused_naming_it(nbdir, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    marker = tmp_path / "ran"
    _notebook(nbdir, "alpha", marker=marker)
    with open(out / ".lock", "a") as lock:  # as a run in progress holds it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _main(nbdir, out, "--only", "alpha") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: another run is writing into {out} (it holds {out / '.lock'}); "
        "wait for it to finish or choose another --output"
    ]
    assert not marker.exists()
    assert _main(nbdir, out, "--only", "alpha") == 0  # the lock is free again


@pytest.mark.notebook
def test_partial_and_failed_runs_keep_the_other_claims_and_mark_stale_ones(nbdir, tmp_path, capsys):
    out = tmp_path / "out"
    assert _main(nbdir, out) == 0
    assert _claims(out) == [("alpha", "1 0.5 [0.1] None"), ("beta", "1 0.5 [0.1] None")]
    assert _main(nbdir, out, "--only", "beta", "-p", "scale", "2") == 0
    assert _claims(out) == [("alpha", "1 0.5 [0.1] None"), ("beta", "2 0.5 [0.1] None")]
    assert "claims kept from earlier runs (not run now): alpha" in capsys.readouterr().out
    _notebook(nbdir, "alpha", body="raise RuntimeError('boom')\n")
    assert _main(nbdir, out, "--only", "alpha", "-p", "scale", "3") == 1
    assert _claims(out) == [("alpha", "1 0.5 [0.1] None"), ("beta", "2 0.5 [0.1] None")]  # nothing dropped
    status = json.loads((out / "run.json").read_text())["notebooks"]
    assert status["alpha"] == {
        "status": "failed",
        "profile": "fast",
        "seconds": None,
        "error": "cell In [4]: RuntimeError: boom",
        "claims": "stale",
    }
    assert (status["beta"]["status"], status["beta"]["claims"]) == ("ok", "current")
    assert "failed: alpha: cell In [4]: RuntimeError: boom; its earlier claims are kept" in capsys.readouterr().err


@pytest.mark.notebook
def test_a_failing_write_leaves_the_previous_results(nbdir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert _main(nbdir, out, "--only", "alpha") == 0
    before = {name: (out / name).read_text() for name in ("claims.json", "run.json")}

    def fail(*args):
        raise OSError("killed mid-write")

    monkeypatch.setattr(os, "replace", fail)  # the new file is written, then the process dies
    with pytest.raises(OSError, match="killed mid-write"):
        _main(nbdir, out, "--only", "alpha", "-p", "scale", "5")
    assert {name: (out / name).read_text() for name in before} == before
    assert not list(out.glob("*.partial"))


def test_unknown_notebooks_are_refused_listing_the_valid_ones(nbdir, tmp_path, capsys):
    assert _main(nbdir, tmp_path / "out", "--only", "alpha", "nosuch", "zeta") == 2
    assert capsys.readouterr().err.splitlines() == ["error: no notebook(s) nosuch, zeta; notebooks: alpha, beta"]
    assert not (tmp_path / "out").exists()


@pytest.mark.notebook
def test_values_take_the_annotated_type_and_are_checked_before_a_kernel_starts(nbdir, tmp_path, capsys):
    out = tmp_path / "out"
    marker = tmp_path / "ran"
    _notebook(nbdir, "alpha", marker=marker)
    for args, error in [
        (["-p", "rate", "2"], "error: alpha: ValueError: rate must lie in (0, 1), got 2.0"),
        (["-p", "rate", "inf"], "error: alpha: ValueError: rate must lie in (0, 1), got inf"),
        (["-p", "scale", "1.5"], "error: alpha: TypeError: parameter scale must be int, got 1.5"),
        (["-p", "levels", "[0.1, x]"], "error: alpha: TypeError: parameter levels must be list[float], got [0.1, x]"),
        (["-p", "rate", "[0.1"], "error: -p rate: cannot read '[0.1'; quote strings with commas, brackets or colons"),
    ]:
        assert _main(nbdir, out, "--only", "alpha", *args) == 2
        assert capsys.readouterr().err.splitlines() == [error]
    assert not marker.exists() and not out.exists()
    args = ["-p", "rate", "1e-6", "-p", "scale", "1e3", "-p", "levels", "[1e-5, 1]", "-p", "label", "007"]
    assert _main(nbdir, out, "--only", "alpha", *args) == 0
    assert _claims(out) == [("alpha", "1000 1e-06 [1e-05, 1.0] 007")]
