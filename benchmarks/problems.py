"""The problem registry: a name -> a :class:`Problem` (an Optuna objective and how to judge it).

Problems come from maintained suites, through their packages:

* ``bbob.f{F}.d{D}.i{I}``, and likewise ``bbob-mixint``, ``bbob-constrained``, ``bbob-biobj``
  and ``bbob-largescale``: COCO's suites (``pip install coco-experiment``, imported as
  ``cocoex``). Instance 1 of every COCO function is held out: it may never be used, in any
  dimension, so that no default of this package is chosen on it.
* ``pymoo.{zdt1,zdt2,dtlz2,bnh,...}.d{D}``: pymoo's multi-objective test problems.
* ``real_tuning.*``: scikit-learn estimators on its bundled datasets
  (:mod:`benchmarks.real_tuning`).

Only what no suite has is written here, each built on a COCO function: crashing regions
(``crashing.*``), all-categorical, mostly categorical and conditional spaces
(``categorical.*``, ``mostly-categorical.*``, ``conditional.*``), 0/1 outcomes and a
simulated person's preferences (:mod:`benchmarks.feedback`).

Every problem is minimised; its judge turns a finished study into a curve (one score per
trial, lower is better, ``None`` before the first feasible trial) and a final score.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

__all__ = ["CrashError", "Judgement", "Problem", "get_problem", "suggest"]

Judgement = tuple[list[float | None], float]


class CrashError(RuntimeError):
    """The objective crashed (think: out of memory for a large model)."""


@dataclass(frozen=True)
class Problem:
    """One benchmark problem.

    Attributes
    ----------
    name, kind
        Registry name; kind of problem (``continuous``, ``mixed``, ``categorical``,
        ``conditional``, ``constrained``, ``crashing``, ``multi-objective``, ``binary``,
        ``preferential``, ``tuning``): the report ranks samplers per kind.
    objective
        An Optuna objective; it may call ``trial.set_constraint`` or raise :class:`CrashError`.
    directions
        The study's directions.
    space
        The search space when it is flat (every parameter in every trial): lets the runner
        fill a study with random finished trials (long studies).
    judge
        ``study -> (curve, final)``; by default the best feasible value so far.
    drive
        ``(sampler, seed, trials) -> (study, seconds per trial)`` for studies that
        :meth:`optuna.Study.optimize` cannot run (a simulated person); by default the runner
        optimises ``objective``.
    """

    name: str
    kind: str
    objective: Callable[[optuna.Trial], Any]
    directions: tuple[str, ...] = ("minimize",)
    space: dict[str, BaseDistribution] | None = None
    judge: Callable[[optuna.Study], Judgement] | None = None
    drive: Callable[[optuna.samplers.BaseSampler, int, int], tuple[Any, list]] | None = None


def suggest(trial: optuna.Trial, name: str, distribution: BaseDistribution) -> Any:
    """Suggest ``name`` from ``distribution`` through the trial's public ``suggest_*``."""
    if isinstance(distribution, FloatDistribution):
        d = distribution
        return trial.suggest_float(name, d.low, d.high, log=d.log, step=d.step)
    if isinstance(distribution, IntDistribution):
        d = distribution
        return trial.suggest_int(name, d.low, d.high, log=d.log, step=d.step)
    return trial.suggest_categorical(name, distribution.choices)


def feasible(trial: optuna.trial.FrozenTrial) -> bool:
    """Complete and every constraint (if any) at most 0."""
    constraints = trial.constraints or {}
    complete = trial.state == optuna.trial.TrialState.COMPLETE
    return complete and all(c <= 0.0 for c in constraints.values())


def best_so_far(study: optuna.Study) -> Judgement:
    """The best feasible value after each trial (minimisation), and the last of them."""
    best, curve = math.inf, []
    for trial in study.trials:
        if feasible(trial):
            best = min(best, float(trial.value))
        curve.append(None if math.isinf(best) else best)
    return curve, best


#: Seconds each trial (by number) spent evaluating its function, suggest calls excluded: the
#: runner subtracts them from the trial's time to leave the sampler's.
EVALUATION_SECONDS: dict[int, float] = {}


