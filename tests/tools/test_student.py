"""The student edition (make student): every chapter without its solutions, everything else kept."""

import nbformat
import pytest

from dpnb.reporting.exercises import check_cell
from dpnb.tools import student

ROOT = student.ROOT
CHAPTERS = student.chapters(ROOT / "notebooks")


def _md(source):
    return nbformat.v4.new_markdown_cell(source)


def _solution_cell(source="# Solutions, re-executed by `make test`.\nprint(42)", tags=("hide-cell",)):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)})


EXERCISES = "## Exercises\n\n1. Derive it.\n\n:::{admonition} Solutions\n:class: dropdown\n1. It is 42.\n:::\n"


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    stems = student.write_edition(out)
    return out / "notebooks", stems


def test_every_chapter_is_written_as_a_pair(edition):
    folder, stems = edition
    assert stems == [p.stem for p in CHAPTERS] and len(stems) >= 8
    for stem in stems:
        assert (folder / f"{stem}.md").is_file() and (folder / f"{stem}.ipynb").is_file()


def test_the_scripts_chapters_offer_for_download_come_along(edition):
    folder, _ = edition  # the student book's {download} links need them (a missing one fails its -W build)
    scripts = sorted(p.name for p in (ROOT / "notebooks" / "bug_reports").glob("*.py"))
    assert scripts and scripts == sorted(p.name for p in (folder / "bug_reports").glob("*.py"))


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_solution_text_or_code_and_everything_else_kept(edition, path):
    folder, _ = edition
    teacher = nbformat.read(path, as_version=4)
    pupil = nbformat.read(folder / path.name, as_version=4)
    text = (folder / f"{path.stem}.md").read_text() + "\n".join(c.source for c in pupil.cells)
    assert ":::{admonition} Solutions" not in text and "# Solutions" not in text
    solution_lines = [
        line.strip()
        for c in teacher.cells
        for span in [student._solution_block(c.source) if c.cell_type == "markdown" else None]
        for line in (c.source[span[0] : span[1]] if span else "").splitlines()[2:-1]
        if len(line.strip()) > 30
    ]
    assert solution_lines, "the instructor edition has solution prose"
    assert not [line for line in solution_lines if line in text]
    index = next(i for i, c in enumerate(teacher.cells) if c.source.lstrip().startswith("# Solutions"))
    printed = "".join(o.get("text", "") for o in teacher.cells[index].outputs if o.get("name") == "stdout")
    checks = check_cell(printed)  # None unless the solution cell recorded answers
    kept = teacher.cells[:index] + ([] if checks is None else [None]) + teacher.cells[index + 1 :]
    assert len(pupil.cells) == len(kept), (
        "exactly the solution cell goes (its check cell in its place); the exercises stay"
    )
    exercises = next(c.source for c in pupil.cells if "## Exercises" in c.source)
    assert "1. " in exercises and "2. " in exercises
    for before, after in zip(kept, pupil.cells, strict=True):
        if before is None:
            assert after.source == checks and not after.outputs, "one check() line per recorded answer, no output"
        elif "## Exercises" not in before.source:
            assert after == before, "every other cell, outputs included, is the instructor's"


def test_strip_solutions_on_a_small_notebook():
    nb = nbformat.v4.new_notebook(cells=[_md("# Title"), _md(EXERCISES), _solution_cell()])
    out = student.strip_solutions(nb, "demo")
    assert [c.source for c in out.cells] == ["# Title", "## Exercises\n\n1. Derive it.\n"]
    assert len(nb.cells) == 3, "the input notebook is not changed"


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([_md("# no exercises"), _solution_cell()], "expected one '## Exercises' section, found 0"),
        ([_md(EXERCISES)], "found 1 and 0"),
        ([_md(EXERCISES), _solution_cell(), _solution_cell()], "found 1 and 2"),
        ([_md(EXERCISES), _solution_cell(tags=())], "must be tagged hide-cell"),
        ([_md(":::{admonition} Solutions\nleak\n:::\n"), _md(EXERCISES), _solution_cell()], "before the Exercises"),
        ([_md("## Exercises\n:::{admonition} Solutions\nnever closed"), _solution_cell()], "never closed"),
        ([_md(EXERCISES + "\n" + EXERCISES.split("\n\n", 2)[2]), _solution_cell()], "more than one"),
    ],
)
def test_a_chapter_off_the_convention_is_refused(cells, message):
    with pytest.raises(ValueError, match=message):
        student.strip_solutions(nbformat.v4.new_notebook(cells=cells), "demo")


def test_solution_leaks_finds_a_solution_on_a_page(tmp_path):
    (tmp_path / "ok.html").write_text("<p>1. Derive it.</p>")
    (tmp_path / "bad.html").write_text('<p class="admonition-title">Solutions</p>')
    for package_page in ("_modules/dpnb/tools/student.html", "book/api/tools.html"):  # the tool's own markers
        (tmp_path / package_page).parent.mkdir(parents=True)
        (tmp_path / package_page).write_text('<p class="admonition-title">Solutions</p>')
    assert student.solution_leaks(tmp_path) == ["bad.html"]


def test_command_line_refuses_a_bad_output_folder(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as stop:
        student.main(["--output", str(blocker), "--no-book"])
    assert stop.value.code == 2 and capsys.readouterr().err.startswith("error: ")
