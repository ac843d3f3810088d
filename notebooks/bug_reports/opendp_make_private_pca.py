"""OpenDP's make_private_pca is not epsilon-DP: the exact privacy loss of one neighbouring pair.

Run against the installed OpenDP (needs numpy and scipy only):

    python opendp_make_private_pca.py                 # the worked pair at epsilon 2
    python opendp_make_private_pca.py 40 40 0 6       # c1 c2 c3 epsilon: any pair of this form

The pair. X has c1 rows e1, c2 rows e2 and c3 rows e3 (n = c1 + c2 + c3 rows in R^3, each of L2 norm
1); X' is X with one row e1 replaced by e2. Under OpenDP's symmetric distance a replaced row is
d_in = 2. C = X^T X = diag(c1, c2, c3) and C' = diag(c1 - 1, c2 + 1, c3).

The measurement. make_private_pca(array2_domain(norm=1, p=2, origin=0, size=n, num_columns=3),
symmetric_distance(), unit_epsilon=epsilon, num_components=1): the centre and the norm are declared
in the input domain, so nothing is spent on a mean. The stated epsilon is the measurement's own
privacy map at d_in = 2 (`meas.map(2)`). The release is (eigenvalues, top eigenvector); the split
and the noise scales are read from the library (`_split_pca_epsilon_evenly`, and a binary search
over the Laplace scale of the eigenvalue step as the library composes it).

The exact loss. Given the data the two steps draw independent noise, so the release's log density
ratio is the sum of the steps' ratios and its privacy loss on the pair is the larger of the two
directions' sums of each step's largest ratio. Eigenvalues: Laplace noise of scale s on the vector of
eigenvalues, largest ratio ||lambda - lambda'||_1 / s in either direction. Eigenvector:
make_private_eigenvector computes A = (eps_u / 4)(lambda_max(C) I - C), b (root of
sum_i 1 / (b + 2 a_i) = 1), Omega = I + 2 A / b, M, proposes u = z / ||z||, z ~ N(0, Omega^-1), and
accepts when `random() < exp(-u'Au) / (M (u'Omega u)^(d/2))`. Proposal density times acceptance is
the density of the output, p(u) proportional to exp(-u'Au) (u'Omega u)^(-d) on the sphere (Kent,
Ganeiber and Mardia's ratio multiplies by (u'Omega u)^(d/2) instead, giving exp(-u'Au), the intended
exponential mechanism). Its normalising constant is integrated here by adaptive quadrature over the
sphere and its largest log ratio found by a grid search refined by a local optimiser.

The loss computation repeats the one in diffprivlib_pca.py on purpose: each script is sent alone to its
library's maintainers and runs against that library with numpy and scipy only, without dpnb or its sibling.
"""

import sys
from importlib.metadata import version

import numpy as np
import opendp.prelude as dp
from opendp.extras.numpy._make_np_sscp import make_np_sscp
from opendp.extras.sklearn._make_eigenvalues import then_eigenvalues
from opendp.extras.sklearn.decomposition import _split_pca_epsilon_evenly, make_private_pca
from scipy import integrate, optimize


def sphere_point(theta, phi):
    return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])


def library_log_density(C, eps_u):
    """log p(u) of the eigenvector the library releases on C at unit_epsilon eps_u (normalised on the sphere)."""
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


def main(c1=51, c2=47, c3=19, epsilon=2.0):
    dp.enable_features("contrib", "idealized-numerics")
    n = int(c1 + c2 + c3)
    domain = dp.numpy.array2_domain(norm=1.0, p=2, origin=np.zeros(3), size=n, num_columns=3, T=float, nan=False)
    meas = make_private_pca(domain, dp.symmetric_distance(), unit_epsilon=float(epsilon), num_components=1)
    stated = meas.map(2)  # a replaced row
    split = _split_pca_epsilon_evenly(float(epsilon), 1, estimate_mean=False)
    eigenvalues = make_np_sscp(domain, dp.symmetric_distance()).output_space >> then_eigenvalues()
    scale = dp.binary_search_param(lambda s: eigenvalues >> dp.m.then_laplace(s), d_in=2, d_out=split.eigvals)
    (eps_u,) = split.eigvecs

    C, C_prime = np.diag([c1, c2, c3]).astype(float), np.diag([c1 - 1, c2 + 1, c3]).astype(float)
    eig = np.abs(np.linalg.eigvalsh(C) - np.linalg.eigvalsh(C_prime)).sum() / scale
    log_p, log_p_prime = library_log_density(C, eps_u), library_log_density(C_prime, eps_u)
    vec = max(largest_log_ratio(log_p, log_p_prime), largest_log_ratio(log_p_prime, log_p))
    loss = eig + vec  # the eigenvalue step's largest ratio is the same in both directions
    print(
        f"OpenDP {version('opendp')} make_private_pca (origin and norm 1 declared in array2_domain): "
        f"pair diag({c1:g},{c2:g},{c3:g}) -> diag({c1 - 1:g},{c2 + 1:g},{c3:g}) (n = {n} rows, one e1 replaced by e2), "
        f"stated eps {stated:g} (privacy map at distance 2), exact loss {loss:.3f} ({loss / stated - 1:+.1%})"
    )


if __name__ == "__main__":
    main(*(float(v) for v in sys.argv[1:5]))
