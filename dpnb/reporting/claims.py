"""Claims tables: what a paper states, what we measured, and the verdict.

Each notebook declares its claims once, at the top of its Claims section, as a
:class:`ClaimTable` of ``(id, source, statement)`` rows, and shows that table
(:meth:`ClaimTable.show_claims`); each experiment then records what was expected, what was
measured and the verdict for its ids (:meth:`ClaimTable.add`). The notebook shows the filled
table at the end and writes it as JSON; ``make run``
gathers every notebook's file into ``results/claims.json`` with :func:`collect`. The JSON
keys are a stable interface read by tests and reports: ``notebook``, ``id``, ``source``,
``statement``, ``expected``, ``measured``, ``verdict``.

Every verdict comes from one function, :func:`verdict`, the written verdict policy
(``notebooks/README.md``, "Verdict policy") as code: a chapter names its evidence (does it agree
with the statement, in which setting, over the whole stated range, is a corrected bound proved
and used) and never writes a verdict label itself; :meth:`ClaimTable.add` accepts only what
:func:`verdict` returns.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from dpnb.reporting.report import markdown_table, show_markdown

VERDICTS = ("holds", "fails", "corrected", "not-reproduced")
KEYS = ("notebook", "id", "source", "statement", "expected", "measured", "verdict")
SETTINGS = ("exact", "paper", "stand-in", "missing")


class Verdict(str):
    """A verdict label as :func:`verdict` returns it: the label, plus the policy rule that gave it.

    A ``str`` subclass (it compares, prints and serialises as its label); ``rule`` names the rule
    of the policy that decided, and ``note`` is text the policy requires in ``measured`` (the
    trials that would decide an undecided claim), or ``""``.
    """

    rule: str
    note: str

    def __new__(cls, label: str, rule: str, note: str = ""):
        self = super().__new__(cls, label)
        self.rule = rule
        self.note = note
        return self


def _flag(value, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):  # from a comparison of arrays
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def verdict(
    agrees,
    *,
    setting: str = "exact",
    whole_range: bool = True,
    corrected: bool = False,
    would_decide: str | None = None,
) -> Verdict:
    """The verdict the written policy gives to one claim's evidence.

    Parameters
    ----------
    agrees : bool or None
        What the evidence says of the statement **as the paper states it**: ``True``, it is
        confirmed (no counterexample, intervals on the statement's side); ``False``, it is
        contradicted (an explicit counterexample, an exact computation, or a measurement whose
        interval excludes the statement decisively); ``None``, undecided (an interval straddles
        the claimed value, too few trials).
    setting : {"exact", "paper", "stand-in", "missing"}
        Where the evidence comes from. ``"exact"``: data-free (a proof, an exact computation, an
        explicit worst-case pair, a search over the stated range), which is the paper's setting by
        construction. ``"paper"``: a measurement in the paper's own setting (its data and
        parameters). ``"stand-in"``: other data or a substitute for something the paper used.
        ``"missing"``: the paper's setting cannot be run at all (data, baselines or code not
        available offline).
    whole_range : bool
        Whether the evidence covers the whole range the claim is stated for (every dimension,
        n, epsilon and neighbour relation its proof uses). Needed for ``holds``; a contradiction
        anywhere in the range is enough for ``fails``, whatever the coverage.
    corrected : bool
        The notebook proves a corrected statement and the ``dpnb`` module uses it (its audit
        passed). Only meaningful when ``agrees`` is ``False``.
    would_decide : str, optional
        What would decide the claim (for example ``"about 40,000 trials per arm"``, or ``"the
        paper's own data set"``). Required for an undecided claim in the exact or paper setting;
        optional on stand-in or missing evidence. Whenever the verdict is ``not-reproduced`` by
        rule 1 or 2 below, it is returned in the verdict's ``note`` so that
        :meth:`ClaimTable.add` puts it in ``measured``; on a decided claim (or one confirmed on part
        of its range, rule 4) it is not used.

    Returns
    -------
    Verdict
        One of ``holds``, ``fails``, ``corrected``, ``not-reproduced``, by these rules in order:

        1. ``setting`` is ``"stand-in"`` or ``"missing"``: ``not-reproduced`` (a result on stand-in
           data is never ``fails``, nor ``holds``).
        2. ``agrees is None``: ``not-reproduced``, with ``would_decide`` as its note.
        3. ``agrees is False``: ``corrected`` if ``corrected``, else ``fails``.
        4. ``agrees is True``: ``holds`` if ``whole_range``, else ``not-reproduced`` (confirmed on
           part of the stated range only).

    Raises
    ------
    ValueError
        ``setting`` not one of ``SETTINGS``; ``corrected`` without a contradiction, or on
        stand-in evidence; an undecided claim in the paper's setting without ``would_decide``.
    TypeError
        ``agrees`` not a bool or None, or a flag not a bool.

    Examples
    --------
    >>> verdict(True)
    'holds'
    >>> verdict(False, corrected=True)
    'corrected'
    >>> verdict(True, setting="stand-in")
    'not-reproduced'
    >>> v = verdict(None, setting="paper", would_decide="about 4,000 trials")
    >>> v, v.note
    ('not-reproduced', 'undecided: about 4,000 trials would decide')
    >>> verdict(True, setting="stand-in", would_decide="the paper's own data").note
    "stand-in setting: the paper's own data would decide"
    """
    if agrees is not None:
        agrees = _flag(agrees, "agrees")
    whole_range = _flag(whole_range, "whole_range")
    corrected = _flag(corrected, "corrected")
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    if would_decide is not None and (not isinstance(would_decide, str) or not would_decide.strip()):
        raise ValueError(f"would_decide must be a non-empty string (what would decide the claim), got {would_decide!r}")
    if corrected and (agrees is not False or setting in ("stand-in", "missing")):
        raise ValueError(
            "corrected=True needs agrees=False in the exact or paper setting: a corrected statement "
            "replaces one the evidence contradicts"
        )
    if setting in ("stand-in", "missing"):
        note = "" if would_decide is None else f"{setting} setting: {would_decide} would decide"
        return Verdict("not-reproduced", f"{setting} setting", note)
    if agrees is None:
        if would_decide is None:
            raise ValueError(
                "an undecided claim in the exact or paper setting needs would_decide: say what would decide it "
                "(for example the number of trials)"
            )
        return Verdict("not-reproduced", "undecided", f"undecided: {would_decide} would decide")
    if agrees is False:
        return Verdict("corrected", "contradicted, corrected") if corrected else Verdict("fails", "contradicted")
    if not whole_range:
        return Verdict("not-reproduced", "confirmed on part of the stated range")
    return Verdict("holds", "confirmed over the stated range")


@dataclass(frozen=True)
class Claim:
    """One audited claim. All fields are text; numbers are formatted by the caller."""

    notebook: str
    id: str
    source: str
    statement: str
    expected: str
    measured: str
    verdict: str

    def __post_init__(self):
        for key in KEYS:
            value = getattr(self, key)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"claim field {key!r} must be a non-empty string, got {value!r}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


class ClaimTable:
    """The claims of one notebook: declared once, each then given its verdict.

    Parameters
    ----------
    notebook : str
        The notebook's file stem (e.g. ``"dppro"``).
    claims : sequence of (id, source, statement) or (id, source, statement, basis)
        What the paper states, in the order the Claims section lists it; Markdown (with math) in
        ``source`` and ``statement`` is shown as written. ``basis`` (MyST, e.g.
        ``"{prf:ref}`lem-dppro-norm`"``) names the derivation and audit the verdict rests on;
        :meth:`show_basis` lists it under the Verdicts heading.
    """

    def __init__(self, notebook: str, claims=()):
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValueError("notebook must be the notebook's file stem, e.g. 'dppro'")
        self.notebook = notebook
        self._declared: dict[str, tuple[str, str]] = {}
        self._basis: dict[str, str] = {}
        for row in claims:
            if not isinstance(row, (tuple, list)) or len(row) not in (3, 4):
                raise ValueError(f"each declared claim must be (id, source, statement[, basis]), got {row!r}")
            names = ("id", "source", "statement", "basis")
            for key, value in zip(names, row):
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"claim field {key!r} must be a non-empty string, got {value!r}")
            claim_id, source, statement = row[:3]
            if claim_id in self._declared:
                raise ValueError(f"claim id {claim_id!r} is declared twice in {notebook!r}; ids must be unique")
            self._declared[claim_id] = (source, statement)
            if len(row) == 4:
                self._basis[claim_id] = row[3]
        self._claims: dict[str, Claim] = {}

    def show_claims(self) -> None:
        """Show the declared claims as a Markdown table: id | source | statement."""
        rows = [{"id": i, "source": s, "statement": st} for i, (s, st) in self._declared.items()]
        show_markdown(markdown_table(rows, columns=("id", "source", "statement")))

    def add(self, id: str, expected: str, measured: str, verdict: Verdict) -> None:
        """Give the declared claim ``id`` its expected value, measurement and verdict (once).

        ``verdict`` is what :func:`verdict` returned for the claim's evidence; its note (the
        trials that would decide an undecided claim) is appended to ``measured``. Returns
        nothing, so that a cell may end with it without printing an object; read a claim back
        with ``table[id]``.
        """
        if id not in self._declared:
            raise ValueError(
                f"claim {id!r} is not declared in {self.notebook!r}; declare it in the ClaimTable first "
                f"(declared: {', '.join(self._declared) or 'none'})"
            )
        if id in self._claims:
            raise ValueError(f"claim id {id!r} was already added to {self.notebook!r}; ids must be unique")
        if not isinstance(verdict, Verdict):
            raise TypeError(
                f"claim {id!r}: the verdict must come from the policy, verdict(agrees, setting=..., ...), "
                f"not a label typed by hand ({verdict!r})"
            )
        note = verdict.note
        if note and note not in measured:
            measured = f"{measured}; {note}"
        self._claims[id] = Claim(self.notebook, id, *self._declared[id], expected, measured, str(verdict))

    def show_reproduction(self, *ids: str) -> None:
        """Show the claims ``ids`` as a reproduction table: paper reports | we measure | verdict.

        Generated from the claims themselves (``source`` and ``statement`` as declared,
        ``expected`` as what the paper reports), so no statement or verdict is typed twice.
        """
        if not ids:
            raise ValueError("show_reproduction needs the ids of the claims to show")
        rows = []
        for claim_id in ids:
            if claim_id not in self._claims:
                raise KeyError(f"no claim {claim_id!r} in {self.notebook!r}; add it first")
            c = self._claims[claim_id]
            rows.append(
                {
                    "claim": f"`{c.id}`: {c.source}",
                    "paper reports": c.expected,
                    "we measure": c.measured,
                    "verdict": c.verdict,
                }
            )
        show_markdown(markdown_table(rows, columns=("claim", "paper reports", "we measure", "verdict")))

    def show_basis(self) -> None:
        """Show, one line per claim, its verdict and the derivation or audit it rests on (MyST)."""
        missing = [i for i in self._declared if i not in self._basis]
        if missing:
            raise ValueError(f"claims declared in {self.notebook!r} without a basis: {', '.join(missing)}")
        lines = [
            f"- `{i}` ({self._claims[i].verdict if i in self._claims else 'no verdict yet'}): {self._basis[i]}"
            for i in self._declared
        ]
        show_markdown("\n".join(lines))

    def missing(self) -> list[str]:
        """Declared ids that have no verdict yet, in declaration order."""
        return [i for i in self._declared if i not in self._claims]

    def __len__(self) -> int:
        return len(self._claims)

    def __getitem__(self, id: str) -> Claim:
        return self._claims[id]

    def records(self) -> list[dict]:
        """The claims as dicts with the stable keys, in declaration order."""
        return [{k: asdict(self._claims[i])[k] for k in KEYS} for i in self._declared if i in self._claims]

    def counts(self) -> dict[str, int]:
        """Number of claims per verdict."""
        return {v: sum(c.verdict == v for c in self._claims.values()) for v in VERDICTS}

    def show(self, *ids: str) -> None:
        """Print the verdict of each claim in ``ids`` (all claims if none), one line each, in one write."""
        lines = []
        for claim_id in ids or tuple(i for i in self._declared if i in self._claims):
            if claim_id not in self._claims:
                raise KeyError(f"no claim {claim_id!r} in {self.notebook!r}; add it first")
            lines.append(f"claim {claim_id}: {self._claims[claim_id].verdict}\n")
        print("".join(lines), end="")

    def to_markdown(self) -> str:
        """A Markdown table: id | source | statement | expected | measured | verdict."""
        return markdown_table(self.records(), columns=KEYS[1:])

    def write_json(self, path) -> None:
        """Write the claims to ``path`` (a ``.json`` file, or a directory to hold ``claims.json``).

        Every declared claim must have its verdict by then. Returns nothing, so that it can end a
        notebook cell without printing a path.
        """
        if self.missing():
            raise ValueError(
                f"claims declared in {self.notebook!r} but never given a verdict: {', '.join(self.missing())}"
            )
        path = Path(path)
        if path.suffix != ".json":
            path = path / "claims.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.records(), indent=2) + "\n")


def read_claims(path) -> list[dict]:
    """Read and validate a claims JSON file written by :meth:`ClaimTable.write_json`."""
    path = Path(path)
    try:
        records = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"no claims file at {path}; run the notebook first") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(records, list):
        raise ValueError(f"{path} must hold a JSON list of claims")
    for record in records:
        if not isinstance(record, dict) or tuple(record) != KEYS:
            raise ValueError(f"{path}: every claim must have exactly the keys {KEYS}, got {record!r}")
        Claim(**record)  # validates the verdict and non-empty fields
    return records


def collect(paths) -> list[dict]:
    """Concatenate several claims files (in the given order) into one list."""
    out = []
    for p in paths:
        out.extend(read_claims(p))
    return out


def _committed_verdicts(path: Path) -> dict[str, str]:
    """``{id: verdict}`` from a committed file: a mapping, or a list of claim records (full evidence)."""
    data = json.loads(path.read_text())
    if isinstance(data, list):
        return {r["id"]: r["verdict"] for r in read_claims(path)}
    return data


def verdict_differences(claims, expected_dir) -> list[str]:
    """Where gathered claims disagree with the committed verdicts ``expected_dir/<notebook>.json``.

    ``claims`` is a list of claim records (:func:`read_claims`, or a run's gathered
    ``claims.json``); each notebook among them is compared with its committed file, either
    ``{id: verdict}`` or the full claim records :func:`write_committed` writes. A notebook without
    a committed file, a claim missing on either side, or another verdict is one line each; an empty
    list means every verdict is the committed one.
    """
    expected_dir = Path(expected_dir)
    by_notebook: dict[str, dict[str, str]] = {}
    for record in claims:
        by_notebook.setdefault(record["notebook"], {})[record["id"]] = record["verdict"]
    problems = []
    for notebook, got in sorted(by_notebook.items()):
        path = expected_dir / f"{notebook}.json"
        if not path.is_file():
            problems.append(f"{notebook}: no committed verdicts at {path.name}")
            continue
        want = _committed_verdicts(path)
        for claim_id in sorted(set(want) | set(got)):
            if want.get(claim_id) != got.get(claim_id):
                problems.append(f"{notebook}/{claim_id}: committed {want.get(claim_id)}, measured {got.get(claim_id)}")
    return problems


def write_committed(claims, expected_dir) -> list[str]:
    """Write each notebook's claim records (full evidence) to ``expected_dir/<notebook>.json``.

    Returns the notebooks written. Used to commit the paper profile's claims with their
    ``measured`` text, so every committed verdict shows its evidence.
    """
    expected_dir = Path(expected_dir)
    by_notebook: dict[str, list[dict]] = {}
    for record in claims:
        by_notebook.setdefault(record["notebook"], []).append({k: record[k] for k in KEYS})
    for notebook, records in sorted(by_notebook.items()):
        path = expected_dir / f"{notebook}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
        tmp.replace(path)
    return sorted(by_notebook)


def main(argv=None) -> int:
    """``python -m dpnb.reporting.claims CLAIMS.json EXPECTED_DIR [--write]``: compare a run's verdicts with
    the committed ones, or (``--write``) commit the run's claims of the notebooks it ran."""
    import argparse

    parser = argparse.ArgumentParser(description="Compare a run's verdicts with the committed ones")
    parser.add_argument("claims", help="a run's gathered claims.json (results/claims.json)")
    parser.add_argument("expected", help="folder of <notebook>.json verdict files (tests/expected_verdicts/paper)")
    parser.add_argument(
        "--write", action="store_true", help="write the run's claims (with their evidence) into the folder instead"
    )
    args = parser.parse_args(argv)
    try:
        claims = read_claims(args.claims)
        if args.write:
            for notebook in write_committed(claims, args.expected):
                print(f"wrote {notebook}")
            return 0
        problems = verdict_differences(claims, args.expected)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")
    for line in problems:
        print(line)
    print(f"{len(problems)} verdict(s) differ" if problems else "every verdict is the committed one")
    return 1 if problems else 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
