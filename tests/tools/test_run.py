import json
import os

import pytest
from tool_helpers import write_notebook

from dpnb.reporting.claims import KEYS
from dpnb.tools import run
from dpnb.tools.executor import ALLOCATOR


def _write_notebook(folder, stem, verdict="holds"):
    write_notebook(
        folder / f"{stem}.ipynb",
        'scale: int = 1  # a demo parameter\noutput_dir: str = "unused"  # claims folder',
        "from dpnb.reporting.claims import ClaimTable, verdict\n"
        f"t = ClaimTable('{stem}', [('c1', 'Demo Lemma 1', 'scale')])\n"
        f"t.add('c1', '1', str(scale), verdict({verdict == 'holds'}))\n"
        "t.write_json(output_dir)",
    )


def test_profile_parameters(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "a.yml").write_text("paper:\n  scale: 10\nempty:\n")
    assert run.profile_parameters("a", "fast", tmp_path) == {}
    assert run.profile_parameters("a", "paper", tmp_path) == {"scale": 10}
    assert run.profile_parameters("a", "empty", tmp_path) == {}
    assert run.profile_parameters("a", "huge", tmp_path) is None
    assert run.profile_parameters("b", "paper", tmp_path) is None
    assert run.available_profiles(["a", "b"], tmp_path) == ["fast", "empty", "paper"]
    with pytest.raises(ValueError, match="non-empty"):
        run.profile_parameters("a", "", tmp_path)
    (tmp_path / "profiles" / "c.yml").write_text("paper: [1, 2]\n")
    with pytest.raises(ValueError, match="must map parameter names"):
        run.profile_parameters("c", "paper", tmp_path)


