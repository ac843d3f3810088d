"""diffprivlib's PCA: the exact privacy loss of one neighbouring pair, against the epsilon it spends.

Run against the installed diffprivlib (needs numpy and scipy only):

    python diffprivlib_pca.py                   # the pair diag(11,9,1) at epsilon 8
    python diffprivlib_pca.py 1000 1000 0 8     # c1 c2 c3 epsilon: any pair of this form

The pair. X has c1 rows e1, c2 rows e2 and c3 rows e3 (n = c1 + c2 + c3 rows in R^3, each of L2 norm
1); X' is X with one row e1 replaced by e2 (replace-one: the relation the mechanisms' sensitivities
assume, 2 for the eigenvalue vector and 1 for u'Cu). C = X^T X = diag(c1, c2, c3) and
C' = diag(c1 - 1, c2 + 1, c3).

The model. PCA(n_components=1, epsilon=epsilon, data_norm=1, centered=True): the centre is declared,
so the release is (eigenvalues, top eigenvector) from models/utils.py covariance_eig. The stated
epsilon is what the fit spends from its BudgetAccountant; the budget split and the eigenvalue
noise scale are read from the mechanisms the fit builds (LaplaceBoundedDomain and Bingham, recorded
during the fit; the scale from LaplaceBoundedDomain's own _find_scale).

The exact loss. Given the data the two steps draw independent noise, so the release's log density
ratio is the sum of the steps' ratios and its privacy loss on the pair is the larger of the two
directions' sums of each step's largest ratio. Eigenvalues: each gets LaplaceBoundedDomain on
[0, inf), a Laplace law of scale s truncated there and renormalised (normaliser s (2 - exp(-lam/s))),
so the largest ratio forward is sum_i |lam_i - lam'_i| / s + log(2 - exp(-lam'_i/s)) - log(2 - exp(-lam_i/s)),
backward with the normalisers swapped. Eigenvector: Bingham.randomise computes
A = (eps / 4)(lambda_max(C) I - C), b (root of sum_i 1 / (b + 2 a_i) = 1), Omega = I + 2 A / b,
norm_const = M, proposes u = z / ||z||, z ~ N(0, Omega^-1), and accepts when
`random() <= exp(-u'Au) / norm_const / (u'Omega u)^(dims/2)`. Proposal density times acceptance is
the output's density, p(u) proportional to exp(-u'Au) (u'Omega u)^(-d) on the sphere (Kent, Ganeiber
and Mardia's ratio multiplies by (u'Omega u)^(d/2) instead, giving exp(-u'Au), the intended
exponential mechanism). Its normalising constant is integrated by adaptive quadrature over the
sphere and its largest log ratio found by a grid search refined by a local optimiser.

The loss computation repeats the one in opendp_make_private_pca.py on purpose: each script is sent alone to its
library's maintainers and runs against that library with numpy and scipy only, without dpnb or its sibling.
"""

import sys
from importlib.metadata import version
from unittest import mock

import diffprivlib.models.utils as dpl_utils
import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import PCA
from scipy import integrate, optimize


def sphere_point(theta, phi):
    return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])


def library_log_density(C, eps_u):
    """log p(u) of the eigenvector Bingham(eps_u) releases on C (normalised on the sphere)."""
    d = C.shape[0]
    A = eps_u / 4 * (np.linalg.eigvalsh(C).max() * np.eye(d) - C)
    a = np.linalg.eigvalsh(A)
    b = optimize.brentq(lambda b: np.sum(1 / (b + 2 * a)) - 1, 1e-12, d)
    omega = np.eye(d) + 2 * A / b

    def log_f(u):
        return -u @ A @ u - d * np.log(u @ omega @ u)

    z, _ = integrate.dblquad(
        lambda phi, theta: np.exp(log_f(sphere_point(theta, phi))) * np.sin(theta) / (4 * np.pi),
        0,
        np.pi,
        0,
        2 * np.pi,
        epsabs=0,
        epsrel=1e-11,
    )
    return lambda u: log_f(u) - np.log(z)


def largest_log_ratio(log_p, log_q):
    """max over the sphere of log p(u) - log q(u): a grid, then a local optimiser from its best points."""
    ratio = lambda x: log_p(sphere_point(*x)) - log_q(sphere_point(*x))  # noqa: E731
    grid = [(t, f) for t in np.linspace(0, np.pi, 91) for f in np.linspace(0, 2 * np.pi, 181)]
    values = np.array([ratio(x) for x in grid])
    best = max(values)
    for i in np.argsort(values)[-5:]:
        res = optimize.minimize(
            lambda x: -ratio(x), grid[i], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14}
        )
        best = max(best, -res.fun)
    return best


def main(c1=11, c2=9, c3=1, epsilon=8.0):
    X = np.eye(3)[np.repeat([0, 1, 2], [int(c1), int(c2), int(c3)])]
    accountant = BudgetAccountant()
    with (
        mock.patch.object(dpl_utils, "LaplaceBoundedDomain", wraps=dpl_utils.LaplaceBoundedDomain) as laplace,
        mock.patch.object(dpl_utils, "Bingham", wraps=dpl_utils.Bingham) as bingham,
    ):
        PCA(1, epsilon=float(epsilon), data_norm=1.0, centered=True, accountant=accountant, random_state=0).fit(X)
    stated, _ = accountant.total()  # (epsilon, delta)
    scale = dpl_utils.LaplaceBoundedDomain(**laplace.call_args.kwargs)._find_scale()
    eps_u = bingham.call_args.kwargs["epsilon"]

    C, C_prime = np.diag([c1, c2, c3]).astype(float), np.diag([c1 - 1, c2 + 1, c3]).astype(float)
    lam, lam_prime = np.linalg.eigvalsh(C), np.linalg.eigvalsh(C_prime)
    shift = np.abs(lam - lam_prime).sum() / scale
    log_z, log_z_prime = (np.log(2 - np.exp(-v / scale)).sum() for v in (lam, lam_prime))
    log_p, log_p_prime = library_log_density(C, eps_u), library_log_density(C_prime, eps_u)
    forward = shift + log_z_prime - log_z + largest_log_ratio(log_p, log_p_prime)
    backward = shift + log_z - log_z_prime + largest_log_ratio(log_p_prime, log_p)
    loss = max(forward, backward)
    print(
        f"diffprivlib {version('diffprivlib')} PCA(n_components=1, data_norm=1, centered=True): "
        f"pair diag({c1:g},{c2:g},{c3:g}) -> diag({c1 - 1:g},{c2 + 1:g},{c3:g}) "
        f"(n = {len(X)} rows, one e1 replaced by e2), "
        f"stated eps {stated:g} (spent from its BudgetAccountant), exact loss {loss:.3f} ({loss / stated - 1:+.1%})"
    )


if __name__ == "__main__":
    main(*(float(v) for v in sys.argv[1:5]))
