"""Binary-outcome samplers: :class:`BinaryOutcomeSampler` (Optuna) and ``BinaryOutcomeSearch``
(Ray Tune), thin adapters over :class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer`.

For objectives that only tell success (1, ``True``) or failure (0, ``False``): a training run
converged or diverged, a deployment met its SLO or not, a flaky test passed or not. Each
evaluation is a Bernoulli draw with ``P(success | x) = Φ(f(x))`` (Fauvel & Chalk, *Efficient
Exploration in Binary and Preferential Bayesian Optimization*, arXiv preprint, 2021); the
proposer fits a probit GP classifier and maximises UCB_Φ.

What the adapters translate (and nothing else)
----------------------------------------------
* The user's outcome into the core's value, where 0 is the target outcome: with direction
  ``"maximize"`` (``mode="max"``) the target is success, the core gets ``1 - outcome``; with
  ``"minimize"`` (``mode="min"``) the target is failure, the core gets the outcome.
* A value that is not 0 or 1 (or a bool) is an error, raised as a ``ValueError`` naming the
  trial and its value when the next trial is sampled (Optuna samples lazily: at its first
  ``suggest_*``; Ray Tune: at the next ``suggest``). Objectives that return other numbers (a
  score, or Optuna's conformance suites, which return arbitrary floats) must say how to read
  them: ``outcome_threshold=τ`` counts values ``> τ`` as success and values ``<= τ`` as
  failure. Nothing is clipped or rounded silently.

``BinaryOutcomeSearch`` is loaded on first access, so that the Optuna sampler does not import
Ray (it needs ``bore-samplers[ray]``).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.search_space import intersection_search_space
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from bore_samplers.integrations.optuna import ProposerSampler, search_space_from_distributions
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.binary import (
    BinaryOutcomeProposer,
    binary_outcome,
    check_outcome_threshold,
)
from bore_samplers.space import SearchSpace

__all__ = ["BinaryOutcomeSampler", "BinaryOutcomeSearch"]  # noqa: F822 - the second is lazy

_SEARCH_CLASS_LOCK = threading.Lock()


def _core_value(
    value: Any, threshold: float | None, maximize: bool, trial: str, owner: str
) -> float:
    """The core's value (0: the target outcome) of a user's outcome, or a ``ValueError``."""
    try:
        outcome = binary_outcome(value, threshold)
    except ValueError:
        if threshold is None:
            hint = (
                "; pass outcome_threshold=τ to count values above τ as successes (the value "
                "stays in the history, so a threshold is also how to go on with it)"
            )
        else:
            hint = f" or a number to compare with outcome_threshold={threshold!r}"
        raise ValueError(
            f"{trial} returned {value!r}, but {owner} needs 0 or 1 (or a bool) as its outcome"
            f"{hint}."
        ) from None
    return float(1 - outcome if maximize else outcome)


class BinaryOutcomeSampler(ProposerSampler):
    """Sampler for objectives that return success (1) or failure (0): UCB_Φ on a probit GP.

    A probit GP classifier (Matérn 5/2 ARD, Laplace's approximation or Expectation
    Propagation) learns ``P(success | x) = Φ(f(x))`` from the outcomes, and each trial
    maximises ``UCB_Φ = μ_c + β sqrt(V[Φ(f)])``: the inferred success probability plus the
    epistemic standard deviation of it (Fauvel & Chalk, eq. 14), which, unlike the deviation of
    the latent ``f``, vanishes where the outcome is certain either way. With direction
    ``"maximize"`` the sampler maximises ``P(success)``, with ``"minimize"`` it minimises it.

    The answer to report is :meth:`inferred_best_params`, the maximiser of the inferred
    ``P(success)`` (minimiser for ``"minimize"``), not ``study.best_trial``, which is only one
    lucky 1 among possibly many.

    FAILED trials (the objective raised) count as failures by default
    (``failed_trials="bad"``; ``"ignore"`` leaves them out), and so do PRUNED trials (stopped
    by a pruner; ``pruned_trials="ignore"`` leaves them out).
    Proposals keep away from RUNNING trials, so several workers on one storage spread out.
    :class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer` has the algorithm.

    Parameters
    ----------
    acquisition
        ``"ucb_phi"`` (default), or the baselines ``"ucb_f"`` (UCB on the latent, ``β = 1``),
        ``"binary_ei"`` (expected improvement of the success probability) and ``"thompson"``.
    outcome_threshold
        ``None`` (default): every objective value must be 0 or 1 (or a bool); any other value
        raises a ``ValueError`` naming the trial. A number ``τ``: values ``> τ`` are successes
        and values ``<= τ`` failures, for objectives that return a score.
    n_startup_trials
        Trials from a scrambled Sobol sequence before the classifier takes over.
    seed
        Seed for reproducible runs (with ``n_jobs=1``).
    independent_sampler, warn_independent_sampling
        See :class:`~bore_samplers.integrations.optuna.ProposerSampler`.
    **options
        Options of :class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer`, documented
        there: ``beta``, ``approximation`` (``"laplace"`` or ``"ep"``), ``n_candidates``,
        ``n_restarts``, ``failed_trials``, ``pruned_trials``.

    Raises
    ------
    ValueError
        For invalid options (here, not at the first model-based trial), and when used in a
        multi-objective study.

    References
    ----------
    G. Fauvel, M. Chalk. *Efficient Exploration in Binary and Preferential Bayesian
    Optimization.* arXiv preprint, 2021.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers.integrations.binary import BinaryOutcomeSampler
    >>> def converges(trial):
    ...     lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    ...     return int(1e-3 < lr < 1e-1)  # 1: the run converged
    >>> sampler = BinaryOutcomeSampler(seed=0)
    >>> study = optuna.create_study(direction="maximize", sampler=sampler)
    >>> study.optimize(converges, n_trials=20)
    >>> sampler.inferred_best_params(study)  # doctest: +SKIP
    {'lr': 0.011...}
    """

    _proposer: BinaryOutcomeProposer

    def __init__(
        self,
        *,
        acquisition: str = "ucb_phi",
        outcome_threshold: float | None = None,
        n_startup_trials: int = 10,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        **options: Any,
    ) -> None:
        check_outcome_threshold(outcome_threshold)
        super().__init__(
            BinaryOutcomeProposer(
                acquisition=acquisition,
                n_startup=n_startup_trials,
                seed=seed,
                **options,
            ),
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
        )
        self._outcome_threshold = outcome_threshold

    @property
    def outcome_threshold(self) -> float | None:
        """``None`` (values must be 0 or 1), or the threshold above which a value is a success."""
        return self._outcome_threshold

    def inferred_best_params(self, study: optuna.Study) -> dict[str, Any]:
        """The parameters with the largest inferred ``P(success)`` (smallest for "minimize").

        The maximiser of ``μ_c(x) = Φ(μ_f / sqrt(1 + σ_f²))`` of a classifier fitted to every
        finished trial, over the parameters every finished trial has (conditional parameters
        are left out); it may be a configuration never evaluated. Every call fits the model
        afresh (a deterministic fit), and the sampler's proposals are unaffected. Any study
        may be passed, also one run by another sampler: the same rule then judges its data.

        Raises
        ------
        ValueError
            When no trial has finished with an outcome yet, or a value is not an outcome.
        """
        space, observations = self._space_and_observations(study)
        return self._proposer.inferred_best(space, observations)

    def success_probability(
        self, study: optuna.Study, params: Mapping[str, Any] | None = None
    ) -> float:
        """The inferred probability that the objective returns 1 at ``params``.

        ``params`` defaults to :meth:`inferred_best_params`; it must hold every parameter of
        the study's relative search space (extra ones are ignored).
        """
        space, observations = self._space_and_observations(study)
        if params is None:
            params = self._proposer.inferred_best(space, observations)
        target = float(self._proposer.target_probability(space, observations, [params])[0])
        return target if study.direction == StudyDirection.MAXIMIZE else 1.0 - target

    def _space_and_observations(
        self, study: optuna.Study
    ) -> tuple[SearchSpace, list[Observation]]:
        self._raise_error_if_multi_objective(study)
        # Computed afresh (not the sampler's per-study cache): any study may be asked about.
        trials = study.get_trials(deepcopy=False)
        distributions: dict[str, BaseDistribution] = {
            name: distribution
            for name, distribution in intersection_search_space(
                trials, include_pruned=True
            ).items()
            if not distribution.single()
        }
        if not distributions:
            raise ValueError(
                f"Study {study.study_name!r} has no finished trial with parameters yet: "
                "nothing to infer from."
            )
        return search_space_from_distributions(distributions), self.observations(study)

    def _observation(self, trial: FrozenTrial, sign: float) -> Observation:
        observation = super()._observation(trial, sign)
        if observation.state is not TrialState.COMPLETE or trial.value is None:
            return observation
        value = _core_value(
            trial.value,
            self._outcome_threshold,
            sign < 0,
            f"Trial#{trial.number}",
            "BinaryOutcomeSampler",
        )
        return dataclasses.replace(observation, value=value)


def _build_search_class() -> type:
    """Define ``BinaryOutcomeSearch`` (imports Ray Tune)."""
    from bore_samplers.integrations.ray import ProposerSearch

    class BinaryOutcomeSearch(ProposerSearch):
        """Ray Tune searcher for trainables that report success (1) or failure (0): UCB_Φ.

        The Ray Tune counterpart of :class:`BinaryOutcomeSampler`: a probit GP classifier of
        ``P(success | x)``, and each suggestion maximises UCB_Φ (Fauvel & Chalk, eq. 14).
        ``mode="max"`` maximises ``P(success)``, ``mode="min"`` minimises it. Trials that raise
        count as failures (``failed_trials="bad"``), and so do trials a scheduler stopped early
        (``pruned_trials="bad"``); suggestions keep away from trials still running. The reported
        metric must be 0 or 1 (or a bool), unless ``outcome_threshold`` says how to read other
        numbers; any other value raises a ``ValueError`` naming the trial at the next suggestion.

        Parameters
        ----------
        space, metric, mode, points_to_evaluate, evaluated_rewards
            See :class:`~bore_samplers.integrations.ray.ProposerSearch`.
        acquisition
            ``"ucb_phi"`` (default), ``"ucb_f"``, ``"binary_ei"`` or ``"thompson"``.
        outcome_threshold
            ``None`` (default: 0/1 only), or ``τ``: metric values ``> τ`` are successes.
        n_startup_trials
            Finished trials from a scrambled Sobol sequence before the classifier takes over.
        seed
            Seed for reproducible suggestion sequences (with ``max_concurrent_trials=1``).
        **options
            Options of :class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer`:
            ``beta``, ``approximation``, ``n_candidates``, ``n_restarts``, ``failed_trials``,
            ``pruned_trials``.

        Examples
        --------
        >>> from ray import tune
        >>> from bore_samplers.integrations.binary import BinaryOutcomeSearch
        >>> def trainable(config):
        ...     tune.report({"converged": int(1e-3 < config["lr"] < 1e-1)})
        >>> tuner = tune.Tuner(
        ...     trainable,
        ...     param_space={"lr": tune.loguniform(1e-4, 1.0)},
        ...     tune_config=tune.TuneConfig(
        ...         search_alg=BinaryOutcomeSearch(seed=0),
        ...         metric="converged",
        ...         mode="max",
        ...         num_samples=20,
        ...     ),
        ... )
        >>> results = tuner.fit()  # doctest: +SKIP
        """

        _proposer: BinaryOutcomeProposer

        def __init__(
            self,
            space: Mapping[str, Any] | None = None,
            metric: str | None = None,
            mode: str | None = None,
            points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
            evaluated_rewards: Sequence[float] | None = None,
            *,
            acquisition: str = "ucb_phi",
            outcome_threshold: float | None = None,
            n_startup_trials: int = 10,
            seed: int | None = None,
            **options: Any,
        ) -> None:
            check_outcome_threshold(outcome_threshold)
            proposer = BinaryOutcomeProposer(
                acquisition=acquisition,
                n_startup=n_startup_trials,
                seed=seed,
                **options,
            )
            super().__init__(proposer, space, metric, mode, points_to_evaluate, evaluated_rewards)
            self._outcome_threshold = outcome_threshold

        @property
        def outcome_threshold(self) -> float | None:
            """``None`` (0/1 only), or the threshold above which a metric is a success."""
            return self._outcome_threshold

        @property
        def observations(self) -> dict[str, Observation]:
            """Trial id -> the trial as the proposer sees it (value 0: the target outcome)."""
            observations = {}
            for trial_id, observation in super().observations.items():
                raw = self._trials[trial_id].value
                if observation.state is TrialState.COMPLETE and raw is not None:
                    value = _core_value(
                        raw,
                        self._outcome_threshold,
                        self._mode == "max",
                        f"Trial {trial_id!r}",
                        "BinaryOutcomeSearch",
                    )
                    observation = dataclasses.replace(observation, value=value)
                observations[trial_id] = observation
            return observations

        def inferred_best_config(self) -> dict[str, Any]:
            """The configuration (nested, with the constants) with the largest inferred
            ``P(success)`` (smallest for ``mode="min"``); see
            :meth:`BinaryOutcomeSampler.inferred_best_params`."""
            space = self._ready()
            params = self._proposer.inferred_best(space.space, list(self.observations.values()))
            return space.to_config(params, {})

    # Importable by name (pickle, Ray's cloudpickle), as if defined at module level.
    BinaryOutcomeSearch.__qualname__ = "BinaryOutcomeSearch"
    return BinaryOutcomeSearch


def __getattr__(name: str) -> Any:
    # Lazy: BinaryOutcomeSampler users need not have (or import) Ray.
    if name == "BinaryOutcomeSearch":
        with _SEARCH_CLASS_LOCK:  # one class, however many threads ask first
            if name not in globals():
                globals()[name] = _build_search_class()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
