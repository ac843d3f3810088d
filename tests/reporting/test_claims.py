import json

import pytest

from dpnb.reporting.claims import KEYS, VERDICTS, Claim, ClaimTable, collect, read_claims, verdict

DECLARED = [("lemma1", "Paper Lemma 1", "bound $B$"), ("thm2", "Paper Theorem 2", "sigma buys eps")]


def _table():
    t = ClaimTable("demo", DECLARED)
    t.add("thm2", "eps = 1", "eps = 1.7", verdict(False))  # recorded out of order: kept in declaration order
    t.add("lemma1", "1.000", "0.998", verdict(True))
    return t


def test_records_keys_and_order(tmp_path):
    t = _table()
    recs = t.records()
    assert [tuple(r) for r in recs] == [KEYS, KEYS]
    assert [r["id"] for r in recs] == ["lemma1", "thm2"]
    assert t.counts() == {"holds": 1, "fails": 1, "corrected": 0, "not-reproduced": 0}
    assert len(t) == 2 and t["thm2"].verdict == "fails"


def test_write_and_read_roundtrip(tmp_path):
    t = _table()
    assert t.write_json(tmp_path / "out") is None
    path = tmp_path / "out" / "claims.json"
    assert read_claims(path) == t.records()
    t.write_json(tmp_path / "x.json")
    assert collect([path, tmp_path / "x.json"]) == t.records() * 2


def test_markdown():
    md = _table().to_markdown()
    assert md.splitlines()[0] == "| id | source | statement | expected | measured | verdict |"
    assert "| thm2 | Paper Theorem 2 |" in md


