"""The verdict tables, from the tested verdicts: the book's landing page and the README's.

``tests/expected_verdicts/<stem>.json`` holds every notebook's claim ids and verdicts, and the
test suite checks that a fresh run of each notebook reproduces them; the tables therefore say
exactly what the committed notebooks say. Chapters appear in the order of the book's table of
contents (``book/_toc.yml``).

``python book/verdicts.py`` writes ``book/_verdicts.md`` (``make book`` runs it);
``python book/verdicts.py --readme`` rewrites the table in ``README.md`` in place.
"""

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("holds", "fails", "corrected", "not-reproduced")


def chapter_order() -> list[str]:
    """The notebooks' stems in the order the table of contents lists them."""
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [f.split("/", 1)[1] for f in files if f.startswith("notebooks/")]


def committed() -> dict[str, dict[str, str]]:
    """``{stem: {claim id: verdict}}`` of the fast profile, in the table of contents' order."""
    files = {p.stem: json.loads(p.read_text()) for p in (ROOT / "tests" / "expected_verdicts").glob("*.json")}
    order = chapter_order()
    missing = sorted(set(files) - set(order))
    if missing:
        raise SystemExit(f"error: verdicts of {', '.join(missing)} but no such chapter in book/_toc.yml")
    return {stem: files[stem] for stem in order if stem in files}


def _counts(claims) -> list[int]:
    return [sum(v == verdict for v in claims.values()) for verdict in VERDICTS]


def book_table(files) -> str:
    lines = [
        "| chapter | " + " | ".join(VERDICTS) + " | claims that do not hold as stated |",
        "|---|" + "---|" * len(VERDICTS) + "---|",
    ]
    for stem, claims in files.items():
        others = ", ".join(f"`{cid}` ({v})" for cid, v in claims.items() if v != "holds") or "none"
        lines.append(f"| {{doc}}`/notebooks/{stem}` | " + " | ".join(map(str, _counts(claims))) + f" | {others} |")
    totals = [sum(c) for c in zip(*(_counts(c) for c in files.values()))]
    lines.append("| **total** | " + " | ".join(f"**{t}**" for t in totals) + " | |")
    return "\n".join(lines) + "\n"


def readme_table(files) -> str:
    lines = ["| notebook | " + " | ".join(VERDICTS) + " |", "|---|" + "---|" * len(VERDICTS)]
    lines += [f"| {stem} | " + " | ".join(map(str, _counts(c))) + " |" for stem, c in files.items()]
    totals = [sum(c) for c in zip(*(_counts(c) for c in files.values()))]
    lines.append("| **total** | " + " | ".join(f"**{t}**" for t in totals) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    files = committed()
    if argv == ["--readme"]:
        readme = ROOT / "README.md"
        text = readme.read_text()
        pattern = re.compile(r"^\| notebook \| holds \|.*?^\| \*\*total\*\* \|[^\n]*\n", re.M | re.S)
        if not pattern.search(text):
            raise SystemExit("error: README.md has no verdict table to rewrite")
        readme.write_text(pattern.sub(lambda _: readme_table(files), text, count=1))
        return 0
    if argv:
        raise SystemExit("usage: python book/verdicts.py [--readme]")
    (ROOT / "book" / "_verdicts.md").write_text(book_table(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
