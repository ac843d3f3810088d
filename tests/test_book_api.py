"""The docstrings the API pages (``book/api/*.md``) render cross-reference no private name.

The book is built nitpicky: a ``:func:`` / ``:meth:`` / ``:class:`` role (or any other Python role) whose
target is private has no page to point at, so ``make book`` fails on it (CI did, on
``:func:`_binary_svc_predict``` in ``svm_accuracy``). This test reads the same directives the book does and
fails first, naming the object and the reference; write a private name as code (````_name````) instead.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest

API_PAGES = sorted((Path(__file__).resolve().parents[1] / "book" / "api").glob("*.md"))
DIRECTIVE = re.compile(r"^\.\. auto(module|class|function):: (\S+)\n((?:[ \t]+:.*\n)*)", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|attr|obj|data|exc|mod|const):`([^`]+)`")


def _is_private(component: str) -> bool:
    return component.startswith("_") and not (component.startswith("__") and component.endswith("__"))


def private_references(doc: str) -> list[str]:
    """The Python-role references in ``doc`` whose target has a private component (``~``/``!`` and titles allowed).

    >>> private_references("From :func:`_helper`, :meth:`~dpnb.X._fit`, :class:`Dataset`, :meth:`__call__`.")
    [':func:`_helper`', ':meth:`~dpnb.X._fit`']
    """
    found = []
    for match in ROLE.finditer(doc or ""):
        target = match.group(1)
        titled = re.fullmatch(r".*<([^<>]+)>", target, flags=re.DOTALL)
        target = (titled.group(1) if titled else target).strip().lstrip("~!").rstrip("()")
        if any(_is_private(part) for part in target.split(".")):
            found.append(match.group(0))
    return found


def _import(dotted: str):
    """The object named by a dotted path: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ValueError(f"{dotted!r} on an API page names nothing importable")


def _options(block: str) -> dict[str, str]:
    return dict(re.fullmatch(r"\s*:([\w-]+):\s*(.*)", line).groups() for line in block.splitlines() if line.strip())


def _class_members(cls, names=None):
    """What autodoc renders of a class with ``:members:``: the listed names, or the public ones it defines."""
    if names is None:
        names = [name for name in vars(cls) if not name.startswith("_")]
    for name in names:
        member = inspect.getattr_static(cls, name)
        yield f"{cls.__module__}.{cls.__qualname__}.{name}", getattr(member, "fget", None) or getattr(cls, name)


def documented_objects():
    """``(page, qualified name, object)`` for every docstring the API pages render (members as autodoc picks them)."""
    for page in API_PAGES:
        for kind, dotted, block in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            options = _options(block)
            obj = _import(dotted)
            yield page.name, dotted, obj
            if "members" not in options:
                continue
            listed = [name.strip() for name in options["members"].split(",") if name.strip()] or None
            if kind == "class":
                for name, member in _class_members(obj, listed):
                    yield page.name, name, member
            elif kind == "module":
                public = getattr(obj, "__all__", None) or [name for name in vars(obj) if not name.startswith("_")]
                for name in listed or public:
                    member = getattr(obj, name)
                    if getattr(member, "__module__", None) != obj.__name__:
                        continue  # imported from elsewhere: autodoc documents it where it is defined
                    yield page.name, f"{dotted}.{name}", member
                    if inspect.isclass(member):
                        for member_name, sub in _class_members(member):
                            yield page.name, member_name, sub


def test_the_checker_finds_the_reference_that_broke_the_book():
    assert private_references("labels come from :func:`_binary_svc_predict` (the fitted") == [
        ":func:`_binary_svc_predict`"
    ]
    assert private_references("labels come from ``_binary_svc_predict`` and :func:`svm_accuracy`") == []
    assert private_references(":meth:`the fit <dpnb.papers.ron_gauss.RONGauss._fit_moments>`") == [
        ":meth:`the fit <dpnb.papers.ron_gauss.RONGauss._fit_moments>`"
    ]


def test_api_pages_cross_reference_no_private_name():
    objects = list(documented_objects())
    modules = {name for _, name, obj in objects if inspect.ismodule(obj)}
    assert len(API_PAGES) >= 5 and len(modules) >= 40 and len(objects) >= 400, (
        "the API pages' directives were not found: the parser no longer reads book/api/*.md"
    )
    bad = [
        f"{page}: {name}: {reference}"
        for page, name, obj in objects
        for reference in private_references(inspect.getdoc(obj))
    ]
    assert not bad, "docstrings on the API pages cross-reference private names (write them as ``code``):\n" + "\n".join(
        bad
    )


@pytest.mark.parametrize("dotted", ["dpnb.no_such_module", "dpnb.papers.no_such_name"])
def test_a_directive_naming_nothing_fails_loudly(dotted):
    with pytest.raises((ValueError, AttributeError)):
        _import(dotted)
