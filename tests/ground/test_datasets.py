"""Tests for dpnb.ground.datasets: the offline data shelf, its integrity checks and the preprocessing helpers."""

import hashlib
import json
import shutil
import socket

import numpy as np
import pytest

from dpnb.ground import datasets
from dpnb.ground.datasets import Dataset, normalize_rows, scale_to_box, train_test_split

SHELF = datasets.DATA_DIR
MANIFEST = json.loads((SHELF / "MANIFEST.json").read_text())


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every test runs with outgoing connections disabled."""

    def refuse(*args, **kwargs):
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_network_is_really_off():
    with pytest.raises(OSError, match="offline"):
        socket.create_connection(("127.0.0.1", 9))
    with pytest.raises(OSError, match="offline"):
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", 9))


@pytest.fixture(scope="session")
def bio():
    return datasets.load_kdd2004_bio()


def check_dataset(ds, shape, class_counts=None):
    assert isinstance(ds, Dataset)
    assert ds.X.shape == shape and ds.X.dtype == np.float64
    assert np.isfinite(ds.X).all()
    assert len(ds.feature_names) == shape[1]
    assert ds.y.shape[0] == shape[0]
    assert str(shape[0]) in ds.description.replace(",", "")
    if class_counts is None:
        assert ds.y.dtype == np.float64 and np.isfinite(ds.y).all()
    else:
        assert ds.y.dtype == np.int64
        assert np.bincount(ds.y).tolist() == class_counts


# ----------------------------------------------------------------------------- loaders

LOADER_CASES = [
    ("adult", {}, (48842, 108), [37155, 11687]),
    ("adult", {"one_hot": False}, (48842, 14), [37155, 11687]),
    ("coil2000", {}, (9822, 137), [9236, 586]),
    ("coil2000", {"one_hot": False}, (9822, 85), [9236, 586]),
    ("coil2000", {"split": "train"}, (5822, 137), [5474, 348]),
    ("coil2000", {"split": "test"}, (4000, 137), [3762, 238]),
    ("rf1", {}, (9005, 64), None),
    ("rf1", {"split": "train"}, (4048, 64), None),
    ("rf1", {"split": "test"}, (4957, 64), None),
    ("mnist_subset", {}, (5000, 784), [500] * 10),
    ("dna", {}, (3186, 180), [767, 765, 1654]),
    ("digits", {}, (1797, 64), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]),
    ("breast_cancer", {}, (569, 30), [212, 357]),
    ("diabetes", {}, (442, 10), None),
]


@pytest.mark.parametrize("name, kwargs, shape, counts", LOADER_CASES)
def test_loader_shapes_and_targets(name, kwargs, shape, counts):
    check_dataset(datasets.load(name, **kwargs), shape, counts)


def test_kdd2004_bio(bio):
    check_dataset(bio, (145751, 74), [144455, 1296])
    assert bio.feature_names[0] == "f4" and bio.feature_names[-1] == "f77"


def test_census_income_all_and_splits():
    codes = datasets.load_census_income(one_hot=False)
    check_dataset(codes, (299285, 40), [280717, 18568])
    assert len(codes.categorical) == 32
    train = datasets.load_census_income(split="train", one_hot=False)
    test = datasets.load_census_income(split="test", one_hot=False, include_weight=True)
    assert (len(train.X), len(test.X)) == (199523, 99762)
    assert test.feature_names[-1] == "instance_weight" and test.X.shape[1] == 41
    assert (test.X[:, -1] > 0).all()


def test_census_income_one_hot_subsample():
    ds = datasets.load_census_income(n_samples=2000, random_state=0)
    check_dataset(ds, (2000, 494), np.bincount(ds.y).tolist())
    sex = [i for i, f in enumerate(ds.feature_names) if f.startswith("sex=")]
    assert ds.feature_names[sex[0]] == "sex=female"
    assert (ds.X[:, sex].sum(axis=1) == 1).all()


def test_adult_encoding():
    ds = datasets.load_adult()
    assert ds.categorical == [
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "gender",
        "native-country",
    ]
    assert "workclass=Private" in ds.feature_names
    assert "workclass=?" in ds.feature_names  # missing values are their own category
    dummies = [i for i, f in enumerate(ds.feature_names) if f.startswith("workclass=")]
    assert (ds.X[:, dummies].sum(axis=1) == 1).all()
    assert set(np.unique(ds.X[:, dummies])) == {0.0, 1.0}
    codes = datasets.load_adult(one_hot=False)
    col = codes.feature_names.index("workclass")
    np.testing.assert_array_equal(codes.X[:, col], ds.X[:, dummies].argmax(axis=1))


def test_value_ranges():
    assert datasets.load_mnist_subset().X.max() == 255.0
    assert set(np.unique(datasets.load_dna().X)) == {0.0, 1.0}
    coil = datasets.load_coil2000(one_hot=False)
    assert coil.categorical == ["STYPE", "MGEMLEEF", "MOSHOOFD"]
    assert coil.X[:, coil.feature_names.index("MGODRK")].max() == 9  # ordinal band rank


def test_rf1_targets():
    first = datasets.load_rf1()
    every = datasets.load_rf1(all_targets=True)
    assert first.target_name == "CHSI2_48H__0"
    assert every.y.shape == (9005, 8) and every.target_name.count("_48H__0") == 8
    np.testing.assert_array_equal(every.y[:, 0], first.y)


def test_subsample_is_seeded():
    a = datasets.load_dna(n_samples=100, random_state=3)
    b = datasets.load_dna(n_samples=100, random_state=3)
    c = datasets.load_dna(n_samples=100, random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    full = {row.tobytes() for row in datasets.load_dna().X}
    assert all(row.tobytes() in full for row in a.X)


def test_load_dispatch_and_available():
    assert datasets.available() == [
        "adult",
        "census_income",
        "coil2000",
        "kdd2004_bio",
        "rf1",
        "mnist_subset",
        "dna",
        "digits",
        "breast_cancer",
        "diabetes",
    ]
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load("iris")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"split": "validation"}, "split must be one of"),
        ({"n_samples": 0}, "n_samples"),
        ({"n_samples": 10**6}, "n_samples"),
        ({"n_samples": 2.5}, "n_samples"),
    ],
)
def test_loader_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        datasets.load_coil2000(**kwargs)


# ----------------------------------------------------------------------------- integrity


def test_manifest_covers_shelf_and_checksums_match():
    stored = sorted(p.name for p in SHELF.glob("*.npz"))
    assert stored == sorted(MANIFEST)
    for name, entry in MANIFEST.items():
        data = (SHELF / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], name
        assert len(data) == entry["bytes"]
        with np.load(SHELF / name, allow_pickle=False) as archive:
            assert list(archive["data"].shape) == entry["stored_shape"]
    assert sum(p.stat().st_size for p in SHELF.iterdir() if p.is_file()) < 40e6


@pytest.fixture
def shelf_copy(tmp_path, monkeypatch):
    """A private copy of the small DNA file and the manifest, used as DATA_DIR."""
    shutil.copy(SHELF / "dna.npz", tmp_path)
    shutil.copy(SHELF / "MANIFEST.json", tmp_path)
    monkeypatch.setattr(datasets, "DATA_DIR", tmp_path)
    return tmp_path


def test_corrupt_file_is_rejected(shelf_copy):
    path = shelf_copy / "dna.npz"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"dna\.npz is corrupt.*data/build\.py"):
        datasets.load_dna()


def test_missing_file_is_reported(shelf_copy):
    (shelf_copy / "dna.npz").unlink()
    with pytest.raises(FileNotFoundError, match=r"dna\.npz is missing.*data/build\.py"):
        datasets.load_dna()


def test_missing_manifest_or_entry(shelf_copy):
    manifest = shelf_copy / "MANIFEST.json"
    entries = json.loads(manifest.read_text())
    del entries["dna.npz"]
    manifest.write_text(json.dumps(entries))
    with pytest.raises(ValueError, match="no checksum for dna.npz"):
        datasets.load_dna()
    manifest.unlink()
    with pytest.raises(FileNotFoundError, match="MANIFEST.json is missing"):
        datasets.load_dna()


def test_checksum_verified_once_per_file(shelf_copy, monkeypatch):
    calls = []
    real = datasets.file_sha256
    monkeypatch.setattr(datasets, "file_sha256", lambda path: calls.append(path) or real(path))
    datasets.load_dna()
    datasets.load_dna(n_samples=10, random_state=0)
    assert len(calls) == 1


# ----------------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    "call",
    [
        lambda: scale_to_box([[np.nan, 1.0]]),
        lambda: scale_to_box([[np.inf, 1.0]]),
        lambda: scale_to_box([1.0, 2.0]),
        lambda: scale_to_box([[1.0]], (0.0, 1.0), output_bounds=(1.0, 1.0)),
        lambda: scale_to_box([[1.0]], (0.0, 1.0), output_bounds=(np.nan, 1.0)),
        lambda: scale_to_box([[1.0]], (0.0, 1.0), output_bounds=(np.zeros(2), 1.0)),
        lambda: scale_to_box([[1.0, 2.0]], ([0.0, 0.0, 0.0], 1.0)),
        lambda: scale_to_box([[1.0]], (2.0, 1.0)),
        lambda: scale_to_box([[1.0]], (np.nan, 1.0)),
        lambda: normalize_rows([[np.nan, 1.0]]),
        lambda: normalize_rows([[1.0, 1.0]], data_norm=0.0),
        lambda: normalize_rows([[1.0, 1.0]], data_norm=np.inf),
        lambda: normalize_rows([[1.0, 1.0]], mode="ball"),
        lambda: train_test_split(np.zeros((4, 2))),
    ],
)
def test_helpers_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_scale_to_box_uses_data_range_with_a_privacy_warning():
    X = np.array([[0.0, 5.0, 3.0], [10.0, 7.0, 3.0], [5.0, 6.0, 3.0]])
    with pytest.warns(datasets.PrivacyLeakWarning, match="declared bounds"):
        out = scale_to_box(X)
    np.testing.assert_allclose(out, [[-1, -1, 0], [1, 1, 0], [0, 0, 0]])
    with pytest.warns(datasets.PrivacyLeakWarning):
        out = scale_to_box(X, output_bounds=(0.0, 1.0))
    assert out.min() >= 0.0 and out.max() <= 1.0
    with pytest.raises(TypeError, match="bounds must be a pair"):
        scale_to_box(X, 1.0)
    with pytest.raises(ValueError, match=r"bounds must satisfy low <= high"):
        scale_to_box(X, (1.0, 0.0))


def test_scale_to_box_declared_bounds_clip():
    X = np.array([[-5.0, 0.5], [0.5, 2.0], [2.0, 0.0]])
    out = scale_to_box(X, ([0.0, 0.0], [1.0, 1.0]))
    np.testing.assert_allclose(out, [[-1, 0], [0, 1], [1, -1]])
    assert np.all(scale_to_box(X, (0.0, 1.0), output_bounds=(0, 1)) == np.clip(X, 0, 1))
    point = scale_to_box(X, (0.5, 0.5))  # degenerate bounds (a constant feature) map to the midpoint
    assert np.all(point == 0.0)


def test_scale_to_box_on_real_data_with_declared_bounds():
    ds = datasets.load_adult(one_hot=False)
    out = scale_to_box(ds.X, ds.bounds, output_bounds=(0.0, 1.0))
    assert out.min() == 0.0 and out.max() == 1.0


# Census-Income is checked on every row in its codes (40 columns); its one-hot form (494 columns, 1.2 GB for all
# rows) has the same values in its numeric columns and 0/1 indicators: test_census_income_one_hot_bounds_are_its_codes'
@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("adult", {}),
        ("census_income", {"one_hot": False}),
        ("coil2000", {}),
        ("kdd2004_bio", {}),
        ("rf1", {}),
        ("mnist_subset", {}),
        ("dna", {}),
        ("digits", {}),
    ],
)
def test_declared_bounds_cover_the_data_and_are_not_read_from_it(name, options):
    ds = datasets.load(name, **options)
    low, high = ds.bounds
    assert low.shape == high.shape == (ds.X.shape[1],)
    assert np.all(ds.X >= low) and np.all(ds.X <= high)
    small = datasets.load(name, n_samples=20, random_state=0, **options)  # a subsample keeps the same bounds
    np.testing.assert_array_equal(small.bounds[0], low)
    np.testing.assert_array_equal(small.bounds[1], high)


def test_census_income_one_hot_bounds_are_its_codes():
    """Each numeric column of the one-hot form carries the bounds of the same column in the codes (which cover
    every row), each indicator [0, 1]; a misplaced bound fails here even where the values would still fit."""
    codes = datasets.load_census_income(one_hot=False, n_samples=20, random_state=0)
    onehot = datasets.load_census_income(n_samples=2000, random_state=0)
    low, high = onehot.bounds
    assert np.all(onehot.X >= low) and np.all(onehot.X <= high)
    numeric = [f for f in codes.feature_names if f not in codes.categorical]
    assert [f for f in onehot.feature_names if "=" not in f] == numeric
    for j, feature in enumerate(onehot.feature_names):
        if "=" in feature:
            assert (low[j], high[j]) == (0.0, 1.0), feature
        else:
            i = codes.feature_names.index(feature)
            assert (low[j], high[j]) == (codes.bounds[0][i], codes.bounds[1][i]), feature


def test_bounds_for_one_hot_and_codes_and_targets():
    onehot, codes = datasets.load_adult(), datasets.load_adult(one_hot=False)
    age = onehot.feature_names.index("age")
    assert (onehot.bounds[0][age], onehot.bounds[1][age]) == (17.0, 90.0)
    cat = [j for j, f in enumerate(onehot.feature_names) if "=" in f]
    assert np.all(onehot.bounds[0][cat] == 0) and np.all(onehot.bounds[1][cat] == 1)
    workclass = codes.feature_names.index("workclass")
    assert codes.bounds[1][workclass] == 8.0  # nine workclass levels, codes 0..8
    rf = datasets.load_rf1(all_targets=True)
    assert np.all(rf.y >= rf.target_bounds[0]) and np.all(rf.y <= rf.target_bounds[1])
    assert datasets.load_breast_cancer().bounds is None
    assert datasets.load_census_income(include_weight=True, n_samples=20, random_state=0).bounds is None


def test_dataset_rejects_data_outside_its_bounds():
    X = np.array([[0.0, 2.0]])
    with pytest.raises(ValueError, match="outside the declared bounds"):
        Dataset("toy", X, None, ["a", "b"], None, "toy", [], bounds=(np.zeros(2), np.ones(2)))
    with pytest.raises(ValueError, match="one entry per column"):
        Dataset("toy", X, None, ["a", "b"], None, "toy", [], bounds=(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match=r"Dataset.bounds must satisfy low <= high"):
        Dataset("toy", X, None, ["a", "b"], None, "toy", [], bounds=(np.ones(2), np.zeros(2)))
    assert Dataset("toy", X, None, ["a", "b"], None, "toy", [], bounds=(X[0], X[0])).bounds[1][1] == 2.0


def test_normalize_rows_clip():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = normalize_rows(X, data_norm=1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    big = normalize_rows(datasets.load_mnist_subset().X, data_norm=2.0)
    assert np.all(np.linalg.norm(big, axis=1) <= 2.0 * (1 + 1e-12))


def test_normalize_rows_sphere():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [-1.0, 0.0]])
    out = normalize_rows(X, data_norm=2.0, mode="sphere")
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 2.0)
    np.testing.assert_allclose(out[1], [1.2, 1.6])


def test_normalize_rows_clip_depends_on_a_row_only_through_its_clipped_value():
    """Clipping is a projection: clipping a clipped row changes nothing, to the last bit."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 5)) * rng.exponential(size=(500, 1))
    X[0] = [-40.25, 0.0, 0.0, 0.0, 0.0]  # was released as -1.0000000000000002 (x * (1 / n), two roundings)
    once = normalize_rows(X)
    np.testing.assert_array_equal(normalize_rows(once), once)
    assert once[0, 0] == -1.0
    assert np.all(np.linalg.norm(once, axis=1) <= 1 + 1e-12)


