"""Write the landing page's verdict table (book/_verdicts.md) from the tested verdicts.

``tests/expected_verdicts/<stem>.json`` holds every notebook's claim ids and verdicts, and the
test suite checks that a fresh run of each notebook reproduces them; the table therefore says
exactly what the committed notebooks say.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("holds", "fails", "corrected", "not-reproduced")
ORDER = [
    "primer",
    "foundations",
    "dppro",
    "ron_gauss",
    "pca_gauss",
    "component_analysis",
    "private_pca",
    "library_samplers",
]


def main() -> int:
    files = {p.stem: json.loads(p.read_text()) for p in (ROOT / "tests" / "expected_verdicts").glob("*.json")}
    stems = [s for s in ORDER if s in files] + sorted(set(files) - set(ORDER))
    lines = [
        "| chapter | " + " | ".join(VERDICTS) + " | claims that do not hold as stated |",
        "|---|" + "---|" * len(VERDICTS) + "---|",
    ]
    for stem in stems:
        claims = files[stem]
        counts = [sum(v == verdict for v in claims.values()) for verdict in VERDICTS]
        others = ", ".join(f"`{cid}` ({v})" for cid, v in claims.items() if v != "holds") or "none"
        lines.append(f"| {{doc}}`/notebooks/{stem}` | " + " | ".join(map(str, counts)) + f" | {others} |")
    totals = [sum(v == verdict for c in files.values() for v in c.values()) for verdict in VERDICTS]
    lines.append("| **total** | " + " | ".join(f"**{t}**" for t in totals) + " | |")
    (ROOT / "book" / "_verdicts.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
