"""Binary-outcome Bayesian optimisation (UCB_Φ and its baselines) as a proposer.

Fauvel & Chalk, *Efficient Exploration in Binary and Preferential Bayesian Optimization*
(arXiv preprint, 2021), sections 2.1 and 3-4.1. An evaluation yields one of two outcomes, and
the probability of the target outcome is ``P(c = 1 | x) = Φ(f(x))`` for a latent ``f`` with a
Gaussian-process prior. A probit GP classifier
(:class:`~bore_samplers.models.gp_classification.GaussianProcessClassifier`, Laplace's
approximation or Expectation Propagation, Matérn 5/2 ARD kernel plus a constant term) gives the
posterior of ``f``;
the next point maximises an acquisition of :mod:`bore_samplers.acquisitions.binary` with the
mixed-space optimiser (:func:`~bore_samplers.optimizers.maximize_over_space`).

Outcomes, in the core's convention (values are minimised)
---------------------------------------------------------
Each COMPLETE observation's value is ``0`` or ``1``, and ``0`` is the *target* outcome: the
proposer maximises ``μ_c(x) = P(value = 0 | x, D)``, i.e. minimises the probability of a 1 (the
expected value). Any other value raises a ``ValueError`` naming it. The adapters translate the
user's outcomes: a study that *maximises* a 0/1 objective hands the proposer ``1 - outcome``,
one that minimises it the outcome itself
(:class:`~bore_samplers.integrations.binary.BinaryOutcomeSampler`, which also offers an
explicit threshold for objectives that return other numbers).

How each kind of observation enters
-----------------------------------
* COMPLETE: a label, ``c = 1`` for the target outcome (value 0) and ``c = 0`` otherwise.
* FAILED (the evaluation raised, or returned NaN): with ``failed_trials="bad"`` (default) the
  non-target outcome, ``c = 0``: a run that crashed did not succeed. With
  ``failed_trials="ignore"`` it is left out (see :class:`~bore_samplers.proposers.Proposer`).
* PRUNED: with ``pruned_trials="bad"`` (default) the non-target outcome, ``c = 0``: the pruner
  stopped it because it looked worse than its peers. With ``"ignore"`` it is left out.
* RUNNING (pending): not trained on. Proposals keep half the expected nearest-neighbour spacing
  away from pending points while a candidate that far exists
  (:func:`~bore_samplers.optimizers.pending.pending_spacing`), and never repeat the exact
  configuration of a pending or evaluated point while another one exists, so that workers
  asking at once spread out. (A Kriging believer has no natural form here: believing the most
  probable label of a pending point would bias ``μ_c`` towards it.)

Acquisitions (``acquisition=``)
-------------------------------
* ``"ucb_phi"`` (default): ``μ_c + β sqrt(V[Φ(f)])``, the epistemic standard deviation of the
  success probability as exploration bonus (eq. 14), ``β = Φ⁻¹(0.99)``;
* ``"ucb_f"``: ``μ_f + β σ_f`` on the latent, ``β = 1`` (Tesch et al., *Expensive Function
  Optimization with Stochastic Binary Outcomes*, ICML 2013);
* ``"binary_ei"``: expected improvement of ``Φ(f)`` over the largest ``μ_c`` of the observed
  points (Tesch et al., 2013);
* ``"thompson"``: the maximiser of one posterior sample path of ``f``.

The answer to report is not the best observation (a lucky 1 says little) but the maximiser of
``μ_c``: :meth:`BinaryOutcomeProposer.inferred_best`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from bore_samplers.acquisitions.base import Acquisition
from bore_samplers.acquisitions.binary import (
    DEFAULT_UCB_PHI_BETA,
    BinaryExpectedImprovement,
    UCBLatent,
    UCBPhi,
    best_success_probability,
    thompson_sample,
)
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.model_set import FitPolicy, ModelSetBuilder, fit_rows
from bore_samplers.observations import (
    History,
    Observation,
    TrialState,
    history_from_observations,
)
from bore_samplers.optimizers import keep_away_from_pending, maximize_over_space
from bore_samplers.proposers.base import GPProposer, Proposal
from bore_samplers.space import SearchSpace
from bore_samplers.validation import check_choice, check_float, check_int

__all__ = [
    "ACQUISITIONS",
    "APPROXIMATIONS",
    "BinaryOutcomeProposer",
    "OutcomeThresholdOption",
    "binary_outcome",
    "check_outcome_threshold",
    "core_value",
    "outcome_observation",
]

#: The choices of :attr:`BinaryOutcomeProposer.acquisition`.
ACQUISITIONS = ("ucb_phi", "ucb_f", "binary_ei", "thompson")
#: The choices of :attr:`BinaryOutcomeProposer.approximation`.
APPROXIMATIONS = ("laplace", "ep")
#: Default ``β`` of each UCB acquisition (the paper's section 5.1).
DEFAULT_BETAS = {"ucb_phi": DEFAULT_UCB_PHI_BETA, "ucb_f": 1.0}
# Keeps the incumbent of binary EI inside (0, 1), where it is defined.
_INCUMBENT_CLIP = 1e-9
# The labelled points with the largest μ_c handed to the optimiser as anchors.
_N_ANCHORS = 5
# Prior variance of a constant offset of the latent (a N(0, 1) prior on its constant mean,
# integrated out). With a zero prior mean every unexplored region has μ_c near 1/2 and, where
# successes are rare, looks better than everything tried: UCB_Φ then spends its budget on the
# corners of the box. The constant lets the level far from the data follow the observed rate.
_CONSTANT_VARIANCE = 1.0


def binary_outcome(value: Any, threshold: float | None = None) -> int:
    """The binary outcome (0 or 1) that ``value`` stands for.

    Parameters
    ----------
    value
        What an evaluation returned: ``0``, ``1``, ``False`` or ``True`` (any number equal to
        0 or 1); with a ``threshold``, any real number.
    threshold
        ``None`` (strict): anything but 0 or 1 is an error. A number ``τ``: values ``> τ`` are
        outcome 1 and values ``<= τ`` outcome 0 (for objectives that return a score, and for
        test suites that return arbitrary floats).

    Raises
    ------
    ValueError
        For a value that is not 0 or 1 (strict), or is not a real number or is NaN (with a
        threshold). The message names the value.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"a binary outcome must be a number, got {value!r}.") from None
    if math.isnan(number):
        raise ValueError(f"a binary outcome cannot be NaN, got {value!r}.")
    if threshold is not None:
        return int(number > threshold)
    if number not in (0.0, 1.0):
        raise ValueError(
            f"a binary outcome must be 0 or 1 (or a bool), got {value!r}; pass "
            "outcome_threshold to count values above a threshold as 1."
        )
    return int(number)