def test_normalize_rows_sphere_maps_a_zero_row_to_the_public_axis():
    """An all-zero row becomes data_norm e_1: success never depends on whether the data holds one."""
    out = normalize_rows(np.array([[0.0, 0.0, 0.0], [0.0, 3.0, 4.0]]), data_norm=2.0, mode="sphere")
    np.testing.assert_array_equal(out[0], [2.0, 0.0, 0.0])
    np.testing.assert_allclose(out[1], [0.0, 1.2, 1.6])


def test_train_test_split_seeded_and_stratified():
    ds = datasets.load_coil2000(one_hot=False)
    first = train_test_split(ds, test_size=0.2, random_state=7)
    again = train_test_split(ds, test_size=0.2, random_state=7)
    other = train_test_split(ds, test_size=0.2, random_state=8)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])
    X_train, X_test, y_train, y_test = first
    assert len(X_test) == int(np.ceil(0.2 * len(ds.X))) and len(X_train) + len(X_test) == len(ds.X)
    expected = np.bincount(ds.y) * 0.2
    assert np.all(np.abs(np.bincount(y_test) - expected) <= 1)


def test_train_test_split_partitions_rows():
    X = np.arange(40.0).reshape(20, 2)
    ds = Dataset("toy", X, np.arange(20.0), ["a", "b"], "t", "toy", [])  # regression: no strata
    X_train, X_test, y_train, y_test = train_test_split(ds, test_size=0.3, random_state=0)
    assert sorted(np.r_[X_train[:, 0], X_test[:, 0]]) == list(X[:, 0])
    np.testing.assert_array_equal(X_train[:, 0] / 2, y_train)
    unlabelled = Dataset("toy", X, None, ["a", "b"], None, "toy", [])
    assert train_test_split(unlabelled, random_state=0)[2:] == (None, None)