def timed(trial: optuna.Trial, function: Callable[[], Any]) -> Any:
    """``function()``, its time added to :data:`EVALUATION_SECONDS` (even if it raises)."""
    tic = time.perf_counter()
    try:
        return function()
    finally:
        seconds = time.perf_counter() - tic
        EVALUATION_SECONDS[trial.number] = EVALUATION_SECONDS.get(trial.number, 0.0) + seconds


def flat_problem(
    name: str,
    kind: str,
    space: dict[str, BaseDistribution],
    function: Callable[[dict[str, Any]], Any],
    constraints: Callable[[dict[str, Any]], Sequence[float]] | None = None,
    **options: Any,
) -> Problem:
    """A problem over a flat space: suggest every parameter, set the constraints, evaluate."""

    def objective(trial: optuna.Trial) -> Any:
        params = {key: suggest(trial, key, dist) for key, dist in space.items()}
        for k, value in enumerate(
            timed(trial, lambda: constraints(params) if constraints else ())
        ):
            trial.set_constraint(f"c{k}", float(value))
        return timed(trial, lambda: function(params))

    return Problem(name, kind, objective, space=space, **options)


# ----------------------------------------------------------------------------- COCO
HELD_OUT_INSTANCE = 1
_SUITES: list[Any] = []


@functools.cache
def coco_function(suite: str, function: int, dimension: int, instance: int) -> Any:
    """The ``cocoex`` problem (a callable ``x -> f(x)``); instance 1 is refused (held out)."""
    if instance <= HELD_OUT_INSTANCE:
        raise ValueError(f"COCO instance {instance} is held out: use instances 2 and up")
    import cocoex

    found = cocoex.Suite(
        suite,
        f"instances: {instance}",
        f"function_indices: {function} dimensions: {dimension}",
    )
    if len(found) != 1:
        raise ValueError(f"{suite} has no function {function} in dimension {dimension}")
    _SUITES.append(found)  # a problem is freed with its suite
    return found.get_problem(0)


def coco_space(problem: Any) -> dict[str, BaseDistribution]:
    """x0, x1, ...: integers for COCO's integer variables (they come first), floats after."""
    n_int = problem.number_of_integer_variables
    low, high = problem.lower_bounds, problem.upper_bounds
    return {
        f"x{i}": IntDistribution(int(low[i]), int(high[i]))
        if i < n_int
        else FloatDistribution(float(low[i]), float(high[i]))
        for i in range(problem.dimension)
    }


def _vector(params: dict[str, Any], dimension: int) -> np.ndarray:
    return np.array([float(params[f"x{i}"]) for i in range(dimension)])


def coco_problem(name: str, suite: str, function: int, dimension: int, instance: int) -> Problem:
    """A COCO problem as an Optuna problem (kind from the suite)."""
    coco = coco_function(suite, function, dimension, instance)
    kinds = {"bbob-mixint": "mixed", "bbob-constrained": "constrained"}
    options: dict[str, Any] = {}
    if coco.number_of_objectives > 1:
        # The median of each objective over 256 Sobol points of the box: COCO's own region of
        # interest (up to its nadir) is out of reach of a short study in 5-D.
        from scipy.stats import qmc

        unit = qmc.Sobol(coco.dimension, scramble=True, seed=0).random_base2(8)
        low, high = coco.lower_bounds, coco.upper_bounds
        reference = np.median([coco(low + u * (high - low)) for u in unit], axis=0)
        options = {"directions": ("minimize",) * coco.number_of_objectives}
        options["judge"] = functools.partial(hypervolume_curve, reference=tuple(reference))

    def constraints(params: dict[str, Any]) -> Sequence[float]:
        return coco.constraint(_vector(params, coco.dimension))

    return flat_problem(
        name,
        "multi-objective" if coco.number_of_objectives > 1 else kinds.get(suite, "continuous"),
        coco_space(coco),
        lambda params: _objective_values(coco(_vector(params, coco.dimension))),
        constraints if coco.number_of_constraints else None,
        **options,
    )


def _objective_values(values: Any) -> Any:
    array = np.atleast_1d(np.asarray(values, dtype=float))
    return float(array[0]) if array.size == 1 else tuple(float(v) for v in array)


