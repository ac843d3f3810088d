"""Faults of ``make run``: a failing cell, an unusable or busy output folder, a partial run, a failing write,
bad values, names and profile files, results of other parameters. None may lose, hide or mix a result, and whatever
can be refused is refused before a kernel starts."""

import errno
import fcntl
import json
import os

import pytest
from tool_helpers import write_notebook

from dpnb.tools import records, run


def _notebook(folder, stem, body="", marker=None):
    """A notebook with typed parameters and a validation cell; it writes one claim (measured: scale, rate)."""
    touch = f"open({str(marker)!r}, 'a').write('{stem}')\n" if marker else ""
    write_notebook(
        folder / f"{stem}.ipynb",
        "scale: int = 1  # a count\nrate: float = 0.5  # a probability\nlevels: list[float] = [0.1]  # levels\n"
        "label: str | None = None  # a name\noutput_dir: str = 'unused'  # claims folder",
        "from dpnb.reporting.parameters import check_parameters\n"
        "check_parameters(globals())\n"
        "if not 0 < rate < 1:\n"
        "    raise ValueError(f'rate must lie in (0, 1), got {rate}')",
        f"{touch}{body}from dpnb.reporting.claims import ClaimTable, verdict\n"
        f"t = ClaimTable('{stem}', [('c1', 'Demo 1', 'scale')])\n"
        "t.add('c1', '1', f'{scale} {rate} {levels} {label}', verdict(True))\n"
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
    _notebook(nbdir, "beta", body="scale = 2\n")
    assert _main(nbdir, out, "--only", "beta") == 0
    assert _claims(out) == [("alpha", "1 0.5 [0.1] None"), ("beta", "2 0.5 [0.1] None")]
    assert "claims kept from earlier runs (not run now): alpha" in capsys.readouterr().out
    _notebook(nbdir, "alpha", body="raise RuntimeError('boom')\n")
    assert _main(nbdir, out, "--only", "alpha") == 1
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


def _results(out):
    return {name: (out / name).read_text() for name in run.RESULTS}


def _write_error(out, path, reason):
    return [
        f"error: cannot write the results into {out} ({path}: {reason}); "
        f"the earlier results there are kept, this run's executed notebooks are in {out}"
    ]


@pytest.mark.notebook
def test_a_full_disk_at_the_end_is_one_error_line_and_leaves_the_previous_results(nbdir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert _main(nbdir, out, "--only", "alpha") == 0
    before = _results(out)
    real = records._temporary

    def full(path, content, write=None):
        if path.name in run.RESULTS:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, content, write)

    monkeypatch.setattr(records, "_temporary", full)  # the executed notebooks are written, the results are not
    capsys.readouterr()
    assert _main(nbdir, out, "--only", "beta") == 1
    assert capsys.readouterr().err.splitlines() == _write_error(out, out / "claims.json", "No space left on device")
    assert _results(out) == before and (out / "beta.ipynb").is_file()
    assert not list(out.glob("*.partial"))


@pytest.mark.notebook
def test_a_folder_in_the_way_of_a_results_file_is_refused_or_one_error_line(nbdir, tmp_path, capsys):
    out = tmp_path / "out"
    assert _main(nbdir, out, "--only", "alpha") == 0
    before = _results(out)
    os.rename(out / "run.json", out / "run.json.keep")
    (out / "run.json").mkdir()  # there before the run: refused before anything runs
    assert _main(nbdir, out, "--only", "beta") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {out / 'run.json'} is in the way of the results file run.json; remove it"
    ]
    (out / "run.json").rmdir()
    os.rename(out / "run.json.keep", out / "run.json")
    # made while the run is under way (here by the notebook itself): no file is replaced
    in_the_way = str(out / "claims.md")
    _notebook(nbdir, "beta", body=f"import os\nos.remove({in_the_way!r})\nos.mkdir({in_the_way!r})\n")
    assert _main(nbdir, out, "--only", "beta") == 1
    assert capsys.readouterr().err.splitlines() == _write_error(out, out / "claims.md", "Is a directory")
    assert {name: (out / name).read_text() for name in ("claims.json", "run.json")} == {
        name: before[name] for name in ("claims.json", "run.json")
    }
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
        (["-p", "rate", "-inf"], "error: alpha: ValueError: rate must lie in (0, 1), got -inf"),
        (["--parameters", "scale 2 rate -0.5"], "error: alpha: ValueError: rate must lie in (0, 1), got -0.5"),
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


