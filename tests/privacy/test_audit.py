import numpy as np
import pytest

from dpnb.privacy.audit import (
    NEIGHBOURS,
    AddRemoveRows,
    ChangeOneAttribute,
    FlipOneBit,
    LabelledBall,
    LabelledBox,
    NeighbourRelation,
    ReplaceRowBox,
    ReplaceRowL2Ball,
    audit_epsilon,
    check_neighbours,
    replace_row,
    search_sensitivity,
    search_sensitivity_batched,
)
from dpnb.privacy.mechanisms import gaussian_epsilon, gaussian_mechanism, gaussian_sigma, laplace_mechanism


def test_search_finds_mean_sensitivity_in_box():
    n, d = 8, 3
    res = search_sensitivity(
        lambda X: X.mean(axis=0),
        ReplaceRowBox(-1, 1),
        n,
        d,
        norm=1,
        claimed=2 * d / n,
        n_starts=10,
        n_steps=100,
        random_state=0,
    )
    assert res.max_found == pytest.approx(2 * d / n)
    assert not res.exceeds
    assert res.X.shape == (n, d) and np.count_nonzero(np.any(res.X != res.X_prime, axis=1)) <= 1


def test_search_refutes_an_understated_bound():
    # covariance in the unit ball: the Frobenius sensitivity is sqrt(2)/n, attained by orthogonal rows
    n = 5
    res = search_sensitivity(
        lambda X: X.T @ X / n,
        ReplaceRowL2Ball(1.0),
        n,
        3,
        norm=2,
        claimed=1.0 / n,
        n_starts=10,
        n_steps=300,
        random_state=1,
    )
    assert res.exceeds and res.ratio == pytest.approx(np.sqrt(2), rel=1e-3)
    assert "EXCEEDS" in res.summary()


def test_hand_crafted_start_is_used():
    n, d = 4, 2
    X = np.zeros((n, d))
    Xp = X.copy()
    Xp[0] = [1.0, 1.0]
    res = search_sensitivity(
        lambda X: X.sum(axis=0),
        ReplaceRowBox(0, 1),
        n,
        d,
        norm=1,
        n_starts=1,
        n_steps=0,
        starts=[(X, Xp)],
        random_state=2,
    )
    assert res.max_found == pytest.approx(2.0)


def test_relations_produce_valid_neighbours():
    rng = np.random.default_rng(3)
    X = np.stack([ReplaceRowL2Ball(1.0, on_sphere=True).random_row(4, rng) for _ in range(5)])
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    Xp = FlipOneBit().neighbour(np.zeros((3, 4)), 1, np.array([0, 1, 1, 0.0]))
    assert Xp.sum() == 1 and Xp[1, 1] == 1
    Xp = ChangeOneAttribute(0, 1).neighbour(np.zeros((3, 4)), 0, np.array([0.2, 0.9, 0, 0]))
    assert np.count_nonzero(Xp) == 1 and Xp[0, 1] == 0.9
    box = ReplaceRowBox([0, -2], [1, 2])
    rows = np.stack([box.perturb_row(box.random_row(2, rng), rng, 3.0) for _ in range(100)])
    assert rows[:, 0].min() >= 0 and rows[:, 0].max() <= 1 and np.abs(rows[:, 1]).max() <= 2


def test_binary_and_attribute_relations_find_unit_sensitivity():
    q = lambda X: X.sum(axis=0)  # noqa: E731
    assert search_sensitivity(q, FlipOneBit(), 4, 5, norm=1, random_state=4).max_found == 1.0
    assert search_sensitivity(q, ChangeOneAttribute(0, 1), 4, 5, norm=2, random_state=4).max_found == pytest.approx(1.0)


