"""Drive Syne Tune's reference BORE searcher ask/tell on a benchmark problem.

Syne Tune 0.16 exposes the searcher as
``syne_tune.optimizer.schedulers.searchers.bore.Bore(config_space, random_seed=...,
gamma=0.25, classifier="xgboost", acq_optimizer="rs", feval_acq=500, init_random=6)`` with
``suggest() -> dict`` and ``on_trial_complete(trial_id, config, metric)``; it minimises
``metric``. (``syne_tune.optimizer.baselines.BORE`` merely wraps it in a scheduler for the
Tuner, which is not needed here.) The searcher is used with those defaults.

Its random configurations come from ``Domain.sample()`` without a ``random_state``, i.e. from
NumPy's *global* generator, so :func:`run_synetune_bore` seeds that generator as well.

Each suggestion is evaluated by enqueueing it into an Optuna study and running one trial of
the problem's objective, so that every sampler in the benchmark is evaluated by the same code
path; a suggestion Optuna would not accept verbatim raises an error rather than being
silently replaced.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

__all__ = ["run_synetune_bore", "to_synetune_space"]


def to_synetune_space(space: Mapping[str, BaseDistribution]) -> dict[str, Any]:
    """Translate an Optuna search space into a Syne Tune configuration space.

    Parameters
    ----------
    space : Mapping[str, BaseDistribution]
        Parameter name to Optuna distribution.

    Returns
    -------
    dict[str, Any]
        Parameter name to Syne Tune domain: ``uniform`` / ``loguniform`` / ``quniform`` for
        floats, ``randint`` / ``lograndint`` / ``qrandint`` for integers, ``choice`` for
        categoricals.

    Raises
    ------
    ValueError
        For a stepped distribution whose grid Syne Tune cannot reproduce exactly (``low``
        not a multiple of ``step``, or a log scale with a step).
    """
    from syne_tune import config_space as cs

    out: dict[str, Any] = {}
    for name, dist in space.items():
        if isinstance(dist, (FloatDistribution, IntDistribution)):
            step = dist.step if dist.step not in (None, 1) else None
            if step is not None and (dist.log or not math.isclose(dist.low % step, 0.0)):
                raise ValueError(
                    f"{name!r}: Syne Tune quantises to multiples of q, so a step of {step} "
                    f"needs a linear scale and low ({dist.low}) divisible by it"
                )
            if isinstance(dist, FloatDistribution):
                if step is not None:
                    out[name] = cs.quniform(dist.low, dist.high, step)
                else:
                    out[name] = (cs.loguniform if dist.log else cs.uniform)(dist.low, dist.high)
            elif step is not None:
                out[name] = cs.qrandint(dist.low, dist.high, int(step))
            else:
                out[name] = (cs.lograndint if dist.log else cs.randint)(dist.low, dist.high)
        elif isinstance(dist, CategoricalDistribution):
            out[name] = cs.choice(list(dist.choices))
        else:
            raise TypeError(f"unsupported distribution for {name!r}: {dist!r}")
    return out


def _to_optuna_params(
    config: Mapping[str, Any], space: Mapping[str, BaseDistribution]
) -> dict[str, Any]:
    """Cast a Syne Tune configuration to plain Python values Optuna accepts verbatim."""
    params: dict[str, Any] = {}
    for name, dist in space.items():
        value = config[name]
        if isinstance(dist, IntDistribution):
            value = int(value)
        elif isinstance(dist, FloatDistribution):
            value = min(max(float(value), dist.low), dist.high)
        elif isinstance(value, np.generic):
            value = value.item()
        params[name] = value
    return params


def run_synetune_bore(
    study: optuna.Study,
    objective: Callable[[optuna.Trial], float],
    space: Mapping[str, BaseDistribution],
    n_trials: int,
    seed: int,
) -> None:
    """Optimise ``objective`` for ``n_trials`` trials with Syne Tune's ``Bore`` searcher.

    Parameters
    ----------
    study : optuna.Study
        A minimisation study (its own sampler is bypassed: every trial is enqueued).
    objective : Callable[[optuna.Trial], float]
        The objective, which must suggest exactly the parameters of ``space``.
    space : Mapping[str, BaseDistribution]
        The search space.
    n_trials : int
        Number of evaluations.
    seed : int
        Seed for the searcher and for NumPy's global generator.

    Raises
    ------
    RuntimeError
        If Optuna did not evaluate a suggestion verbatim, or a trial did not complete.
    """
    from syne_tune.optimizer.schedulers.searchers.bore import Bore

    np.random.seed(seed)  # noqa: NPY002 - Syne Tune samples from the global generator
    searcher = Bore(to_synetune_space(space), random_seed=seed)
    for trial_id in range(n_trials):
        config = searcher.suggest()
        if config is None:
            raise RuntimeError(f"Syne Tune's Bore returned no configuration at trial {trial_id}")
        params = _to_optuna_params(config, space)
        study.enqueue_trial(params)
        study.optimize(objective, n_trials=1)
        trial = study.trials[-1]
        if trial.state != optuna.trial.TrialState.COMPLETE or trial.value is None:
            raise RuntimeError(f"trial {trial.number} ended in state {trial.state.name}")
        if trial.params != params:
            raise RuntimeError(
                f"Optuna did not evaluate the suggestion verbatim: {params} -> {trial.params}"
            )
        searcher.on_trial_complete(trial_id, config, trial.value)