# ----------------------------------------------------------------------------- hand-written
#: The crash region of ``crashing.*``: x0 + 0.5 x_last > 1.5 (in the box [-5, 5]^D), about a
#: third of the box; a bbob optimum is drawn uniformly from [-4, 4]^D, so it may sit near it.
CRASH_THRESHOLD = 1.5


def crashing_problem(name: str, function: int, dimension: int, instance: int) -> Problem:
    """A bbob function that raises :class:`CrashError` in a half-space of its box."""
    coco = coco_function("bbob", function, dimension, instance)

    def value(params: dict[str, Any]) -> float:
        x = _vector(params, dimension)
        if x[0] + 0.5 * x[-1] > CRASH_THRESHOLD:
            raise CrashError("out of memory")
        return float(coco(x))

    return flat_problem(name, "crashing", coco_space(coco), value)


#: The levels of each coordinate of ``categorical.*``, as categorical choices.
CATEGORICAL_LEVELS = ("-4", "-2", "0", "2", "4")


def categorical_problem(
    name: str,
    function: int,
    dimension: int,
    instance: int,
    n_categorical: int | None = None,
    kind: str = "categorical",
) -> Problem:
    """A bbob function on a 5-level grid per coordinate, each coordinate a categorical (in a
    dimension bbob lacks, the next one up with the extra coordinates held at 0). With
    ``n_categorical``, only the first that many coordinates are categorical and the others
    floats in [-5, 5]."""
    n_categorical = dimension if n_categorical is None else n_categorical
    bbob_dimension = min(d for d in (2, 3, 5, 10, 20, 40) if d >= dimension)
    coco = coco_function("bbob", function, bbob_dimension, instance)
    space: dict[str, BaseDistribution] = {
        f"x{i}": CategoricalDistribution(CATEGORICAL_LEVELS)
        if i < n_categorical
        else FloatDistribution(-5.0, 5.0)
        for i in range(dimension)
    }
    padding = np.zeros(bbob_dimension - dimension)
    return flat_problem(
        name,
        kind,
        space,
        lambda params: float(coco(np.concatenate([_vector(params, dimension), padding]))),
    )


