"""Real tuning problems: scikit-learn estimators on its bundled datasets.

``real_tuning.{space}.{dataset}``, with ``dataset`` one of ``digits``, ``wine``,
``breast_cancer`` (classification, scored by the error rate) or ``diabetes`` (regression,
scored by ``1 - R²``), each the mean over a 5-fold cross-validation with a fixed shuffle, so
that a configuration has one value. The spaces:

* ``grid-forest``: a random forest over an integer grid (trees, depth, leaf size, features);
* ``grid-boosting``: histogram gradient boosting over an integer grid (iterations, leaves,
  leaf size, learning rate ``10**k``);
* ``categorical-svm``: a support vector machine whose every parameter is categorical
  (kernel, ``C`` and ``gamma`` from fixed lists, shrinking);
* ``mostly-categorical-svm``: the same machine with three categorical parameters (kernel,
  class weights, shrinking; class weights only for classification) and log-scaled floats
  ``C`` and ``gamma``;
* ``conditional``: the estimator first (SVM, forest, k nearest neighbours, linear model),
  then its own parameters (floats, integers and categoricals).

Each evaluation is appended to a table, ``<tables>/<problem>.jsonl`` (one JSON line per
configuration; ``BENCHMARK_TABLES`` or ``benchmarks/results/tables/``, which git ignores),
and read back instead of training again: the grids and categorical spaces are finite, so
repeated runs soon cost nothing but the samplers' time (a space with floats is evaluated
anew at almost every trial).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution as Cat
from optuna.distributions import FloatDistribution as Float
from optuna.distributions import IntDistribution as Int

from benchmarks.problems import Problem, suggest, timed

__all__ = ["DATASETS", "FAMILIES", "SPACES", "problem_names", "real_tuning_problem"]

DATASETS = ("digits", "wine", "breast_cancer", "diabetes")
FOLDS = 5

#: Flat spaces: name -> parameter distributions.
FLAT_SPACES: dict[str, dict[str, Any]] = {
    "grid-forest": {
        "n_estimators": Int(10, 100, step=10),
        "max_depth": Int(1, 16),
        "min_samples_leaf": Int(1, 16),
        "max_features": Int(1, 8),
    },
    "grid-boosting": {
        "max_iter": Int(10, 200, step=10),
        "max_leaf_nodes": Int(4, 64, step=4),
        "min_samples_leaf": Int(1, 40),
        "log10_learning_rate": Int(-3, 0),
    },
    "categorical-svm": {
        "kernel": Cat(("rbf", "poly", "sigmoid", "linear")),
        "C": Cat(("0.01", "0.1", "1", "10", "100", "1000")),
        "gamma": Cat(("scale", "auto", "0.0001", "0.001", "0.01", "0.1", "1")),
        "shrinking": Cat((True, False)),
    },
    "mostly-categorical-svm": {
        "kernel": Cat(("rbf", "poly", "sigmoid", "linear")),
        "class_weight": Cat(("none", "balanced")),
        "shrinking": Cat((True, False)),
        "C": Float(1e-2, 1e3, log=True),
        "gamma": Float(1e-4, 1.0, log=True),
    },
}
SPACES = (*FLAT_SPACES, "conditional")


@functools.cache
def load(dataset: str) -> tuple[Any, Any, bool]:
    """``(X, y, is_classification)`` of a bundled scikit-learn dataset."""
    import sklearn.datasets

    if dataset not in DATASETS:
        raise ValueError(f"no dataset {dataset!r}; choose from {', '.join(DATASETS)}")
    X, y = getattr(sklearn.datasets, f"load_{dataset}")(return_X_y=True)
    return X, y, dataset != "diabetes"


def estimator(params: dict[str, Any], classification: bool) -> Any:
    """The scikit-learn estimator of a configuration (``params["model"]`` if conditional)."""
    from sklearn import ensemble, linear_model, neighbors, svm
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    p, model = dict(params), params.get("model")
    if "n_estimators" in p or model == "forest":
        cls = ensemble.RandomForestClassifier if classification else ensemble.RandomForestRegressor
        return cls(
            n_estimators=int(p.get("n_estimators", 50)),
            max_depth=int(p["max_depth"]),
            min_samples_leaf=int(p["min_samples_leaf"]),
            max_features=int(p.get("max_features", 4)),
            random_state=0,
        )
    if "max_iter" in p:
        cls = ensemble.HistGradientBoostingClassifier
        if not classification:
            cls = ensemble.HistGradientBoostingRegressor
        return cls(
            max_iter=int(p["max_iter"]),
            max_leaf_nodes=int(p["max_leaf_nodes"]),
            min_samples_leaf=int(p["min_samples_leaf"]),
            learning_rate=10.0 ** int(p["log10_learning_rate"]),
            early_stopping=False,
            random_state=0,
        )
    if "kernel" in p:
        gamma = p["gamma"] if p["gamma"] in ("scale", "auto") else float(p["gamma"])
        options = {"kernel": p["kernel"], "C": float(p["C"]), "gamma": gamma}
        options["shrinking"] = bool(p.get("shrinking", True))
        if classification:
            class_weight = p.get("class_weight", "none")
            class_weight = None if class_weight == "none" else class_weight
            model_ = svm.SVC(**options, class_weight=class_weight, random_state=0)
        else:
            # A polynomial SVR with a large C can run for minutes on diabetes: cap it.
            model_ = svm.SVR(**options, max_iter=100_000)
        return make_pipeline(StandardScaler(), model_)
    if model == "knn":
        cls = neighbors.KNeighborsClassifier if classification else neighbors.KNeighborsRegressor
        return make_pipeline(
            StandardScaler(),
            cls(n_neighbors=int(p["n_neighbors"]), weights=p["weights"], p=float(p["p"])),
        )
    if classification:
        linear = linear_model.LogisticRegression(C=float(p["alpha_inverse"]), max_iter=500)
    else:
        linear = linear_model.Ridge(alpha=1.0 / float(p["alpha_inverse"]))
    return make_pipeline(StandardScaler(), linear)


def cross_validated_loss(dataset: str, params: dict[str, Any]) -> float:
    """Mean 5-fold error rate (``1 - R²`` for regression) with a fixed shuffle."""
    import warnings

    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    X, y, classification = load(dataset)
    folds = (StratifiedKFold if classification else KFold)(FOLDS, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the linear models
        scores = cross_val_score(
            estimator(params, classification),
            X,
            y,
            cv=folds,
            scoring="accuracy" if classification else "r2",
        )
    return float(1.0 - scores.mean())


def tables_folder() -> Path:
    """Where the evaluation tables live (``BENCHMARK_TABLES`` or ``results/tables``)."""
    default = Path(__file__).resolve().parent / "results" / "tables"
    return Path(os.environ.get("BENCHMARK_TABLES", default))


class Table:
    """A configuration -> loss table on disk, appended to by every process that evaluates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[str, float] = {}

    def _read(self) -> None:
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except ValueError:  # a line cut short by a killed process
                    continue
                self.rows[row["key"]] = row["loss"]

    def loss(self, params: dict[str, Any], evaluate: Callable[[], float]) -> float:
        key = json.dumps(params, sort_keys=True)
        if key not in self.rows:
            self._read()  # another process may have evaluated it since
        if key not in self.rows:
            self.rows[key] = evaluate()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One short line per write, appended: concurrent writers do not interleave.
            with open(self.path, "a") as table:
                table.write(json.dumps({"key": key, "loss": self.rows[key]}) + "\n")
        return self.rows[key]


