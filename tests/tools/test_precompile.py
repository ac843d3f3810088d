"""dpnb.tools.precompile: the committed kernel list, recording it from a cache, compiling it once, bad input."""

import inspect
import os
import subprocess
import sys

import pytest

from dpnb.tools import precompile

TOY = """
import numba


@numba.njit(cache=True)
def twice(x):
    return 2 * x


@numba.njit(cache=True)
def total(a, b):
    return a.sum() + b


@numba.njit
def uncached(x):
    return x
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A package ``toykernels`` with two cached kernels and one uncached, importable from ``tmp_path``."""
    package = tmp_path / "toykernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(TOY)
    (package / "plain.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("toykernels")]:
        del sys.modules[name]


def test_the_committed_list_names_the_packages_cached_kernels_with_signatures_of_their_arity():
    listed = precompile.read_signatures(precompile.SIGNATURES)
    kernels = precompile.cached_kernels()
    assert listed and set(listed) <= set(kernels), sorted(set(listed) - set(kernels))
    for name, sigs in listed.items():
        arity = len(inspect.signature(kernels[name].py_func).parameters)
        assert all(len(precompile.parse_signature(s)) == arity for s in sigs), name
    # the kernels whose whole work is compiled: RON-Gauss's passes, the Bingham samplers, the validation passes
    assert {"dpnb.papers.ron_gauss._unit_row_sums", "dpnb.numerics.bingham._acg_proposals"} <= set(listed)
    assert "dpnb.ground.compiled.first_row_outside" in listed


def test_record_then_precompile_in_fresh_processes_compiles_once_then_loads(toy):
    run = [sys.executable, "-c"]
    use = "import numpy as np, toykernels.kernels as k; k.twice(1); k.twice(1.5); k.total(np.ones(3), 2)"
    subprocess.run([*run, use], check=True, env=_environment())
    kernels = precompile.cached_kernels("toykernels")
    assert set(kernels) == {"toykernels.kernels.twice", "toykernels.kernels.total"}  # not the uncached one
    recorded = precompile.recorded_signatures(kernels)
    assert recorded == {
        "toykernels.kernels.twice": ["(float64,)", "(int64,)"],
        "toykernels.kernels.total": ["(Array(float64, 1, 'C', False, aligned=True), int64)"],
    }
    listing = toy / "signatures.txt"
    precompile.write_signatures(recorded, listing)
    assert precompile.read_signatures(listing) == {name: sorted(sigs) for name, sigs in sorted(recorded.items())}
    for cache in (toy / "toykernels" / "__pycache__").glob("*.nb[ic]"):
        cache.unlink()
    check = (
        "import sys; from dpnb.tools import precompile as p; "
        f"print(p.precompile(p.read_signatures({str(listing)!r}), int(sys.argv[1])))"
    )
    first = subprocess.run([*run, check, "2"], check=True, capture_output=True, text=True, env=_environment())
    second = subprocess.run([*run, check, "1"], check=True, capture_output=True, text=True, env=_environment())
    assert first.stdout.strip() == "(3, 0, [])"  # compiled now, in two processes
    assert second.stdout.strip() == "(0, 3, [])"  # then loaded from the cache


def test_a_stale_signature_or_kernel_is_reported_and_the_rest_still_compile(toy):
    compiled, loaded, problems = precompile.compile_kernels(
        {
            "toykernels.kernels.twice": ["(int64, int64)", "(int64,)"],  # twice takes one argument
            "toykernels.kernels.gone": ["(int64,)"],
            "toykernels.missing.twice": ["(int64,)"],
        }
    )
    assert compiled + loaded == 1
    assert [p.split(":")[0] for p in problems] == [
        "toykernels.kernels.twice(int64, int64)",
        "toykernels.kernels.gone",
        "toykernels.missing.twice",
    ]


def test_split_keeps_each_kernel_in_one_part_and_balances_the_counts():
    signatures = {f"m.k{i}": ["s"] * n for i, n in enumerate([5, 1, 4, 2, 3, 3])}
    parts = precompile.split(signatures, 2)
    assert sorted(name for part in parts for name in part) == sorted(signatures)
    assert sorted(sum(map(len, part.values())) for part in parts) == [9, 9]
    assert len(precompile.split(signatures, 10)) == len(signatures)
    assert precompile.split({}, 2) == [{}]


@pytest.mark.parametrize(
    "text, match",
    [
        ("(Array(float64, 1, 'C'),", "not a numba signature"),
        ("(__import__('os'),)", "not a numba signature"),
        ("(1, 2)", "not a numba signature"),
        ("(np.float64,)", "not a numba signature"),
    ],
)
def test_parse_signature_refuses_anything_but_numba_types(text, match):
    with pytest.raises(ValueError, match=match):
        precompile.parse_signature(text)


@pytest.mark.parametrize(
    "line",
    ["kernel\t(int64,)", "m.kernel (int64,)", "m.kernel\t", "m.kernel\t  "],
)
def test_read_signatures_refuses_a_malformed_line_naming_it(tmp_path, line):
    path = tmp_path / "s.txt"
    path.write_text(f"# header\n\nm.ok\t(int64,)\n{line}\n")
    with pytest.raises(ValueError, match=r"s\.txt:4: expected 'module\.kernel<TAB>signature'"):
        precompile.read_signatures(path)


def test_main_refuses_zero_jobs_and_records_into_the_list(monkeypatch, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        precompile.main(["--jobs", "0"])
    assert stop.value.code == 2 and "--jobs must be at least 1" in capsys.readouterr().err
    listing = tmp_path / "kernel_signatures.txt"
    monkeypatch.setattr(precompile, "SIGNATURES", listing)
    monkeypatch.setattr(precompile, "cached_kernels", lambda: {})
    monkeypatch.setattr(precompile, "recorded_signatures", lambda kernels: {"m.k": ["(int64,)"]})
    assert precompile.main(["--record"]) == 0
    assert precompile.read_signatures(listing) == {"m.k": ["(int64,)"]}
    assert "1 specializations of 1 kernels" in capsys.readouterr().out


def _environment():
    """This environment with this process's import path, so that a child finds ``toykernels`` and dpnb."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))}