def mostly_categorical_problem(name: str, function: int, dimension: int, instance: int) -> Problem:
    """A bbob function whose first ``ceil(dimension / 2)`` coordinates are categorical (the
    5 levels of ``categorical.*``) and the others floats in [-5, 5]: most parameters are
    categorical, some numeric."""
    n_categorical = -(-dimension // 2)
    return categorical_problem(
        name, function, dimension, instance, n_categorical, kind="mostly-categorical"
    )


#: Branches of ``conditional.branches.*``: a categorical picks one bbob function (function,
#: dimension), which has its own parameters.
BRANCHES = {"sphere": (1, 2), "rosenbrock": (8, 5), "rastrigin": (15, 3)}


def conditional_branches(name: str, instance: int) -> Problem:
    """Choose a branch, then its own parameters (a model choice and its hyperparameters)."""

    def objective(trial: optuna.Trial) -> float:
        branch = trial.suggest_categorical("branch", list(BRANCHES))
        function, dimension = BRANCHES[branch]
        coco = coco_function("bbob", function, dimension, instance)
        x = [trial.suggest_float(f"{branch}_x{i}", -5.0, 5.0) for i in range(dimension)]
        return float(coco(np.array(x)))

    return Problem(name, "conditional", objective)


def conditional_layers(name: str, function: int, instance: int) -> Problem:
    """A network: a learning rate, a layer count from 1 to 3, then three parameters per active
    layer; a 10-D bbob function in which inactive layers' coordinates are held at 0."""
    coco = coco_function("bbob", function, 10, instance)

    def objective(trial: optuna.Trial) -> float:
        x = np.zeros(10)
        x[0] = trial.suggest_float("learning_rate", -5.0, 5.0)
        for layer in range(trial.suggest_int("layers", 1, 3)):
            for k, part in enumerate(("width", "dropout", "decay")):
                x[1 + 3 * layer + k] = trial.suggest_float(f"{part}_{layer}", -5.0, 5.0)
        return float(coco(x))

    return Problem(name, "conditional", objective)


# ----------------------------------------------------------------------------- pymoo
def hypervolume_curve(study: optuna.Study, reference: tuple[float, ...]) -> Judgement:
    """Minus the hypervolume of the feasible trials' values against ``reference``, after each
    trial (every 5th trial and the last; the others repeat the previous value)."""
    from pymoo.indicators.hv import HV

    indicator = HV(ref_point=np.asarray(reference))
    points: list[Sequence[float]] = []
    curve: list[float | None] = []
    trials = study.trials
    for k, trial in enumerate(trials, 1):
        if feasible(trial):
            points.append(trial.values)
        if points and (k % 5 == 0 or k == len(trials)):
            curve.append(-float(indicator(np.asarray(points, dtype=float))))
        else:
            curve.append(curve[-1] if curve else None)
    return curve, (curve[-1] if curve and curve[-1] is not None else 0.0)


def pymoo_problem(name: str, key: str, dimension: int | None) -> Problem:
    """A pymoo test problem (``get_problem(key)``), its reference point 1.1 times its Pareto
    front's worst values (plus 0.1 where those are 0)."""
    from pymoo.problems import get_problem

    options = {} if dimension is None else {"n_var": dimension}
    if key.startswith("dtlz"):
        options["n_obj"] = 3
    moo = get_problem(key, **options)
    front = np.asarray(moo.pareto_front(), dtype=float)
    worst = front.max(axis=0)
    reference = tuple(float(v) for v in worst * 1.1 + 0.1 * (worst == 0))
    space = {
        f"x{i}": FloatDistribution(float(moo.xl[i]), float(moo.xu[i])) for i in range(moo.n_var)
    }

    def evaluate(params: dict[str, Any]) -> dict[str, np.ndarray]:
        x = _vector(params, moo.n_var)[None, :]
        return moo.evaluate(x, return_as_dictionary=True)

    constraints = (lambda params: evaluate(params)["G"][0]) if moo.n_ieq_constr else None
    return flat_problem(
        name,
        "multi-objective",
        space,
        lambda params: tuple(float(v) for v in evaluate(params)["F"][0]),
        constraints,
        directions=("minimize",) * moo.n_obj,
        judge=functools.partial(hypervolume_curve, reference=reference),
    )


# ----------------------------------------------------------------------------- registry
_COCO = r"(?P<suite>bbob(?:-mixint|-constrained|-biobj|-largescale)?)"
FDI = r"\.f(?P<f>\d+)\.d(?P<d>\d+)\.i(?P<i>\d+)"
#: Name patterns -> builders of the registry (the families it holds).
FAMILIES: dict[str, Callable[..., Problem]] = {
    rf"{_COCO}{FDI}": lambda n, suite, f, d, i: coco_problem(n, suite, int(f), int(d), int(i)),
    rf"crashing{FDI}": lambda n, f, d, i: crashing_problem(n, int(f), int(d), int(i)),
    rf"categorical{FDI}": lambda n, f, d, i: categorical_problem(n, int(f), int(d), int(i)),
    rf"mostly-categorical{FDI}": (
        lambda n, f, d, i: mostly_categorical_problem(n, int(f), int(d), int(i))
    ),
    r"conditional\.branches\.i(?P<i>\d+)": lambda n, i: conditional_branches(n, int(i)),
    r"conditional\.layers\.f(?P<f>\d+)\.i(?P<i>\d+)": (
        lambda n, f, i: conditional_layers(n, int(f), int(i))
    ),
    r"pymoo\.(?P<key>[a-z]+\d*)(?:\.d(?P<d>\d+))?": (
        lambda n, key, d: pymoo_problem(n, key, None if d is None else int(d))
    ),
}


def _more_families() -> dict[str, Callable[..., Problem]]:
    from benchmarks import feedback, real_tuning

    return {**feedback.FAMILIES, **real_tuning.FAMILIES}


@functools.cache
def get_problem(name: str) -> Problem:
    """The problem called ``name`` (see the module's docstring for the families).

    Raises
    ------
    ValueError
        If no family matches ``name``, or its parameters are out of range (COCO instance 1).
    """
    for pattern, build in {**FAMILIES, **_more_families()}.items():
        match = re.fullmatch(pattern, name)
        if match:
            return build(name, **match.groupdict())
    raise ValueError(f"no problem {name!r}; names match one of: {', '.join(FAMILIES)}")