def test_search_bad_input():
    q = lambda X: X.sum()  # noqa: E731
    with pytest.raises(ValueError, match="NeighbourRelation"):
        search_sensitivity(q, "box", 3, 2)
    with pytest.raises(ValueError, match="n must be an integer"):
        search_sensitivity(q, ReplaceRowBox(), 0, 2)
    with pytest.raises(ValueError, match="norm"):
        search_sensitivity(q, ReplaceRowBox(), 3, 2, norm=3)
    with pytest.raises(ValueError, match="row_index"):
        search_sensitivity(q, ReplaceRowBox(), 3, 2, row_index=3)
    with pytest.raises(ValueError, match="shape"):
        search_sensitivity(q, ReplaceRowBox(), 3, 2, starts=[(np.zeros((2, 2)), np.zeros((2, 2)))])
    with pytest.raises(ValueError, match="low < high"):
        ReplaceRowBox(1, 1)
    with pytest.raises(ValueError, match="data_norm"):
        ReplaceRowL2Ball(0)
    with pytest.raises(ValueError, match="data_norm"):
        LabelledBall(1.0, data_norm=-1.0)
    with pytest.raises(TypeError):
        NeighbourRelation()
    with pytest.raises(TypeError):  # the box is positional: (low, high), no keyword names
        ReplaceRowBox(low=0.0, high=1.0)
    with pytest.raises(ValueError, match="finite"):
        ReplaceRowBox(0.0, np.inf)
    for search in (search_sensitivity, search_sensitivity_batched):
        with pytest.raises(ValueError, match="NeighbourRelation"):
            search(q, "box", 3, 2)
        with pytest.raises(ValueError, match="n_starts"):
            search(q, ReplaceRowBox(), 3, 2, n_starts=0)
        with pytest.raises(TypeError, match="batched"):  # one algorithm per function
            search(q, ReplaceRowBox(), 3, 2, batched=True)


def test_neighbour_names():
    assert NEIGHBOURS == {
        "replace-row": ReplaceRowBox,
        "change-attribute": ChangeOneAttribute,
        "add-remove-row": AddRemoveRows,
    }
    assert check_neighbours("add-remove-row") == "add-remove-row"
    assert check_neighbours("replace-row", ("replace-row",)) == "replace-row"
    with pytest.raises(
        ValueError, match=r"neighbours must be one of \('replace-row', 'change-attribute', 'add-remove-row'\)"
    ):
        check_neighbours("record")
    with pytest.raises(ValueError, match=r"one of \('replace-row',\), got 'add-remove-row'"):
        check_neighbours("add-remove-row", ("replace-row",))
    with pytest.raises(TypeError, match="neighbours"):
        check_neighbours(1)
    with pytest.raises(ValueError, match="not neighbour notions"):
        check_neighbours("replace-row", ("replace-row", "record"))


def test_relation_bounds_and_data_norm():
    box = ReplaceRowBox(0, 1)
    assert np.array_equal(box.low, [0.0]) and np.array_equal(box.high, [1.0])
    wide = ReplaceRowBox([0.0, -2.0], [1.0, 2.0])
    assert np.array_equal(wide.project_row(np.array([5.0, -5.0])), [1.0, -2.0])
    assert ReplaceRowL2Ball(2.0).data_norm == 2.0
    assert LabelledBall(3.0, data_norm=2.0).ball.data_norm == 2.0
    assert ChangeOneAttribute(0.0, 2.0, attribute=1).attribute == 1
    assert LabelledBox(0.0, 1.0, n_classes=3).n_classes == 3


def test_spectral_norm_option():
    res = search_sensitivity(
        lambda X: X.T @ X, ReplaceRowL2Ball(1.0), 3, 2, norm="spectral", n_starts=5, n_steps=200, random_state=5
    )
    assert res.max_found == pytest.approx(1.0, abs=1e-3)  # ||xx' - yy'||_2 <= 1 on the unit ball


def test_audit_epsilon_consistent_for_correct_laplace():
    X, Xp = np.zeros((1, 1)), np.ones((1, 1))
    mech = lambda D, rng: laplace_mechanism(D.sum(), 1.0, 1.0, random_state=rng)  # noqa: E731
    res = audit_epsilon(mech, X, Xp, n_samples=20_000, claimed=1.0, random_state=6)
    assert not res.violates
    assert 0.8 < res.epsilon_lower <= 1.0  # the audit is also nearly tight here