def core_value(
    value: Any, threshold: float | None, maximize: bool, trial: str, owner: str
) -> float:
    """The core's value (0: the target outcome) of a user's outcome, or a ``ValueError``.

    What the adapters hand the proposer: ``1 - outcome`` when the user maximises the
    probability of a 1 (``maximize``), the outcome otherwise. ``trial`` and ``owner`` name the
    trial and the adapter in the message (e.g. ``"Trial#3"``, ``"BinaryOutcomeSampler"``).
    """
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


def outcome_observation(
    observation: Observation,
    value: Any,
    threshold: float | None,
    maximize: bool,
    trial: str,
    owner: str,
) -> Observation:
    """``observation`` with the core's value of the user's outcome ``value`` (:func:`core_value`)
    if it is COMPLETE with a value; unchanged otherwise. What both adapters hand the proposer."""
    if observation.state is not TrialState.COMPLETE or value is None:
        return observation
    core = core_value(value, threshold, maximize, trial, owner)
    return dataclasses.replace(observation, value=core)


def check_outcome_threshold(threshold: Any) -> None:
    """Raise ``ValueError`` unless ``threshold`` is ``None`` or a finite real number."""
    check_float("outcome_threshold", threshold, allow_none=True)


class OutcomeThresholdOption:
    """The binary-outcome adapters' own option, ``outcome_threshold`` (``_own_options`` is
    what :func:`~bore_samplers.proposers.options.named_init` hands it to)."""

    _outcome_threshold: float | None = None

    def _own_options(self, outcome_threshold: float | None) -> None:
        check_outcome_threshold(outcome_threshold)
        self._outcome_threshold = outcome_threshold

    @property
    def outcome_threshold(self) -> float | None:
        """``None`` (outcomes must be 0 or 1), or the threshold above which a value succeeds."""
        return self._outcome_threshold


