"""The members of an acquisition portfolio: what each proposes, and from which context.

The closed forms (PI, EI, GP-LCB) follow section II-C of Vasconcelos et al., *No-PASt-BO:
Normalized Portfolio Allocation Strategy for Bayesian Optimization* (ICTAI 2019, "the paper");
max-value entropy search comes from
:mod:`bore_samplers.acquisitions.entropy`; EI per second and the integration over GP
hyperparameters from Snoek, Larochelle & Adams, *Practical Bayesian Optimization of Machine
Learning Algorithms* (NeurIPS 2012). Every function
minimises: lower objective values are better and higher acquisition values are better.

Portfolio members
-----------------
A :class:`PortfolioMember` has a :attr:`~PortfolioMember.name` and proposes one point per
step in one of two ways:

* a :class:`ScoringMember` scores candidate points from the shared objective GP(s) in an
  :class:`AcquisitionContext`; the portfolio maximises the score (PI, EI, GP-LCB, MES, EI per
  second);
* a :class:`NominatingMember` nominates a point directly from the history, with a model of its
  own (:class:`BORENominee`: the maximiser of BORE's classifier probability).

GP members take a *list* of fitted GP models and average the acquisition value over it
(Snoek et al.'s integrated acquisition, ``â(x) = (1/M) Σ_m a(x; θ_m)``): a MAP fit is a list of
one, posterior samples of the hyperparameters a list of several.

Scores are what an optimiser maximises, not always the acquisition itself: PI, EI and EI per
second are scored in log space (same maximiser, no underflow far from the incumbent), GP-LCB
as ``-LCB / s_y`` (``s_y`` the standard deviation of the observed values, so that the score is
scale-free) and MES as its value.

Constraints
-----------
With constraint GPs in the context (real-valued constraints ``c_k(x) <= 0`` from
``Observation.constraints``), every member but MES is weighted by the probability of
feasibility ``PF(x) = Π_k Φ(-μ_k(x) / σ_k(x))`` (Gardner et al., 2014): its log is added to the
log score (PI, EI, EI per second; the incumbent is then the best posterior mean over *feasible*
observed points, and until one exists the score is ``log PF`` alone, as for cEI), and
``-LCB / s_y + log PF`` is the log of ``exp(-LCB / s_y) · PF`` for GP-LCB. MES becomes
constrained MES (Perrone et al.: ``y*`` is the constrained minimum, and the information about
feasibility is part of the acquisition), so it is not weighted again. BORE labels infeasible
observations as bad (:func:`~bore_samplers.acquisitions.density_ratio.bore_labels`).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bore_samplers.acquisitions.averaging import log_mean_exp
from bore_samplers.acquisitions.entropy import cmes_information_gain, sample_constrained_minimum
from bore_samplers.acquisitions.feasibility import LatentModel, log_probability_of_feasibility
from bore_samplers.acquisitions.improvement import (
    lcb_beta,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
)
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.observations import History, TrialState
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.space import SearchSpace

__all__ = [
    "MEMBER_NAMES",
    "AcquisitionContext",
    "BORENominee",
    "ExpectedImprovement",
    "ExpectedImprovementPerSecond",
    "LowerConfidenceBound",
    "MaxValueEntropySearch",
    "NominatingMember",
    "PortfolioMember",
    "ProbabilityOfImprovement",
    "ScoringMember",
    "make_member",
    "resolve_portfolio",
]

Scorer = Callable[[np.ndarray], np.ndarray]


# ----------------------------------------------------------------------------- context
@dataclass
class AcquisitionContext:
    """Everything a :class:`ScoringMember` may use to score candidates at one step.

    Attributes
    ----------
    history
        The observations (finished and pending) in array form.
    models
        Fitted objective GPs: one MAP fit, or one per hyperparameter sample. Pending points are
        already in them (Kriging believer).
    constraint_models
        One fitted (MAP) GP per real-valued constraint, ``c_k(x) <= 0`` feasible; empty
        without constraints.
    crash_model
        A Laplace GP classifier of which observations failed (FAILED trials, binary feedback
        as in cMES), or ``None`` when none has failed.
    incumbent_features
        Features of the observed points over which ``μ⁻ = min μ(x_i)`` is taken: the complete
        observations, the feasible ones when there are constraints; empty when there is none.
    n_conditioned
        Number of observations the objective GPs are conditioned on (``t`` of GP-LCB).
    value_scale
        Standard deviation of the observed objective values (1 when they are constant): the
        unit of ``ξ`` and of the GP-LCB score.
    rng
        Random generator for members that sample (MES's ``y*``).
    """

    history: History
    models: list[GaussianProcessRegressor]
    constraint_models: list[GaussianProcessRegressor] = field(default_factory=list)
    crash_model: GaussianProcessClassifier | None = None
    incumbent_features: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    n_conditioned: int = 1
    value_scale: float = 1.0
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    @property
    def space(self) -> SearchSpace:
        """The search space of the history."""
        return self.history.space

    def incumbents(self) -> list[float] | None:
        """``μ⁻`` of each model, or ``None`` when there is no (feasible) observed point."""
        if len(self.incumbent_features) == 0:
            return None
        return [float(np.min(model.predict(self.incumbent_features)[0])) for model in self.models]

    def log_feasibility(self, features: np.ndarray) -> np.ndarray:
        """``log PF(x)`` of the constraints and the crash model; zeros without either.

        See :func:`bore_samplers.acquisitions.feasibility.log_probability_of_feasibility`.
        """
        return log_probability_of_feasibility(features, self.constraint_models, self.crash_model)

    def feasibility_models(self) -> tuple[list[LatentModel], list[float]]:
        """The constraint models with their latent thresholds, the crash model last.

        A crash counts as infeasible when its latent is above 0 (``P(crash) > 1/2``, the cMES
        proposer's default confidence ``p = 0.5``).
        """
        models: list[LatentModel] = list(self.constraint_models)
        if self.crash_model is not None:
            models.append(self.crash_model)
        return models, [0.0] * len(models)


# ----------------------------------------------------------------------------- members
class PortfolioMember(abc.ABC):
    """One acquisition strategy of a portfolio: it has a name and proposes one point per step.

    Subclasses are either :class:`ScoringMember` (score candidates from the shared GP models)
    or :class:`NominatingMember` (nominate a point with a model of their own).
    """

    #: Explicit name given to the constructor; ``None`` derives it from the settings.
    label: str | None = None

    @property
    def name(self) -> str:
        """Identifier of the member in a portfolio (unique within it); ``label`` if given."""
        return self.label if self.label else self.default_name()

    @abc.abstractmethod
    def default_name(self) -> str:
        """The name derived from the settings, e.g. ``"ei"`` or ``"ei(xi=0.1)"``."""

    def validate(self) -> None:  # noqa: B027 - most members have settings to check
        """Raise ``ValueError`` on invalid settings, without building anything."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ScoringMember(PortfolioMember):
    """A member that scores candidates from the shared objective GP models."""

    @abc.abstractmethod
    def scorer(self, context: AcquisitionContext) -> Scorer:
        """A batch score of snapped unit points ``(n, n_dims) -> (n,)``; higher is better.

        Called once per step; expensive set-up (MES's ``y*`` samples, EI per second's cost
        model) happens here, not per evaluation.
        """


class NominatingMember(PortfolioMember):
    """A member that nominates its point directly, with a model of its own (e.g. BORE)."""

    @abc.abstractmethod
    def nominate(self, history: History, rng: np.random.Generator) -> np.ndarray:
        """One snapped unit point ``(n_dims,)``, not a row of ``history.u`` where possible."""


def _format_name(prefix: str, settings: dict[str, tuple[float, float]]) -> str:
    """``prefix`` plus the settings that differ from their defaults, e.g. ``pi(xi=0.1)``."""
    changed = [
        f"{key}={value:g}" for key, (value, default) in settings.items() if value != default
    ]
    return f"{prefix}({','.join(changed)})" if changed else prefix


def _check_xi(xi: float) -> None:
    if not (math.isfinite(xi) and xi >= 0):
        raise ValueError(f"xi must be a finite number >= 0, got {xi}.")


class ProbabilityOfImprovement(ScoringMember):
    """Probability of improvement (the paper, eq. 5), averaged over the GP models.

    Parameters
    ----------
    xi
        Trade-off ``ξ`` in units of the standard deviation of the observed values (the paper's
        0.01 default; its experiments ran GPyOpt, whose GP is fitted on standardised values).
    label
        Name in the portfolio; default ``"pi"``, or ``"pi(xi=...)"`` for another ``ξ``.
    """

    def __init__(self, xi: float = 0.01, *, label: str | None = None) -> None:
        self.xi = xi
        self.label = label

    def default_name(self) -> str:
        return _format_name("pi", {"xi": (self.xi, 0.01)})

    def validate(self) -> None:
        _check_xi(self.xi)

    def scorer(self, context: AcquisitionContext) -> Scorer:
        incumbents = context.incumbents()
        xi = self.xi * context.value_scale
        space = context.space

        def score(u: np.ndarray) -> np.ndarray:
            features = space.features(u)
            log_pf = context.log_feasibility(features)
            if incumbents is None:  # no feasible point yet: find one
                return log_pf
            logs = []
            for model, best in zip(context.models, incumbents, strict=True):
                mean, var = model.predict(features)
                logs.append(log_probability_of_improvement(mean, var, best, xi))
            return log_mean_exp(logs) + log_pf

        return score


class ExpectedImprovement(ScoringMember):
    """Expected improvement (the paper, eq. 6), averaged over the GP models, in log space.

    Parameters
    ----------
    xi
        Trade-off ``ξ`` in units of the standard deviation of the observed values (paper
        default 0.01; see :class:`ProbabilityOfImprovement`).
    label
        Name in the portfolio; default ``"ei"``, or ``"ei(xi=...)"`` for another ``ξ``.
    """

    def __init__(self, xi: float = 0.01, *, label: str | None = None) -> None:
        self.xi = xi
        self.label = label

    def default_name(self) -> str:
        return _format_name("ei", {"xi": (self.xi, 0.01)})

    def validate(self) -> None:
        _check_xi(self.xi)

    def log_ei(self, context: AcquisitionContext) -> Callable[[np.ndarray], np.ndarray] | None:
        """``features -> log EI`` averaged over the models, or None without an incumbent."""
        incumbents = context.incumbents()
        if incumbents is None:
            return None
        xi = self.xi * context.value_scale

        def log_ei(features: np.ndarray) -> np.ndarray:
            logs = []
            for model, best in zip(context.models, incumbents, strict=True):
                mean, var = model.predict(features)
                logs.append(log_expected_improvement(mean, var, best, xi))
            return log_mean_exp(logs)

        return log_ei

    def scorer(self, context: AcquisitionContext) -> Scorer:
        log_ei = self.log_ei(context)
        space = context.space

        def score(u: np.ndarray) -> np.ndarray:
            features = space.features(u)
            log_pf = context.log_feasibility(features)
            return log_pf if log_ei is None else log_ei(features) + log_pf

        return score


class LowerConfidenceBound(ScoringMember):
    """GP-LCB with ``κ = sqrt(ν β_t)`` and ``β_t`` of eq. 7 (Srinivas et al., 2010).

    The score is ``-(1/M) Σ_m LCB_m(x) / s_y`` (plus ``log PF`` with constraints), where
    ``s_y`` is the standard deviation of the observed values: the minimiser of the averaged
    LCB, on a scale-free axis.

    Parameters
    ----------
    delta
        ``δ ∈ (0, 1)`` (paper: 0.1).
    nu
        ``ν > 0`` (paper: 0.2; the 9-function portfolio adds 0.1 and 1).
    label
        Name in the portfolio; default ``"lcb"``, or ``"lcb(nu=...)"`` for other settings.
    """

    def __init__(self, delta: float = 0.1, nu: float = 0.2, *, label: str | None = None) -> None:
        self.delta = delta
        self.nu = nu
        self.label = label

    def default_name(self) -> str:
        return _format_name("lcb", {"delta": (self.delta, 0.1), "nu": (self.nu, 0.2)})

    def validate(self) -> None:
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}.")
        if not (math.isfinite(self.nu) and self.nu > 0):
            raise ValueError(f"nu must be a finite number > 0, got {self.nu}.")

    def kappa(self, t: int, n_dims: int) -> float:
        """``κ = sqrt(ν β_t)`` at iteration ``t`` in ``n_dims`` dimensions."""
        return math.sqrt(self.nu * lcb_beta(t, n_dims, self.delta))

    def scorer(self, context: AcquisitionContext) -> Scorer:
        kappa = self.kappa(context.n_conditioned, context.space.n_dims)
        space, scale = context.space, context.value_scale

        def score(u: np.ndarray) -> np.ndarray:
            features = space.features(u)
            bounds = [
                lower_confidence_bound(*model.predict(features), kappa) for model in context.models
            ]
            return -np.mean(bounds, axis=0) / scale + context.log_feasibility(features)

        return score


class MaxValueEntropySearch(ScoringMember):
    """Max-value entropy search, constrained MES when there are constraint models.

    ``y*`` (the (constrained) minimum) is sampled by jointly dependent Thompson sampling on a
    scrambled Sobol set plus the observed points (Perrone et al., A.4), separately for every
    objective model, and :func:`~bore_samplers.acquisitions.entropy.cmes_real_valued` gives the
    information gain about it (plain MES without constraints, in its minimisation form); the gains
    are averaged over the models. Not weighted by ``PF``: cMES already accounts for feasibility.

    Parameters
    ----------
    n_samples
        Samples of ``y*`` per model (the cMES paper: 10 suffice).
    n_discretization
        Sobol points of the Thompson-sampling set besides the observed points. The joint draw
        costs ``O(m³)``; 1000 (the cMES paper uses 2000) keeps a step at about a quarter of a
        second per model.
    label
        Name in the portfolio; default ``"mes"``.
    """

    def __init__(
        self, n_samples: int = 10, n_discretization: int = 1000, *, label: str | None = None
    ) -> None:
        self.n_samples = n_samples
        self.n_discretization = n_discretization
        self.label = label

    def default_name(self) -> str:
        return "mes"

    def validate(self) -> None:
        if self.n_samples < 1 or self.n_discretization < 0:
            raise ValueError("n_samples must be >= 1 and n_discretization >= 0.")

    def scorer(self, context: AcquisitionContext) -> Scorer:
        space, rng = context.space, context.rng
        discretization = space.sample_sobol(self.n_discretization, seed=int(rng.integers(2**31)))
        candidates = space.features(np.vstack([discretization, context.history.u]))
        constraints, thresholds = context.feasibility_models()
        y_stars = [
            sample_constrained_minimum(
                model,
                constraints,
                candidates,
                n_samples=self.n_samples,
                constraint_thresholds=thresholds,
                rng=rng,
            )
            for model in context.models
        ]

        def score(u: np.ndarray) -> np.ndarray:
            features = space.features(u)
            gains = [
                cmes_information_gain(
                    features, model, constraints, y_star, constraint_thresholds=thresholds
                )
                for model, y_star in zip(context.models, y_stars, strict=True)
            ]
            return np.mean(gains, axis=0)

        return score


class ExpectedImprovementPerSecond(ScoringMember):
    """EI divided by the predicted evaluation time (Snoek et al., 2012, section 3.2).

    A second GP is fitted (MAP) on ``log(duration)`` of the COMPLETE observations whose
    duration is known; the predicted cost is ``exp(mean)`` of it, so the score is
    ``log EI(x) - E[log duration(x)]`` (plus ``log PF`` with constraints). With fewer than
    ``min_durations`` known durations it is plain EI. Durations of failed and pruned trials are
    left out: they are cut short and would make their regions look cheap.

    Parameters
    ----------
    xi
        EI's trade-off (see :class:`ExpectedImprovement`).
    min_durations
        Known durations needed before the cost model is used.
    label
        Name in the portfolio; default ``"ei_per_second"``.
    """

    def __init__(
        self, xi: float = 0.01, min_durations: int = 3, *, label: str | None = None
    ) -> None:
        self.xi = xi
        self.min_durations = min_durations
        self.label = label

    def default_name(self) -> str:
        return _format_name("ei_per_second", {"xi": (self.xi, 0.01)})

    def validate(self) -> None:
        _check_xi(self.xi)
        if self.min_durations < 2:
            raise ValueError(f"min_durations must be >= 2, got {self.min_durations}.")

    def cost_model(self, context: AcquisitionContext) -> GaussianProcessRegressor | None:
        """The GP of ``log(duration)``, or None with fewer than ``min_durations`` durations."""
        history = context.history
        known = (
            history.mask(TrialState.COMPLETE)
            & np.isfinite(history.durations)
            & (history.durations >= 0)
        )
        if known.sum() < self.min_durations:
            return None
        space = history.space
        log_durations = np.log(np.maximum(history.durations[known], 1e-6))
        gp = GaussianProcessRegressor(space.feature_columns(), seed=0)
        return gp.fit(space.features(history.u[known]), log_durations)

    def scorer(self, context: AcquisitionContext) -> Scorer:
        log_ei = ExpectedImprovement(self.xi).log_ei(context)
        cost = self.cost_model(context)
        space = context.space

        def score(u: np.ndarray) -> np.ndarray:
            features = space.features(u)
            log_pf = context.log_feasibility(features)
            if log_ei is None:
                return log_pf
            value = log_ei(features) + log_pf
            if cost is not None:
                value = value - cost.predict(features)[0]
            return value

        return score


class BORENominee(NominatingMember):
    """BORE's proposal as a portfolio member: the maximiser of the classifier probability.

    Wraps a :class:`~bore_samplers.proposers.BOREProposer` (Tiao et al., ICML 2021), which
    labels the best γ-quantile of the observations, fits its classifier and maximises
    ``π(x) = P(y <= τ | x)`` (failed and infeasible observations are class 0). Its
    nominee is rewarded like any other, by the objective GP's posterior mean there.

    Parameters
    ----------
    gamma, classifier, classifier_options, acquisition_optimizer, n_candidates
        See :class:`~bore_samplers.proposers.BOREProposer`.
    label
        Name in the portfolio; default ``"bore"``.
    """

    def __init__(
        self,
        *,
        gamma: float = 1 / 3,
        classifier: Any = "xgboost",
        classifier_options: dict[str, Any] | None = None,
        acquisition_optimizer: Any = None,
        n_candidates: int | None = None,
        label: str | None = None,
    ) -> None:
        self.gamma = gamma
        self.classifier = classifier
        self.classifier_options = classifier_options
        self.acquisition_optimizer = acquisition_optimizer
        self.n_candidates = n_candidates
        self.label = label
        self._proposer: Any = None

    def default_name(self) -> str:
        return "bore"

    def _bore(self) -> BOREProposer:
        if self._proposer is None:  # kept, so that an MLP classifier warm-starts
            self._proposer = BOREProposer(
                gamma=self.gamma,
                classifier=self.classifier,
                classifier_options=self.classifier_options,
                acquisition_optimizer=self.acquisition_optimizer,
                n_candidates=self.n_candidates,
                n_startup=0,
            )
        return self._proposer

    def validate(self) -> None:
        self._bore().validate()

    def nominate(self, history: History, rng: np.random.Generator) -> np.ndarray:
        proposer = self._bore()
        proposer.reseed(int(rng.integers(2**31)))  # reproducible from the portfolio's seed
        return proposer.propose_from_model(history)


#: Names accepted by :func:`make_member`, each with the member it builds (paper defaults).
MEMBER_NAMES: dict[str, Callable[[], PortfolioMember]] = {
    "pi": ProbabilityOfImprovement,
    "ei": ExpectedImprovement,
    "lcb": LowerConfidenceBound,
    "mes": MaxValueEntropySearch,
    "ei_per_second": ExpectedImprovementPerSecond,
    "bore": BORENominee,
}


def make_member(name: str) -> PortfolioMember:
    """The member called ``name`` (a key of :data:`MEMBER_NAMES`) with default settings.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    """
    try:
        return MEMBER_NAMES[name]()
    except KeyError:
        raise ValueError(
            f"Unknown portfolio member {name!r}; choose from {sorted(MEMBER_NAMES)} or pass a "
            "PortfolioMember instance."
        ) from None


def resolve_portfolio(portfolio: Sequence[str | PortfolioMember]) -> list[PortfolioMember]:
    """Members from names or instances, validated.

    Raises
    ------
    ValueError
        For an empty portfolio, an unknown name, invalid member settings or repeated names
        (give one of them a ``label``).
    TypeError
        For an entry that is neither a name nor a :class:`PortfolioMember`.
    """
    if isinstance(portfolio, str | PortfolioMember):
        portfolio = [portfolio]
    members: list[PortfolioMember] = []
    for entry in portfolio:
        if isinstance(entry, str):
            members.append(make_member(entry))
        elif isinstance(entry, PortfolioMember):
            members.append(entry)
        else:
            raise TypeError(
                "Portfolio entries must be names or PortfolioMember instances, got "
                f"{type(entry).__name__}."
            )
    if not members:
        raise ValueError("The portfolio is empty: give at least one acquisition.")
    for member in members:
        member.validate()
    names = [member.name for member in members]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"Portfolio member names must be unique; repeated: {repeated}.")
    return members