def test_unknown_profile_or_parameter_is_one_line_and_exit_2(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _write_notebook(nbdir, "alpha")
    (nbdir / "profiles").mkdir()
    (nbdir / "profiles" / "alpha.yml").write_text("paper:\n  scale: 7\nbroken:\n  scael: 7\n")
    common = ["--output", str(tmp_path / "r"), "--notebooks", str(nbdir)]
    assert run.main(["--profile", "nonexistent", *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: unknown profile 'nonexistent'; profiles: fast, broken, paper"]
    assert run.main(["--profile", "broken", *common]) == 2
    assert "alpha has no parameter(s) scael; its parameters are: scale, output_dir" in capsys.readouterr().err
    assert run.main(["-p", "epsilo", "0.5", *common]) == 2
    assert "no parameter(s) epsilo" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.notebook
def test_profile_without_entry_runs_defaults_and_says_so(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _write_notebook(nbdir, "alpha")
    _write_notebook(nbdir, "beta")
    (nbdir / "profiles").mkdir()
    (nbdir / "profiles" / "alpha.yml").write_text("paper:\n  scale: 7\n")
    out = tmp_path / "results"
    assert (
        run.main(
            [
                "--profile",
                "paper",
                "-p",
                "scale",
                "3",
                "--only",
                "beta",
                "--output",
                str(out),
                "--notebooks",
                str(nbdir),
                "--workers",
                "1",
            ]
        )
        == 0
    )
    assert "profile 'paper' has no entry for beta: ran with their defaults" in capsys.readouterr().out
    assert json.loads((out / "claims.json").read_text())[0]["measured"] == "3"


@pytest.mark.notebook
def test_execute_and_gather(tmp_path, capsys):
    workers = 1
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _write_notebook(nbdir, "alpha")
    _write_notebook(nbdir, "beta", verdict="fails")
    (nbdir / "profiles").mkdir()
    (nbdir / "profiles" / "alpha.yml").write_text("paper:\n  scale: 7\n")
    (nbdir / "profiles" / "beta.yml").write_text("paper:\n  scale: 8\n")
    out = tmp_path / "results"
    common = ["--output", str(out), "--notebooks", str(nbdir), "--workers", str(workers)]
    assert run.main(["--profile", "paper", *common]) == 0
    claims = json.loads((out / "claims.json").read_text())
    assert [tuple(c) for c in claims] == [KEYS, KEYS]
    assert [(c["notebook"], c["measured"], c["verdict"]) for c in claims] == [
        ("alpha", "7", "holds"),
        ("beta", "8", "fails"),
    ]
    assert (out / "alpha.ipynb").is_file() and not (nbdir / "alpha").exists()
    printed = capsys.readouterr().out
    assert "| total | 1 | 1 | 0 | 0 |" in printed
    assert "| beta | c1 |" not in printed  # the per-claim table goes to claims.md
    table = (out / "claims.md").read_text()
    assert table.startswith("# Claims: profile paper, overrides: none\n")
    assert "| beta | c1 | Demo Lemma 1 | fails | 1 | 8 |" in table
    record = json.loads((out / "run.json").read_text())
    assert (record["profile"], record["overrides"], record["workers"]) == ("paper", {}, workers)
    assert sorted(record["seconds"]) == ["alpha", "beta"]
    assert "wall time per notebook: " in printed
    assert run.main(["--profile", "paper", *common, "--only", "beta", "--claims"]) == 0
    assert "| beta | c1 | Demo Lemma 1 | fails | 1 | 8 |" in capsys.readouterr().out  # --claims prints it too


@pytest.mark.notebook
@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_kernel_gets_one_blas_thread_and_failures_are_reported(tmp_path, capsys, monkeypatch, workers):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    write_notebook(
        nbdir / "threads.ipynb",
        'output_dir: str = "unused"  # claims folder',
        "import os\nfrom dpnb.reporting.claims import ClaimTable, verdict\n"
        "t = ClaimTable('threads', [('c1', 'threads', 'BLAS'), ('c2', 'allocator', 'glibc')])\n"
        "t.add('c1', '1', os.environ.get('OPENBLAS_NUM_THREADS', 'unset'), verdict(True))\n"
        "t.add('c2', '-', os.environ.get('MALLOC_TRIM_THRESHOLD_', 'unset'), verdict(True))\n"
        "t.write_json(output_dir)",
    )
    _write_broken(nbdir)
    out = tmp_path / "results"
    assert run.main(["--output", str(out), "--notebooks", str(nbdir), "--workers", workers]) == 1
    claims = json.loads((out / "claims.json").read_text())
    assert [c["measured"] for c in claims] == ["1", ALLOCATOR["MALLOC_TRIM_THRESHOLD_"]]
    assert os.environ["OPENBLAS_NUM_THREADS"] == "7"  # this process's environment is restored
    # the kernel gets ours even under Dask, whose LocalCluster sets its own (65536) in this process's environment
    if workers == "1":
        assert "MALLOC_TRIM_THRESHOLD_" not in os.environ
    captured = capsys.readouterr()
    assert "FAILED broken" in captured.out and "failed notebooks: broken" in captured.err


def test_longest_first_uses_the_previous_run_of_the_same_profile(tmp_path):
    paths = [tmp_path / f"{s}.ipynb" for s in ("a", "b", "c")]
    assert run.longest_first(paths, {}) == paths
    assert [p.stem for p in run.longest_first(paths, {"a": 5.0, "b": 60.0, "c": 1.0})] == ["b", "a", "c"]
    assert [p.stem for p in run.longest_first(paths, {"a": 5.0})] == ["b", "c", "a"]  # unknown ones first
    notebooks = tmp_path / "notebooks"
    (notebooks / "profiles").mkdir(parents=True)
    assert run._previous_seconds(tmp_path, "paper", notebooks) == {}  # nothing run, nothing committed
    (notebooks / "profiles" / "wall_seconds.yml").write_text("paper: {a: 10.0, b: 20.0}\n")
    assert run._previous_seconds(tmp_path, "paper", notebooks) == {"a": 10.0, "b": 20.0}  # a fresh machine
    assert run._previous_seconds(tmp_path, "fast", notebooks) == {}
    (tmp_path / "run.json").write_text(json.dumps({"profile": "paper", "seconds": {"a": 3.0}}))
    assert run._previous_seconds(tmp_path, "paper", notebooks) == {"a": 3.0}  # this output folder's last run wins
    assert run._previous_seconds(tmp_path, "fast", notebooks) == {}


def test_committed_wall_seconds_name_every_notebook_of_each_profile():
    import yaml

    measured = yaml.safe_load((run.NOTEBOOKS / "profiles" / "wall_seconds.yml").read_text())
    stems = {path.stem for path in run.notebook_paths()}
    for profile, seconds in measured.items():
        assert profile in run.available_profiles(stems)
        assert set(seconds) == stems, f"wall_seconds.yml, {profile}: {sorted(stems ^ set(seconds))}"
        assert all(isinstance(s, (int, float)) and s > 0 for s in seconds.values())


def test_workers_must_be_positive(tmp_path, capsys):
    assert run.main(["--workers", "0", "--output", str(tmp_path / "r")]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def _write_broken(folder):
    write_notebook(folder / "broken.ipynb", "", "raise RuntimeError('boom')")


@pytest.mark.notebook
def test_failing_notebook_is_reported(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _write_broken(nbdir)
    assert run.main(["--output", str(tmp_path / "r"), "--notebooks", str(nbdir), "--workers", "1"]) == 1
    captured = capsys.readouterr()
    assert "FAILED broken" in captured.out and "failed notebooks: broken" in captured.err


def test_summarize():
    claims = [
        dict(zip(KEYS, ["a", "1", "s", "st", "e", "m", "holds"])),
        dict(zip(KEYS, ["a", "2", "s", "st", "e", "m", "corrected"])),
    ]
    assert run.summarize(claims).splitlines()[-1] == "| total | 1 | 0 | 1 | 0 |"


@pytest.mark.notebook
def test_dask_runs_notebooks_in_the_given_order_one_per_worker_thread(tmp_path, dask_client):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    started = tmp_path / "started.txt"
    for stem in ("a", "b", "c", "d"):
        write_notebook(
            nbdir / f"{stem}.ipynb",
            'output_dir: str = "unused"  # claims folder',
            f"open({str(started)!r}, 'a').write('{stem}')",
        )
    order = [nbdir / f"{stem}.ipynb" for stem in ("c", "a", "d", "b")]
    done = []
    run.execute_all(order, tmp_path / "out", dict.fromkeys("abcd", {}), 2, dask_client, lambda *a: done.append(a[0]))
    assert started.read_text() == "cadb" and done == ["c", "a", "d", "b"]
