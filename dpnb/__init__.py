"""dpnb: differentially private data release through dimensionality reduction, in notebooks.

Shared building blocks live in :mod:`dpnb.mechanisms` (Laplace and Gaussian mechanisms),
:mod:`dpnb.audit` (adversarial sensitivity search and statistical privacy audits),
:mod:`dpnb.claims` (the claims tables the notebooks publish), :mod:`dpnb.stats`
(confidence intervals), :mod:`dpnb.linalg` (symmetric/PSD helpers) and
:mod:`dpnb.datasets` (offline real data). One module per paper implements its mechanisms.
"""

__version__ = "0.1.0"
