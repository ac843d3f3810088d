"""The mechanisms: one module per audited paper (and per library whose private PCA the course examines).

Each implements its paper's estimators and release functions on the privacy wing. None imports
another paper's module except where one paper's release is built from another's (the libraries'
PCA on their samplers, PCA-Gauss on private PCA's row radius) or shares its data layout
(:mod:`dpnb.papers.onehot`, Jiang et al.'s two mechanisms). What a chapter builds around them
lives in :mod:`dpnb.chapters`.
"""
