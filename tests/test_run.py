import json

import nbformat
import pytest

from dpnb import run
from dpnb.claims import KEYS


def _write_notebook(folder, stem, verdict="holds"):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('scale = 1\noutput_dir = "unused"')
    params.metadata["tags"] = ["parameters"]
    body = nbformat.v4.new_code_cell(
        "from dpnb.claims import ClaimTable\n"
        f"t = ClaimTable('{stem}')\n"
        f"t.add('c1', 'Demo Lemma 1', 'scale', '1', str(scale), '{verdict}')\n"
        "t.write_json(output_dir)")
    nb.cells = [params, body]
    nbformat.write(nb, folder / f"{stem}.ipynb")


def test_profile_parameters(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "a.yml").write_text("paper:\n  scale: 10\nempty:\n")
    assert run.profile_parameters("a", "fast", tmp_path) == {}
    assert run.profile_parameters("a", "paper", tmp_path) == {"scale": 10}
    assert run.profile_parameters("a", "empty", tmp_path) == {}
    with pytest.raises(ValueError, match="no profile 'huge'"):
        run.profile_parameters("a", "huge", tmp_path)
    with pytest.raises(ValueError, match="no profile 'paper'"):
        run.profile_parameters("b", "paper", tmp_path)
    with pytest.raises(ValueError, match="non-empty"):
        run.profile_parameters("a", "", tmp_path)


def test_execute_and_gather(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    _write_notebook(nbdir, "alpha")
    _write_notebook(nbdir, "beta", verdict="fails")
    (nbdir / "profiles").mkdir()
    (nbdir / "profiles" / "alpha.yml").write_text("paper:\n  scale: 7\n")
    (nbdir / "profiles" / "beta.yml").write_text("paper:\n  scale: 8\n")
    out = tmp_path / "results"
    assert run.main(["--profile", "paper", "--output", str(out), "--notebooks", str(nbdir)]) == 0
    claims = json.loads((out / "claims.json").read_text())
    assert [tuple(c) for c in claims] == [KEYS, KEYS]
    assert [(c["notebook"], c["measured"], c["verdict"]) for c in claims] == [("alpha", "7", "holds"), ("beta", "8", "fails")]
    assert (out / "alpha.ipynb").is_file() and not (nbdir / "alpha").exists()
    printed = capsys.readouterr().out
    assert "| total | 1 | 1 | 0 | 0 |" in printed
    assert "| beta | c1 | Demo Lemma 1 | fails | 8 |" in printed


def test_failing_notebook_is_reported(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("raise RuntimeError('boom')")]
    nbformat.write(nb, nbdir / "broken.ipynb")
    assert run.main(["--output", str(tmp_path / "r"), "--notebooks", str(nbdir)]) == 1
    captured = capsys.readouterr()
    assert "FAILED broken" in captured.out and "failed notebooks: broken" in captured.err


def test_summarize():
    claims = [dict(zip(KEYS, ["a", "1", "s", "st", "e", "m", "holds"])),
              dict(zip(KEYS, ["a", "2", "s", "st", "e", "m", "corrected"]))]
    assert run.summarize(claims).splitlines()[-1] == "| total | 1 | 0 | 1 | 0 |"
