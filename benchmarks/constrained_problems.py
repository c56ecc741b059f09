"""Constrained benchmark problems (cMES paper, Perrone et al., §4.1 and App. B / Table 7).

Every problem is a :class:`ConstrainedProblem`: a search ``space`` of Optuna distributions, a
deterministic ``function(params) -> (objective, constraint measure g)``, a ``threshold`` and
the feasibility rule ``g <= threshold`` (``g < threshold`` for the toy, exactly as the paper
writes it). Objectives are *minimised*. Each problem runs in two feedback modes:

``real``
    ``objective_real(trial)`` returns the objective and calls
    ``trial.set_constraint(problem.constraint_name, g - threshold)`` (Optuna 5: feasible when
    every constraint value is <= 0), so samplers that read ``trial.constraints`` see it.
``binary``
    ``objective_binary(trial)`` returns the objective when the configuration is feasible and
    otherwise RAISES ``problem.error`` (a subclass of :class:`InfeasibleError`; for the
    model-size problems also a ``MemoryError``), so the trial is ``FAIL`` and neither the
    objective nor the constraint value is observed (the paper's unobserved-objective,
    binary-feedback scenario). The runner passes ``catch=(InfeasibleError,)`` to
    ``study.optimize``; any other exception is a bug and ends the run.

Toy problem (§4.1)
------------------
``toy-quadratics``
    :math:`y(x_0, x_1) = \\min(d_1^2/0.02 + 0.3,\\ d_2^2/0.2 + 0.6,\\ d_3^2/0.6 + 0.9)` on
    :math:`[-1, 1]^2`, with :math:`d_i` the distance to the centres (-0.7, 0.5), (0.5, 0.3),
    (-0.3, -0.3) (the signs as in the paper's formula; its plain text drops the minus
    signs). Feasible iff :math:`y < 1.2`, i.e. the constraint is on the objective itself:
    the feasible set is three discs of squared radii 0.018, 0.12 and 0.18 (area
    0.996 / 4 = 24.9 % of the box), and the smallest disc holds the constrained (and
    unconstrained) optimum 0.3 at (-0.7, 0.5). Real mode: ``c = y - 1.2``.

Constrained tuning problems (datasets shipped with scikit-learn, no download)
----------------------------------------------------------------------------
Built like Table 7. Each fits one model on a fixed stratified 2/3 training split and
evaluates it on the remaining 1/3 (fixed seeds, ``n_jobs=1``), so every evaluation is a
deterministic function of the parameters. Model size = ``len(pickle.dumps(model))`` of the
fitted model (for XGBoost, of its raw UBJSON booster). Thresholds were chosen like App. B:
the constraint measure of 300 random configurations (``RandomSampler(seed=0)``; the paper
used 2000) was recorded and a round threshold picked so that 20-80 % of them are feasible.

``xgb-breast-cancer-size``
    ``XGBClassifier`` on breast-cancer; objective 1 - validation AUC; model size
    <= 30000 bytes. Space 7-D (5 float, 2 int), like Table 7's XGBoost row.
``rf-digits-size``
    ``RandomForestClassifier`` on a stratified 600-sample digits subsample; objective
    validation error rate; model size <= 40000 bytes. Space 4-D (1 float, 2 int,
    1 categorical), like Table 7's random-forest rows.
``mlp-diabetes-size``
    ``MLPRegressor`` (adam, 40 epochs) on standardised diabetes; objective 1 - validation
    R^2 (capped at 10); model size <= 16000 bytes. Space 6-D (2 float, 3 int,
    1 categorical).
``logreg-breast-cancer-neg``
    ``LogisticRegression`` (liblinear) on standardised breast-cancer, positive class =
    malignant; objective = error on positives (false-negative rate) subject to error on
    negatives (false-positive rate) <= 0.03. As in App. B one hyperparameter is the fraction
    of positives, imposed by resampling the training split with replacement (the validation
    split is not resampled: per-class error rates do not depend on its class balance).
    Space 4-D (2 float, 0 int, 2 categorical).
``svc-digits-neg``
    ``SVC`` on the 600-sample digits subsample, positives = digits 3, 5, 8, 9 (the
    confusable ones); objective error on positives subject to error on negatives <= 0.02;
    positive fraction resampled as above. Space 4-D (3 float, 0 int, 1 categorical).

Measured cost per evaluation and feasible fraction (``python -m benchmarks.
constrained_problems``: 300 random configurations per problem, ``RandomSampler(seed=0)``,
one thread, 2-core machine shared with another job):

========================  ========  ========  ========  ========  ========  =====================
problem                   wall mean wall max  CPU mean  CPU max   feasible  g at 20 / 50 / 80 %
========================  ========  ========  ========  ========  ========  =====================
toy-quadratics            < 1e-4 s  < 1e-4 s  < 1e-4 s  < 1e-4 s    22.7 %  1.145 / 1.651 / 2.684
xgb-breast-cancer-size    0.015 s   0.073 s   0.015 s   0.073 s     47.7 %  12850 / 32710 / 96040
rf-digits-size            0.016 s   0.104 s   0.016 s   0.104 s     54.7 %  14610 / 30320 / 123700
mlp-diabetes-size         0.039 s   0.148 s   0.036 s   0.099 s     50.7 %  10790 / 15760 / 34400
logreg-breast-cancer-neg  0.003 s   0.008 s   0.003 s   0.008 s     38.0 %  0.0084 / 0.050 / 0.103
svc-digits-neg            0.006 s   0.020 s   0.006 s   0.013 s     46.3 %  0 / 0.033 / 0.992
========================  ========  ========  ========  ========  ========  =====================

(``g`` = the constraint measure, sizes in bytes; the toy's 22.7 % matches the exact 24.9 %
within sampling error. The few 0.1 s maxima are the largest forests/MLPs while the other
core was busy.)
"""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from benchmarks.problems import lookup, suggest_params