def conditional_params(trial: optuna.Trial) -> dict[str, Any]:
    """The estimator, then its own parameters."""
    model = trial.suggest_categorical("model", ["svm", "forest", "knn", "linear"])
    params: dict[str, Any] = {"model": model}
    if model == "svm":
        params["kernel"] = trial.suggest_categorical("svm_kernel", ["rbf", "poly", "sigmoid"])
        params["C"] = trial.suggest_float("svm_C", 1e-2, 1e3, log=True)
        params["gamma"] = trial.suggest_float("svm_gamma", 1e-4, 1.0, log=True)
    elif model == "forest":
        params["max_depth"] = trial.suggest_int("forest_max_depth", 1, 16)
        params["min_samples_leaf"] = trial.suggest_int("forest_min_samples_leaf", 1, 16)
        params["max_features"] = trial.suggest_int("forest_max_features", 1, 8)
    elif model == "knn":
        params["n_neighbors"] = trial.suggest_int("knn_n_neighbors", 1, 50, log=True)
        params["weights"] = trial.suggest_categorical("knn_weights", ["uniform", "distance"])
        params["p"] = trial.suggest_float("knn_p", 1.0, 2.0)
    else:
        params["alpha_inverse"] = trial.suggest_float("linear_C", 1e-4, 1e4, log=True)
    return params


def real_tuning_problem(name: str, space: str, dataset: str) -> Problem:
    """``real_tuning.{space}.{dataset}`` (see the module)."""
    if space not in SPACES:
        raise ValueError(f"no real-tuning space {space!r}; choose from {', '.join(SPACES)}")
    load(dataset)  # fail now on an unknown dataset, not inside a run
    table = Table(tables_folder() / f"{name}.jsonl")
    flat = FLAT_SPACES.get(space)

    def objective(trial: optuna.Trial) -> float:
        if flat is None:
            params = conditional_params(trial)
        else:
            params = {key: suggest(trial, key, dist) for key, dist in flat.items()}
        return timed(
            trial, lambda: table.loss(params, lambda: cross_validated_loss(dataset, params))
        )

    kind = "conditional" if flat is None else space.rsplit("-", 1)[0]
    return Problem(name, kind, objective, space=flat)


def problem_names(spaces: Iterable[str] = SPACES, datasets: Iterable[str] = DATASETS) -> list[str]:
    """Every real-tuning problem of ``spaces`` on ``datasets`` (by default all of them)."""
    return [f"real_tuning.{space}.{dataset}" for space in spaces for dataset in datasets]


FAMILIES: dict[str, Callable[..., Problem]] = {
    r"real_tuning\.(?P<space>[a-z-]+)\.(?P<dataset>[a-z_]+)": real_tuning_problem,
}
