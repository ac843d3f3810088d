"""Every docstring example in the package runs and prints what it shows (the ``Examples`` sections).

Each module's doctests run as one test, in the module's namespace, with NumPy's print options at their defaults.
The examples print only what is the same on every machine: shapes, budgets, booleans and values rounded well
above rounding noise.
"""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import dpnb

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(dpnb.__path__, "dpnb.")
    if not info.ispkg and "._" not in info.name  # private helpers (tools/_reordered) are no API
)


KERNEL_MODULES = {"dpnb.tools.executor"}
"""Modules whose examples start a Jupyter kernel: marked ``notebook`` (``make check`` leaves them to ``make test``)."""


def _finder_tests(name):
    return doctest.DocTestFinder(exclude_empty=True).find(importlib.import_module(name))


@pytest.mark.parametrize(
    "name", [pytest.param(m, marks=pytest.mark.notebook) if m in KERNEL_MODULES else m for m in MODULES]
)
def test_docstring_examples_run(name):
    tests = [t for t in _finder_tests(name) if t.examples]
    if not tests:
        pytest.skip("no examples")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.printoptions(**np.get_printoptions()):
        for test in tests:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (output above)"


def test_every_public_release_has_an_example():
    """The estimators and the release functions a user calls first each show one run (issue 35)."""
    from dpnb.papers import (
        component_analysis,
        dppro,
        lda_publishing,
        library_pca,
        library_samplers,
        mst,
        pca_gauss,
        private_pca,
        ron_gauss,
    )
    from dpnb.privacy import audit, exact_noise, mechanisms

    entry_points = [
        ron_gauss.RONGauss,
        pca_gauss.PCAGauss,
        private_pca.ModSULQ,
        private_pca.PPCA,
        dppro.DPPro,
        component_analysis.DPPCAPublisher,
        lda_publishing.DPLDAPublisher,
        mst.MST,
        mechanisms.laplace_mechanism,
        mechanisms.symmetric_laplace_mechanism,
        mechanisms.gaussian_mechanism,
        mechanisms.symmetric_gaussian_mechanism,
        library_samplers.bingham_mechanism,
        library_pca.sample_release,
        exact_noise.grid_laplace_release,
        exact_noise.grid_gaussian_release,
        exact_noise.grid_gaussian_release_sigma,
        audit.audit_epsilon,
    ]
    missing = [f.__qualname__ for f in entry_points if "Examples\n" not in (f.__doc__ or "") or ">>>" not in f.__doc__]
    assert not missing, f"no Examples section: {missing}"
