"""Problems whose feedback is not a value: 0/1 outcomes and a simulated person's preferences.

Both follow Fauvel & Chalk (*Efficient Exploration in Binary and Preferential Bayesian
Optimization*, 2021, section 5) on COCO's bbob functions. A bbob function ``g`` is scaled to
mean 0 and variance 1 over its box (4,096 scrambled Sobol points) and negated,
``u = -(g - mean) / std``, so that its minimum is the utility's maximum.

* ``binary.f{F}.d{D}.i{I}``: each trial returns ``c ~ Bernoulli(Φ(u(x)))`` (maximised), with
  common random numbers: trial ``t`` of seed ``k`` compares the same uniform number with
  ``Φ(u(x_t))`` for every sampler. Judged by ``u`` at the configuration that a fresh
  ``BinaryOutcomeSampler`` infers from the run's outcomes: one rule for every sampler.
* ``preferential.f{F}.d{D}.i{I}.g{G}``: optuna-dashboard's preferential study with ``G``
  trials per screen; a person with probit noise (standard deviation ``1/√2``) marks the worst
  of the screen at each click (a trial budget is a number of clicks). Judged by ``u`` at the
  configuration that a fresh ``PreferentialSampler`` infers from the duels.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from scipy.special import ndtr
from scipy.stats import qmc

from benchmarks.problems import FDI, Judgement, Problem, coco_function, coco_space, suggest

__all__ = ["FAMILIES", "binary_problem", "preferential_problem"]

#: The simulated person's probit noise (standard deviation of each utility's error).
PERSON_NOISE = 1.0 / math.sqrt(2.0)


def scaled_utility(function: int, dimension: int, instance: int) -> Callable[[dict], float]:
    """``params -> u``: the bbob function scaled to mean 0, variance 1 over its box, negated."""
    coco = coco_function("bbob", function, dimension, instance)
    low, high = coco.lower_bounds, coco.upper_bounds
    unit = qmc.Sobol(dimension, scramble=True, seed=0).random_base2(12)
    values = np.array([coco(low + u * (high - low)) for u in unit])
    mean, std = float(values.mean()), float(values.std())

    def utility(params: dict[str, Any]) -> float:
        x = np.array([float(params[f"x{i}"]) for i in range(dimension)])
        return -(float(coco(x)) - mean) / std

    return utility


def judge_by_utility(
    study: Any, utility: Callable[[dict], float], infer: Callable[[Any], dict]
) -> Judgement:
    """Curve: minus the best true utility among the trials so far (what the sampler found);
    final: minus the true utility at the configuration ``infer(study)`` (what it would report).
    """
    best, curve = -math.inf, []
    for trial in study.trials:
        best = max(best, utility(trial.params))
        curve.append(-best)
    return curve, -utility(infer(study))


def binary_problem(name: str, function: int, dimension: int, instance: int) -> Problem:
    """0/1 outcomes drawn from ``Φ(u(x))`` with common random numbers (see the module)."""
    space = coco_space(coco_function("bbob", function, dimension, instance))
    utility = scaled_utility(function, dimension, instance)

    def objective(trial: optuna.Trial) -> float:
        params = {key: suggest(trial, key, dist) for key, dist in space.items()}
        seed = int(trial.study.user_attrs["seed"])
        uniform = np.random.default_rng([seed, trial.number, 20211]).random()
        return float(uniform < ndtr(utility(params)))

    def infer(study: optuna.Study) -> dict[str, Any]:
        from bore_samplers import BinaryOutcomeSampler

        return BinaryOutcomeSampler(seed=0).inferred_best_params(study)

    judge = functools.partial(judge_by_utility, utility=utility, infer=infer)
    return Problem(name, "binary", objective, ("maximize",), space=space, judge=judge)


def preferential_problem(
    name: str, function: int, dimension: int, instance: int, n_generate: int
) -> Problem:
    """A simulated person's preferences over ``n_generate`` trials per screen (see the module)."""
    space = coco_space(coco_function("bbob", function, dimension, instance))
    utility = scaled_utility(function, dimension, instance)

    def drive(sampler: optuna.samplers.BaseSampler, seed: int, clicks: int) -> Any:
        from optuna_dashboard.preferential import create_study

        study = create_study(n_generate=n_generate, sampler=sampler)
        # The person's noise depends on the problem and seed only, not on the sampler.
        person = np.random.default_rng([seed, function, dimension, instance, n_generate])
        worse: set[int] = set()
        seconds = []
        for _ in range(clicks):
            while study.should_generate():
                start = time.perf_counter()
                trial = study.ask()
                for key, dist in space.items():
                    suggest(trial, key, dist)
                seconds.append(time.perf_counter() - start)
            # The screen: every trial not yet marked worse (none is skipped here).
            screen = [t for t in study.trials if t.number not in worse]
            noisy = [utility(t.params) + PERSON_NOISE * person.standard_normal() for t in screen]
            worst = screen[int(np.argmin(noisy))]
            worse.add(worst.number)
            study.report_preference([t for t in screen if t is not worst], worst)
        return study, seconds

    def infer(study: Any) -> dict[str, Any]:
        from bore_samplers.integrations.preferential import PreferentialSampler

        return PreferentialSampler(seed=0).inferred_best_params(study)

    judge = functools.partial(judge_by_utility, utility=utility, infer=infer)
    return Problem(
        name, "preferential", lambda trial: 0.0, ("maximize",), space, judge=judge, drive=drive
    )


FAMILIES: dict[str, Callable[..., Problem]] = {
    rf"binary{FDI}": lambda n, f, d, i: binary_problem(n, int(f), int(d), int(i)),
    rf"preferential{FDI}\.g(?P<g>\d+)": (
        lambda n, f, d, i, g: preferential_problem(n, int(f), int(d), int(i), int(g))
    ),
}
