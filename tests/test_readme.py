"""The README's verdict table says what the committed notebooks say (tests/expected_verdicts)."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("holds", "fails", "corrected", "not-reproduced")


def test_readme_verdict_counts_match_the_expected_verdicts():
    expected = {p.stem: json.loads(p.read_text()) for p in (ROOT / "tests" / "expected_verdicts").glob("*.json")}
    text = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| (\w+) \| (\d+ \| \d+ \| \d+ \| \d+) \|$", text, re.M))
    assert set(rows) == set(expected), "the README's verdict table needs one row per notebook"
    for stem, claims in expected.items():
        counts = " | ".join(str(sum(v == verdict for v in claims.values())) for verdict in VERDICTS)
        assert rows[stem] == counts, f"README row {stem}: {rows[stem]}, expected verdicts give {counts}"
    totals = " | ".join(f"**{sum(v == w for c in expected.values() for v in c.values())}**" for w in VERDICTS)
    assert f"| **total** | {totals} |" in text


def test_readme_table_is_the_generated_one():
    """``python book/verdicts.py --readme`` writes the table; the committed README holds exactly what it writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("verdicts", ROOT / "book" / "verdicts.py")
    verdicts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verdicts)
    assert verdicts.readme_table(verdicts.committed()) in (ROOT / "README.md").read_text()
    assert list(verdicts.committed()) == [s for s in verdicts.chapter_order() if s in verdicts.committed()]


def test_readme_example_runs_as_printed(capsys):
    """The README's package example is executed, and prints what its last comment says."""
    text = (ROOT / "README.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    assert printed == code.strip().splitlines()[-1].split("# ", 1)[1]


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 120
