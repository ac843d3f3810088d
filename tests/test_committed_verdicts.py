"""The fast and paper profiles' committed verdicts never contradict each other (notebooks/README.md, "Profiles").

The fast profile may leave a claim undecided (``not-reproduced``) that the paper profile decides; it may not
decide it the other way. Both profiles declare the same claims.
"""

import json
from pathlib import Path

import pytest

from dpnb.reporting.claims import _committed_verdicts

EXPECTED = Path(__file__).parent / "expected_verdicts"
STEMS = sorted(p.stem for p in EXPECTED.glob("*.json"))
DECIDED_HOLDS = {"holds"}
DECIDED_FALSE = {"fails", "corrected"}


@pytest.mark.parametrize("stem", STEMS)
def test_profiles_never_contradict(stem):
    fast = json.loads((EXPECTED / f"{stem}.json").read_text())
    paper = _committed_verdicts(EXPECTED / "paper" / f"{stem}.json")
    assert set(fast) == set(paper), "both profiles declare the same claims"
    contradictions = [
        f"{claim}: fast {fast[claim]}, paper {paper[claim]}"
        for claim in fast
        if {fast[claim], paper[claim]} & DECIDED_HOLDS and {fast[claim], paper[claim]} & DECIDED_FALSE
    ]
    assert not contradictions
    undecided_in_paper = [c for c in fast if paper[c] == "not-reproduced" and fast[c] != "not-reproduced"]
    assert not undecided_in_paper, "a claim the fast profile decides, the paper profile (more trials) decides too"
