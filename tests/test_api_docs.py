"""The API pages render every public docstring; a cross-reference there must point at something they document.

``make book`` builds with ``-n -W``, so a ``:func:`` to a private helper (which autodoc leaves out) fails the build;
this finds it in a second, in ``make check``.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest

API_PAGES = sorted((Path(__file__).resolve().parent.parent / "book" / "api").glob("*.md"))
MODULES = sorted(
    {name for page in API_PAGES for name in re.findall(r"^\.\. automodule:: *(\S+)", page.read_text(), re.M)}
)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|attr|obj|data|mod|exc):`~?!?([^`<]*?<)?([\w.]+)>?`")


def _rendered_docstrings(module):
    """``(qualified name, docstring)`` of the module and each member autodoc's ``:members:`` renders."""
    yield module.__name__, inspect.getdoc(module) or ""
    for name, member in vars(module).items():
        if name.startswith("_") or getattr(member, "__module__", None) != module.__name__:
            continue
        yield f"{module.__name__}.{name}", inspect.getdoc(member) or ""
        if inspect.isclass(member):
            for attribute, value in vars(member).items():
                if not attribute.startswith("_"):
                    yield f"{module.__name__}.{name}.{attribute}", inspect.getdoc(value) or ""


def private_references(text: str) -> list[str]:
    """The targets of Sphinx cross-reference roles in ``text`` whose last name is private (``_x``, not ``__x__``)."""
    found = []
    for _, target in ROLE.findall(text):
        last = target.rsplit(".", 1)[-1]
        if last.startswith("_") and not last.startswith("__"):
            found.append(target)
    return found


def test_private_references_are_found():
    assert private_references("see :func:`_helper` and :meth:`~pkg.Cls._step`, :func:`public`") == [
        "_helper",
        "pkg.Cls._step",
    ]
    assert private_references(":class:`the estimator <dpnb.papers.ron_gauss._Fit>` and :attr:`__call__`") == [
        "dpnb.papers.ron_gauss._Fit"
    ]


def test_the_api_pages_document_modules():
    assert len(MODULES) >= 20, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_public_docstrings_cross_reference_no_private_name(name):
    module = importlib.import_module(name)
    bad = [f"{owner}: {target}" for owner, doc in _rendered_docstrings(module) for target in private_references(doc)]
    assert not bad, "write a private name as ``code``, not a cross-reference (the book cannot link it):\n" + "\n".join(
        bad
    )
