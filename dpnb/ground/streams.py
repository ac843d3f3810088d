"""Independent random streams, one per experiment, derived from a notebook's ``seed``.

A notebook that shares one generator across its sections lets any change upstream (one more
draw, a data-dependent number of draws, a round-off difference that flips an accept/reject
step) shift every number printed after it. :func:`stream` gives each experiment its own
generator, keyed by a stable name, so that sections are independent: the stream of
``stream(seed, "audit")`` does not depend on what any other section drew.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np


def _key_words(key) -> list[int]:
    """A stable list of 32-bit words for ``key`` (a string, an int, or a tuple of them)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not parts:
        raise ValueError("key must be a non-empty string, int, or tuple of them")
    text = []
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (str, numbers.Integral)):
            raise TypeError(f"key parts must be strings or ints, got {type(part).__name__}")
        text.append(f"{type(part).__name__}:{part}")
    digest = hashlib.sha256("\x1f".join(text).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def stream(seed, key) -> np.random.Generator:
    """The generator for experiment ``key`` of a run seeded with ``seed``.

    Parameters
    ----------
    seed : int
        The notebook's ``seed`` parameter, >= 0.
    key : str, int, or tuple of str and int
        A stable name for the experiment, e.g. ``"lemma4-audit"`` or ``("fig2", epsilon_index)``.
        The same ``(seed, key)`` always gives the same stream, on any machine; different keys
        give statistically independent streams (SeedSequence entropy mixing).

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), *_key_words(key)]))


def sklearn_seed(random_state) -> int:
    """An int seed for a scikit-learn estimator, drawn from ``random_state``.

    Parameters
    ----------
    random_state : numpy.random.Generator
        The experiment's stream; one draw is consumed.
    """
    if not isinstance(random_state, np.random.Generator):
        raise TypeError(f"random_state must be a numpy.random.Generator, got {type(random_state).__name__}")
    return int(random_state.integers(2**31 - 1))