__all__ = [
    "CONSTRAINED_PROBLEMS",
    "MODES",
    "ConstrainedProblem",
    "ConstraintViolationError",
    "InfeasibleError",
    "ModelTooLargeError",
    "get_constrained_problem",
]

#: Feedback modes: ``real`` sets the constraint value, ``binary`` fails infeasible trials.
MODES: tuple[str, ...] = ("real", "binary")


class InfeasibleError(Exception):
    """Raised by a binary-feedback objective when the configuration is infeasible."""


class ModelTooLargeError(InfeasibleError, MemoryError):
    """The fitted model is larger than the size budget (binary feedback)."""


class ConstraintViolationError(InfeasibleError, ValueError):
    """A metric constraint (e.g. error on negatives) is violated (binary feedback)."""


@dataclass(frozen=True)
class ConstrainedProblem:
    """A constrained minimisation problem over an Optuna search space.

    Parameters
    ----------
    name : str
        Identifier on the command line and in file names.
    space : Mapping[str, BaseDistribution]
        Parameter name to Optuna distribution.
    function : Callable[[dict[str, Any]], tuple[float, float]]
        Maps a full parameter dictionary to ``(objective, constraint measure g)``.
    threshold : float
        Feasible iff ``g <= threshold`` (``g < threshold`` when ``strict``).
    constraint_name : str
        Key of ``trial.set_constraint`` in real mode.
    error : type[InfeasibleError]
        Exception raised for infeasible configurations in binary mode.
    optimum : float or None
        Known constrained minimum (toy problem) or ``None``.
    strict : bool
        Whether the feasibility inequality is strict.
    description : str
        One line for reports.
    """

    name: str
    space: Mapping[str, BaseDistribution] = field(repr=False)
    function: Callable[[dict[str, Any]], tuple[float, float]] = field(repr=False)
    threshold: float
    constraint_name: str
    error: type[InfeasibleError] = ConstraintViolationError
    optimum: float | None = None
    strict: bool = False
    description: str = ""

    @property
    def synthetic(self) -> bool:
        """Whether the constrained optimum is known."""
        return self.optimum is not None

    def is_feasible(self, g: float) -> bool:
        """The feasibility rule applied to the constraint measure ``g``."""
        return g < self.threshold if self.strict else g <= self.threshold

    def constraint_value(self, g: float) -> float:
        """Optuna-style constraint value ``g - threshold`` (feasible when <= 0)."""
        return float(g - self.threshold)

    def evaluate(
        self,
        trial: optuna.Trial,
        params: dict[str, Any],
        mode: str,
        observe: Callable[[float, float], None] | None = None,
    ) -> float:
        """Evaluate suggested ``params`` in feedback ``mode`` (see the module docstring).

        Parameters
        ----------
        trial : optuna.Trial
            The trial (real mode sets its constraint).
        params : dict[str, Any]
            Full parameter dictionary.
        mode : str
            ``"real"`` or ``"binary"``.
        observe : Callable[[float, float], None] or None
            Called with ``(objective, g)`` before the feedback is given (the benchmark
            runner's log; samplers only see what the mode reveals).

        Returns
        -------
        float
            The objective value.

        Raises
        ------
        InfeasibleError
            In binary mode, when the configuration is infeasible.
        """
        value, g = self.function(params)
        if observe is not None:
            observe(value, g)
        if mode == "real":
            trial.set_constraint(self.constraint_name, self.constraint_value(g))
            return value
        if mode != "binary":
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if not self.is_feasible(g):
            raise self.error(
                f"{self.constraint_name} = {g:.6g} violates the limit {self.threshold:g}"
            )
        return value

    def objective_real(self, trial: optuna.Trial) -> float:
        """Real-valued feedback: return the objective and set the constraint value."""
        return self.evaluate(trial, suggest_params(trial, self.space), "real")

    def objective_binary(self, trial: optuna.Trial) -> float:
        """Binary feedback: return the objective, or raise ``self.error`` if infeasible."""
        return self.evaluate(trial, suggest_params(trial, self.space), "binary")

    def objective(self, mode: str) -> Callable[[optuna.Trial], float]:
        """The objective of feedback ``mode`` (``"real"`` or ``"binary"``)."""
        return {"real": self.objective_real, "binary": self.objective_binary}[mode]