class _ProbitClassifier(GaussianProcessClassifier):
    """:class:`GaussianProcessClassifier` with the probit link and a choice of approximation.

    The constructor signature the model-set builder uses (``feature_groups, n_restarts=,
    seed=, optimize=``); the approximation is bound with :func:`functools.partial`. The
    latent's prior has a constant term of variance ``_CONSTANT_VARIANCE``.
    """

    def __init__(
        self,
        feature_groups: Sequence[Sequence[int]] | None = None,
        *,
        n_restarts: int = 2,
        seed: int | None = None,
        optimize: bool = True,
        approximation: Literal["laplace", "ep"] = "laplace",
    ) -> None:
        super().__init__(
            feature_groups,
            likelihood="probit",
            optimize=optimize,
            n_restarts=n_restarts,
            seed=seed,
            constant_variance=_CONSTANT_VARIANCE,
        )
        self.approximation = approximation


class BinaryOutcomeProposer(GPProposer):
    """Proposes the maximiser of UCB_Φ (or a baseline) on a probit GP classifier.

    See the module docstring for the convention on values (0 is the target outcome) and how
    each kind of observation enters.

    Parameters
    ----------
    acquisition
        ``"ucb_phi"`` (default), ``"ucb_f"``, ``"binary_ei"`` or ``"thompson"``.
    beta
        ``β`` of the UCB acquisitions; ``None``: ``Φ⁻¹(0.99)`` for ``"ucb_phi"`` and 1 for
        ``"ucb_f"`` (the paper's choices). Ignored by the others.
    approximation
        Posterior approximation of the classifier: ``"laplace"`` (default; Newton's method,
        Rasmussen & Williams, *Gaussian Processes for Machine Learning*, MIT Press 2006,
        Algorithm 3.1) or ``"ep"`` (Expectation Propagation, Algorithm 3.5, the paper's
        choice). Hyperparameters maximise the approximate marginal likelihood either way.
    n_candidates, n_restarts
        Sobol candidates scored by the acquisition optimiser, and the local searches started
        from the best of them.
    n_startup
        Finished observations before the model takes over (Sobol points until then).
    seed
        Seed for reproducible proposals.
    failed_trials
        ``"bad"`` (default): a FAILED observation counts as the non-target outcome;
        ``"ignore"``: it is left out. See :class:`~bore_samplers.proposers.Proposer`.
    pruned_trials
        ``"bad"`` (default): a PRUNED observation counts as the non-target outcome, as a
        FAILED one does; ``"ignore"``: it is left out.

    Examples
    --------
    >>> from bore_samplers import FloatParam, Observation, SearchSpace
    >>> from bore_samplers.proposers.binary import BinaryOutcomeProposer
    >>> space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    >>> seen = [Observation({"x": x}, float(x > 0.6)) for x in (0.1, 0.3, 0.5, 0.7, 0.9)]
    >>> proposer = BinaryOutcomeProposer(n_startup=5, seed=0)
    >>> proposer.propose(space, seen)  # doctest: +SKIP
    {'x': 0.38...}
    >>> proposer.inferred_best(space, seen)  # doctest: +SKIP
    {'x': 0.27...}
    """

    name = "binary"
    #: 0/1 outcomes are one objective by nature.
    supports_multi_objective = False

    def __init__(
        self,
        *,
        acquisition: Literal["ucb_phi", "ucb_f", "binary_ei", "thompson"] = "ucb_phi",
        beta: float | None = None,
        approximation: Literal["laplace", "ep"] = "laplace",
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
        self.beta = beta
        self.approximation = approximation
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts

    def validate(self) -> None:
        """Raise ``ValueError`` on invalid settings, without building anything."""
        super().validate()
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_choice("approximation", self.approximation, APPROXIMATIONS)
        check_float("beta", self.beta, low=0.0, allow_none=True)
        for name in ("n_candidates", "n_restarts"):
            check_int(name, getattr(self, name), minimum=1)

    # ------------------------------------------------------------------ proposing
    def next_proposal(self, space: SearchSpace, observations: Sequence[Observation]) -> Proposal:
        """:meth:`Proposer.next_proposal`, after checking every outcome is 0 or 1.

        Raises
        ------
        ValueError
            For a COMPLETE observation whose value is neither 0 nor 1 (start-up proposals
            included, so that a wrong objective is caught at once).
        """
        _check_values(observations)
        return super().next_proposal(space, observations)

    def propose_from_model(self, history: History) -> np.ndarray:
        model, labelled = self._fit(history, self.model_builder(), self.rng)
        if model is None:  # nothing labelled yet (only pruned or pending observations)
            return self.random_fallback(history)
        keep_away, radii = keep_away_from_pending(history, [True])
        return maximize_over_space(
            [self._acquisition(model, history.space.features(history.u[labelled]))],
            history.space,
            self.rng,
            exclude=history.u,
            keep_away=keep_away,
            radii=radii,
            lengthscales=np.asarray(model.lengthscales_, dtype=float),
            anchors=_anchors(model, history.u[labelled], history.space),
            n_candidates=self.n_candidates,
            n_local=self.n_restarts,
        )[0]

    def _acquisition(self, model: GaussianProcessClassifier, seen: np.ndarray) -> Acquisition:
        if self.acquisition == "thompson":
            return thompson_sample(model, self.rng)
        if self.acquisition == "binary_ei":
            incumbent = best_success_probability(model, seen)
            return BinaryExpectedImprovement(
                model, float(np.clip(incumbent, _INCUMBENT_CLIP, 1.0 - _INCUMBENT_CLIP))
            )
        beta = DEFAULT_BETAS[self.acquisition] if self.beta is None else self.beta
        if self.acquisition == "ucb_f":
            return UCBLatent(model, beta)
        return UCBPhi(model, beta)

    def fit_policy(self) -> FitPolicy:
        """The classifier's hyperparameters are optimised at every proposal.

        The lazy re-optimisation of the regression GPs
        (:attr:`~bore_samplers.models.model_set.FitPolicy.reoptimize_growth`) is not measured
        on the classifier, so it stays off here.
        """
        return FitPolicy(reoptimize_growth=1.0)

    # ------------------------------------------------------------------ inference
    def fit_model(
        self, space: SearchSpace, observations: Sequence[Observation]
    ) -> GaussianProcessClassifier:
        """The classifier of ``P(target outcome | x)`` fitted to ``observations``.

        A deterministic function of the observations (a full multi-start fit from a fixed
        seed, apart from the proposer's warm starts), so that every process infers the same
        answer and asking for it leaves the proposals' random stream alone.

        Raises
        ------
        ValueError
            For a value that is not 0 or 1, or when no observation has an outcome.
        """
        _check_values(observations)
        history = self._usable_history(space, observations)
        model, _ = self._fit(
            history, ModelSetBuilder(FitPolicy(warm_start=False)), np.random.default_rng(0)
        )
        if model is None:
            raise ValueError(
                "No complete, failed or pruned observation over this search space: nothing to "
                "infer from yet."
            )
        return model

    def target_probability(
        self,
        space: SearchSpace,
        observations: Sequence[Observation],
        configs: Sequence[Mapping[str, Any]],
    ) -> np.ndarray:
        """``μ_c``: the posterior probability of the target outcome (value 0) at ``configs``.

        Raises
        ------
        ValueError
            As :meth:`fit_model`, or for a configuration outside ``space``.
        """
        model = self.fit_model(space, observations)
        u = space.snap(space.encode(list(configs)))
        return UCBPhi(model, beta=0.0)(space.features(u))

    def inferred_best(
        self, space: SearchSpace, observations: Sequence[Observation]
    ) -> dict[str, Any]:
        """The configuration most likely to give the target outcome: ``argmax μ_c``.

        ``μ_c(x) = Φ(μ_f(x) / sqrt(1 + σ_f²(x)))`` of :meth:`fit_model` is maximised over the
        whole space with the mixed-space optimiser (from Sobol candidates and the labelled
        points with the largest ``μ_c``); evaluated configurations are allowed. This is what to
        report, rather than an observation that happened to give the target outcome.

        Raises
        ------
        ValueError
            As :meth:`fit_model`.
        """
        model = self.fit_model(space, observations)
        history = self._usable_history(space, observations)
        labelled = _labelled(history)
        (u,) = maximize_over_space(
            [UCBPhi(model, beta=0.0)],
            space,
            np.random.default_rng(0),
            lengthscales=np.asarray(model.lengthscales_, dtype=float),
            anchors=_anchors(model, history.u[labelled], space),
            n_candidates=self.n_candidates,
            n_local=self.n_restarts,
        )
        return space.decode(u[None, :])[0]

    # ------------------------------------------------------------------ helpers
    def _usable_history(self, space: SearchSpace, observations: Sequence[Observation]) -> History:
        return self.usable_history(history_from_observations(space, observations))

    def _fit(
        self, history: History, builder: ModelSetBuilder, rng: np.random.Generator
    ) -> tuple[GaussianProcessClassifier | None, np.ndarray]:
        """The probit classifier of the labelled rows (or None without any), and their mask.

        In a long study the classifier is fitted on at most ``builder.policy.max_fit_rows``
        of them (:func:`~bore_samplers.models.model_set.fit_rows`); the mask then marks those.
        """
        labelled = _labelled(history)
        if not labelled.any():
            return None, labelled
        subset = fit_rows(history, builder.policy.max_fit_rows)
        n_observed = None
        if subset is not None:
            n_observed = int(labelled.sum())
            labelled = np.isin(np.arange(len(history)), subset) & labelled
        space = history.space
        # Target outcome (value 0) is class 1; failed and pruned rows (kept only when "bad")
        # are class 0.
        labels = (history.mask(TrialState.COMPLETE) & (history.values == 0.0))[labelled]
        model_class = functools.partial(_ProbitClassifier, approximation=self.approximation)
        # The model-set builder's fit: warm starts, full refits as the data grow, a cache.
        model = builder._fit(
            model_class,
            f"binary:{self.approximation}",
            space,
            space.features(history.u[labelled]),
            labels.astype(float),
            rng,
            n_observed,
        )
        return model, labelled


def _labelled(history: History) -> np.ndarray:
    """Rows with an outcome: COMPLETE, FAILED and PRUNED ones (a usable history has no rows
    left of the states its proposer ignores)."""
    return history.mask(TrialState.COMPLETE, TrialState.FAILED, TrialState.PRUNED)


def _anchors(model: GaussianProcessClassifier, u: np.ndarray, space: SearchSpace) -> np.ndarray:
    """The labelled unit points with the largest ``μ_c``, best first."""
    if not len(u):
        return np.empty((0, space.n_dims))
    scores = UCBPhi(model, beta=0.0)(space.features(u))
    return u[np.argsort(-scores, kind="stable")[:_N_ANCHORS]]


def _check_values(observations: Sequence[Observation]) -> None:
    """Raise ``ValueError`` naming the first COMPLETE value that is neither 0 nor 1."""
    for observation in observations:
        value = observation.value
        if observation.state is not TrialState.COMPLETE or value is None or math.isnan(value):
            continue  # NaN makes the observation FAILED
        if value not in (0.0, 1.0):
            raise ValueError(
                f"BinaryOutcomeProposer needs values 0 (the target outcome) or 1, got {value!r} "
                f"for the configuration {dict(observation.params)!r}. A study that maximises "
                "a 0/1 outcome passes 1 - outcome (BinaryOutcomeSampler and BinaryOutcomeSearch "
                "translate, and can threshold other numbers)."
            )
