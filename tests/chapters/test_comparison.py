import numpy as np
import pytest

from dpnb.chapters import comparison
from dpnb.numerics.linalg import top_eigenvectors
from dpnb.tools.sweep import sweep_records


@pytest.fixture(scope="module")
def adult():
    return comparison.load_adult_task(150, 200, random_state=0)


def test_adult_task_uses_declared_bounds_and_codes(adult):
    assert adult.X_train.shape[0] == 150 and adult.X_test.shape[0] == 200
    assert adult.X_train.min() >= 0.0 and adult.X_train.max() <= 1.0
    assert adult.X_train.shape[1] == adult.n_numeric + sum(adult.group_sizes)
    assert np.all(adult.codes_train < adult.domain_sizes) and np.all(adult.codes_train >= 0)
    np.testing.assert_array_equal(adult.codes_train[:, -1], adult.y_train)
    with pytest.raises(ValueError):
        comparison.load_adult_task(5, 200)


def test_adult_classification_scores_and_method_independence(adult):
    names = ["real data (non-private)", "data-free control", "MST (tree sampling)"]
    scores = comparison.adult_classification(adult, 1.0, 1e-6, np.random.default_rng(0), methods=names)
    assert list(scores) == names and all(0.0 <= s <= 1.0 for s in scores.values())
    alone = comparison.adult_classification(adult, 1.0, 1e-6, np.random.default_rng(0), methods=names[2:])
    assert alone[names[2]] == scores[names[2]]  # each method has its own child stream


def test_captured_variance_is_one_for_pca_and_small_for_an_orthogonal_direction():
    X = np.diag([3.0, 2.0, 1.0])
    top = top_eigenvectors(X.T @ X, 1)[1].T
    assert comparison.captured_variance(X, top) == pytest.approx(1.0)
    assert comparison.captured_variance(X, np.array([[0.0, 0.0, 1.0]])) == pytest.approx(1 / 9)


def test_distance_metrics():
    Z = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    np.testing.assert_allclose(comparison._pairwise_squared(Z), [25.0, 1.0, 18.0])
    true = np.array([1.0, 2.0])
    assert comparison.relative_distance_error(true, np.zeros(2)) == pytest.approx(1.0)
    assert comparison.relative_distance_error(true, true) == 0.0


def test_subspace_and_distance_tasks_report_every_method():
    X = np.random.default_rng(1).integers(0, 2, (40, 6)).astype(float)
    sub = comparison.subspace_quality(X / np.sqrt(6), 1, 1.0, 1e-6, np.random.default_rng(2))
    assert sub["non-private PCA"] == pytest.approx(1.0) and all(0 <= v <= 1 + 1e-12 for v in sub.values())
    dist = comparison.distance_preservation(X, 3, np.inf, 1e-6, np.random.default_rng(3))
    assert dist["data-free control (answer 0)"] == 1.0 and dist["Laplace identity query"] == pytest.approx(0.0)


def test_the_noise_option_reaches_the_estimators(adult):
    """noise="exact" changes the releases of the dpnb methods, and only theirs (same streams otherwise)."""
    X = np.random.default_rng(1).integers(0, 2, (40, 6)).astype(float)
    rng = np.random.default_rng
    floating = comparison.distance_preservation(X, 3, 1.0, 1e-6, rng(3))
    exact = comparison.distance_preservation(X, 3, 1.0, 1e-6, rng(3), noise="exact")
    assert exact == comparison.distance_preservation(X, 3, 1.0, 1e-6, rng(3), noise="exact")
    assert all(exact[m] != floating[m] for m in floating if m != "data-free control (answer 0)")
    names = ["data-free control", "MST (tree sampling)"]
    floating = comparison.adult_classification(adult, 1.0, 1e-6, rng(0), methods=names)
    exact = comparison.adult_classification(adult, 1.0, 1e-6, rng(0), methods=names, noise="exact")
    assert exact[names[0]] == floating[names[0]] and 0.0 <= exact[names[1]] <= 1.0
    sub = comparison.subspace_quality(X / np.sqrt(6), 1, 1.0, 1e-6, rng(2), noise="exact")
    assert all(0 <= v <= 1 + 1e-12 for v in sub.values())


def test_subspace_task_reports_the_libraries_under_a_budget():
    X = np.random.default_rng(4).integers(0, 2, (30, 5)).astype(float) / np.sqrt(5)
    names = ["non-private PCA", "diffprivlib PCA", "OpenDP PCA"]
    without = comparison.subspace_quality(X, 1, 0.1, 1e-6, np.random.default_rng(5), methods=names)
    assert list(without) == ["non-private PCA"]  # the libraries only run under a budget
    scores = comparison.subspace_quality(
        X, 1, 0.1, 1e-6, np.random.default_rng(5), methods=names, budget=comparison.TimeBudget(60.0)
    )
    for name in names[1:]:
        assert 0.0 <= scores[name] <= 1.0 + 1e-12
    with pytest.raises(ValueError):
        comparison.opendp_pca(X, 2, 1.0, np.random.default_rng(0))


