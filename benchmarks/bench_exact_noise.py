"""Exact noise (``noise="exact"``) against numpy's floating-point samplers, per draw, and its work against its noise.

``python -m benchmarks`` times each case and then prints :func:`summarize`: the cost of one exact
draw as a multiple of one numpy draw, measured in that run.

``python -m benchmarks.bench_exact_noise [--n N] [--module PATH]`` measures what an observer of the work
learns (:func:`work_leak`): ``N`` single releases at three noise scales per sampler, each through a
generator wrapper that counts the calls and the words drawn, with the wall time of each release, and
prints Spearman's rho between work and ``|noise|`` and the wall-time ratios, then the cost of one draw
batched and single. ``--module`` loads another version of ``dpnb/privacy/exact_noise.py`` (for example
the one at an earlier commit, written to a file) to measure it the same way.
"""

import argparse
import importlib.util
import time

import numpy as np
from scipy.stats import spearmanr

from dpnb.privacy import exact_noise, mechanisms
from dpnb.reporting.report import markdown_table

N_DRAWS = 100_000
_zeros = np.zeros(N_DRAWS)
_C = np.eye(300)  # 45,150 upper-triangle entries

CASES = {
    "Laplace, numpy, 100k draws": lambda: mechanisms.laplace_mechanism(_zeros, 1.0, 1.0, random_state=0),
    "Laplace, exact, 100k draws": lambda: mechanisms.laplace_mechanism(_zeros, 1.0, 1.0, random_state=0, noise="exact"),
    "Gaussian, numpy, 100k draws": lambda: mechanisms.gaussian_mechanism(_zeros, 1.0, 1.0, 1e-5, random_state=0),
    "Gaussian, exact, 100k draws": lambda: mechanisms.gaussian_mechanism(
        _zeros, 1.0, 1.0, 1e-5, random_state=0, noise="exact"
    ),
    "symmetric Laplace d=300, numpy": lambda: mechanisms.symmetric_laplace_mechanism(_C, 1.0, 1.0, random_state=0),
    "symmetric Laplace d=300, exact": lambda: mechanisms.symmetric_laplace_mechanism(
        _C, 1.0, 1.0, random_state=0, noise="exact"
    ),
}


def summarize(seconds: dict) -> list[str]:
    """Exact / numpy time ratios from one run's best times (keys: this module's case names)."""
    lines = []
    for kind in ("Laplace, {}, 100k draws", "Gaussian, {}, 100k draws", "symmetric Laplace d=300, {}"):
        exact, fast = seconds[kind.format("exact")], seconds[kind.format("numpy")]
        per_draw = f"{exact / N_DRAWS * 1e6:.1f} us per exact draw, " if "100k" in kind else ""
        ratio = f"{kind.format('exact / numpy')}: {exact / fast:.0f}x"
        lines.append(f"{ratio} ({per_draw}{exact:.3f} s against {fast:.4f} s)")
    return lines


class CountingGenerator:
    """A numpy Generator seen from outside: it counts the calls of ``integers`` and the words they return.

    The exact samplers draw every random bit through ``integers``; the counts are what an observer of
    the sampler's work (time, calls, memory traffic) can learn, measured deterministically.
    """

    def __init__(self, rng: np.random.Generator):
        self.rng, self.calls, self.words = rng, 0, 0

    def integers(self, low, high=None, size=None, **kwargs):
        out = self.rng.integers(low, high, size=size, **kwargs)
        self.calls += 1
        self.words += int(np.size(out))
        return out


#: (sampler, public noise parameters): the three scales of each exact sampler measured by :func:`work_leak`
SCALES = {
    "Laplace": (1.0, 1e3, 1e9),  # sensitivity / epsilon, sensitivity 1
    "Gaussian": (1.0, 1e3, 1e9),  # sigma, L2 sensitivity 1
}


def _release(module, kind: str, scale: float, rng):
    if kind == "Laplace":
        return module.grid_laplace_release(0.0, 1.0, 1.0 / scale, rng)
    return module.grid_gaussian_release_sigma(0.0, 1.0, scale, rng)[0]


def work_leak(module, kind: str, scale: float, n_releases: int, seed: int = 0) -> dict:
    """Work against noise over ``n_releases`` single releases of 0 by ``module``'s grid release.

    Returns Spearman's rho of (words drawn, ``|noise|``), of (calls, ``|noise|``) and of (wall time,
    ``|noise|``) ("constant" where the work never changes, so that it carries no information), the ratio
    of the 95th to the 5th percentile of the wall time, and the ratio of the mean wall time of the 5% of
    releases with the largest ``|noise|`` to that of the 5% with the smallest.
    """
    generator = np.random.default_rng(seed)
    words, calls, seconds, noise = (np.empty(n_releases) for _ in range(4))
    for i in range(n_releases):
        rng = CountingGenerator(generator)
        start = time.perf_counter_ns()
        noise[i] = float(_release(module, kind, scale, rng))
        seconds[i] = time.perf_counter_ns() - start
        words[i], calls[i] = rng.words, rng.calls
    size = np.abs(noise)

    def rho(work):
        return "constant" if np.all(work == work[0]) else f"{spearmanr(work, size)[0]:.3f}"

    order = np.argsort(size, kind="stable")
    tail = max(1, n_releases // 20)
    return {
        "sampler": kind,
        "scale": f"{scale:.0e}",
        "words per release": f"{words.min():.0f} to {words.max():.0f}",
        "rho(words, |noise|)": rho(words),
        "rho(calls, |noise|)": rho(calls),
        "rho(time, |noise|)": f"{spearmanr(seconds, size)[0]:.3f}",
        "time p95 / p5": f"{np.percentile(seconds, 95) / np.percentile(seconds, 5):.2f}",
        "time, largest 5% |noise| / smallest 5%": f"{seconds[order[-tail:]].mean() / seconds[order[:tail]].mean():.2f}",
    }


def cost_per_draw(module, kind: str, n_draws: int = N_DRAWS, n_single: int = 2000) -> dict:
    """Microseconds per exact draw at scale 1: ``n_draws`` in one batched release, and single releases."""
    rng = np.random.default_rng(1)
    values = np.zeros(n_draws)
    start = time.perf_counter()
    if kind == "Laplace":
        module.grid_laplace_release(values, 1.0, 1.0, rng)
    else:
        module.grid_gaussian_release_sigma(values, 1.0, 1.0, rng)
    batched = (time.perf_counter() - start) / n_draws
    start = time.perf_counter()
    for _ in range(n_single):
        _release(module, kind, 1.0, rng)
    single = (time.perf_counter() - start) / n_single
    return {
        "sampler": kind,
        "us per draw, batched": f"{batched * 1e6:.2f}",
        "us per draw, single": f"{single * 1e6:.1f}",
    }


def _load(path: str | None):
    if path is None:
        return exact_noise
    spec = importlib.util.spec_from_file_location("exact_noise_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=N_DRAWS, help="single releases per sampler and scale")
    parser.add_argument("--module", default=None, help="path of another exact_noise.py to measure")
    args = parser.parse_args()
    module = _load(args.module)
    rows = []
    for kind, scales in SCALES.items():
        for scale in scales:
            rows.append(work_leak(module, kind, scale, args.n))
            print(rows[-1], flush=True)
    print(markdown_table(rows))
    print(markdown_table([cost_per_draw(module, kind) for kind in SCALES]))


if __name__ == "__main__":
    main()
