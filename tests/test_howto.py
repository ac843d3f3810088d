"""The how-to page (book/howto.md) runs as printed: its code blocks, in order, as one script."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "book" / "howto.md"


def test_howto_runs_and_prints_what_its_comments_say(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) >= 6
    namespace = {"__name__": "howto"}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    shown = [
        line.split("# ", 1)[1]
        for block in blocks
        for line in block.splitlines()
        if line.startswith("print(") and "# " in line
    ]
    shown += [line[2:] for block in blocks for line in block.splitlines() if line.startswith("# {")]
    for expected in shown:
        assert expected in printed, f"the page says {expected!r}; the code printed {printed}"
