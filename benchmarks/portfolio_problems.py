"""Problems of the portfolio benchmark (No-PASt-BO paper, section IV): synthetic and tuning.

The synthetic functions of §IV-B, Branin, Hartmann-3 and Hartmann-6, are those of
:mod:`benchmarks.problems`. The two tuning problems follow §IV-C on data shipped with
scikit-learn (no download; the paper's Boston housing data left scikit-learn and its wind
turbine data are not public):

``svr-diabetes``
    ``SVR`` (RBF kernel) on diabetes (442 x 10, features and target standardised); objective =
    10-fold CV root mean squared error (as in the paper). Space: ``gamma`` in [1e-4, 10],
    ``C`` in [1e-2, 100], ``epsilon`` in [1e-3, 1], all log-scaled. (C is capped at 100: beyond
    it libsvm's cost grows quickly while the CV error does not improve.)
``mlp-sgd-diabetes``
    ``MLPRegressor`` with one tanh hidden layer trained by SGD with momentum (the paper's
    model), 100 epochs, on a fixed 70/30 split of standardised diabetes; objective = hold-out
    RMSE (capped at 10, e.g. when SGD diverges). Space: ``hidden_units`` (int, log, 2-64),
    ``learning_rate_init`` (log, 1e-4-0.5), ``alpha`` (log, 1e-6-1), ``momentum`` (0-0.99).

Both are deterministic (fixed folds, split and model seeds). Measured cost per evaluation
(40 random configurations, one thread, 2-core machine shared with other jobs):
``svr-diabetes`` 0.16 s mean, 0.44 s max; ``mlp-sgd-diabetes`` 0.08 s mean, 0.10 s max.
``python -m benchmarks.portfolio_problems`` measures it again.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
from optuna.distributions import FloatDistribution, IntDistribution

from benchmarks.problems import PROBLEMS, Problem, lookup

__all__ = [
    "PORTFOLIO_PROBLEMS",
    "SYNTHETIC_PROBLEMS",
    "get_portfolio_problem",
    "mlp_sgd_diabetes",
    "svr_diabetes",
]

_SEED = 0
_N_FOLDS = 10
_HOLDOUT = 0.3
_MLP_EPOCHS = 100
_RMSE_CAP = 10.0


@cache
def _diabetes() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    x = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    y = (data.target - data.target.mean()) / data.target.std()
    return x, y


@cache
def _diabetes_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    x, y = _diabetes()
    x_train, x_valid, y_train, y_valid = train_test_split(
        x, y, test_size=_HOLDOUT, random_state=_SEED
    )
    return x_train, x_valid, y_train, y_valid


def svr_diabetes(params: Mapping[str, Any]) -> float:
    """10-fold CV RMSE of an RBF support vector regressor on standardised diabetes."""
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.svm import SVR

    x, y = _diabetes()
    model = SVR(
        kernel="rbf",
        gamma=float(params["gamma"]),
        C=float(params["C"]),
        epsilon=float(params["epsilon"]),
    )
    folds = KFold(n_splits=_N_FOLDS, shuffle=True, random_state=_SEED)
    scores = cross_val_score(model, x, y, cv=folds, scoring="neg_root_mean_squared_error")
    rmse = float(-np.mean(scores))
    return rmse if math.isfinite(rmse) and rmse < _RMSE_CAP else _RMSE_CAP


def mlp_sgd_diabetes(params: Mapping[str, Any]) -> float:
    """Hold-out RMSE of a one-hidden-layer tanh MLP trained by SGD with momentum."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    x_train, x_valid, y_train, y_valid = _diabetes_split()
    model = MLPRegressor(
        hidden_layer_sizes=(int(params["hidden_units"]),),
        activation="tanh",
        solver="sgd",
        learning_rate_init=float(params["learning_rate_init"]),
        alpha=float(params["alpha"]),
        momentum=float(params["momentum"]),
        max_iter=_MLP_EPOCHS,
        random_state=_SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow while SGD diverges
        try:
            model.fit(x_train, y_train)
        except ValueError:  # "Solver produced non-finite parameter weights"
            return _RMSE_CAP
        rmse = float(np.sqrt(np.mean((model.predict(x_valid) - y_valid) ** 2)))
    return rmse if math.isfinite(rmse) and rmse < _RMSE_CAP else _RMSE_CAP


#: The synthetic functions of §IV-B (known optima), reused from :mod:`benchmarks.problems`.
SYNTHETIC_PROBLEMS: tuple[str, ...] = ("branin", "hartmann3", "hartmann6")

#: Every problem of the portfolio benchmark, in report order.
PORTFOLIO_PROBLEMS: dict[str, Problem] = {
    **{name: PROBLEMS[name] for name in SYNTHETIC_PROBLEMS},
    "svr-diabetes": Problem(
        "svr-diabetes",
        {
            "gamma": FloatDistribution(1e-4, 10.0, log=True),
            "C": FloatDistribution(1e-2, 100.0, log=True),
            "epsilon": FloatDistribution(1e-3, 1.0, log=True),
        },
        svr_diabetes,
        None,
        "SVR (RBF) on standardised diabetes, 10-fold CV RMSE (No-PASt-BO §IV-C)",
    ),
    "mlp-sgd-diabetes": Problem(
        "mlp-sgd-diabetes",
        {
            "hidden_units": IntDistribution(2, 64, log=True),
            "learning_rate_init": FloatDistribution(1e-4, 0.5, log=True),
            "alpha": FloatDistribution(1e-6, 1.0, log=True),
            "momentum": FloatDistribution(0.0, 0.99),
        },
        mlp_sgd_diabetes,
        None,
        "MLPRegressor (tanh, SGD with momentum) on diabetes, hold-out RMSE (§IV-C)",
    ),
}


def get_portfolio_problem(name: str) -> Problem:
    """The problem called ``name`` (a key of :data:`PORTFOLIO_PROBLEMS`).

    Raises ``KeyError`` listing the known names for any other name.
    """
    return lookup(PORTFOLIO_PROBLEMS, name, "problem")


def _time_problems(n_configs: int = 40) -> None:
    """Print wall time per evaluation of the tuning problems (random configurations)."""
    import time

    import optuna

    from benchmarks.harness import configure_quiet_logging, limit_threads
    from benchmarks.problems import suggest_params

    limit_threads()
    configure_quiet_logging()
    for problem in PORTFOLIO_PROBLEMS.values():
        if problem.synthetic:
            continue
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        problem.function(suggest_params(study.ask(), problem.space))  # warm-up
        times, values = [], []
        for _ in range(n_configs):
            params = suggest_params(study.ask(), problem.space)
            start = time.perf_counter()
            values.append(problem.function(params))
            times.append(time.perf_counter() - start)
        print(
            f"{problem.name:<18} mean {np.mean(times):.3f} s  max {np.max(times):.3f} s  "
            f"value min {np.min(values):.4f} median {np.median(values):.4f}"
        )


if __name__ == "__main__":
    _time_problems()
