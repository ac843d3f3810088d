"""Browser check of the built book (``make book-check``): pages rendered in headless Chromium.

For every page of ``build/book/_build/html`` it checks, in the rendered page (after scripts ran):
math is typeset (MathJax containers present where the source has math, no raw ``$$`` left in
the text), every image has loaded (``naturalWidth > 0``), every figure in a chapter has a
caption, no table is wider than the column it sits in (long cells wrap, ``book/_static/dpnb.css``), and
every link of the navigation
sidebar leads to a page of the book. Nothing is fetched from outside: the page is served from
loopback and any request to another host fails the check. Screenshots of a few pages go to
``build/book/screenshots``. Uses Debian's Chromium (``/usr/bin/chromium``).
"""

import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "build" / "book" / "_build" / "html"
SHOTS = ROOT / "build" / "book" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve():
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_page(page, url: str, name: str) -> list[str]:
    """Problems found on one page (empty when it passes)."""
    problems, outside = [], []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if urlparse(r.url).hostname not in ("127.0.0.1", None) and not r.url.startswith("data:")
            else None
        ),
    )
    page.goto(url, wait_until="networkidle")
    page.evaluate(
        "() => window.MathJax && MathJax.startup && MathJax.startup.promise ? "
        "MathJax.startup.promise.then(() => true) : false"
    )
    has_math = page.evaluate("document.querySelectorAll('.math, div.math, span.math').length")
    typeset = page.evaluate("document.querySelectorAll('mjx-container').length")
    raw = page.evaluate("""Array.from(document.querySelectorAll('article p, article li, article td'))
        .map(e => e.innerText).filter(t => t.includes('$$')).length""")
    if has_math and not typeset:
        problems.append(f"{name}: {has_math} math elements but nothing typeset")
    if raw:
        problems.append(f"{name}: raw $$ left in {raw} paragraph(s)")
    broken = page.evaluate(
        "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    problems += [f"{name}: image did not load: {src}" for src in broken]
    uncaptioned = page.evaluate(
        "Array.from(document.querySelectorAll('article .cell_output img'))"
        ".filter(i => !(i.closest('figure') && i.closest('figure').querySelector('figcaption'))).length"
    )
    if uncaptioned:
        problems.append(f"{name}: {uncaptioned} figure(s) without a caption")
    wide = page.evaluate(
        "Array.from(document.querySelectorAll('article table'))"
        ".filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1).length"
    )
    if wide:
        problems.append(f"{name}: {wide} table(s) wider than the column")
    problems += [f"{name}: request to another host: {u}" for u in outside]
    return problems


def markup_counts(page) -> dict:
    """Numbered equations, proof-style blocks (lemmas, theorems), captioned figures and internal links of a page."""
    return page.evaluate("""() => ({
        equations: document.querySelectorAll('article div.math span.eqno').length,
        lemmas: document.querySelectorAll('article div.proof').length,
        figures: document.querySelectorAll('article figure figcaption').length,
        links: document.querySelectorAll('article a.reference.internal').length,
    })""")


def main() -> int:
    from playwright.sync_api import sync_playwright

    if not (HTML / "index.html").is_file():
        print("no built book: run `make book` first", file=sys.stderr)
        return 2
    server = _serve()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems, pages = (
        [],
        sorted(
            p.relative_to(HTML).as_posix()
            for p in HTML.rglob("*.html")
            if "_static" not in p.parts
            and "_modules" not in p.parts
            and p.name not in ("search.html", "genindex.html", "index.html")
        ),
    )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for rel in pages:
            problems += check_page(page, base + rel, rel)
            if rel.startswith("notebooks/"):
                counts = markup_counts(page)
                print(f"{rel}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
            if rel.startswith(("book/intro", "notebooks/dppro", "notebooks/foundations", "book/api")):
                page.screenshot(path=str(SHOTS / (rel.replace("/", "_") + ".png")))
        page.goto(base + "book/intro.html", wait_until="networkidle")
        nav = page.evaluate(
            "Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference.internal')).map(a => a.href)"
        )
        for href in nav:
            response = page.goto(href, wait_until="domcontentloaded")
            if response is None or response.status != 200:
                problems.append(f"navigation link broken: {href}")
        browser.close()
    server.shutdown()
    for p in problems:
        print(p)
    print(
        f"{len(pages)} pages, {len(nav)} navigation links checked: "
        f"{'no problems' if not problems else f'{len(problems)} problem(s)'}; screenshots in build/book/screenshots"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