def test_audit_epsilon_negative_control_catches_under_noising():
    X, Xp = np.zeros((1, 1)), np.ones((1, 1))
    mech = lambda D, rng: laplace_mechanism(D.sum(), 0.25, 1.0, random_state=rng)  # true epsilon 4  # noqa: E731
    res = audit_epsilon(mech, X, Xp, n_samples=20_000, claimed=1.0, random_state=7)
    assert res.violates and res.epsilon_lower > 2.5
    assert "VIOLATED" in res.summary()


def test_audit_epsilon_gaussian_respects_exact_curve():
    X, Xp = np.zeros(2), np.array([0.6, 0.8])  # L2 distance 1
    mech = lambda D, rng, m: gaussian_mechanism(D, 1.0, 1.0, 1e-3, random_state=rng, size=m)  # noqa: E731
    res = audit_epsilon(mech, X, Xp, n_samples=20_000, delta=1e-3, claimed=1.0, random_state=8, batched=True)
    assert not res.violates
    assert res.epsilon_lower <= gaussian_epsilon(1e-3, gaussian_sigma(1.0, 1.0, 1e-3)) + 1e-9


def test_audit_epsilon_custom_statistic_and_bad_input():
    X, Xp = np.zeros(1), np.ones(1)
    mech = lambda D, rng: laplace_mechanism(D, 0.5, 1.0, random_state=rng)  # noqa: E731
    res = audit_epsilon(mech, X, Xp, n_samples=4000, statistic=lambda o: o[0], random_state=9)
    assert res.epsilon_lower > 0.5
    with pytest.raises(ValueError, match="n_samples"):
        audit_epsilon(mech, X, Xp, n_samples=10)
    with pytest.raises(ValueError, match="alpha"):
        audit_epsilon(mech, X, Xp, alpha=1.5)
    with pytest.raises(ValueError, match="delta"):
        audit_epsilon(mech, X, Xp, delta=2.0)


def test_labelled_relations_stay_in_their_domains():
    rng = np.random.default_rng(0)
    ball, box = LabelledBall(label_bound=2.0, data_norm=1.5), LabelledBox(-1.0, 1.0, n_classes=3)
    for _ in range(200):
        row = ball.perturb_row(ball.random_row(5, rng), rng, 3.0)
        assert np.linalg.norm(row[:-1]) <= 1.5 + 1e-12 and abs(row[-1]) <= 2.0
        row = box.perturb_row(box.random_row(5, rng), rng, 3.0)
        assert np.all(np.abs(row[:-1]) <= 1.0) and row[-1] in (0.0, 1.0, 2.0)
    labels = {box.perturb_row(np.zeros(4), rng, 0.1)[-1] for _ in range(200)}
    assert labels == {0.0, 1.0, 2.0}  # the search can move a record to another class
    with pytest.raises(ValueError):
        LabelledBall(label_bound=0.0)
    with pytest.raises(ValueError):
        LabelledBox(n_classes=1)


def test_labelled_box_finds_a_class_count_sensitivity():
    def count_of_class_1(Z):
        return np.array([np.sum(Z[:, -1] == 1)])

    res = search_sensitivity(
        count_of_class_1, LabelledBox(0.0, 1.0), n=4, d=3, norm=1, claimed=1.0, n_starts=4, n_steps=30, random_state=0
    )
    assert res.max_found == 1.0 and not res.exceeds


