"""Constrained max-value entropy search (cMES) and its GP baselines, as a proposer.

Perrone et al., *Constrained Bayesian Optimization with Max-Value Entropy Search* (NeurIPS
2019 Workshop on Meta-Learning). The models come from the shared model set
(:mod:`bore_samplers.models.model_set`): a GP of the objective, one GP per real-valued
constraint, and a Laplace GP classifier of the crashed (FAILED) trials, which gives binary
feedback. The next point maximises the information an evaluation gives about the constrained
minimum ``y*`` (:func:`~bore_samplers.acquisitions.entropy.constrained_mes`), averaged over
samples of ``y*`` drawn by jointly dependent Thompson sampling on a Sobol set plus the observed
points (A.4), with the mixed-space optimiser of :mod:`bore_samplers.optimizers`.

How each kind of observation enters: see :mod:`bore_samplers.models.model_set` (COMPLETE:
objective and constraint GPs, a feasible point for the crash classifier; FAILED: an infeasible
point for the crash classifier; PRUNED: the same, unless ``pruned_trials="ignore"``; RUNNING:
the objective GP believes its own
mean there). When real-valued constraints and crashes occur together, the classifier's latent
Gaussian posterior enters :func:`~bore_samplers.acquisitions.entropy.cmes_real_valued` as one
more independent constraint with threshold ``δ = logit(p)`` (the information in the latent
constraint rather than in the binary observation: an approximation, as the paper treats the
two feedback types separately).

Baselines (``acquisition=``): ``"cei"``, constrained EI (``log EI + log PF``; ``log PF`` alone
until a feasible point exists, Gardner et al., ICML 2014); ``"ap"``, the paper's
adaptive-percentile heuristic: one GP, infeasible and failed trials given the
``ap_percentile``-th percentile of the observed values, and plain EI.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from bore_samplers.acquisitions.base import Acquisition
from bore_samplers.acquisitions.entropy import Y_STAR_SAMPLERS, constrained_mes
from bore_samplers.acquisitions.feasibility import feasibility_of, needs_confident_feasibility
from bore_samplers.acquisitions.improvement import constrained_log_ei
from bore_samplers.models.model_set import ModelSet
from bore_samplers.observations import History
from bore_samplers.proposers.base import (
    BASIN_MERGE_RADIUS,
    GPProposer,
    RoundStarts,
    maximize_acquisition,
)
from bore_samplers.validation import check_choice, check_float, check_int

__all__ = ["CMESProposer"]

ACQUISITIONS = ("cmes", "cei", "ap")

#: Information about ``y*`` (nats) at or below which cMES's maximiser counts as arbitrary.
NO_INFORMATION = 1e-6


class CMESProposer(GPProposer):
    """Proposes the maximiser of constrained max-value entropy search (or cEI / AP).

    Parameters
    ----------
    acquisition
        ``"cmes"`` (default), or the baselines ``"cei"`` and ``"ap"``.
    n_y_star_samples
        Samples of the constrained minimum (the paper: 10 suffice).
    n_discretization
        Sobol points on which ``y*`` is sampled, besides the observed points (paper: 2000).
    y_star_sampler
        ``"joint"`` (default; jointly dependent Thompson sampling, every model sampled by
        pathwise conditioning), ``"joint_exact"`` (the same by Cholesky factors of the joint
        posterior, ``O(m^3)``) or ``"mean_field"`` (the biased independent sampler of the
        paper's Fig. 1, for ablations only).
    binary_confidence
        Confidence ``p = σ(δ)`` with which a point counts as feasible under binary feedback.
    ap_percentile
        Percentile of the observed values plugged in for infeasible trials by ``"ap"``
        (at least 50).
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisition over slice samples of the objective GP's hyperparameters
        (Snoek et al., NeurIPS 2012) instead of using the MAP point; for cMES each sample gets
        its own ``y*`` samples. About ``n_hyperparameter_samples`` times the cost.
    reoptimize_growth, reoptimize_after
        When the GP hyperparameters are optimised again (see
        :class:`~bore_samplers.proposers.base.GPProposer`): by default at every proposal
        below 100 observations and every 5 % more observations from there.
    n_candidates, n_restarts
        Sobol candidates scored in one batch by the acquisition optimiser, and the local
        searches (L-BFGS-B on the continuous coordinates alternating with a search over the
        discrete ones) started from the best of them.
    n_startup
        Finished observations before the models take over (Sobol points until then).
    seed
        Seed for reproducible proposals.
    failed_trials
        ``"bad"`` (default): FAILED observations are crashes, they train the crash
        classifier; ``"ignore"``: they are left out (transient failures). See
        :class:`~bore_samplers.proposers.Proposer`.
    pruned_trials
        ``"bad"`` (default): PRUNED observations (stopped by a pruner or a scheduler) train
        the crash classifier as FAILED ones do, so that proposals leave regions where trials
        get pruned; ``"ignore"``: they are left out.
    """

    name = "cmes"

    def __init__(
        self,
        *,
        acquisition: Literal["cmes", "cei", "ap"] = "cmes",
        n_y_star_samples: int = 10,
        n_discretization: int = 2000,
        y_star_sampler: Literal["joint", "joint_exact", "mean_field"] = "joint",
        binary_confidence: float = 0.5,
        ap_percentile: float = 75.0,
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        reoptimize_growth: float = 1.05,
        reoptimize_after: int = 100,
        n_candidates: int = 2048,
        n_restarts: int = 10,
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
        self.acquisition = acquisition
        self.n_y_star_samples = n_y_star_samples
        self.n_discretization = n_discretization
        self.y_star_sampler = y_star_sampler
        self.binary_confidence = binary_confidence
        self.ap_percentile = ap_percentile
        self.marginalize_hyperparameters = marginalize_hyperparameters
        self.n_hyperparameter_samples = n_hyperparameter_samples
        self.reoptimize_growth = reoptimize_growth
        self.reoptimize_after = reoptimize_after
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts

    def validate(self) -> None:
        """Raise :class:`~bore_samplers.validation.InvalidOptionError` (a ``ValueError``) on
        invalid settings, without building anything."""
        super().validate()
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_choice("y_star_sampler", self.y_star_sampler, Y_STAR_SAMPLERS)
        check_float(
            "binary_confidence",
            self.binary_confidence,
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        )
        check_float("ap_percentile", self.ap_percentile, low=50.0, high=100.0)
        for name in ("n_y_star_samples", "n_candidates", "n_restarts", "n_discretization"):
            check_int(name, getattr(self, name), minimum=1)

    def propose_from_model(self, history: History) -> np.ndarray:
        fill = self.ap_percentile if self.acquisition == "ap" else None
        models = self.model_builder().fit(history, self.rng, infeasible_fill=fill)
        if not models.has_objective and models.crash is None:
            return self.random_fallback(history)
        entropy = self._seeks_information(models)
        if entropy and needs_confident_feasibility(models):
            # A run of infeasible trials: the information about y* lies along the uncertain
            # boundary, and on a thin feasible band in 10-D cMES's proposals kept missing it.
            # Constrained EI with its floor on PF moves back into the feasible region.
            return self._maximize(constrained_log_ei(models), models, space_out_pending=True)
        acquisition = self._acquisition(models)
        if entropy and _every_sample_capped(acquisition):
            # No draw of the models improves on the incumbent by the cap's margin: MES then
            # only measures the tails of far-off, uncertain points, and proposals scattered
            # over the box while the incumbent stalled (5-D Rosenbrock at 0.32 from trial 150
            # to 250). Expected improvement values the small improvements left.
            return self._maximize(constrained_log_ei(models), models, space_out_pending=True)
        point = self._maximize(
            acquisition, models, space_out_pending=entropy, round_starts=self._round_starts
        )
        if entropy and self._information(acquisition, models, point) <= NO_INFORMATION:
            # Once every sample of y* sits at the incumbent, no point tells anything about it:
            # the information is zero to rounding everywhere and its maximiser is arbitrary
            # (late trials landed deep in the infeasible region). Constrained EI, whose PF
            # keeps a margin, then refines the incumbent on the feasible side, as far from
            # pending points as cMES keeps.
            point = self._maximize(constrained_log_ei(models), models, space_out_pending=True)
        return point

    def _maximize(
        self,
        acquisition: Acquisition,
        models: ModelSet,
        *,
        space_out_pending: bool,
        round_starts: RoundStarts | None = None,
    ) -> np.ndarray:
        return maximize_acquisition(
            acquisition,
            models,
            self.rng,
            n_candidates=self.n_candidates,
            n_local=self.n_restarts,
            space_out_pending=space_out_pending,
            merge_radius=BASIN_MERGE_RADIUS,
            round_starts=round_starts,
        )

    @staticmethod
    def _information(acquisition: Acquisition, models: ModelSet, point: np.ndarray) -> float:
        features = models.history.space.features(np.atleast_2d(point))
        return float(acquisition.evaluate(features, False)[0][0])

    @staticmethod
    def _seeks_feasibility(models: ModelSet) -> bool:
        # Only crashes so far, or constraints that no observation meets: find where runs
        # succeed and constraints hold (Gardner et al.'s rule). The information about y* is
        # spread over the whole uncertain boundary, and on a small feasible region cMES found
        # none in 50 trials where log PF did.
        return not models.has_objective or bool(models.constraints and not models.incumbents)

    def _seeks_information(self, models: ModelSet) -> bool:
        return self.acquisition == "cmes" and not self._seeks_feasibility(models)

    def _acquisition(self, models: ModelSet) -> Acquisition:
        if self._seeks_feasibility(models):
            feasibility = feasibility_of(models)
            assert feasibility is not None
            return feasibility
        if self.acquisition in ("cei", "ap"):
            return constrained_log_ei(models)
        return constrained_mes(
            models,
            self.rng,
            n_samples=self.n_y_star_samples,
            n_discretization=self.n_discretization,
            method=self.y_star_sampler,
            binary_confidence=self.binary_confidence,
        )


def _every_sample_capped(acquisition: Acquisition) -> bool:
    members = getattr(acquisition, "members", [acquisition])
    return all(getattr(member, "every_sample_capped", False) for member in members)
