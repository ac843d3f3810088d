"""Print the table of ``make fuzz``: per entry point, the generated cases and the failures.

Usage: ``python tests/properties_report.py DIR`` where DIR holds the ``tally-*.json`` files that
tests/papers/test_properties.py writes when ``DPNB_FUZZ_REPORT=DIR`` is set (one per pytest worker; several
runs on slices of the properties may write into the same DIR, and their counts add up). The exit
status is 1 if any failure was counted.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path


def main(directory: str) -> int:
    totals = defaultdict(lambda: [0, 0, set()])
    for path in sorted(Path(directory).glob("tally-*.json")):
        for row in json.loads(path.read_text())["rows"]:
            entry = totals[row["entry"]]
            entry[0] += row["cases"]
            entry[1] += row["failures"]
            entry[2].add(row["property"])
    if not totals:
        print(f"no tallies in {directory}")
        return 1
    width = max(len(name) for name in totals)
    print(f"{'entry point':<{width}}  {'properties':>10}  {'cases':>7}  {'failures':>8}")
    for name in sorted(totals):
        cases, failures, props = totals[name]
        print(f"{name:<{width}}  {len(props):>10}  {cases:>7}  {failures:>8}")
    cases, failures = (sum(v[i] for v in totals.values()) for i in range(2))
    print(f"{'total':<{width}}  {'':>10}  {cases:>7}  {failures:>8}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz"))
