"""dpnb: differentially private data release through dimensionality reduction, in notebooks.

The package is built in wings, each standing only on the ones before it:

- :mod:`dpnb.ground`: validation, random streams, compiled kernels, datasets;
- :mod:`dpnb.numerics`: linear algebra, intervals and the tie rule, the Gram matrix, Bingham
  sampling, metrics;
- :mod:`dpnb.privacy`: noise mechanisms, audits and neighbour relations, the estimator contract;
- :mod:`dpnb.papers`: the mechanisms, one module per paper (and per library examined);
- :mod:`dpnb.reporting`: claims tables and the verdict policy, reports, notebook parameters, exercises;
- :mod:`dpnb.chapters`: one room per chapter, everything its notebook needs beyond the mechanisms
  (worst-case pairs, audit cases, reproduction runs); only notebooks and tests import it;
- :mod:`dpnb.tools`: ``make run``, sweeps, Jupytext pairs, emulated machines.
"""

__version__ = "0.1.0"
