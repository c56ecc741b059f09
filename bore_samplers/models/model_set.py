"""The GP models of one proposal, fitted from a :class:`~bore_samplers.observations.History`.

Every GP-based proposer (cMES, cEI, AP, every member of the portfolio) gets its models here,
so there is one treatment of each kind of observation and one fit policy:

* the **objective** GP on the COMPLETE observations, targets standardised robustly and
  infinite values imputed by rank (:mod:`bore_samplers.models.targets`); with
  ``marginalize=True``, slice samples of its hyperparameters instead of the MAP point (Snoek
  et al., *Practical Bayesian Optimization of Machine Learning Algorithms*, NeurIPS 2012);
* one GP per real-valued **constraint**, matched by name; a constraint an observation does not
  carry is left out of its GP;
* the Laplace GP **crash** classifier of the FAILED and PRUNED observations against the
  COMPLETE ones (binary feedback; Perrone et al., *Constrained Bayesian Optimization with
  Max-Value Entropy Search*, section 3), when anything failed or was pruned. A pruned trial
  has no final value, and the pruner stopped it because it looked worse than its peers: left
  out, its region would keep the prior's uncertainty and draw proposals back to be pruned
  again (a proposer's ``pruned_trials="ignore"`` removes pruned observations before this);
  the objective and constraint GPs believe their own means at the FAILED and PRUNED points
  (as at pending ones, below): that tells nothing about the values there, but without it
  their uncertainty stays, and once improvement elsewhere is spent an acquisition follows it
  into the region where runs fail;
* the **duration** GP of ``log(seconds)`` of the COMPLETE observations (EI per second), on
  request;
* **pending** (RUNNING) observations: the objective models are conditioned on their own
  predicted means there (a Kriging believer, the slides' fantasy of one pending outcome), and
  the believed values count for the incumbent; this removes the information a pending
  evaluation will bring, so simultaneous proposals spread out without any distance rule.
  EI and PI can draw the pending outcomes instead (``fantasize=True``:
  :meth:`ModelSet.pending_reference`, Monte Carlo fantasies).

The fit policy (:class:`FitPolicy`) warm-starts each model's hyperparameters from its last fit
(one L-BFGS-B run, as Optuna's GPSampler does) with a full multi-start fit whenever the data
have grown by a quarter; the latest fit of each model is cached, so that a proposal whose data
did not change (only the pending points did) does not fit the same GP again.

Long studies: the GPs are fitted on at most :data:`N_MAX_FIT` of the labelled (complete,
failed, pruned) observations (:func:`fit_rows`: the best ones, the latest ones, those next to
the pending points and a space-filling rest), so that a proposal costs ``O(N_MAX_FIT³)`` for
the fits however long the study; what is not a fit (the points never to propose again, the
pending spacing) still reads the whole history.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor, LatentReference
from bore_samplers.models.hyperparameter_sampling import sample_hyperparameter_models
from bore_samplers.models.targets import objective_targets, standardize
from bore_samplers.observations import History, TrialState
from bore_samplers.space import SearchSpace

__all__ = [
    "MAX_CACHED_BYTES",
    "N_MAX_FIT",
    "SCOUT_ROWS",
    "FitPolicy",
    "ModelSet",
    "ModelSetBuilder",
    "fit_rows",
    "prior_mean",
]

#: The most labelled observations a GP is fitted on (:func:`fit_rows`). A fit costs
#: ``O(n³)`` and its matrices ``O(n²)``: at 600 rows a Cholesky factor is 2.9 MB and a
#: proposal's fits take seconds cold, where 3,000 rows took minutes and gigabytes.
N_MAX_FIT = 600
#: Rows beyond which a full fit's restarts search a random subset of this many rows first.
SCOUT_ROWS = 256
# Of N_MAX_FIT: the best complete observations (feasible first), and the latest ones (where
# the search is now); the rest is space-filling.
_BEST_SHARE = 0.25
_RECENT_SHARE = 0.05
# Labelled neighbours kept next to each pending point (where the believer conditions), for
# pending points up to _PENDING_SHARE of N_MAX_FIT neighbours.
_NEAR_PENDING = 4
_PENDING_SHARE = 0.2
#: The cached fits (one per model role, see :class:`ModelSetBuilder`) together hold at most
#: this many bytes of arrays, as measured when a fit is added.
MAX_CACHED_BYTES = 64 * 2**20
# The best complete observations handed to the acquisition optimiser as anchors.
_N_ANCHORS = 5
# The rows (lowest posterior means) over whose joint posterior noisy EI and PI find the
# value to improve on; a row further down is almost never the best of a draw.
_N_INCUMBENT_ROWS = 32


def prior_mean(space: SearchSpace, role: str) -> Literal["constant", "zero"]:
    """The prior mean of the GP of ``role`` on ``space``
    (:class:`~bore_samplers.models.gp_regression.GaussianProcessRegressor`'s ``mean``).

    The objective GP of a space of categorical and other discrete parameters only (at least
    one categorical, no continuous parameter) has a zero mean on its standardised targets,
    i.e. the mean of the observed values, as Optuna's GPSampler has everywhere; every other
    GP fits a constant. Most configurations of such a space are several choices away from
    every observation, where the posterior mean reverts to the prior's. The observations of a
    search crowd around the good configurations, and a fitted constant then comes out well
    above their mean (the few far, bad points pull it up): with it, expected improvement kept
    proposing one choice away from the observations and found worse configurations than with
    the zero mean. On an integer grid, where neighbouring grid points are strongly
    correlated, the zero mean made entropy search slower and was not needed
    (``docs/discrete.md``).
    """
    dims = space.dimensions
    if (
        role == "objective"
        and any(dim.is_categorical for dim in dims)
        and not space.continuous_mask.any()
    ):
        return "zero"
    return "constant"


@dataclass(frozen=True)
class FitPolicy:
    """How the GP hyperparameters of a :class:`ModelSetBuilder` are fitted.

    Attributes
    ----------
    warm_start
        Start each fit from the last fitted hyperparameters of the same model, with one
        L-BFGS-B run; ``False`` fits every time from scratch with restarts drawn from a fixed
        seed, so that the fit is a deterministic function of the data (what the portfolio's
        rewards need, every process computing the same table).
    refit_growth
        With ``warm_start``, a full multi-start fit whenever the number of observations has
        grown by this factor since the last full fit, so that a poor local optimum does not
        persist.
    reoptimize_growth
        With ``warm_start`` and at least ``reoptimize_after`` observations, the
        hyperparameters are optimised again only once the number of observations has grown by
        this factor since they were last optimised; in between the model is conditioned on the
        new data with the last hyperparameters (one Cholesky factorisation instead of an
        L-BFGS-B run); a full fit (``refit_growth``) always optimises. ``1.0`` optimises at
        every fit. A few new points rarely move the MAP hyperparameters of a GP fitted on
        many, and at 200 observations the optimisation is about 40 % of an unconstrained cMES
        proposal.
    reoptimize_after
        Below this many observations the hyperparameters are optimised at every fit, whatever
        ``reoptimize_growth``: there the optimisation is cheap and each point moves the MAP
        more.
    n_restarts
        Random restarts of a full fit.
    marginalize
        Average over slice samples of the objective GP's hyperparameters instead of the MAP
        point; the chain continues from one proposal to the next.
    n_samples
        Hyperparameter samples when marginalising.
    min_durations
        Known durations needed before the duration GP is fitted.
    warp_outputs
        Warp the objective's standardised targets by a Yeo-Johnson transform
        (:func:`~bore_samplers.models.targets.power_warp`), which makes heavy-tailed values
        (a valley among large values) closer to what a stationary GP can fit.
    max_fit_rows
        The most labelled observations a GP is fitted on (:func:`fit_rows`); default
        :data:`N_MAX_FIT` (read when the policy is made); ``None`` fits on all of them.
    """

    warm_start: bool = True
    refit_growth: float = 1.25
    reoptimize_growth: float = 1.05
    reoptimize_after: int = 100
    n_restarts: int = 2
    marginalize: bool = False
    n_samples: int = 10
    min_durations: int = 3
    warp_outputs: bool = True
    max_fit_rows: int | None = field(default_factory=lambda: N_MAX_FIT)

    def __post_init__(self) -> None:
        for name in ("refit_growth", "reoptimize_growth"):
            growth = getattr(self, name)
            if not (isinstance(growth, (int, float)) and math.isfinite(growth) and growth >= 1.0):
                raise ValueError(f"{name} must be a finite number >= 1, got {growth!r}.")
        after = self.reoptimize_after
        if not (
            isinstance(after, (int, np.integer)) and not isinstance(after, bool) and after >= 0
        ):
            raise ValueError(f"reoptimize_after must be an integer >= 0, got {after!r}.")
        rows = self.max_fit_rows
        if rows is not None and not (
            isinstance(rows, (int, np.integer)) and not isinstance(rows, bool) and rows >= 2
        ):
            raise ValueError(f"max_fit_rows must be an integer >= 2 or None, got {rows!r}.")


@dataclass
class ModelSet:
    """The fitted models of one proposal; every target on its standardised scale.

    Attributes
    ----------
    history
        Every observation of the proposal (what must not be proposed again, the pending
        points); the models were fitted on :attr:`fitted_history`.
    objective
        Objective GPs: the MAP fit, or one per hyperparameter sample; conditioned on the
        pending points (Kriging believer). Empty with fewer than two complete observations.
    incumbents
        ``μ⁻`` of each objective model: the smallest posterior mean over the feasible complete
        observations and the pending points; empty when there is no such point.
    incumbent_rows
        Of each objective model, the training rows among those points with the lowest
        posterior means (at most ``_N_INCUMBENT_ROWS``, lowest first): where noisy EI and PI
        find the value to improve on (:meth:`incumbent_reference`).
    constraints
        One GP per real-valued constraint (threshold 0 on its scale), in the order of
        ``constraint_names``.
    constraint_names
        The names of the constraints that have a GP.
    crash
        The classifier of failed against complete observations, or ``None``.
    duration
        The GP of ``log(duration)``, or ``None``.
    anchors
        Unit points of the best feasible complete observations (best first): where an
        acquisition optimiser refines.
    lengthscales
        The MAP objective GP's lengthscale of every unit coordinate (ones without a GP).
    objective_theta
        The MAP objective GP's internal hyperparameters (:attr:`GaussianProcessRegressor.theta_`;
        empty without a GP): what a proposer records to refit the same model later.
    n_conditioned
        Observations the objective models are conditioned on (complete and pending).
    n_pending
        Pending points, the last training rows of every objective model.
    observed_incumbents
        ``μ⁻`` of each objective model over the feasible complete observations only (``+inf``
        where there is none): the value that fantasies of the pending outcomes improve on.
        Empty without pending points.
    fit_rows
        The rows of :attr:`history` the models were fitted on (:func:`fit_rows`), or ``None``
        for all of them.
    """

    history: History
    objective: list[GaussianProcessRegressor] = field(default_factory=list)
    incumbents: list[float] = field(default_factory=list)
    incumbent_rows: list[np.ndarray] = field(default_factory=list)
    constraints: list[GaussianProcessRegressor] = field(default_factory=list)
    constraint_names: list[str] = field(default_factory=list)
    crash: GaussianProcessClassifier | None = None
    duration: GaussianProcessRegressor | None = None
    anchors: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    lengthscales: np.ndarray = field(default_factory=lambda: np.empty(0))
    objective_theta: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_conditioned: int = 0
    n_pending: int = 0
    observed_incumbents: list[float] = field(default_factory=list)
    fit_rows: np.ndarray | None = None
    _incumbent_references: dict[int, LatentReference] = field(default_factory=dict, repr=False)
    _pending_references: dict[int, LatentReference] = field(default_factory=dict, repr=False)

    def incumbent_reference(self, index: int) -> LatentReference:
        """The joint posterior of objective model ``index`` at its :attr:`incumbent_rows`
        (computed once per model set: the members of a portfolio share it)."""
        cache = self._incumbent_references
        if index not in cache:
            model = self.objective[index]
            cache[index] = model.latent_reference(self.incumbent_rows[index])
        return cache[index]

    def pending_reference(self, index: int) -> LatentReference:
        """The outcomes at the pending points of objective model ``index`` as draws
        (:meth:`~bore_samplers.models.gp_regression.GaussianProcessRegressor.fantasy_reference`;
        requires ``n_pending >= 1``; computed once per model set)."""
        cache = self._pending_references
        if index not in cache:
            cache[index] = self.objective[index].fantasy_reference(self.n_pending)
        return cache[index]

    @property
    def fitted_history(self) -> History:
        """The observations the models were fitted on (all of :attr:`history` in a short
        study, a subset of at most :data:`N_MAX_FIT` labelled rows in a long one)."""
        return self.history if self.fit_rows is None else self.history.take(self.fit_rows)

    @property
    def has_objective(self) -> bool:
        """Whether an objective GP could be fitted (two or more complete observations)."""
        return bool(self.objective)

    @property
    def has_feasibility_models(self) -> bool:
        """Whether there is a constraint GP or a crash classifier."""
        return bool(self.constraints) or self.crash is not None


class ModelSetBuilder:
    """Fits the :class:`ModelSet` of a history under one :class:`FitPolicy`.

    A proposer keeps one builder: it holds the warm-start state (last hyperparameters per
    model, the slice-sampling chain), which pickles with it so that a copy continues exactly
    like the original, and a cache of fits by data, which does not (it holds ``N x N``
    matrices, and a copy refits the same data to the same model).

    The cache keeps only what a later fit can reuse: the latest fit of each model role
    (objective, each constraint, crash, duration), looked up by its data, which repeat when
    only pending points changed (workers asking while others run). Each fit is on at most
    :attr:`FitPolicy.max_fit_rows` rows, and the cached fits together hold at most
    :data:`MAX_CACHED_BYTES` of arrays, measured when a fit is added (oldest evicted first; a
    fit larger than that is not kept). Before, up to 16 fits of any size were kept: at 3,000
    observations, gigabytes.

    Parameters
    ----------
    policy
        The fit policy; the default warm-starts every model.
    """

    def __init__(self, policy: FitPolicy | None = None) -> None:
        self.policy = policy if policy is not None else FitPolicy()
        self._warm: dict[tuple[str, int], tuple[Any, int, int]] = {}
        # role -> (key of the data, the fit), least recently used first.
        self._fits: OrderedDict[str, tuple[bytes, Any]] = OrderedDict()
        self._chain_theta: np.ndarray | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_fits"] = OrderedDict()
        return state

    # ------------------------------------------------------------------ single models
    def fit_regressor(
        self,
        space: SearchSpace,
        role: str,
        u: np.ndarray,
        values: np.ndarray,
        rng: np.random.Generator,
        center: bool = True,
        theta: np.ndarray | None = None,
        n_observed: int | None = None,
    ) -> tuple[GaussianProcessRegressor, float, float]:
        """A GP of raw ``values`` (``±inf`` allowed) at unit points ``u``, fitted on their
        standardised targets (``center=False`` keeps a constraint's threshold at 0).

        ``theta`` (internal hyperparameters, :attr:`GaussianProcessRegressor.theta_`) skips the
        fit: the GP is conditioned on the data with these hyperparameters, a deterministic
        function of its arguments that leaves the warm-start state alone. ``n_observed``: see
        :meth:`_fit`.

        Returns
        -------
        gp, location, scale
            The GP (in standardised units) and the map back: ``values ≈ location + scale·z``.
        """
        targets, location, scale = standardize(values, center=center)
        features = space.features(u)
        if theta is None:
            gp = self._fit(
                GaussianProcessRegressor, role, space, features, targets, rng, n_observed
            )
            return gp, location, scale
        theta = np.asarray(theta, dtype=float)
        n_hyperparameters = len(space.feature_columns()) + 3
        if theta.shape != (n_hyperparameters,) or not np.all(np.isfinite(theta)):
            raise ValueError(
                f"theta must be {n_hyperparameters} finite numbers for this space, got {theta}."
            )
        gp = GaussianProcessRegressor(
            space.feature_columns(), optimize=False, mean=prior_mean(space, role)
        )
        return gp.fit(features, targets).with_theta(theta), location, scale

    def _fit(
        self,
        model_class: type,
        role: str,
        space: SearchSpace,
        features: np.ndarray,
        targets: np.ndarray,
        rng: np.random.Generator,
        n_observed: int | None = None,
    ) -> Any:
        """The fit of ``role`` on these data: cached, warm-started or from scratch.

        ``n_observed``: the observations of the history the data were selected from
        (:func:`fit_rows`), which the refit and re-optimisation schedule counts.
        """
        policy = self.policy
        # Drawn before the cache lookup, so that the random stream does not depend on what a
        # process has cached; a deterministic fit uses a fixed seed (FitPolicy.warm_start).
        seed = int(rng.integers(2**31)) if policy.warm_start else 0
        key = self._key(role, features, targets)
        cached = self._fits.get(role)
        if cached is not None and cached[0] == key:
            self._fits.move_to_end(role)
            return cached[1]
        warm_key = (role, features.shape[1])
        # On a subset of a long history (fit_rows), the history's growth decides when to
        # optimise again: the subset's size stays at max_fit_rows.
        n = len(targets) if n_observed is None else max(n_observed, len(targets))
        # (hyperparameters, observations at the last full fit, at the last optimisation)
        previous = self._warm.get(warm_key) if policy.warm_start else None
        warm = previous is not None and n < policy.refit_growth * previous[1]
        # Fewer observations than at the last optimisation (another study, a pruned history)
        # always optimise.
        reuse = (
            warm
            and n >= policy.reoptimize_after
            and previous[2] <= n < policy.reoptimize_growth * previous[2]
        )
        restarts = 0 if warm else policy.n_restarts
        options = (
            {"mean": prior_mean(space, role)} if model_class is GaussianProcessRegressor else {}
        )
        start = previous[0] if previous is not None else None
        if restarts and model_class is GaussianProcessRegressor and len(targets) > SCOUT_ROWS:
            # A multi-start fit on every row of a long study cost seconds (three L-BFGS-B runs
            # on 600 rows). The restarts search a random SCOUT_ROWS of them, about 1/13 the
            # cost per step; one run on every row then refines the best.
            rows = np.random.default_rng(seed).choice(len(targets), SCOUT_ROWS, replace=False)
            scout = model_class(
                space.feature_columns(), n_restarts=restarts, seed=seed, **options
            ).fit(features[rows], targets[rows], warm_start=start)
            start, restarts = scout.hyperparameters_, 0
        model = model_class(
            space.feature_columns(), n_restarts=restarts, seed=seed, optimize=not reuse, **options
        )
        model.fit(features, targets, warm_start=start)
        if policy.warm_start:
            last_full_fit = previous[1] if warm else n
            last_optimized = previous[2] if reuse else n
            self._warm[warm_key] = (model.hyperparameters_, last_full_fit, last_optimized)
        self._fits.pop(role, None)
        self._fits[role] = (key, model)
        self._bound_cache()
        return model

    def cache_nbytes(self) -> int:
        """Bytes of the arrays the cached fits hold now."""
        return sum(_nbytes(model) for _, model in self._fits.values())

    def _bound_cache(self) -> None:
        sizes = [_nbytes(model) for _, model in self._fits.values()]
        total = sum(sizes)
        for role, size in zip(list(self._fits), sizes, strict=True):
            if total <= MAX_CACHED_BYTES:
                break
            del self._fits[role]
            total -= size

    @staticmethod
    def _key(role: str, features: np.ndarray, targets: np.ndarray) -> bytes:
        digest = hashlib.sha1(role.encode())
        digest.update(np.ascontiguousarray(features, dtype=float).tobytes())
        digest.update(np.ascontiguousarray(targets, dtype=float).tobytes())
        return digest.digest()

    # ------------------------------------------------------------------ the model set
    def fit(
        self,
        history: History,
        rng: np.random.Generator,
        *,
        durations: bool = False,
        infeasible_fill: float | None = None,
    ) -> ModelSet:
        """Fit every model the observations support.

        Parameters
        ----------
        history
            The observations.
        rng
            Random generator for the fits' restarts and the hyperparameter samples.
        durations
            Also fit the duration GP (EI per second).
        infeasible_fill
            The adaptive-percentile baseline of Perrone et al.: one objective GP on the complete
            and failed (or pruned) observations, the infeasible, failed and pruned ones given
            this percentile of the observed (standardised) values, and no feasibility model.
        """
        space = history.space
        subset = fit_rows(history, self.policy.max_fit_rows)
        models = ModelSet(history=history, lengthscales=np.ones(space.n_dims), fit_rows=subset)
        n_observed = None
        if subset is not None:
            n_observed = int((~history.mask(TrialState.RUNNING)).sum())
            history = history.take(subset)
        features = space.features(history.u) if len(history) else np.empty((0, space.n_features))
        complete = history.mask(TrialState.COMPLETE)  # never NaN; ±inf are imputed by rank
        # Pruned trials stopped without a final value, as failed ones did.
        failed = history.mask(TrialState.FAILED, TrialState.PRUNED)
        pending = history.mask(TrialState.RUNNING)
        if complete.sum() < 2:
            if infeasible_fill is None and failed.any() and complete.any():
                models.crash = self._crash_model(
                    space, features, complete, failed, rng, n_observed
                )
            return models

        targets = objective_targets(history.values[complete], warp=self.policy.warp_outputs)
        feasible = history.feasible[complete]
        rows = complete
        if infeasible_fill is not None:
            fill = float(np.percentile(targets, infeasible_fill))
            rows = complete | failed
            all_targets = np.full(len(history), fill)
            all_targets[complete] = np.where(feasible, targets, fill)
            targets, feasible = all_targets[rows], np.ones(int(rows.sum()), dtype=bool)
        else:
            for name, column in zip(history.constraint_names, history.constraints.T, strict=True):
                known = complete & ~np.isnan(column)
                if known.sum() >= 2:
                    gp, _, _ = self.fit_regressor(
                        space,
                        f"constraint:{name}",
                        history.u[known],
                        column[known],
                        rng,
                        False,
                        n_observed=n_observed,
                    )
                    models.constraints.append(gp)
                    models.constraint_names.append(name)
            if failed.any():
                models.crash = self._crash_model(
                    space, features, complete, failed, rng, n_observed
                )
        objective = self._fit(
            GaussianProcessRegressor, "objective", space, features[rows], targets, rng, n_observed
        )
        # One lengthscale group per parameter: the lengthscale of each unit coordinate.
        models.lengthscales = np.array(objective.lengthscales_, dtype=float)
        models.objective_theta = objective.theta_.copy()
        objectives = [objective]
        if self.policy.marginalize:
            objectives = sample_hyperparameter_models(
                objective, self.policy.n_samples, rng, initial_theta=self._chain_theta
            )
            self._chain_theta = objectives[-1].theta_
        n_believed = int(rows.sum())
        if infeasible_fill is None and failed.any():
            # A failed trial has no value to learn from, and a model that never sees one keeps
            # its prior variance there: once improvement elsewhere is spent, the acquisition
            # chases that variance into the crash region (a study kept proposing neighbours of
            # its crashes, 20 of its last 20 trials). Each model believes its own mean at the
            # failed points instead, which says nothing about their values.
            objectives = [_believe(model, features[failed]) for model in objectives]
            models.constraints = [_believe(gp, features[failed]) for gp in models.constraints]
            n_believed += int(failed.sum())
        # Training rows of the objective models that an incumbent may be: the feasible ones,
        # and the pending ones appended below.
        incumbent_rows = np.flatnonzero(feasible)
        if pending.any():
            # Without pending points nothing reads these, and they would equal the incumbents.
            for model in objectives:
                observed = (
                    model.predict(model.X_train_[incumbent_rows])[0] if len(incumbent_rows) else []
                )
                models.observed_incumbents.append(float(np.min(observed, initial=math.inf)))
            # Kriging believer: each model believes its own mean at the pending points, the
            # constraint GPs too (else the uncertainty about feasibility would keep drawing
            # simultaneous proposals to the same boundary point).
            objectives = [_believe(model, features[pending]) for model in objectives]
            models.constraints = [_believe(gp, features[pending]) for gp in models.constraints]
            incumbent_rows = np.concatenate(
                [incumbent_rows, n_believed + np.arange(int(pending.sum()))]
            )
        models.objective = objectives
        if len(incumbent_rows):
            for model in objectives:
                means = model.predict(model.X_train_[incumbent_rows])[0]
                models.incumbents.append(float(np.min(means)))
                order = np.argsort(means, kind="stable")[:_N_INCUMBENT_ROWS]
                models.incumbent_rows.append(incumbent_rows[order])
        order = np.argsort(targets[feasible], kind="stable")[:_N_ANCHORS]
        models.anchors = history.u[rows][feasible][order]
        models.n_conditioned = int(rows.sum() + pending.sum())
        models.n_pending = int(pending.sum())
        if durations:
            models.duration = self._duration_model(history, complete, rng, n_observed)
        return models

    def _crash_model(
        self,
        space: SearchSpace,
        features: np.ndarray,
        complete: np.ndarray,
        failed: np.ndarray,
        rng: np.random.Generator,
        n_observed: int | None = None,
    ) -> GaussianProcessClassifier:
        labelled = complete | failed
        labels = failed[labelled].astype(float)
        return self._fit(
            GaussianProcessClassifier, "crash", space, features[labelled], labels, rng, n_observed
        )

    def _duration_model(
        self,
        history: History,
        complete: np.ndarray,
        rng: np.random.Generator,
        n_observed: int | None = None,
    ) -> GaussianProcessRegressor | None:
        # Failed and pruned trials were cut short: their durations would make regions look
        # cheap, so only complete ones count.
        known = complete & np.isfinite(history.durations) & (history.durations >= 0)
        if known.sum() < self.policy.min_durations:
            return None
        log_durations = np.log(np.maximum(history.durations[known], 1e-6))
        space = history.space
        return self.fit_regressor(
            space, "duration", history.u[known], log_durations, rng, n_observed=n_observed
        )[0]


def fit_rows(history: History, n_max: int | None = N_MAX_FIT) -> np.ndarray | None:
    """The rows of ``history`` a GP is fitted on: every row while at most ``n_max`` are
    labelled (``None``), else at most ``n_max`` labelled rows and every pending one (sorted).

    The labelled (complete, failed, pruned) rows are chosen, in this order, as

    1. the best complete ones, feasible first, then by value (``_BEST_SHARE`` of ``n_max``):
       where the minimum and the incumbent are, so that the model is exact there;
    2. the latest ones (``_RECENT_SHARE``): where the search is now;
    3. the ``_NEAR_PENDING`` nearest to each pending point: where the believer conditions;
    4. a greedy max-min design over the rest in unit coordinates (each next row the farthest
       from every row chosen so far; ties to the earliest): the remaining space covered
       evenly, failed and infeasible rows included, so that the crash and constraint models
       keep their boundaries in outline.

    Deterministic (no random draw), so every process that holds the same history fits the
    same subset. Costs ``O(n · n_max)``.
    """
    labelled = ~history.mask(TrialState.RUNNING)
    if n_max is None or labelled.sum() <= n_max:
        return None
    pending = np.flatnonzero(~labelled)
    candidates = np.flatnonzero(labelled)
    chosen = np.zeros(len(history), dtype=bool)
    complete = np.flatnonzero(history.mask(TrialState.COMPLETE))
    # Feasible first, then by value (±inf last and first by their sign, as values go).
    order = np.lexsort((history.values[complete], ~history.feasible[complete]))
    chosen[complete[order[: int(_BEST_SHARE * n_max)]]] = True
    n_recent = int(_RECENT_SHARE * n_max)
    if n_recent:
        chosen[candidates[-n_recent:]] = True
    u = history.u
    for point in u[pending[: int(_PENDING_SHARE * n_max) // _NEAR_PENDING]]:
        distances = np.sum((u[candidates] - point) ** 2, axis=1)
        chosen[candidates[np.argsort(distances, kind="stable")[:_NEAR_PENDING]]] = True
    rest = max(n_max - int(chosen.sum()), 0)
    if rest:
        points = u[candidates]
        # Squared distance of every candidate to its nearest chosen row, chosen in chunks.
        nearest = np.full(len(candidates), np.inf)
        picked = u[np.flatnonzero(chosen)]
        norms = np.sum(points**2, axis=1)
        for start in range(0, len(picked), 64):  # n x 64 at a time: megabytes, not n x n_max
            block = picked[start : start + 64]
            squared = norms[:, None] + np.sum(block**2, axis=1) - 2.0 * points @ block.T
            nearest = np.minimum(nearest, np.maximum(squared, 0.0).min(axis=1))
        for _ in range(rest):
            best = int(np.argmax(nearest))
            if nearest[best] <= 0.0:  # only duplicates of chosen rows are left
                break
            chosen[candidates[best]] = True
            nearest = np.minimum(nearest, np.sum((points - points[best]) ** 2, axis=1))
    chosen[pending] = True
    return np.flatnonzero(chosen)


def _nbytes(value: Any, depth: int = 0) -> int:
    """Bytes of the numpy arrays in ``value`` and, a few levels down, its attributes and
    containers (what a cached model holds: Cholesky factors, inverses, remembered predictions)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if depth > 3:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return sum(_nbytes(item, depth + 1) for item in value.values())
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sum(_nbytes(item, depth + 1) for item in vars(value).values())
    return 0


def _believe(model: GaussianProcessRegressor, points: np.ndarray) -> GaussianProcessRegressor:
    """``model`` conditioned on its own predicted mean at ``points`` (a Kriging believer)."""
    return model.condition_on(points, model.predict(points)[0])
