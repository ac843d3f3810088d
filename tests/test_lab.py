"""`make lab`: the project's JupyterLab opens the chapters' .md sources as notebooks, and only them."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.notebook  # starts a JupyterLab server

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "lab" / "user-settings"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_markdown_opens_with_jupytexts_notebook_viewer():
    labext = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    assert any('"Jupytext Notebook"' in p.read_text() for p in labext.glob("static/*.js")), (
        "jupytext's lab extension no longer registers the 'Jupytext Notebook' viewer"
    )
    port, token = _free_port(), "dpnb-test"
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(SETTINGS)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            "--allow-root",
            f"--IdentityProvider.token={token}",
            f"--config={ROOT / 'lab' / 'jupyter_server_config.json'}",
            f"--notebook-dir={ROOT / 'notebooks'}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"

        def get(path):
            with urllib.request.urlopen(f"{base}{path}?token={token}", timeout=60) as response:  # slow under load
                return json.load(response)

        for _ in range(120):
            try:
                settings = get("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError("JupyterLab did not start within 60 s")
        news = get("/lab/api/settings/@jupyterlab/apputils-extension:notification")["settings"]
        listing = {item["name"]: item["type"] for item in get("/api/contents/")["content"]}
        extensions = get("/lab/api/extensions")
    finally:
        server.terminate()
        server.wait(timeout=30)
    viewers = settings["settings"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook" and viewers["myst"] == "Jupytext Notebook"
    markdown = sorted(name for name in listing if name.endswith(".md"))
    chapters = sorted(p.name for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md")
    assert markdown == chapters, "Lab must show only the chapters' sources among Markdown files"
    assert news["fetchNews"] == "false" and news["checkForUpdates"] is False, "no news prompt at start"
    enabled = {e["name"] for e in extensions if e.get("enabled")}
    assert {"jupyterlab-myst", "jupyterlab-jupytext"} <= enabled, "MyST rendering and jupytext must be on"


CHAPTER_SOURCES = sorted(p for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md")


def test_chapters_use_what_lab_renders_links_citations_and_the_papers_numbers():
    """{doc} and {cite} do not resolve in Lab, nor {numref} to a code cell's figure: chapters link sources, cite in
    text and name figures in words; boxes carry no own number."""
    import re

    for path in CHAPTER_SOURCES:
        text = path.read_text()
        assert not re.findall(r"\{(?:doc|cite)(?::\w+)?\}`", text), (
            f"{path.name}: use a Markdown link or author-year text"
        )
        for link in re.findall(r"\]\(([a-z_]+)\.md\)", text):
            assert (ROOT / "notebooks" / f"{link}.md").is_file(), f"{path.name} links {link}.md, which is no chapter"
        assert "{numref}" not in text, (
            f"{path.name}: Lab cannot number a code cell's figure; use {{ref}}`the ... figure <fig-...>`"
        )
        bare = re.findall(r"\{ref\}`(fig-[\w-]+)`", text)
        assert not bare, f"{path.name}: a figure reference needs its text, {{ref}}`the ... figure <label>`: {bare}"
        boxes = re.findall(r"^:::\{prf:\w+\}[^\n]*\n((?::\w+:[^\n]*\n)*)", text, re.M)
        assert all(":nonumber:" in options for options in boxes), f"{path.name}: every proof box needs :nonumber:"


def _labels(text: str) -> set[str]:
    """The MyST targets a chapter defines: ``(label)=``, a directive's ``:label:``, an equation's ``$$ (label)``."""
    import re

    return (
        set(re.findall(r"^\(([\w-]+)\)=", text, re.M))
        | set(re.findall(r"^:label: *([\w-]+)", text, re.M))
        | set(re.findall(r"\$\$ *\(([\w-]+)\)", text))
    )


def test_references_stay_in_their_chapter():
    """Lab renders one notebook: a cross-reference into another chapter cannot resolve there."""
    import re

    labels = {path.stem: _labels(path.read_text()) for path in CHAPTER_SOURCES}
    crossing = []
    for path in CHAPTER_SOURCES:
        for target in re.findall(r"\{(?:ref|prf:ref|eq|numref)\}`(?:[^`<]*<)?([\w-]+)>?`", path.read_text()):
            owners = [stem for stem, defined in labels.items() if target in defined and stem != path.stem]
            if target not in labels[path.stem] and owners:
                crossing.append(f"{path.stem} -> {owners[0]}: {target}")
    assert not crossing, f"{len(crossing)} references into another chapter:\n" + "\n".join(crossing)