def test_declared_table_is_shown_and_every_claim_needs_a_verdict(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("dpnb.reporting.claims.show_markdown", shown.append)
    t = ClaimTable("demo", DECLARED)
    t.show_claims()
    (shown,) = shown
    assert "| lemma1 | Paper Lemma 1 | bound $B$ |" in shown and "expected" not in shown
    assert t.add("lemma1", "1", "1", verdict(True)) is None  # a cell ending with add() prints no object
    assert t.missing() == ["thm2"]
    with pytest.raises(ValueError, match="never given a verdict: thm2"):
        t.write_json(tmp_path)
    assert not (tmp_path / "claims.json").exists()


def test_bad_claims():
    t = _table()
    with pytest.raises(ValueError, match="already added"):
        t.add("lemma1", "e", "m", verdict(True))
    with pytest.raises(ValueError, match="not declared in 'demo'.*declared: lemma1, thm2"):
        t.add("x", "e", "m", verdict(True))
    with pytest.raises(TypeError, match="must come from the policy"):
        ClaimTable("demo", DECLARED).add("lemma1", "e", "m", "holds")
    with pytest.raises(ValueError, match="non-empty"):
        ClaimTable("demo", DECLARED).add("lemma1", "", "m", verdict(True))
    with pytest.raises(ValueError, match="non-empty"):
        ClaimTable("demo", [("y", "", "s")])
    with pytest.raises(ValueError, match="declared twice"):
        ClaimTable("demo", DECLARED + DECLARED[:1])
    with pytest.raises(ValueError, match=r"\(id, source, statement\[, basis\]\)"):
        ClaimTable("demo", [("y", "s")])
    with pytest.raises(ValueError, match="stem"):
        ClaimTable("")
    assert set(VERDICTS) == {"holds", "fails", "corrected", "not-reproduced"}


def test_read_claims_validation(tmp_path):
    with pytest.raises(FileNotFoundError, match="run the notebook"):
        read_claims(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_claims(bad)
    bad.write_text(json.dumps({"a": 1}))
    with pytest.raises(ValueError, match="list"):
        read_claims(bad)
    bad.write_text(json.dumps([{"id": "x"}]))
    with pytest.raises(ValueError, match="keys"):
        read_claims(bad)
    rec = dict(zip(KEYS, ["n", "i", "s", "st", "e", "m", "maybe"]))
    bad.write_text(json.dumps([rec]))
    with pytest.raises(ValueError, match="verdict"):
        read_claims(bad)
    with pytest.raises(ValueError):
        Claim(*(["x"] * 6 + ["unknown"]))


def test_show_prints_verdict_lines(capsys):
    t = _table()
    t.show("thm2")
    assert capsys.readouterr().out == "claim thm2: fails\n"
    t.show()
    assert capsys.readouterr().out == "claim lemma1: holds\nclaim thm2: fails\n"
    with pytest.raises(KeyError, match="no claim 'x'"):
        t.show("x")


def test_verdict_differences_name_each_disagreement(tmp_path):
    from dpnb.reporting.claims import main, verdict_differences

    (tmp_path / "nb.json").write_text(json.dumps({"a": "holds", "b": "fails"}))
    record = {"notebook": "nb", "source": "s", "statement": "t", "expected": "e", "measured": "m"}
    claims = [{**record, "id": "a", "verdict": "holds"}, {**record, "id": "b", "verdict": "fails"}]
    assert verdict_differences(claims, tmp_path) == []
    claims[1]["verdict"] = "holds"
    claims.append({**record, "id": "c", "verdict": "holds", "notebook": "other"})
    assert verdict_differences(claims, tmp_path) == [
        "nb/b: committed fails, measured holds",
        "other: no committed verdicts at other.json",
    ]
    keys = ("notebook", "id", "source", "statement", "expected", "measured", "verdict")
    (tmp_path / "claims.json").write_text(json.dumps([{k: c[k] for k in keys} for c in claims[:2]]))
    assert main([str(tmp_path / "claims.json"), str(tmp_path)]) == 1


# The verdict policy as code (notebooks/README.md, "Verdict policy"): one case per rule, in order.
@pytest.mark.parametrize(
    ("evidence", "label", "rule"),
    [
        ({"agrees": True, "setting": "stand-in"}, "not-reproduced", "stand-in setting"),
        ({"agrees": False, "setting": "stand-in"}, "not-reproduced", "stand-in setting"),
        ({"agrees": False, "setting": "missing"}, "not-reproduced", "missing setting"),
        ({"agrees": None, "setting": "paper", "would_decide": "9,000 trials"}, "not-reproduced", "undecided"),
        ({"agrees": False}, "fails", "contradicted"),
        ({"agrees": False, "setting": "paper", "whole_range": False}, "fails", "contradicted"),
        ({"agrees": False, "corrected": True}, "corrected", "contradicted, corrected"),
        ({"agrees": True}, "holds", "confirmed over the stated range"),
        ({"agrees": True, "setting": "paper"}, "holds", "confirmed over the stated range"),
        ({"agrees": True, "whole_range": False}, "not-reproduced", "confirmed on part of the stated range"),
    ],
)
def test_verdict_policy(evidence, label, rule):
    from dpnb.reporting.claims import Verdict, verdict

    v = verdict(evidence.pop("agrees"), **evidence)
    assert isinstance(v, Verdict) and v == label and v.rule == rule
    assert json.loads(json.dumps(v)) == label


def test_verdict_policy_refuses_what_it_cannot_decide():
    import numpy as np

    from dpnb.reporting.claims import verdict

    assert verdict(np.bool_(True)) == "holds"  # a comparison of arrays is evidence too
    with pytest.raises(ValueError, match="would_decide"):
        verdict(None, setting="paper")
    with pytest.raises(ValueError, match="corrected=True needs agrees=False"):
        verdict(True, corrected=True)
    with pytest.raises(ValueError, match="corrected=True needs agrees=False"):
        verdict(False, setting="stand-in", corrected=True)
    with pytest.raises(ValueError, match="setting must be one of"):
        verdict(True, setting="paperish")
    with pytest.raises(ValueError, match="would_decide must be a non-empty string"):
        verdict(None, would_decide=" ")
    with pytest.raises(TypeError, match="agrees must be True or False"):
        verdict("yes")
    with pytest.raises(TypeError, match="whole_range must be True or False"):
        verdict(True, whole_range=1)


def test_undecided_note_goes_into_measured_once():
    from dpnb.reporting.claims import verdict

    t = ClaimTable("demo", DECLARED)
    t.add("lemma1", "1", "interval straddles 1", verdict(None, setting="paper", would_decide="9,000 trials"))
    assert t["lemma1"].measured == "interval straddles 1; undecided: 9,000 trials would decide"
    assert t["lemma1"].verdict == "not-reproduced" and type(t["lemma1"].verdict) is str


@pytest.mark.parametrize("setting", ["stand-in", "missing"])
@pytest.mark.parametrize("agrees", [True, False, None])
def test_what_would_decide_goes_into_measured_on_stand_in_or_missing_evidence(setting, agrees):
    from dpnb.reporting.claims import verdict

    t = ClaimTable("demo", DECLARED)
    v = verdict(agrees, setting=setting, would_decide="the paper's own data at n = 2,000")
    assert v == "not-reproduced" and v.note == f"{setting} setting: the paper's own data at n = 2,000 would decide"
    t.add("lemma1", "1", "measured on other data", v)
    assert t["lemma1"].measured == f"measured on other data; {v.note}"
    t.add("thm2", "1", f"measured on other data; {v.note}", v)  # already stated: not repeated
    assert t["thm2"].measured == f"measured on other data; {v.note}"
    assert verdict(agrees, setting=setting).note == ""  # optional there


def test_what_would_decide_is_not_used_once_the_claim_is_decided_or_partly_confirmed():
    from dpnb.reporting.claims import verdict

    assert verdict(False, setting="paper", would_decide="more trials").note == ""
    assert verdict(True, would_decide="more trials").note == ""
    assert verdict(True, whole_range=False, would_decide="more trials").note == ""


def test_reproduction_table_and_basis_are_generated_from_the_claims(monkeypatch):
    from dpnb.reporting.claims import verdict

    shown = []
    monkeypatch.setattr("dpnb.reporting.claims.show_markdown", shown.append)
    t = ClaimTable("demo", [(*DECLARED[0], "{prf:ref}`lem-demo-one`"), (*DECLARED[1], "{eq}`eq-demo-two`")])
    t.add("lemma1", "1.000", "0.998", verdict(True))
    t.show_reproduction("lemma1")
    assert shown[-1].splitlines()[0] == "| claim | paper reports | we measure | verdict |"
    assert "| `lemma1`: Paper Lemma 1 | 1.000 | 0.998 | holds |" in shown[-1]
    t.show_basis()
    assert shown[-1].splitlines() == [
        "- `lemma1` (holds): {prf:ref}`lem-demo-one`",
        "- `thm2` (no verdict yet): {eq}`eq-demo-two`",
    ]
    with pytest.raises(KeyError, match="add it first"):
        t.show_reproduction("thm2")
    with pytest.raises(ValueError, match="needs the ids"):
        t.show_reproduction()
    with pytest.raises(ValueError, match="without a basis: lemma1, thm2"):
        ClaimTable("demo", DECLARED).show_basis()


def test_committed_paper_claims_carry_their_evidence(tmp_path):
    from dpnb.reporting.claims import main, verdict_differences

    records = _table().records()
    run = tmp_path / "claims.json"
    run.write_text(json.dumps(records))
    assert main([str(run), str(tmp_path), "--write"]) == 0
    assert read_claims(tmp_path / "demo.json") == records  # full records, measured text included
    assert verdict_differences(records, tmp_path) == []
    changed = [dict(r, verdict="holds") for r in records]
    assert verdict_differences(changed, tmp_path) == ["demo/thm2: committed fails, measured holds"]
    (tmp_path / "demo.json").write_text(json.dumps({"lemma1": "holds", "thm2": "fails"}))  # the short form
    assert verdict_differences(records, tmp_path) == []
