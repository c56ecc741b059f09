"""BORE: Bayesian optimisation by density-ratio estimation (Tiao et al., ICML 2021).

Expected improvement at the γ-quantile τ of the observed values equals, up to a constant, the
relative density ratio ``ℓ(x) / (γ ℓ(x) + (1 - γ) g(x))`` (eq. 4-6), and that ratio is
``γ⁻¹ π(x)`` where ``π(x) = P(y ≤ τ | x)`` is the posterior of a classifier trained to tell the
best γ-quantile of observations from the rest (eq. 8-10). Each proposal therefore (Algorithm 1)

1. labels the observations: ``z = 1`` for the best γ-quantile, ``z = 0`` otherwise;
2. fits a probabilistic classifier on ``(x, z)``;
3. proposes the maximiser of ``π(x)`` (by default over candidates drawn from a Parzen estimator
   of the good observations, as TPE draws its candidates).

How each kind of observation enters the labels
----------------------------------------------
* COMPLETE and feasible: ``z = I[y ≤ τ]``, τ the γ-quantile of the values (NaN counts as
  worst, ``±inf`` are ranked like any value), the split taken as TPE takes it: over the
  complete and pruned observations, the infeasible and pruned ones ranked after these
  (:func:`~bore_samplers.acquisitions.density_ratio.bore_labels`).
* COMPLETE but infeasible (a constraint value > 0): ``z = 0``, ranked last — a configuration
  that violates a constraint is never among the best, whatever its value.
* FAILED: ``z = 0``, not counted in the split. A crash (out of memory, say) is evidence that
  the region is bad, and labelling it "not good" makes the classifier steer away from it.
* PRUNED: ``z = 0``, ranked last (``pruned_trials="bad"``, the default; left out with
  ``"ignore"``). The pruner stopped it because it looked worse than others at the same step;
  its last intermediate value comes from an earlier step and is not comparable with final
  values, so that value is never used.
* RUNNING (pending): not trained on. Proposals keep a distance from pending points (half the
  expected nearest-neighbour spacing of the observations, :mod:`bore_samplers.optimizers.pending`)
  while a candidate that far exists, so simultaneous proposals spread out instead of piling
  onto the current maximiser, and the exact configuration of a pending or evaluated point is
  never proposed again while another candidate is available. (Labelling pending points
  ``z = 0`` would push proposals away from the region the workers are converging on.)

Multi-objective observations (MBORE)
------------------------------------
With several objectives (:attr:`~bore_samplers.Observation.values`), the labels come from the
Pareto fronts, as in MBORE (De Ath, Chugh & Rahat, *MBORE: Multi-objective Bayesian
Optimisation by Density-Ratio Estimation*, GECCO 2022): the complete feasible observations are
sorted by non-dominated rank, ties in a front broken by each point's hypervolume contribution
to its front, and the best γ of that order are class 1, so that the classifier learns where
the front lies (:meth:`BOREProposer.scalarized`,
:func:`~bore_samplers.multi_objective.pareto_rank_scores`). The EI weighting then uses that
order's scalar score ``rank + place / front size`` as the value: a point of the first front
weighs more than one of the second. Constraints, failed, pruned and pending observations
enter as above.

Fallbacks: fewer than ``n_startup`` finished observations give points of a scrambled Sobol
sequence; labels of a single class (all values equal, or no complete trial at all) give a
uniform random configuration, since no classifier can be trained.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from bore_samplers.acquisitions.density_ratio import (
    ClassProbability,
    GammaSchedule,
    bore_labels,
    check_gamma,
    ei_weighted_training_set,
    resolve_gamma,
    tpe_gamma,
)
from bore_samplers.models.classifiers import CLASSIFIERS, make_classifier
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.multi_objective import pareto_rank_history
from bore_samplers.observations import History, TrialState
from bore_samplers.optimizers import (
    AcquisitionOptimizer,
    DifferentialEvolution,
    MultiStartLBFGS,
    ParzenSearch,
    RandomSearch,
    pending_spacing,
)
from bore_samplers.proposers.base import Proposer
from bore_samplers.space import SearchSpace
from bore_samplers.validation import (
    InvalidOptionError,
    check_choice,
    check_float,
    check_instance,
    check_int,
)

__all__ = ["BOREProposer"]

ACQUISITION_OPTIMIZERS = ("parzen", "random", "de", "lbfgs")
WEIGHTINGS = ("pi", "ei")


class BOREProposer(Proposer):
    """Proposes the maximiser of a classifier's probability of being in the best γ-quantile.

    Parameters
    ----------
    gamma
        Proportion γ of observations labelled "good", or a callable mapping the number of
        ranked observations (complete and pruned, as TPE counts them; see
        :func:`~bore_samplers.acquisitions.density_ratio.bore_labels`) to γ (a schedule).
        The default, :func:`~bore_samplers.acquisitions.density_ratio.tpe_gamma`, labels TPE's best
        ``min(⌈n / 10⌉, 25)``; the paper's fixed 1/3 is ``gamma=1/3``.
    classifier
        ``"rf"`` (default: a random forest, BORE-RF), ``"xgboost"``, ``"mlp"`` (needs torch)
        or a :class:`~bore_samplers.models.classifiers.ProbabilisticClassifier` instance.
    classifier_options
        Keyword arguments for the named classifier (e.g. ``{"n_estimators": 200}``).
    acquisition_optimizer
        ``"parzen"`` (candidates drawn around the good observations, as TPE draws them:
        :class:`~bore_samplers.optimizers.ParzenSearch`), ``"random"`` (uniform random
        search), ``"de"`` (differential evolution), ``"lbfgs"`` (Parzen candidates, then
        multi-start L-BFGS on ``log π`` held near each start by its kernel,
        :class:`~bore_samplers.optimizers.MultiStartLBFGS`; needs a differentiable
        classifier) or an :class:`~bore_samplers.optimizers.AcquisitionOptimizer`. ``None``
        chooses ``"parzen"`` (24 candidates, as TPE) for every classifier on every space. (The
        paper's main text uses DE for continuous spaces and multi-start L-BFGS for the MLP; its
        ablation, App. G.1, found random search better than DE.)
    n_candidates
        Candidate budget of the chosen optimiser (Parzen or random candidates, or DE
        evaluations; L-BFGS's starting candidates); ``None`` keeps the optimiser's default.
    weighting
        ``"ei"`` (default): LFBO's weighting (Song et al., *A General Recipe for
        Likelihood-free Bayesian Optimization*, ICML 2022), each good observation weighted by
        its improvement ``τ - y``, so that ``π(x)`` ranks like the expected improvement
        (:func:`~bore_samplers.acquisitions.density_ratio.ei_weighted_training_set`);
        ``"pi"`` (the BORE paper): every good observation weighs alike, so ``π(x)`` ranks like
        the probability of improvement on ``τ``.
    n_startup
        Finished observations before the classifier takes over (Sobol points until then).
    seed
        Seed for reproducible proposals.
    failed_trials
        ``"bad"`` (default): FAILED observations are crashes, they are class 0; ``"ignore"``:
        they are left out (transient failures). See :class:`~bore_samplers.proposers.Proposer`.
    pruned_trials
        ``"bad"`` (default): PRUNED observations are class 0, ranked after the complete ones
        in the γ split; ``"ignore"``: they are left out.
    """

    name = "bore"

    def __init__(
        self,
        *,
        gamma: GammaSchedule = tpe_gamma,
        classifier: str | ProbabilisticClassifier = "rf",
        classifier_options: dict[str, Any] | None = None,
        acquisition_optimizer: str | AcquisitionOptimizer | None = None,
        n_candidates: int | None = None,
        weighting: str = "ei",
        n_startup: int = 10,
        seed: int | None = None,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
    ) -> None:
        super().__init__(
            n_startup=n_startup,
            seed=seed,
            failed_trials=failed_trials,
            pruned_trials=pruned_trials,
        )
        self.gamma = gamma
        self.classifier = classifier
        self.classifier_options = classifier_options
        self.acquisition_optimizer = acquisition_optimizer
        self.n_candidates = n_candidates
        self.weighting = weighting
        self._classifier: ProbabilisticClassifier | None = None

    def validate(self) -> None:
        """Check the settings without building anything.

        Raises
        ------
        ValueError
            For an invalid γ (a schedule is tried at sizes from 1 to 10 000), classifier name,
            classifier option (name or value), optimiser name or candidate budget.
        ImportError
            For ``classifier="mlp"`` without torch.
        """
        super().validate()
        if callable(self.gamma):
            check_gamma(self.gamma)
        else:  # a proportion; a string such as "0.25" is refused, not converted
            check_float("gamma", self.gamma, low=0.0, high=1.0, low_open=True, high_open=True)
        if isinstance(self.classifier, str):
            if self.classifier not in CLASSIFIERS:
                raise InvalidOptionError(
                    f"Unknown classifier {self.classifier!r}; choose one of "
                    f"{sorted(CLASSIFIERS)} or pass a ProbabilisticClassifier instance."
                )
            if self.classifier == "mlp" and importlib.util.find_spec("torch") is None:
                raise ImportError("classifier='mlp' needs torch: pip install torch.")
        elif not isinstance(self.classifier, ProbabilisticClassifier):
            raise InvalidOptionError(
                f"classifier must be one of {sorted(CLASSIFIERS)} or a ProbabilisticClassifier, "
                f"got {self.classifier!r} ({type(self.classifier).__name__})."
            )
        check_instance(
            "classifier_options", self.classifier_options, dict, "a dict", allow_none=True
        )
        # Options are checked by building the classifier (unknown names) and by its own
        # cheap check (invalid values), not first when the model runs at trial 10.
        try:
            make_classifier(self.classifier, self.classifier_options).check_params()
        except (TypeError, ValueError) as error:
            name = "classifier_options" if self.classifier_options else "classifier"
            raise InvalidOptionError(f"{name}: {error}") from error
        optimizer = self.acquisition_optimizer
        if isinstance(optimizer, str) or optimizer is None:
            if optimizer is not None and optimizer not in ACQUISITION_OPTIMIZERS:
                raise ValueError(
                    f"Unknown acquisition_optimizer {optimizer!r}; choose one of "
                    f"{ACQUISITION_OPTIMIZERS}, None, or pass an AcquisitionOptimizer."
                )
        elif not isinstance(optimizer, AcquisitionOptimizer):
            raise InvalidOptionError(
                f"acquisition_optimizer must be one of {ACQUISITION_OPTIMIZERS}, None or an "
                f"AcquisitionOptimizer, got {optimizer!r} ({type(optimizer).__name__})."
            )
        differentiable = self.classifier == "mlp" or getattr(
            self.classifier, "differentiable", False
        )
        if optimizer == "lbfgs" and not differentiable:
            raise ValueError(
                "acquisition_optimizer='lbfgs' needs a differentiable classifier ('mlp')."
            )
        check_choice("weighting", self.weighting, WEIGHTINGS)
        check_int("n_candidates", self.n_candidates, minimum=1, allow_none=True)

    def _get_classifier(self) -> ProbabilisticClassifier:
        # One instance is kept so that the MLP can warm-start from its previous weights.
        if self._classifier is None:
            self._classifier = make_classifier(self.classifier, self.classifier_options)
        return self._classifier

    def optimizer_for(self, space: SearchSpace) -> AcquisitionOptimizer:
        """The acquisition optimiser used on ``space`` (see ``acquisition_optimizer``)."""
        choice = self.acquisition_optimizer
        if isinstance(choice, AcquisitionOptimizer):
            return choice
        if choice is None:
            # Candidates drawn near the good points for every classifier on every space, not
            # DE: DE's converged population keeps proposing inside one leaf box of the trees,
            # and uniform candidates rarely land in a small good region in 5+ dimensions. For
            # the MLP, L-BFGS follows the network's extrapolation to the edge of its trust
            # region; a few Parzen candidates ranked by the network did better (README).
            choice = "parzen"
        n = self.n_candidates
        if choice == "lbfgs":
            return MultiStartLBFGS() if n is None else MultiStartLBFGS(n_candidates=n)
        if choice == "de":
            return DifferentialEvolution() if n is None else DifferentialEvolution(max_evals=n)
        if choice == "parzen":
            return ParzenSearch() if n is None else ParzenSearch(n_candidates=n)
        return RandomSearch() if n is None else RandomSearch(n_candidates=n)

    def scalarized(self, history: History) -> History:
        """MBORE's order of a multi-objective ``history`` as its values (others unchanged).

        The complete feasible observations are scored ``rank + place / front size`` by
        :func:`~bore_samplers.multi_objective.pareto_rank_scores` (non-dominated rank, then
        hypervolume contribution within the front), the other rows get NaN (ranked last by
        the labels). BORE's γ split of those scores is then MBORE's "best γ by rank, the last
        front cut by hypervolume contribution" (De Ath, Chugh & Rahat, GECCO 2022); no random
        weight is drawn, unlike the ParEGO scalarisation of the base class.
        """
        if history.objectives is None:
            return history
        counted = int(history.mask(TrialState.COMPLETE, TrialState.PRUNED).sum())
        # Positives of quantile_labels: the order statistic at floor((N - 1) γ), ties
        # included; only the fronts that split can cut need hypervolume contributions.
        n_best = int((max(counted, 1) - 1) * resolve_gamma(self.gamma, max(counted, 1))) + 1
        return pareto_rank_history(history, n_best)

    def propose_from_model(self, history: History) -> np.ndarray:
        finished = ~history.mask(TrialState.RUNNING)
        labels = bore_labels(history, self.gamma)[finished]
        if labels.all() or not labels.any():
            return self.random_fallback(history)
        space = history.space
        classifier = self._get_classifier()
        features = space.features(history.u[finished])
        seed = int(self.rng.integers(2**31))
        if self.weighting == "ei":
            rows, targets, weights = ei_weighted_training_set(history.values[finished], labels)
            classifier.fit(features[rows], targets, seed=seed, sample_weight=weights)
        else:
            classifier.fit(features, labels, seed=seed)
        acquisition = ClassProbability(classifier, space)
        pending, radius = pending_spacing(history)
        return self.optimizer_for(space).maximize(
            acquisition,
            space,
            self.rng,
            exclude=history.u,
            keep_away=pending,
            radius=radius,
            anchors=history.u[finished][labels],
        )
