"""Print the table of ``make fuzz``: per entry point, the generated cases and the failures.

Usage: ``python tests/properties_report.py DIR`` where DIR holds the ``tally-*.json`` files that
tests/papers/test_properties.py writes when ``DPNB_FUZZ_REPORT=DIR`` is set (one per pytest worker).
``known`` counts the failures raised inside ``dpnb.privacy.exact_noise`` (issue 32's exact-sampler
classes), which the properties count apart instead of failing, and their messages are listed below
the table; the exit status is 1 if any other failure was counted.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path


def main(directory: str) -> int:
    totals = defaultdict(lambda: [0, 0, 0, set()])
    known = defaultdict(set)
    for path in sorted(Path(directory).glob("tally-*.json")):
        tally = json.loads(path.read_text())
        for name, messages in tally["known"].items():
            known[name].update(messages)
        for row in tally["rows"]:
            entry = totals[row["entry"]]
            entry[0] += row["cases"]
            entry[1] += row["failures"]
            entry[2] += row["known"]
            entry[3].add(row["property"])
    if not totals:
        print(f"no tallies in {directory}")
        return 1
    width = max(len(name) for name in totals)
    print(f"{'entry point':<{width}}  {'properties':>10}  {'cases':>7}  {'failures':>8}  {'known':>5}")
    for name in sorted(totals):
        cases, failures, n_known, props = totals[name]
        print(f"{name:<{width}}  {len(props):>10}  {cases:>7}  {failures:>8}  {n_known:>5}")
    cases, failures, n_known = (sum(v[i] for v in totals.values()) for i in range(3))
    print(f"{'total':<{width}}  {'':>10}  {cases:>7}  {failures:>8}  {n_known:>5}")
    if known:
        print("\nknown failures (raised inside dpnb.privacy.exact_noise):")
        for name in sorted(known):
            for message in sorted(known[name]):
                print(f"  {name}: {message}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz"))
