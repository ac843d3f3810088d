import json

import pytest

from dpnb.tools.pairing import execute_pair, main, pair_mismatches, restyle_pair

SOURCE = """---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# tiny

```{code-cell} ipython3
:tags: [parameters]

seed = 3
```

```{code-cell} ipython3
print(f"{seed * 2:d}")
```
"""


@pytest.mark.notebook
def test_execute_pair_writes_clean_outputs(tmp_path):
    src = tmp_path / "tiny.md"
    src.write_text(SOURCE)
    target = execute_pair(src)
    nb = json.loads(target.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2]
    assert code[1]["outputs"][0]["text"] == ["6\n"]
    assert all("execution" not in c["metadata"] for c in code)
    assert "papermill" not in nb["metadata"] and not any("papermill" in c["metadata"] for c in nb["cells"])
    assert code[0]["metadata"]["tags"] == ["parameters"]
    assert pair_mismatches(src, target) == []
    src.write_text(SOURCE.replace("seed * 2", "seed * 3"))
    assert any("cell 2 differs" in p for p in pair_mismatches(src, target))
    src.write_text(SOURCE.replace(":tags: [parameters]\n", ""))
    assert any("tags differ" in p for p in pair_mismatches(src, target))
    captioned = 'print(f"{seed * 2:d}")'
    src.write_text(SOURCE.replace(captioned, "---\nmystnb:\n  figure:\n    name: fig-tiny\n---\n" + captioned))
    assert any("mystnb differs" in p for p in pair_mismatches(src, target))  # a caption lost on one side
    src.write_text(SOURCE[SOURCE.index("# tiny") :])  # the header dropped, as jupytext's "-all" filter did
    assert any("'kernelspec' differs or is missing" in p for p in pair_mismatches(src, target))


def test_execute_pair_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="no notebook source"):
        execute_pair(tmp_path / "none.md")


@pytest.mark.notebook
def test_rebuilding_keeps_cell_ids_and_changes_only_what_changed(tmp_path):
    src = tmp_path / "tiny.md"
    src.write_text(SOURCE)
    first = json.loads(execute_pair(src).read_text())
    again = json.loads(execute_pair(src).read_text())
    assert first == again  # a rebuild of an unchanged source is byte-for-byte the same notebook
    src.write_text(SOURCE.replace("seed * 2", "seed * 3"))
    edited = json.loads(execute_pair(src).read_text())
    ids = [c["id"] for c in first["cells"]]
    new_ids = [c["id"] for c in edited["cells"]]
    assert new_ids[:2] == ids[:2] and new_ids[2] != ids[2] and len(set(new_ids)) == 3
    fresh = tmp_path / "copy.md"  # no previous notebook: ids derive from the sources, so they are stable too
    fresh.write_text(SOURCE)
    assert [c["id"] for c in json.loads(execute_pair(fresh).read_text())["cells"]] == ids


@pytest.mark.notebook
def test_kernel_log_does_not_reach_the_terminal(tmp_path, capfd):
    src = tmp_path / "tiny.md"
    src.write_text(SOURCE)
    execute_pair(src)
    assert "IPKernelApp" not in capfd.readouterr().err


@pytest.mark.notebook
def test_restyle_keeps_outputs_and_refuses_code_changes(tmp_path):
    src = tmp_path / "tiny.md"
    src.write_text(SOURCE)
    executed = json.loads(execute_pair(src).read_text())
    src.write_text(SOURCE.replace("# tiny", "# tiny\n\n(sec-tiny)=\nA labelled section."))
    restyled = json.loads(restyle_pair(src).read_text())
    code = [c for c in restyled["cells"] if c["cell_type"] == "code"]
    assert [c["outputs"] for c in code] == [c["outputs"] for c in executed["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2]
    assert "(sec-tiny)=" in "".join(restyled["cells"][0]["source"])
    assert restyled["metadata"] == executed["metadata"]
    before = src.with_suffix(".ipynb").read_text()
    src.write_text(SOURCE.replace("seed * 2", "seed * 3"))
    with pytest.raises(ValueError, match="changes code.*make notebook NB=tiny"):
        restyle_pair(src)
    assert src.with_suffix(".ipynb").read_text() == before


@pytest.mark.notebook
def test_a_failing_source_writes_nothing_and_says_why_in_one_line(tmp_path, capsys):
    src = tmp_path / "tiny.md"
    src.write_text(SOURCE)
    before = execute_pair(src).read_text()
    src.write_text(SOURCE.replace('print(f"{seed * 2:d}")', "raise KeyError('seed')"))
    with pytest.raises(SystemExit) as stop:
        main([str(src)])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"error: {src} did not run: cell In [2]: KeyError: 'seed'; nothing written"
    assert "Traceback" in err  # the kernel's traceback comes first
    assert src.with_suffix(".ipynb").read_text() == before
