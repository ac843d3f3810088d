"""dpnb: differentially private data release through dimensionality reduction, in notebooks.

The package is built in wings, each standing only on the ones before it:

- :mod:`dpnb.ground`: validation, random streams, compiled kernels, datasets;
- :mod:`dpnb.numerics`: linear algebra, intervals and the tie rule, the Gram matrix, Bingham
  sampling, metrics;
- :mod:`dpnb.privacy`: noise mechanisms, audits and neighbour relations, the estimator contract;
- :mod:`dpnb.papers`: one module per paper;
- :mod:`dpnb.book`: claims tables, reports, notebook parameters, the comparison chapter's tasks;
- :mod:`dpnb.tools`: ``make run``, sweeps, Jupytext pairs, emulated machines.

Before the wings every module sat directly under ``dpnb``. Those import paths
(``from dpnb.dppro import DPPro``, ``import dpnb.mechanisms``, ``python -m dpnb.run``) still work:
they give the moved module itself, with a :class:`DeprecationWarning` naming its new place.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__version__ = "0.1.0"

MOVED = {
    "validation": "ground",
    "streams": "ground",
    "compiled": "ground",
    "datasets": "ground",
    "linalg": "numerics",
    "stats": "numerics",
    "gram": "numerics",
    "bingham": "numerics",
    "metrics": "numerics",
    "mechanisms": "privacy",
    "exact_noise": "privacy",
    "audit": "privacy",
    "audit_power": "privacy",
    "estimator": "privacy",
    "pca_gauss": "papers",
    "component_analysis": "papers",
    "private_pca": "papers",
    "ron_gauss": "papers",
    "dppro": "papers",
    "mst": "papers",
    "library_samplers": "papers",
    "library_pca": "papers",
    "claims": "book",
    "report": "book",
    "evaluation": "numerics",
    "parameters": "book",
    "comparison": "book",
    "run": "tools",
    "sweep": "tools",
    "pairing": "tools",
    "portability": "tools",
}
"""Module name before the wings -> the wing it now lives in."""


class _MovedModule(importlib.abc.Loader):
    """Loads ``dpnb.<old>`` as the module ``dpnb.<wing>.<old>`` itself (one module object, two names)."""

    def __init__(self, new_name: str):
        self.new_name = new_name

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {self.new_name}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.import_module(self.new_name)

    def exec_module(self, module):
        pass  # already executed under its new name

    def get_code(self, fullname):
        """The moved module's code, so that ``python -m dpnb.<old>`` still runs it (with the warning)."""
        warnings.warn(f"{fullname} moved to {self.new_name}; run python -m {self.new_name}", DeprecationWarning, 2)
        return importlib.util.find_spec(self.new_name).loader.get_code(self.new_name)


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in MOVED:
            return None
        new_name = f"{__name__}.{MOVED[name]}.{name}"
        origin = importlib.util.find_spec(new_name).origin  # the file, for python -m's sys.argv[0]
        return importlib.util.spec_from_loader(fullname, _MovedModule(new_name), origin=origin)


if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedFinder())
