"""Binary-outcome adapters: :class:`BinaryOutcomeSampler` (Optuna) and ``BinaryOutcomeSearch``
(Ray Tune, defined in :mod:`bore_samplers.integrations.ray` and loaded from here on first
access, so the Optuna sampler does not import Ray), over
:class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer` (``docs/binary.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.search_space import intersection_search_space
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from bore_samplers.integrations.optuna import ProposerSampler, search_space_from_distributions
from bore_samplers.observations import Observation
from bore_samplers.proposers.binary import (
    BinaryOutcomeProposer,
    OutcomeThresholdOption,
    outcome_observation,
)
from bore_samplers.proposers.options import OUTCOME_THRESHOLD, public_options
from bore_samplers.space import SearchSpace

__all__ = ["BinaryOutcomeSampler", "BinaryOutcomeSearch"]  # noqa: F822 - the second is lazy


@public_options(BinaryOutcomeProposer, own=[OUTCOME_THRESHOLD])
class BinaryOutcomeSampler(ProposerSampler, OutcomeThresholdOption):
    """Sampler for objectives that return success (1) or failure (0): UCB_Φ on a probit GP.

    With direction ``"maximize"`` the sampler maximises ``P(success)``, with ``"minimize"`` it
    minimises it (the algorithm and options:
    :class:`~bore_samplers.proposers.binary.BinaryOutcomeProposer`, ``docs/binary.md``). The
    answer to report is :meth:`inferred_best_params`, not ``study.best_trial`` (only one lucky
    1 among possibly many). Fauvel & Chalk, *Efficient Exploration in Binary and Preferential
    Bayesian Optimization*, arXiv preprint, 2021.

    Parameters
    ----------
    outcome_threshold
        ``None`` (default): every objective value must be 0 or 1 (or a bool); any other value
        raises a ``ValueError`` naming the trial. A number ``τ``: values ``> τ`` are successes
        and values ``<= τ`` failures, for objectives that return a score.
    independent_sampler, warn_independent_sampling, constraints_func
        See :class:`~bore_samplers.integrations.optuna.ProposerSampler`.

    Raises
    ------
    ValueError
        For invalid options, and when used in a multi-objective study.

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
        threshold, label = self._outcome_threshold, f"Trial#{trial.number}"
        return outcome_observation(
            observation, trial.value, threshold, sign < 0, label, "BinaryOutcomeSampler"
        )


def __getattr__(name: str) -> Any:
    # Lazy: BinaryOutcomeSampler users need not have (or import) Ray. The searcher lives in
    # bore_samplers.integrations.ray; this name is kept for existing imports.
    if name == "BinaryOutcomeSearch":
        from bore_samplers.integrations.ray import BinaryOutcomeSearch

        return BinaryOutcomeSearch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
