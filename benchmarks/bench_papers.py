"""Each paper's mechanism at the size its fast-profile notebook uses (one fit or one release)."""

import numpy as np

from dpnb.numerics import bingham
from dpnb.papers import component_analysis, dppro, lda_publishing, pca_gauss, private_pca, ron_gauss

_rng = np.random.default_rng(0)
_box = _rng.random((3000, 40))  # [0, 1]^40
_sym = 2 * _box - 1  # [-1, 1]^40
_ball = _sym / np.linalg.norm(_sym, axis=1, keepdims=True)  # unit rows
_labels = (_box[:, 0] > 0.5).astype(int)
_B = 50.0 * np.diag(np.linspace(1.0, 0.0, 40))

CASES = {
    "DPPro fit, n=3000 d=40 k=16": lambda: dppro.DPPro(16, 1.0, 1e-5, random_state=0).fit(_box),
    "RON-Gauss fit+sample, p=8": lambda: ron_gauss.RONGauss(8, 1.0, random_state=0).fit(_box).sample(3000),
    "PCA-Gauss fit+sample, K=8": lambda: pca_gauss.PCAGauss(8, 1.0, random_state=0).fit(_sym).sample(3000),
    "Jiang DP-PCA publishing, k=8": lambda: component_analysis.DPPCAPublisher(8, 1.0, random_state=0).fit(_box),
    "Jiang DP-LDA greedy sampler": lambda: (
        lda_publishing.DPLDAPublisher(1.0, random_state=0).fit(_box[:, :10], _labels).sample()
    ),
    "MOD-SULQ, k=2": lambda: private_pca.mod_sulq(_ball, 2, 1.0, 0.05, random_state=0),
    "Bingham Gibbs, d=40 k=2, 100 scans": lambda: bingham.bingham_gibbs(_B, 2, n_iter=100, random_state=0),
    "PPCA, d=40 k=2, 100 scans": lambda: private_pca.ppca(_ball, 2, 1.0, random_state=0),
}
