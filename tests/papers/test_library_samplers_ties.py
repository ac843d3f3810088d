"""Tests for dpnb.papers.library_samplers.privacy_loss_maximisers: the tied set of points where a loss is attained."""

import numpy as np
import pytest

from dpnb.papers.library_samplers import privacy_loss, privacy_loss_maximisers


def _names(points):
    return sorted(int(np.argmax(np.abs(p))) for p in points)


def test_swapped_pair_is_a_tie_between_e1_and_e2():
    # C = diag(3, 2, 0) against diag(2, 3, 0): swapping the first two coordinates maps the pair onto
    # itself with C and C' exchanged, so |log p_C - log p_C'| is the same at e1 and e2 exactly.
    C, C_prime = np.diag([3.0, 2.0, 0.0]), np.diag([2.0, 3.0, 0.0])
    loss, points = privacy_loss_maximisers(C, C_prime, 1.0, rule="library", n_nodes=40)
    assert _names(points) == [0, 1]
    assert np.allclose(np.sort(np.abs(points), axis=0), [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]], atol=1e-12)
    assert loss == privacy_loss(C, C_prime, 1.0, rule="library", n_nodes=40)[0]


def test_tied_set_does_not_move_with_round_off():
    # A perturbation far below the tie rule's 1e-9 changes which of e1, e2 an argmax picks, never the set.
    C, C_prime = np.diag([3.0, 2.0, 0.0]), np.diag([2.0, 3.0, 0.0])
    for tweak in (1e-14, -1e-14):
        _, points = privacy_loss_maximisers(C + np.diag([tweak, 0.0, 0.0]), C_prime, 1.0, rule="library", n_nodes=40)
        assert _names(points) == [0, 1]


def test_worked_pair_has_a_single_maximiser_e2():
    C, C_prime = np.diag([51.0, 47.0, 19.0]), np.diag([50.0, 48.0, 19.0])
    loss, points = privacy_loss_maximisers(C, C_prime, 1.0, rule="library", n_nodes=40)
    assert points.shape == (1, 3)
    assert np.allclose(points[0], [0.0, 1.0, 0.0], atol=1e-12)  # sign made canonical: first nonzero > 0
    assert loss > 1.0  # the libraries' loss exceeds epsilon on this pair (1.164 at 200 nodes)


def test_shape_mismatch_and_bad_rule_raise():
    with pytest.raises(ValueError, match="same shape"):
        privacy_loss_maximisers(np.eye(3), np.eye(2), 1.0)
    with pytest.raises(ValueError):
        privacy_loss_maximisers(np.eye(3), np.eye(3), 1.0, rule="nosuch")
