"""One module per audited paper (and per library whose private PCA the course examines).

Each implements its paper's mechanisms on the privacy wing; none imports another paper's module
except where one paper's release is built from another's (the libraries' PCA on their samplers).
"""
