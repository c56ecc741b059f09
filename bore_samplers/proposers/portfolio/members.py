"""The members of an acquisition portfolio: what each proposes, and from which models.

A :class:`PortfolioMember` has a :attr:`~PortfolioMember.name` and proposes one point per
step in one of two ways:

* a :class:`ScoringMember` builds an acquisition (:mod:`bore_samplers.acquisitions`) on the
  step's shared model set (:mod:`bore_samplers.models.model_set`), which the portfolio
  maximises: PI, EI, GP-LCB (Vasconcelos et al., *No-PASt-BO*, ICTAI 2019, section II-C), MES
  (Perrone et al.; Wang & Jegelka, ICML 2017) and EI per second (Snoek et al., NeurIPS 2012);
* a :class:`NominatingMember` nominates a point directly with a model of its own
  (:class:`BORENominee`: the maximiser of BORE's classifier probability).

GP members average over the objective models (one MAP fit, or hyperparameter samples), and
with constraints or crashes they are weighted by the probability of feasibility, MES becoming
constrained MES. Everything is on the standardised scale of the targets.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bore_samplers.acquisitions.base import Acquisition, Sum
from bore_samplers.acquisitions.entropy import constrained_mes
from bore_samplers.acquisitions.improvement import (
    NegativeMean,
    constrained_lcb,
    constrained_log_ei,
    constrained_log_pi,
    lcb_beta,
)
from bore_samplers.models.model_set import ModelSet
from bore_samplers.observations import History, TrialState
from bore_samplers.proposers.bore import BOREProposer

__all__ = [
    "MEMBER_NAMES",
    "BORENominee",
    "ExpectedImprovement",
    "ExpectedImprovementPerSecond",
    "LowerConfidenceBoundMember",
    "MaxValueEntropySearch",
    "NominatingMember",
    "PortfolioMember",
    "ProbabilityOfImprovement",
    "ScoringMember",
    "make_member",
    "resolve_portfolio",
]


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
    """A member that scores points from the shared GP models of the step."""

    #: Whether the member needs the duration GP in the model set (EI per second).
    needs_durations: bool = False
    #: Whether proposals keep a distance from pending points (entropy search; see
    #: :func:`~bore_samplers.proposers.base.maximize_acquisition`).
    spaces_out_pending: bool = False

    @abc.abstractmethod
    def acquisition(self, models: ModelSet, rng: np.random.Generator) -> Acquisition:
        """This step's acquisition over features (higher is better, with its gradient).

        Called once per step; expensive set-up (MES's ``y*`` samples) happens here.
        """


class NominatingMember(PortfolioMember):
    """A member that nominates its point directly, with a model of its own (e.g. BORE)."""

    @abc.abstractmethod
    def nominate(self, history: History, rng: np.random.Generator) -> np.ndarray:
        """One snapped unit point ``(n_dims,)``, not a row of ``history.u`` where possible."""


def _format_name(prefix: str, settings: dict[str, tuple[float, float]]) -> str:
    """``prefix`` plus the settings that differ from their defaults, e.g. ``pi(xi=0.1)``."""
    changed = [
        f"{key}={value}" if isinstance(value, bool) else f"{key}={value:g}"
        for key, (value, default) in settings.items()
        if value != default
    ]
    return f"{prefix}({','.join(changed)})" if changed else prefix


def _check_xi(xi: float) -> None:
    if not (math.isfinite(xi) and xi >= 0):
        raise ValueError(f"xi must be a finite number >= 0, got {xi}.")


class _ImprovementMember(ScoringMember):
    """PI or EI on the model set: the subclasses set the kind, the default ``ξ`` and the
    documented constructor; naming, checks and scoring are this one implementation."""

    _kind: str
    _default_xi: float
    xi: float
    noisy: bool
    fantasize: bool

    def default_name(self) -> str:
        return _format_name(
            f"noisy_{self._kind}" if self.noisy else self._kind,
            {"xi": (self.xi, self._default_xi), "fantasize": (self.fantasize, False)},
        )

    def validate(self) -> None:
        _check_xi(self.xi)

    def acquisition(self, models: ModelSet, rng: np.random.Generator) -> Acquisition:
        score = constrained_log_ei if self._kind == "ei" else constrained_log_pi
        return score(models, self.xi, self.noisy, self.fantasize)


class ProbabilityOfImprovement(_ImprovementMember):
    """Probability of improvement (the paper, eq. 5), averaged over the GP models, in log space.

    Parameters
    ----------
    xi
        Trade-off ``ξ`` in units of the standard deviation of the observed values (the
        paper's 0.01; its experiments ran GPyOpt, whose GP is fitted on standardised values).
    noisy
        Noisy PI (the incumbent of noisy EI, Letham et al., 2019;
        :class:`~bore_samplers.acquisitions.improvement.NoisyLogImprovement`) instead of the
        smallest posterior mean: for objectives observed with noise. Named ``"noisy_pi"``.
    fantasize
        With pending trials (other workers'), average over draws of their outcomes (Monte
        Carlo fantasies, :meth:`~bore_samplers.models.model_set.ModelSet.pending_reference`)
        instead of letting their believed outcomes count for the incumbent (the default, a
        Kriging believer). Named ``"pi(fantasize=True)"``.
    label
        Name in the portfolio; default ``"pi"`` (``"noisy_pi"``), or ``"pi(xi=...)"`` for
        another ``ξ``.
    """

    _kind = "pi"
    _default_xi = 0.01

    def __init__(
        self,
        xi: float = 0.01,
        *,
        noisy: bool = False,
        fantasize: bool = False,
        label: str | None = None,
    ) -> None:
        self.xi = xi
        self.noisy = noisy
        self.fantasize = fantasize
        self.label = label


class ExpectedImprovement(_ImprovementMember):
    """Expected improvement (the paper, eq. 6), averaged over the GP models, in log space.

    Parameters
    ----------
    xi
        Trade-off ``ξ`` in units of the standard deviation of the observed values. Default 0,
        EI as Jones et al. (1998), BoTorch and Optuna's GPSampler define it, not the paper's
        0.01: a margin tied to the spread of all values asks heavy-tailed objectives (Branin's
        values span 0.4 to 300) for an improvement beyond their global minimum, and EI then
        explores instead of refining the incumbent.
    noisy
        Noisy EI (Letham et al., *Constrained Bayesian Optimization with Noisy Experiments*,
        Bayesian Analysis 2019; :class:`~bore_samplers.acquisitions.improvement.
        NoisyLogImprovement`) instead of the plug-in incumbent (the smallest posterior mean):
        for objectives observed with noise. Named ``"noisy_ei"``.
    fantasize
        With pending trials (other workers'), average over draws of their outcomes (Monte
        Carlo fantasies, :meth:`~bore_samplers.models.model_set.ModelSet.pending_reference`)
        instead of letting their believed outcomes count for the incumbent (the default, a
        Kriging believer). Named ``"ei(fantasize=True)"``.
    label
        Name in the portfolio; default ``"ei"`` (``"noisy_ei"``), or ``"ei(xi=...)"`` for
        another ``ξ``.
    """

    _kind = "ei"
    _default_xi = 0.0

    def __init__(
        self,
        xi: float = 0.0,
        *,
        noisy: bool = False,
        fantasize: bool = False,
        label: str | None = None,
    ) -> None:
        self.xi = xi
        self.noisy = noisy
        self.fantasize = fantasize
        self.label = label


class LowerConfidenceBoundMember(ScoringMember):
    """GP-LCB with ``κ = sqrt(ν β_t)`` and ``β_t`` of eq. 7 (Srinivas et al., 2010).

    The portfolio member ``"lcb"``; the score it builds is
    :class:`~bore_samplers.acquisitions.improvement.LowerConfidenceBound`.

    The score is ``-(1/M) Σ_m LCB_m(x)`` on the standardised scale (plus ``log PF`` with
    constraints).

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

    def acquisition(self, models: ModelSet, rng: np.random.Generator) -> Acquisition:
        kappa = self.kappa(models.n_conditioned, models.history.space.n_dims)
        return constrained_lcb(models, kappa)


class MaxValueEntropySearch(ScoringMember):
    """Max-value entropy search, constrained MES when there are feasibility models.

    ``y*`` (the constrained minimum) is sampled by jointly dependent Thompson sampling on a
    Sobol set plus the observed points (Perrone et al., A.4) for every objective model, and the
    information gain about it (:func:`~bore_samplers.acquisitions.entropy.constrained_mes`) is
    averaged over the models. Not weighted by ``PF``: cMES accounts for feasibility itself.

    Parameters
    ----------
    n_samples
        Samples of ``y*`` per model (the cMES paper: 10 suffice).
    n_discretization
        Sobol points of the Thompson-sampling set besides the observed points.
    label
        Name in the portfolio; default ``"mes"``.
    """

    spaces_out_pending = True

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

    def acquisition(self, models: ModelSet, rng: np.random.Generator) -> Acquisition:
        return constrained_mes(
            models, rng, n_samples=self.n_samples, n_discretization=self.n_discretization
        )


class ExpectedImprovementPerSecond(ScoringMember):
    """EI divided by the predicted evaluation time (Snoek et al., 2012, section 3.2).

    The model set's duration GP of ``log(seconds)`` of the complete observations gives the
    predicted cost ``exp(mean)``, so the score is ``log EI(x) - E[log duration(x)]`` (plus
    ``log PF`` with constraints); plain EI until ``min_durations`` durations are known.

    Parameters
    ----------
    xi
        EI's trade-off (see :class:`ExpectedImprovement`).
    min_durations
        Known durations of complete observations needed before the cost model is used
        (at least 3, what the model set needs to fit it).
    label
        Name in the portfolio; default ``"ei_per_second"``.
    """

    needs_durations = True

    def __init__(
        self, xi: float = 0.0, min_durations: int = 3, *, label: str | None = None
    ) -> None:
        self.xi = xi
        self.min_durations = min_durations
        self.label = label

    def default_name(self) -> str:
        return _format_name("ei_per_second", {"xi": (self.xi, 0.0)})

    def validate(self) -> None:
        _check_xi(self.xi)
        if self.min_durations < 3:
            raise ValueError(f"min_durations must be >= 3, got {self.min_durations}.")

    def acquisition(self, models: ModelSet, rng: np.random.Generator) -> Acquisition:
        log_ei = constrained_log_ei(models, self.xi)
        history = models.history
        known = history.mask(TrialState.COMPLETE) & np.isfinite(history.durations)
        if models.duration is None or not models.incumbents or known.sum() < self.min_durations:
            return log_ei
        return Sum([log_ei, NegativeMean(models.duration)])


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
                weighting="pi",  # the BORE paper's, with its γ = 1/3 and XGBoost
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
    "noisy_pi": functools.partial(ProbabilityOfImprovement, noisy=True),
    "noisy_ei": functools.partial(ExpectedImprovement, noisy=True),
    "lcb": LowerConfidenceBoundMember,
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