# --------------------------------------------------------------------------------------
# Toy problem
# --------------------------------------------------------------------------------------

_TOY_CENTRES = ((-0.7, 0.5), (0.5, 0.3), (-0.3, -0.3))
_TOY_SCALES = (0.02, 0.2, 0.6)
_TOY_OFFSETS = (0.3, 0.6, 0.9)
_TOY_THRESHOLD = 1.2


def toy_quadratics_value(x0: float, x1: float) -> float:
    """The three-quadratics function of §4.1."""
    return min(
        ((cx - x0) ** 2 + (cy - x1) ** 2) / scale + offset
        for (cx, cy), scale, offset in zip(_TOY_CENTRES, _TOY_SCALES, _TOY_OFFSETS, strict=True)
    )


def toy_quadratics(params: Mapping[str, Any]) -> tuple[float, float]:
    """Objective and constraint measure of the toy: both are y (feasible iff y < 1.2)."""
    y = toy_quadratics_value(float(params["x0"]), float(params["x1"]))
    return y, y


# --------------------------------------------------------------------------------------
# Tuning problems
# --------------------------------------------------------------------------------------

_SEED = 0
_MLP_EPOCHS = 40
_R2_CAP = 10.0


def _split(x: np.ndarray, y: np.ndarray, stratify: bool) -> tuple[np.ndarray, ...]:
    from sklearn.model_selection import train_test_split

    return tuple(
        train_test_split(
            x, y, test_size=1 / 3, random_state=_SEED, stratify=y if stratify else None
        )
    )