def test_a_parameter_the_run_sets_is_refused_naming_the_option_to_use(nbdir, tmp_path, capsys):
    out = tmp_path / "out"
    assert _main(nbdir, out, "-p", "output_dir", str(tmp_path / "elsewhere")) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: -p output_dir: output_dir is set by the run; use --output DIR (each notebook writes into DIR/<stem>) "
        "instead"
    ]
    (nbdir / "profiles").mkdir()
    (nbdir / "profiles" / "alpha.yml").write_text("paper:\n  output_dir: /tmp/x\n")
    assert _main(nbdir, out, "--profile", "paper") == 2
    assert "profile 'paper' of alpha sets output_dir, which the run sets itself" in capsys.readouterr().err
    for args, error in [
        (["-p", "scale"], "error: -p takes a name and a value: -p NAME VALUE"),
        (["-p", "scale", "2", "-p", "scale", "3"], "error: -p scale is given twice (2 and 3); give it once"),
        (["--parameters", "scale"], "error: --parameters 'scale' is not a list of NAME VALUE pairs (it has 1 words)"),
    ]:
        assert _main(nbdir, out, *args) == 2
        assert capsys.readouterr().err.splitlines() == [error]
    assert not out.exists()


@pytest.mark.parametrize(
    "text, line, problem",
    [
        (
            "paper:\n  scale: !!python/object/apply:os.system ['touch {marker}']\n",
            2,
            "could not determine a constructor",
        ),
        ("paper:\n  scale: [1, 2\nfast: {{}}\n", 3, "expected ',' or ']'"),
    ],
)
def test_a_profile_file_with_a_tag_or_bad_yaml_is_one_line_naming_file_and_line(
    nbdir, tmp_path, capsys, text, line, problem
):
    marker = tmp_path / "executed"
    (nbdir / "profiles").mkdir()
    path = nbdir / "profiles" / "alpha.yml"
    path.write_text(text.format(marker=marker))
    assert _main(nbdir, tmp_path / "out", "--profile", "paper") == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}, line {line}: ") and problem in err[0]
    assert not marker.exists() and not (tmp_path / "out").exists()


@pytest.mark.notebook
def test_results_of_other_parameters_never_share_a_folder(nbdir, tmp_path, capsys):
    assert run.default_output("fast", {}, tmp_path) == tmp_path / "fast"
    assert run.default_output("paper", {"levels": "[0.1, 1]", "rate": "1e-3"}).name == "paper+levels=_0.1__1_+rate=1e-3"
    out = tmp_path / "out"
    assert _main(nbdir, out, "-p", "rate", "0.25", "--only", "alpha") == 0
    record = json.loads((out / "run.json").read_text())
    assert (record["profile"], record["overrides"]) == ("fast", {"rate": "0.25"})
    assert _main(nbdir, out, "-p", "rate", "2.5e-1", "--only", "beta") == 0  # the same value, written otherwise
    capsys.readouterr()
    for args, asked in [([], "--profile fast"), (["-p", "rate", "0.3"], "--profile fast -p rate 0.3")]:
        assert _main(nbdir, out, *args) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: {out} holds the results of --profile fast -p rate 2.5e-1, not of {asked}; results of other "
            "parameters never share a folder: run without --output (into "
            f"{run.default_output('fast', dict(zip(args[1::3], args[2::3])))}) or choose another --output"
        ]
    assert _claims(out) == [("alpha", "1 0.25 [0.1] None"), ("beta", "1 0.25 [0.1] None")]
    (out / "run.json").unlink()
    assert _main(nbdir, out, "-p", "rate", "0.25") == 2
    assert "holds results whose profile and overrides are not recorded" in capsys.readouterr().err