def test_rf1_task_uses_declared_domains_and_scores_every_method():
    data = comparison.load_rf1_task(120, 80, random_state=0)
    assert data.X_train.shape == (120, 64) and np.abs(data.X_train).max() <= 1.0 and np.abs(data.y_test).max() <= 1.0
    assert data.y_half_range == pytest.approx((350.0 - 68.0) / 2)
    assert np.all(data.codes_train < data.domain_sizes)
    scores = comparison.rf1_regression(data, 1.0, 1e-6, np.random.default_rng(0), n_components=4)
    assert list(scores) == list(comparison.RF1_METHODS) and all(s >= 0 for s in scores.values())
    midpoint = data.y_half_range * np.sqrt(np.mean(data.y_test**2))
    assert scores["data-free control (midpoint)"] == pytest.approx(midpoint)


def test_mnist_task_pools_public_pixels_and_scores_every_method():
    X, y = comparison.load_mnist_task(60, pool=4, random_state=0)
    assert X.shape == (60, 49) and X.min() >= 0.0 and X.max() <= 1.0 and y.shape == (60,)
    with pytest.raises(ValueError):
        comparison.load_mnist_task(60, pool=3)
    scores = comparison.mnist_clustering(X, y, np.inf, 1e-6, np.random.default_rng(0), n_components=4)
    assert list(scores) == list(comparison.MNIST_METHODS) and all(-1.0 <= s <= 1.0 for s in scores.values())
    centres = np.array([[0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_array_equal(comparison._assign(centres, np.array([[0.1, 0.2], [0.9, 0.8]])), [0, 1])


GRID = {"delta": 1e-6, "n_components": 4, "n_rows": 40}


def test_trial_is_reproducible_and_checks_its_experiment():
    first = comparison.trial("distances", [0.5, 2.0], 1, 0, seed=3, **GRID)
    again = comparison.trial("distances", [0.5, 2.0], 1, 0, seed=3, **GRID)
    other = comparison.trial("distances", [0.5, 2.0], 1, 1, seed=3, **GRID)
    assert first == again and first != other
    assert first["data-free control (answer 0)"] == 1.0
    with pytest.raises(ValueError, match="experiment must be one of"):
        comparison.trial("census", [1.0], 0, 0, seed=3, **GRID)
    with pytest.raises(ValueError, match="epsilon_index"):
        comparison.trial("distances", [1.0], -1, 0, seed=3, **GRID)


def test_run_grid_gives_the_same_scores_in_the_kernel_and_on_a_sweep(tmp_path):
    here = comparison.run_grid("distances", [0.5, 2.0], 2, 7, **GRID)
    swept = comparison.run_grid(
        "distances",
        [0.5, 2.0],
        2,
        7,
        sweep={"runner": sweep_records, "output": tmp_path / "s", "n_workers": 1, "processes": False},
        **GRID,
    )
    assert here == swept
    assert set(here["DPPro (record-level)"]) == {0.5, 2.0} and len(here["DPPro (record-level)"][2.0]) == 2
    assert (tmp_path / "s" / "results.parquet").is_file()
    # a callable experiment runs here, with the stream (seed, (key, i, s)) of each point
    calls = comparison.run_grid(lambda eps, rng: {"m": eps + rng.random()}, [1.0], 2, 7, key="k")
    assert len(set(calls["m"][1.0])) == 2
    with pytest.raises(TypeError, match="only the stream key"):
        comparison.run_grid(lambda eps, rng: {}, [1.0], 2, 7, key="k", delta=1e-6)


def test_run_grid_reports_a_failed_point(tmp_path):
    with pytest.raises(
        RuntimeError, match=r"2 point\(s\) of the distances sweep failed, e.g. epsilon index 0.*ValueError"
    ):
        comparison.run_grid(
            "distances",
            [1.0],
            2,
            0,
            sweep={"runner": sweep_records, "output": tmp_path, "n_workers": 1, "processes": False},
            **{**GRID, "n_rows": 1},
        )
    with pytest.raises(ValueError, match="n_repetitions"):
        comparison.run_grid("distances", [1.0], 0, 0, **GRID)
    with pytest.raises(ValueError, match="sweep needs a 'runner'"):
        comparison.run_grid("distances", [1.0], 1, 0, sweep={"output": tmp_path}, **GRID)
    with pytest.raises(ValueError, match="sweep needs an 'output'"):
        comparison.run_grid("distances", [1.0], 1, 0, sweep={"runner": sweep_records}, **GRID)


def test_peer_proposals_bound_the_libraries_cost_and_the_ceiling():
    from dpnb.papers.library_samplers import acceptance_rate

    X = np.eye(3)[np.repeat([0, 1, 2], [51, 47, 19])]
    low, high = comparison.peer_proposals(X, 2.0)  # the libraries draw at epsilon / 2 = 1
    exact = -np.log10(acceptance_rate(X.T @ X, 1.0, rule="library"))
    assert low <= exact <= high
    low_big, high_big = comparison.peer_proposals(X, 20.0)
    assert low_big <= -np.log10(acceptance_rate(X.T @ X, 10.0, rule="library")) <= high_big
    assert high_big > high  # the cost grows with epsilon
    assert comparison.proposal_ceiling(5.0, 180) == pytest.approx(5.0 * 1e11 / 180**2)
    with pytest.raises(ValueError, match="2-d"):
        comparison.peer_proposals(np.ones(3), 1.0)
    with pytest.raises(ValueError):
        comparison.proposal_ceiling(0.0, 180)