@cache
def _breast_cancer_split() -> tuple[np.ndarray, ...]:
    """Standardised breast-cancer, label 1 = malignant (the positive class)."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    x = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    return _split(x, (data.target == 0).astype(int), stratify=True)


@cache
def _digits_split(positives: tuple[int, ...] | None = None) -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x, _, y, _ = train_test_split(
        data.data / 16.0, data.target, train_size=600, stratify=data.target, random_state=_SEED
    )
    if positives is not None:
        y = np.isin(y, positives).astype(int)
    return _split(x, y, stratify=True)


@cache
def _diabetes_split() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    x = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    y = (data.target - data.target.mean()) / data.target.std()
    return _split(x, y, stratify=False)


def _size(model: Any) -> int:
    return len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))


def _resample_positive_fraction(
    x: np.ndarray, y: np.ndarray, fraction: float
) -> tuple[np.ndarray, np.ndarray]:
    """Resample (with replacement, fixed seed) to ``fraction`` positives, same size."""
    rng = np.random.default_rng(_SEED)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n_pos = min(max(int(round(fraction * len(y))), 2), len(y) - 2)
    idx = np.concatenate(
        [rng.choice(pos, size=n_pos, replace=True), rng.choice(neg, size=len(y) - n_pos)]
    )
    return x[idx], y[idx]


def _class_errors(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float]:
    """(error on positives, error on negatives)."""
    pos = y_true == 1
    return float(np.mean(y_pred[pos] != 1)), float(np.mean(y_pred[~pos] != 0))


def xgb_breast_cancer_size(params: Mapping[str, Any]) -> tuple[float, float]:
    """1 - validation AUC of XGBoost on breast-cancer, and its raw booster size in bytes."""
    from sklearn.metrics import roc_auc_score
    from xgboost import XGBClassifier

    x_tr, x_va, y_tr, y_va = _breast_cancer_split()
    model = XGBClassifier(
        n_estimators=int(params["n_estimators"]),
        max_depth=int(params["max_depth"]),
        learning_rate=float(params["learning_rate"]),
        subsample=float(params["subsample"]),
        colsample_bytree=float(params["colsample_bytree"]),
        min_child_weight=float(params["min_child_weight"]),
        reg_lambda=float(params["reg_lambda"]),
        tree_method="hist",
        max_bin=32,
        n_jobs=1,
        random_state=_SEED,
        verbosity=0,
    )
    model.fit(x_tr, y_tr)
    auc = roc_auc_score(y_va, model.predict_proba(x_va)[:, 1])
    return float(1.0 - auc), float(len(model.get_booster().save_raw("ubj")))


def rf_digits_size(params: Mapping[str, Any]) -> tuple[float, float]:
    """Validation error of a random forest on digits, and its pickled size in bytes."""
    from sklearn.ensemble import RandomForestClassifier

    x_tr, x_va, y_tr, y_va = _digits_split()
    model = RandomForestClassifier(
        n_estimators=int(params["n_estimators"]),
        max_depth=int(params["max_depth"]),
        max_features=float(params["max_features"]),
        criterion=str(params["criterion"]),
        n_jobs=1,
        random_state=_SEED,
    )
    model.fit(x_tr, y_tr)
    return float(np.mean(model.predict(x_va) != y_va)), float(_size(model))


def mlp_diabetes_size(params: Mapping[str, Any]) -> tuple[float, float]:
    """1 - validation R^2 of an MLP regressor on diabetes, and its pickled size in bytes."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    x_tr, x_va, y_tr, y_va = _diabetes_split()
    units = int(params["hidden_units"])
    model = MLPRegressor(
        hidden_layer_sizes=(units,) * int(params["n_layers"]),
        alpha=float(params["alpha"]),
        learning_rate_init=float(params["learning_rate_init"]),
        batch_size=int(params["batch_size"]),
        activation=str(params["activation"]),
        solver="adam",
        max_iter=_MLP_EPOCHS,
        random_state=_SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        model.fit(x_tr, y_tr)
        pred = model.predict(x_va)
    mse = float(np.mean((pred - y_va) ** 2))
    value = mse / float(np.var(y_va))  # 1 - R^2
    value = value if math.isfinite(value) and value < _R2_CAP else _R2_CAP
    return value, float(_size(model))


def logreg_breast_cancer_neg(params: Mapping[str, Any]) -> tuple[float, float]:
    """Error on positives and error on negatives of logistic regression on breast-cancer."""
    from sklearn.linear_model import LogisticRegression

    x_tr, x_va, y_tr, y_va = _breast_cancer_split()
    x_tr, y_tr = _resample_positive_fraction(x_tr, y_tr, float(params["positive_fraction"]))
    model = LogisticRegression(
        C=float(params["C"]),
        penalty=str(params["penalty"]),
        fit_intercept=bool(params["fit_intercept"]),
        solver="liblinear",
        random_state=_SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x_tr, y_tr)
    return _class_errors(y_va, model.predict(x_va))


_SVC_POSITIVES = (3, 5, 8, 9)


def svc_digits_neg(params: Mapping[str, Any]) -> tuple[float, float]:
    """Error on positives (digits 3, 5, 8, 9) and on negatives of an SVC on digits."""
    from sklearn.svm import SVC

    x_tr, x_va, y_tr, y_va = _digits_split(_SVC_POSITIVES)
    x_tr, y_tr = _resample_positive_fraction(x_tr, y_tr, float(params["positive_fraction"]))
    model = SVC(
        C=float(params["C"]),
        gamma=float(params["gamma"]),
        kernel=str(params["kernel"]),
        random_state=_SEED,
    )
    model.fit(x_tr, y_tr)
    return _class_errors(y_va, model.predict(x_va))


# --------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------

CONSTRAINED_PROBLEMS: dict[str, ConstrainedProblem] = {
    p.name: p
    for p in [
        ConstrainedProblem(
            "toy-quadratics",
            {"x0": FloatDistribution(-1.0, 1.0), "x1": FloatDistribution(-1.0, 1.0)},
            toy_quadratics,
            threshold=_TOY_THRESHOLD,
            constraint_name="c",
            error=ConstraintViolationError,
            optimum=0.3,
            strict=True,
            description="Three quadratics on [-1, 1]^2, feasible iff y < 1.2 (paper §4.1); "
            "constrained optimum 0.3 at (-0.7, 0.5)",
        ),
        ConstrainedProblem(
            "xgb-breast-cancer-size",
            {
                "n_estimators": IntDistribution(5, 200, log=True),
                "max_depth": IntDistribution(1, 8),
                "learning_rate": FloatDistribution(1e-3, 1.0, log=True),
                "subsample": FloatDistribution(0.5, 1.0),
                "colsample_bytree": FloatDistribution(0.3, 1.0),
                "min_child_weight": FloatDistribution(1e-2, 10.0, log=True),
                "reg_lambda": FloatDistribution(1e-3, 10.0, log=True),
            },
            xgb_breast_cancer_size,
            threshold=30000.0,
            constraint_name="model_size_bytes",
            error=ModelTooLargeError,
            description="XGBoost on breast-cancer, 1 - validation AUC, model size <= 30000 bytes",
        ),
        ConstrainedProblem(
            "rf-digits-size",
            {
                "n_estimators": IntDistribution(1, 30, log=True),
                "max_depth": IntDistribution(1, 20),
                "max_features": FloatDistribution(0.05, 1.0),
                "criterion": CategoricalDistribution(("gini", "entropy")),
            },
            rf_digits_size,
            threshold=40000.0,
            constraint_name="model_size_bytes",
            error=ModelTooLargeError,
            description="Random forest on 600 digits, validation error, model size <= 40000 bytes",
        ),
        ConstrainedProblem(
            "mlp-diabetes-size",
            {
                "hidden_units": IntDistribution(4, 64, log=True),
                "n_layers": IntDistribution(1, 2),
                "alpha": FloatDistribution(1e-6, 1.0, log=True),
                "learning_rate_init": FloatDistribution(1e-4, 1e-1, log=True),
                "batch_size": IntDistribution(32, 256, log=True),
                "activation": CategoricalDistribution(("relu", "tanh", "logistic")),
            },
            mlp_diabetes_size,
            threshold=16000.0,
            constraint_name="model_size_bytes",
            error=ModelTooLargeError,
            description="MLPRegressor on diabetes, 1 - validation R^2, model size <= 16000 bytes",
        ),
        ConstrainedProblem(
            "logreg-breast-cancer-neg",
            {
                "C": FloatDistribution(1e-4, 1e2, log=True),
                "positive_fraction": FloatDistribution(0.1, 0.9),
                "penalty": CategoricalDistribution(("l1", "l2")),
                "fit_intercept": CategoricalDistribution((True, False)),
            },
            logreg_breast_cancer_neg,
            threshold=0.03,
            constraint_name="error_on_negatives",
            error=ConstraintViolationError,
            description="Logistic regression on breast-cancer, error on positives, "
            "error on negatives <= 0.03",
        ),
        ConstrainedProblem(
            "svc-digits-neg",
            {
                "C": FloatDistribution(1e-2, 1e3, log=True),
                "gamma": FloatDistribution(1e-4, 1e1, log=True),
                "positive_fraction": FloatDistribution(0.1, 0.9),
                "kernel": CategoricalDistribution(("rbf", "sigmoid")),
            },
            svc_digits_neg,
            threshold=0.02,
            constraint_name="error_on_negatives",
            error=ConstraintViolationError,
            description="SVC on 600 digits (positives 3, 5, 8, 9), error on positives, "
            "error on negatives <= 0.02",
        ),
    ]
}


def get_constrained_problem(name: str) -> ConstrainedProblem:
    """The problem called ``name`` (a key of :data:`CONSTRAINED_PROBLEMS`).

    Raises ``KeyError`` listing the known names for any other name.
    """
    return lookup(CONSTRAINED_PROBLEMS, name, "constrained problem")


def _measure(n_configs: int, names: list[str]) -> None:
    """Print cost per evaluation, feasible fraction and quantiles of g (random configs)."""
    import time

    from benchmarks.harness import configure_quiet_logging, limit_threads

    limit_threads()
    configure_quiet_logging()
    print(
        f"{'problem':<26} {'wall mean':>9} {'wall max':>9} {'CPU mean':>9} {'CPU max':>9}"
        f" {'feasible':>9}  g quantiles 20/50/80 %"
    )
    for name in names:
        problem = CONSTRAINED_PROBLEMS[name]
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        problem.function(suggest_params(study.ask(), problem.space))  # warm-up: data, imports
        wall, cpu, gs = [], [], []
        for _ in range(n_configs):
            params = suggest_params(study.ask(), problem.space)
            start, start_cpu = time.perf_counter(), time.process_time()
            _, g = problem.function(params)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            gs.append(g)
        feasible = np.mean([problem.is_feasible(g) for g in gs])
        q = np.quantile(gs, [0.2, 0.5, 0.8])
        print(
            f"{name:<26} {np.mean(wall):9.4f} {np.max(wall):9.4f} {np.mean(cpu):9.4f}"
            f" {np.max(cpu):9.4f} {feasible:9.1%}  {q[0]:.4g} / {q[1]:.4g} / {q[2]:.4g}",
            flush=True,
        )


if __name__ == "__main__":
    import argparse

    _parser = argparse.ArgumentParser(prog="python -m benchmarks.constrained_problems")
    _parser.add_argument("--configs", type=int, default=300)
    _parser.add_argument("--problems", nargs="+", default=list(CONSTRAINED_PROBLEMS))
    _args = _parser.parse_args()
    _measure(_args.configs, _args.problems)