# --------------------------------------------------------------------------------------
# Serial paths pinned, batched paths checked against them
# --------------------------------------------------------------------------------------
def test_serial_paths_keep_their_draws():
    # values of the serial paths before the batched paths existed: every notebook's committed
    # outputs depend on these draws staying the same
    cov = search_sensitivity(
        lambda X: X.T @ X / len(X), ReplaceRowL2Ball(1.0), 4, 3, norm=2, n_starts=3, n_steps=25, random_state=11
    )
    assert cov.max_found == pytest.approx(0.3535463873530368, rel=1e-12) and cov.n_evaluations == 156
    box = search_sensitivity(
        lambda X: X.mean(axis=0), ReplaceRowBox(-1, 1), 5, 4, norm=1, n_starts=3, n_steps=5, random_state=12
    )
    assert box.history == pytest.approx([0.8999781703309465, 0.9036346484850758, 0.9604705700317187], rel=1e-12)
    mech = lambda D, rng: laplace_mechanism(D, 1.0, 1.0, random_state=rng)  # noqa: E731
    res = audit_epsilon(mech, np.zeros(1), np.ones(1), n_samples=2000, random_state=13)
    assert res.counts == (148, 36) and res.threshold == pytest.approx(2.5219639338759863, rel=1e-12)
    assert res.epsilon_lower == pytest.approx(0.9388296199042152, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_batched_audit_equals_serial_audit(seed):
    X, Xp = np.zeros(2), np.array([0.6, 0.8])
    serial = [
        lambda D, rng: laplace_mechanism(D, 1.0, 1.0, random_state=rng),
        lambda D, rng: gaussian_mechanism(D, 1.0, 1.0, 1e-3, random_state=rng),
    ]
    batched = [
        lambda D, rng, m: laplace_mechanism(D, 1.0, 1.0, random_state=rng, size=m),
        lambda D, rng, m: gaussian_mechanism(D, 1.0, 1.0, 1e-3, random_state=rng, size=m),
    ]
    for one, many, delta in zip(serial, batched, (0.0, 1e-3)):
        a = audit_epsilon(one, X, Xp, n_samples=300, delta=delta, claimed=1.0, random_state=seed)
        b = audit_epsilon(many, X, Xp, n_samples=300, delta=delta, claimed=1.0, random_state=seed, batched=True)
        assert a == b
    a = audit_epsilon(serial[0], X, Xp, n_samples=300, statistic=lambda o: o[1], random_state=seed)
    b = audit_epsilon(batched[0], X, Xp, n_samples=300, statistic=lambda s: s[:, 1], random_state=seed, batched=True)
    assert a == b


def test_batched_search_finds_the_sensitivities():
    n = 5
    mean = search_sensitivity_batched(
        lambda X: X.mean(axis=-2), ReplaceRowBox(-1, 1), n, 3, norm=1, claimed=6 / n, random_state=0
    )
    assert mean.max_found == pytest.approx(6 / n) and not mean.exceeds
    assert mean.X.shape == (n, 3) and np.count_nonzero(np.any(mean.X != mean.X_prime, axis=1)) <= 1
    assert mean.n_evaluations == 2 * 20 * 201 and len(mean.history) == 20
    cov = search_sensitivity_batched(
        lambda X: np.swapaxes(X, -1, -2) @ X / n,
        ReplaceRowL2Ball(1.0),
        n,
        3,
        norm=2,
        claimed=1.0 / n,
        n_steps=300,
        random_state=1,
    )
    assert cov.exceeds and cov.ratio == pytest.approx(np.sqrt(2), rel=1e-3)
    assert cov.max_found == pytest.approx(np.linalg.norm(cov.X.T @ cov.X - cov.X_prime.T @ cov.X_prime) / n)
    spectral = search_sensitivity_batched(
        lambda X: np.swapaxes(X, -1, -2) @ X, ReplaceRowL2Ball(1.0), 3, 2, norm="spectral", random_state=5
    )
    assert spectral.max_found == pytest.approx(1.0, abs=1e-3)


def test_batched_search_with_default_row_stack_moves():
    # relations without vectorised overrides fall back to their one-row moves
    q = lambda X: X.sum(axis=-2)  # noqa: E731
    for relation in (FlipOneBit(), ChangeOneAttribute(0, 1)):
        res = search_sensitivity_batched(q, relation, 4, 5, norm=1, n_starts=4, n_steps=20, random_state=4)
        assert res.max_found == pytest.approx(1.0)
    count = lambda Z: (Z[..., -1] == 1).sum(axis=-1, keepdims=True)  # noqa: E731
    res = search_sensitivity_batched(count, LabelledBox(0.0, 1.0), 4, 3, norm=1, n_starts=4, n_steps=30, random_state=0)
    assert res.max_found == 1.0


def test_batched_search_starts_and_bad_query():
    n, d = 4, 2
    X = np.zeros((n, d))
    Xp = X.copy()
    Xp[0] = [1.0, 1.0]
    q = lambda X: X.sum(axis=-2)  # noqa: E731
    res = search_sensitivity_batched(q, ReplaceRowBox(0, 1), n, d, norm=1, n_starts=1, n_steps=0, starts=[(X, Xp)])
    assert res.max_found == pytest.approx(2.0) and np.array_equal(res.X_prime, Xp)
    with pytest.raises(ValueError, match="one output per dataset"):
        search_sensitivity_batched(lambda X: X.sum(), ReplaceRowBox(), n, d, n_steps=1)


def test_row_stack_moves_stay_in_their_domains():
    rng = np.random.default_rng(3)
    box = ReplaceRowBox([0, -2], [1, 2])
    rows = box.perturb_rows(box.random_rows(500, 2, rng), rng, np.full(500, 3.0))
    assert rows[:, 0].min() >= 0 and rows[:, 0].max() <= 1 and np.abs(rows[:, 1]).max() <= 2
    assert np.any(rows[:, 0] == 0) and np.any(rows[:, 1] == 2)  # faces are reached
    ball, sphere = ReplaceRowL2Ball(2.0), ReplaceRowL2Ball(2.0, on_sphere=True)
    inside = ball.perturb_rows(ball.random_rows(500, 4, rng), rng, np.full(500, 3.0))
    assert np.linalg.norm(inside, axis=1).max() <= 2.0 + 1e-12 and np.linalg.norm(inside, axis=1).min() < 1.9
    on = sphere.perturb_rows(sphere.random_rows(500, 4, rng), rng, np.full(500, 3.0))
    assert np.allclose(np.linalg.norm(on, axis=1), 2.0)
    for relation in (ball, sphere):  # the vectorised projection is the one-row projection
        stack = np.vstack([rng.standard_normal((20, 4)) * 3, np.zeros((1, 4))])
        # one row alone and the same row in a stack: the norm's reduction may be vectorised
        # differently (AVX-512 does), so up to a few ulp of a 4-term norm, never more
        np.testing.assert_allclose(relation.project_rows(stack), [relation.project_row(r) for r in stack], rtol=1e-14)
        assert np.array_equal(
            relation.project_row(np.zeros(4)), [relation.data_norm if relation.on_sphere else 0, 0, 0, 0]
        )


# --------------------------------------------------------------------------------------
# Row-stack moves of the labelled relations
# --------------------------------------------------------------------------------------
def test_labelled_row_stack_moves_match_the_one_row_moves():
    rng = np.random.default_rng(21)
    ball, box = LabelledBall(label_bound=2.0, data_norm=1.5), LabelledBox(-1.0, 1.0, n_classes=3)
    stack = rng.standard_normal((50, 5)) * 3
    # box: clipping and rounding are exact, so the two paths agree to the bit
    assert np.array_equal(box.project_rows(stack), [box.project_row(r) for r in stack])
    # ball: a row's norm alone or inside a stack may be reduced in another order (AVX-512 does):
    # a 4-term norm then differs by a few ulp, never more
    np.testing.assert_allclose(ball.project_rows(stack), [ball.project_row(r) for r in stack], rtol=1e-14)
    assert np.all(np.linalg.norm(ball.project_rows(stack)[:, :-1], axis=1) <= 1.5 * (1 + 1e-15))
    rows = ball.perturb_rows(ball.random_rows(2000, 5, rng), rng, np.full(2000, 3.0))
    assert rows.shape == (2000, 5) and np.linalg.norm(rows[:, :-1], axis=1).max() <= 1.5 + 1e-12
    assert np.abs(rows[:, -1]).max() <= 2.0 and np.any(np.abs(rows[:, -1]) == 2.0)
    start = box.random_rows(2000, 5, rng)
    assert set(np.unique(start[:, -1])) == {0.0, 1.0, 2.0} and np.all(np.abs(start[:, :-1]) <= 1)
    assert 0.4 < np.mean(np.all(np.abs(start[:, :-1]) == 1, axis=1)) < 0.6  # as random_row: half at vertices
    moved = box.perturb_rows(np.zeros((6000, 4)), rng, np.full(6000, 0.1))
    assert np.all(np.abs(moved[:, :-1]) <= 1) and set(np.unique(moved[:, -1])) == {0.0, 1.0, 2.0}
    # as perturb_row: a new class drawn with probability 0.3, so the label leaves class 0 with probability 0.2
    assert abs(np.mean(moved[:, -1] != 0) - 0.2) < 0.02


def test_batched_search_with_labelled_relations():
    def class_sums(Z):
        onehot = np.stack([Z[..., -1] == c for c in (0, 1)], axis=-1).astype(float)
        return np.swapaxes(onehot, -1, -2) @ Z[..., :-1]

    # a record moving between classes changes two class sums by ||x||_1 <= d each
    res = search_sensitivity_batched(class_sums, LabelledBox(0.0, 1.0), 3, 4, norm=1, n_steps=100, random_state=2)
    assert res.max_found == pytest.approx(6.0) and np.count_nonzero(np.any(res.X != res.X_prime, axis=1)) == 1
    # X^T y with ||x|| <= 1, |y| <= 2: ||y x - y' x'||_2 <= 4, attained by (x, 2) vs (x, -2)
    res = search_sensitivity_batched(
        lambda Z: np.einsum("...ni,...n->...i", Z[..., :-1], Z[..., -1]),
        LabelledBall(2.0, data_norm=1.0),
        3,
        3,
        n_steps=300,
        random_state=3,
    )
    assert 3.9 <= res.max_found <= 4.0 + 1e-12
    with pytest.raises(ValueError, match="one output per dataset"):
        search_sensitivity_batched(lambda Z: Z.sum(), LabelledBox(), 3, 3, n_steps=1)


def test_threshold_audit_takes_statistics_of_any_shape():
    from dpnb.privacy.audit import threshold_audit

    rng = np.random.default_rng(5)
    a, b = rng.laplace(0.0, 1.0, (2, 400)), rng.laplace(1.0, 1.0, (2, 400))
    flat = threshold_audit((a[0], b[0]), (a[1], b[1]), np.linspace(-2, 3, 20), claimed=1.0)
    column = threshold_audit((a[0][:, None], b[0][:, None]), (a[1][:, None], b[1][:, None]), np.linspace(-2, 3, 20))
    assert column.epsilon_lower == flat.epsilon_lower and column.counts == flat.counts and not flat.violates


def test_output_distance_norms_and_bad_norm():
    from dpnb.privacy.audit import output_distance

    a, b = np.array([[3.0, 0.0], [0.0, 0.0]]), np.zeros((2, 2))
    assert output_distance(a, b, 1) == 3.0 and output_distance(a, b, 2) == 3.0
    assert output_distance([1.0, -4.0], [0.0, 0.0], "inf") == 4.0 == output_distance([1.0, -4.0], [0.0, 0.0], np.inf)
    assert output_distance(np.eye(2), -np.eye(2), "spectral") == 2.0
    assert output_distance(a, b, lambda u, v: 7) == 7.0
    with pytest.raises(ValueError, match="norm must be 1, 2, 'inf', 'spectral' or a callable"):
        output_distance(a, b, 3)


def test_replace_row_differs_in_the_given_row_only():
    X, Xp = replace_row([[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0])
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(Xp, [[5.0, 6.0], [3.0, 4.0]])
    rows = np.zeros((3, 2))
    X, Xp = replace_row(rows, [1.0, 1.0], index=2)
    assert X is not rows and np.array_equal(X, rows)  # the caller's rows are never modified
    np.testing.assert_array_equal(Xp, [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])


@pytest.mark.parametrize(
    "args, error, match",
    [
        (([], [1.0]), ValueError, "rows must be a non-empty"),
        (([1.0, 2.0], [1.0]), ValueError, "rows must be a non-empty"),
        (([[1.0, 2.0]], [1.0]), ValueError, "new_row must have 2 entries"),
        (([[1.0, 2.0]], [1.0, 2.0], 1), ValueError, "index must be an integer <= 0"),
        (([[1.0, 2.0]], [1.0, 2.0], 0.0), TypeError, "index must be an integer"),
    ],
)
def test_replace_row_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        replace_row(*args)


def _event_epsilon(k_num, k_den, m, delta, confidence):
    """The bound of one event from two Clopper-Pearson calls (the definition threshold_audit computes array-wide)."""
    from dpnb.numerics.stats import clopper_pearson

    num = clopper_pearson(k_num, m, confidence)[0] - delta
    high = clopper_pearson(k_den, m, confidence)[1]
    return np.log(num / high) if num > 0 and high > 0 else 0.0


def _first_best_event(selection, thresholds, delta, alpha):
    """The event the selection half picks, one threshold and one Clopper-Pearson call at a time (the definition)."""
    m = len(selection[0])
    best = (-np.inf, None, None)
    for t in thresholds:
        above = [int(np.sum(x > t)) for x in selection]
        below = [int(np.sum(x < t)) for x in selection]
        for side, k in (("above", above), ("below", below)):
            for num, den in ((0, 1), (1, 0)):
                e = _event_epsilon(k[num], k[den], m, delta, 1 - alpha)
                if e > best[0]:
                    best = (e, t, (side, num, den))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_threshold_audit_picks_the_first_best_event_of_the_scalar_definition(seed):
    """The array-wide selection gives the event (threshold, side, order) and bound of the scalar loop, bit for bit,
    ties included: statistics on a coarse grid, so many thresholds and events share one plug-in bound."""
    from dpnb.privacy.audit import threshold_audit

    rng = np.random.default_rng(seed)
    m = int(rng.choice([3, 40, 500]))
    shift = float(rng.choice([0.0, 0.5, 3.0]))
    sel = (np.round(rng.standard_normal(m), 1), np.round(rng.standard_normal(m) + shift, 1))
    ev = (np.round(rng.standard_normal(m), 1), np.round(rng.standard_normal(m) + shift, 1))
    thresholds = np.unique(np.round(rng.uniform(-4, 6, size=int(rng.integers(1, 40))), 1))
    delta, alpha = float(rng.choice([0.0, 1e-3, 0.2])), float(rng.choice([0.05, 0.5, 1e-6]))
    e, t, (side, num, den) = _first_best_event(sel, thresholds, delta, alpha)
    got = threshold_audit(sel, ev, thresholds, delta=delta, alpha=alpha)
    assert got.threshold == t and got.direction.startswith("X over" if num == 0 else "X_prime over")
    assert got.direction.endswith(f"{side} threshold")
    k = [int(np.sum(x > t)) if side == "above" else int(np.sum(x < t)) for x in ev]
    assert got.counts == (k[num], k[den])
    assert got.epsilon_lower == max(0.0, float(_event_epsilon(k[num], k[den], m, delta, 1 - alpha)))


def test_threshold_audit_refuses_no_thresholds_and_unequal_or_empty_halves():
    from dpnb.privacy.audit import threshold_audit

    ev = (np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="thresholds is empty"):
        threshold_audit((np.zeros(4), np.ones(4)), ev, [])
    for sel in ((np.arange(3.0), np.arange(6.0)), (np.array([]), np.array([]))):
        with pytest.raises(ValueError, match="selection halves must hold the same positive number of runs"):
            threshold_audit(sel, ev, [0.5])
    # both evaluation counts used to be taken out of the first half's size: silently wrong when it was the longer
    for bad in ((np.zeros(4), np.ones(6)), (np.zeros(6), np.ones(4)), (np.array([]), np.array([]))):
        with pytest.raises(ValueError, match="evaluation halves must hold the same positive number of runs"):
            threshold_audit((np.zeros(4), np.ones(4)), bad, [0.5])
    # two values per run would count as two runs each (a shape (runs, 1) is one value per run)
    for which in ("selection", "evaluation"):
        halves = {"selection": ev, "evaluation": ev} | {which: (np.zeros((4, 2)), np.ones((4, 2)))}
        with pytest.raises(ValueError, match=rf"the {which} halves must hold one statistic value per run"):
            threshold_audit(halves["selection"], halves["evaluation"], [0.5])
    column = threshold_audit((np.zeros((4, 1)), np.ones((4, 1))), (np.zeros((4, 1)), np.ones((4, 1))), [0.5])
    assert column == threshold_audit((np.zeros(4), np.ones(4)), ev, [0.5])
    for alpha in (0.0, 1.0, 1.5, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\)"):
            threshold_audit((np.zeros(4), np.ones(4)), ev, [0.5], alpha=alpha)
