"""Constrained max-value entropy search (cMES) and its GP baselines, as a proposer.

Perrone et al., *Constrained Bayesian Optimization with Max-Value Entropy Search*. A GP models
the objective; each real-valued constraint gets its own GP, and crashed (FAILED) trials give
binary feedback learnt by a Laplace GP classifier. The next point maximises the information
an evaluation gives about the constrained minimum ``y*``
(:mod:`bore_samplers.acquisitions.entropy`), averaged over samples of ``y*`` drawn by jointly
dependent Thompson sampling on a Sobol set plus the observed points (A.4).

How each kind of observation enters
-----------------------------------
* COMPLETE: its value trains the objective GP (also when infeasible: with real-valued feedback
  the objective is observed everywhere); its constraint values train the constraint GPs, each
  constraint matched by name, and a constraint the observation does not carry is left out of
  that constraint's GP; for the crash classifier it is a feasible point (``z = 0``). ``+inf``
  values (objective or constraint) are worse than every finite value and ``-inf`` better: they
  are imputed by rank, and every target is standardised robustly
  (:mod:`bore_samplers.models.targets`), so proposals do not depend on the units of the objective.
* FAILED: no objective value; an infeasible point (``z = +1``) for the crash classifier, so the
  sampler learns where runs crash instead of treating them as holes in the data.
* PRUNED: left out (its value is from an earlier step and its feasibility is unknown).
* RUNNING (pending): the objective GP is conditioned on its predicted mean (Kriging believer),
  which removes the information the pending evaluation will bring; proposals also keep a
  distance from pending points (:meth:`Proposer.pending_spacing`).

When real-valued constraints and crashes occur together, the classifier's latent Gaussian
posterior enters :func:`~bore_samplers.acquisitions.entropy.cmes_real_valued` as one more
independent constraint with threshold ``δ = logit(p)`` (the information in the latent constraint
rather than in the binary observation of it: an approximation, documented here because the paper
treats the two feedback types separately).

Baselines (``acquisition=``): ``"cei"`` is constrained EI, EI times the probability of
feasibility, and the probability of feasibility alone until a feasible point exists;
``"ap"`` is the paper's adaptive-percentile heuristic: one GP, with infeasible and failed
trials given the ``ap_percentile``-th percentile of the observed values, and plain EI.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from bore_samplers.acquisitions.averaging import average_over_models
from bore_samplers.acquisitions.entropy import (
    Y_STAR_SAMPLERS,
    cmes_information_gain,
    sample_constrained_minimum,
)
from bore_samplers.acquisitions.feasibility import (
    binary_feasibility_threshold,
    log_probability_of_feasibility,
)
from bore_samplers.acquisitions.improvement import log_expected_improvement
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.targets import standardize
from bore_samplers.observations import History, TrialState
from bore_samplers.optimizers import FiniteDifferenceGradient, MultiStartLBFGS
from bore_samplers.proposers.base import Proposer

__all__ = ["CMESProposer"]

ACQUISITIONS = ("cmes", "cei", "ap")


class CMESProposer(Proposer):
    """Proposes the maximiser of constrained max-value entropy search (or cEI / AP).

    Parameters
    ----------
    acquisition
        ``"cmes"`` (default), or the baselines ``"cei"`` and ``"ap"``.
    n_y_star_samples
        Samples ``K`` of the constrained minimum (the paper: 10 suffice).
    n_discretization
        Sobol points on which ``y*`` is sampled, besides the observed points (paper: 2000).
    y_star_sampler
        ``"joint"`` (default; jointly dependent Thompson sampling, GP regressors by pathwise
        conditioning), ``"joint_exact"`` (the same by Cholesky factors of the joint
        posterior, ``O(m^3)``) or ``"mean_field"`` (the
        biased independent sampler of Fig. 1, for ablations only).
    binary_confidence
        Confidence ``p = σ(δ)`` with which a point counts as feasible under binary feedback.
    ap_percentile
        Percentile of observed values plugged in for infeasible trials by ``"ap"`` (≥ 50).
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisition over slice samples of the objective GP's hyperparameters
        (Snoek et al., 2012; :mod:`bore_samplers.models.hyperparameter_sampling`) instead of using
        the MAP point; for cMES each sample gets its own y* samples. The chain continues from one
        proposal to the next. Costs about ``n_hyperparameter_samples`` times more.
    n_candidates, n_restarts
        Random candidates scored in one batch, and L-BFGS refinements of the best ones on the
        continuous coordinates.
    n_startup
        Finished observations before the models take over (Sobol points until then).
    seed
        Seed for reproducible proposals.
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
        n_candidates: int = 1000,
        n_restarts: int = 3,
        n_startup: int = 10,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_startup=n_startup, seed=seed)
        self.acquisition = acquisition
        self.n_y_star_samples = n_y_star_samples
        self.n_discretization = n_discretization
        self.y_star_sampler = y_star_sampler
        self.binary_confidence = binary_confidence
        self.ap_percentile = ap_percentile
        self.marginalize_hyperparameters = marginalize_hyperparameters
        self.n_hyperparameter_samples = n_hyperparameter_samples
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts
        # Fitted GP hyperparameters per model role, to warm-start the next fit (see _gp_on).
        self._hyperparameter_cache: dict[tuple[str, int], tuple[Any, int]] = {}
        # Last hyperparameter sample of the objective GP, where the next chain continues.
        self._chain_theta: np.ndarray | None = None

    def validate(self) -> None:
        """Raise ``ValueError`` on invalid settings, without building anything."""
        if self.acquisition not in ACQUISITIONS:
            raise ValueError(
                f"Unknown acquisition {self.acquisition!r}; choose one of {ACQUISITIONS}."
            )
        if self.y_star_sampler not in Y_STAR_SAMPLERS:
            raise ValueError(
                f"y_star_sampler must be one of {Y_STAR_SAMPLERS}, got {self.y_star_sampler!r}."
            )
        binary_feasibility_threshold(self.binary_confidence)
        if not 50.0 <= self.ap_percentile <= 100.0:
            raise ValueError(f"ap_percentile must be in [50, 100], got {self.ap_percentile}.")
        for name in ("n_y_star_samples", "n_candidates", "n_restarts", "n_hyperparameter_samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}.")
        if self.n_discretization < 0 or self.n_startup < 0:
            raise ValueError("n_discretization and n_startup must be >= 0.")

    # ------------------------------------------------------------------ models
    def _fit_models(self, history: History) -> dict[str, Any] | None:
        """The fitted objective, constraint and crash models, or None if nothing can be fitted."""
        space = history.space
        groups = space.feature_columns()
        features = space.features(history.u)
        # COMPLETE values are never NaN (History makes those FAILED); ±inf are kept and
        # imputed by rank, and every target is standardised (bore_samplers.models.targets), so the
        # models and the acquisition do not depend on the units of the objective.
        complete = history.mask(TrialState.COMPLETE)
        failed = history.mask(TrialState.FAILED)
        pending = history.mask(TrialState.RUNNING)
        models: dict[str, Any] = {"constraints": [], "crash": None, "best": None}

        if self.acquisition == "ap":
            # One GP; infeasible and failed trials get a pessimistic percentile as their value.
            observed = complete | failed
            if complete.sum() < 2:
                return None
            values = np.full(len(history), np.nan)
            values[complete] = standardize(history.values[complete])[0]
            feasible_values = values[complete & history.feasible]
            fill = np.percentile(values[complete], self.ap_percentile)
            targets = np.where(complete & history.feasible, values, fill)
            models["objective"] = self._gp_on(
                "objective", groups, features[observed], targets[observed]
            )
            models["best"] = float(feasible_values.min()) if len(feasible_values) else fill
        else:
            if failed.any() and complete.any():
                labelled = complete | failed
                models["crash"] = self._fit_warm(
                    GaussianProcessClassifier,
                    "crash",
                    groups,
                    features[labelled],
                    failed[labelled],
                )
            if complete.sum() < 2:
                return models if models["crash"] is not None else None
            values = standardize(history.values[complete])[0]
            models["objective"] = self._gp_on("objective", groups, features[complete], values)
            for name, column in zip(history.constraint_names, history.constraints.T, strict=True):
                known = complete & ~np.isnan(column)  # a missing constraint is unknown there
                if known.sum() >= 2:
                    targets = standardize(column[known], center=False)[0]
                    gp = self._gp_on(f"constraint:{name}", groups, features[known], targets)
                    models["constraints"].append(gp)
            feasible = history.feasible[complete]
            models["best"] = float(values[feasible].min()) if feasible.any() else None

        if pending.any() and "objective" in models:
            # Kriging believer: a pending point will confirm the current mean there.
            believed, _ = models["objective"].predict(features[pending])
            models["objective"] = models["objective"].condition_on(features[pending], believed)
        return models

    def _gp_on(self, role: str, groups: list, features: np.ndarray, targets: np.ndarray) -> Any:
        """A GP regressor fitted to ``targets``, warm-started (see :meth:`_fit_warm`)."""
        return self._fit_warm(GaussianProcessRegressor, role, groups, features, targets)

    def _fit_warm(
        self, model_class: type, role: str, groups: list, features: np.ndarray, y: np.ndarray
    ) -> Any:
        """A GP model fitted to ``y``, warm-started from this role's previous hyperparameters.

        Hyperparameters change little from one trial to the next, so a single L-BFGS run from
        the previous optimum replaces the random restarts (a quarter of the cost, the same
        optimum in the tests), as Optuna's GPSampler does. A full multi-start fit still runs
        whenever the data have grown by a quarter since the last one, so a poor local optimum
        does not persist; a fresh process (or a changed space) starts with one.
        """
        seed = int(self.rng.integers(2**31))
        key = (role, features.shape[1])
        cached = self._hyperparameter_cache.get(key)
        warm = cached is not None and len(y) < 1.25 * cached[1]
        model = model_class(groups, n_restarts=0 if warm else 2, seed=seed)
        model.fit(features, y, warm_start=cached[0] if cached is not None else None)
        last_full_fit = cached[1] if warm else len(y)
        self._hyperparameter_cache[key] = (model.hyperparameters_, last_full_fit)
        return model

    # ------------------------------------------------------------- acquisition
    @staticmethod
    def _feasibility_log_probability(models: dict[str, Any], features: np.ndarray) -> Any:
        return log_probability_of_feasibility(features, models["constraints"], models["crash"])

    def _acquisition(self, history: History, models: dict[str, Any]) -> Any:
        space = history.space
        delta = binary_feasibility_threshold(self.binary_confidence)

        if "objective" not in models:  # only crashes so far: find where runs succeed
            return lambda u: self._feasibility_log_probability(models, space.features(u))

        objectives = self._objective_models(models["objective"])
        if self.acquisition in ("cei", "ap"):

            def log_ei_for(objective: GaussianProcessRegressor) -> Any:
                def log_ei(features: np.ndarray) -> np.ndarray:
                    mean, var = objective.predict(features)
                    return log_expected_improvement(mean, var, models["best"])

                return log_ei

            # log EI stays informative where EI itself underflows, far from the incumbent.
            log_expected = average_over_models(log_ei_for, objectives, log_scale=True)

            def constrained_ei(u: np.ndarray) -> np.ndarray:
                features = space.features(u)
                log_pf = self._feasibility_log_probability(models, features)
                if models["best"] is None:  # no feasible point yet: minimise infeasibility
                    return log_pf
                return log_expected(features) + log_pf

            return constrained_ei

        constraint_models = list(models["constraints"])
        thresholds = [0.0] * len(constraint_models)
        if models["crash"] is not None:
            constraint_models.append(models["crash"])
            thresholds.append(delta)
        discretization = space.sample_sobol(
            self.n_discretization, seed=int(self.rng.integers(2**31))
        )
        candidates = space.features(np.vstack([discretization, history.u]))

        def cmes_for(objective: GaussianProcessRegressor) -> Any:
            y_star = sample_constrained_minimum(
                objective,
                constraint_models,
                candidates,
                n_samples=self.n_y_star_samples,
                constraint_thresholds=thresholds,
                method=self.y_star_sampler,
                rng=self.rng,
            )

            def cmes(features: np.ndarray) -> np.ndarray:
                return cmes_information_gain(
                    features,
                    objective,
                    constraint_models,
                    y_star,
                    constraint_thresholds=thresholds,
                    binary_confidence=self.binary_confidence,
                )

            return cmes

        integrated = average_over_models(cmes_for, objectives)
        return lambda u: integrated(space.features(u))

    def _objective_models(self, objective: GaussianProcessRegressor) -> list[Any]:
        """The MAP objective GP, or slice samples of its hyperparameters when marginalising."""
        if not self.marginalize_hyperparameters:
            return [objective]
        from bore_samplers.models.hyperparameter_sampling import sample_hyperparameter_models

        samples = sample_hyperparameter_models(
            objective,
            self.n_hyperparameter_samples,
            rng=self.rng,
            initial_theta=self._chain_theta,
        )
        self._chain_theta = samples[-1].theta_
        return samples

    def propose_from_model(self, history: History) -> np.ndarray:
        models = self._fit_models(history)
        if models is None:
            return self.random_fallback(history)
        acquisition = FiniteDifferenceGradient(self._acquisition(history, models), history.space)
        pending, radius = self.pending_spacing(history)
        optimizer = MultiStartLBFGS(
            n_candidates=self.n_candidates, n_restarts=self.n_restarts, max_iter=30
        )
        return optimizer.maximize(
            acquisition,
            history.space,
            self.rng,
            exclude=history.u,
            keep_away=pending,
            radius=radius,
        )