@pytest.mark.parametrize("test_size", [0, 1, 1.5, 0.95])
def test_train_test_split_bad_size(test_size):
    ds = Dataset("toy", np.zeros((10, 1)), None, ["a"], None, "toy", [])
    with pytest.raises(ValueError, match="test_size"):
        train_test_split(ds, test_size=test_size)
    with pytest.raises(TypeError, match=r"test_size must be a number in \(0, 1\)"):  # a wrong type
        train_test_split(ds, test_size=True)


def test_dataset_checks_its_fields():
    with pytest.raises(ValueError, match="float64"):
        Dataset("toy", np.zeros((3, 2), dtype=np.float32), None, ["a", "b"], None, "", [])
    with pytest.raises(ValueError, match="feature_names"):
        Dataset("toy", np.zeros((3, 2)), None, ["a"], None, "", [])
    with pytest.raises(ValueError, match="rows"):
        Dataset("toy", np.zeros((3, 2)), np.zeros(2), ["a", "b"], None, "", [])


def test_loader_docstrings_get_the_subsample_parameters_and_one_returns_section():
    """The same numpydoc on 3.11-3.12 (docstrings keep their indent) and 3.13 (the compiler strips it)."""
    import inspect

    from dpnb.ground.datasets import _LOADERS, _with_subsample_doc

    def parameters(doc):
        lines = doc.splitlines()
        return lines[lines.index("Parameters") + 2 : lines.index("Returns") - 1]

    subsample = [
        "n_samples : int or None, default None",
        "    Keep a uniformly drawn subset of this many rows (after choosing the split), in original order.",
        "random_state : None, int, SeedSequence or Generator",
        "    Seed for ``n_samples``; pass an int for a reproducible subset.",
    ]
    kept = "Load {{x}}.\n\n    Parameters\n    ----------\n    x : int\n        An x.\n    {subsample}\n    "
    for template in (kept, inspect.cleandoc(kept)):
        doc = _with_subsample_doc(template)
        assert doc.startswith("Load {x}.\n")
        assert parameters(doc) == ["x : int", "    An x.", *subsample]
    assert parameters(_with_subsample_doc("Load.")) == subsample
    for name, loader in _LOADERS.items():
        doc = loader.__doc__
        assert doc.count("Parameters\n----------\n") == 1 and doc.endswith("\n\nReturns\n-------\nDataset\n"), name
        assert parameters(doc)[-4:] == subsample, name
        for line in parameters(doc):
            assert not line.startswith("     "), f"{name}: a description indented past one level: {line!r}"
