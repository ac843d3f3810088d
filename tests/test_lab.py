"""`make lab`: the project's JupyterLab settings open the .md sources as notebooks."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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
            f"--notebook-dir={ROOT}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={token}"
        for _ in range(120):
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    settings = json.load(response)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError("JupyterLab did not start within 60 s")
    finally:
        server.terminate()
        server.wait(timeout=30)
    viewers = settings["settings"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook" and viewers["myst"] == "Jupytext Notebook"
