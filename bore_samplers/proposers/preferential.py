"""Preferential Bayesian optimisation by the Maximally Uncertain Challenge, as a proposer.

Fauvel & Chalk, *Efficient Exploration in Binary and Preferential Bayesian Optimization*
(arXiv preprint, 2021), sections 4.2-4.3. A person compares configurations instead of scoring
them; a duel ``x ≻ x'`` is won with probability ``Φ(f(x) - f(x'))`` (eq. 4), and ``f`` is
learnt by the probit preference GP of :class:`~bore_samplers.models.preference.PreferenceGP`
(the preference-function kernel of eq. 5-6).

The setting is that of a comparison screen (optuna-dashboard's preferential studies): some
trials are *shown*, the person marks one of them as the worst (one duel per other shown trial),
the worst leaves the screen and a new trial takes its place. This proposer fills the empty
places.

Notation
--------
``configs``
    The configurations of the study's trials (plain parameter dicts), indexed ``0 .. n-1``;
    the same configuration may appear several times (a re-shown trial).
``duels``
    ``(winner, loser)`` pairs of indices into ``configs``.
``shown``
    Indices of the configurations on the screen now, which the new trials will meet.
observed points
    The configurations in a duel or on the screen.

The rule
--------
1. **Start-up.** Without a duel there is no model: scrambled Sobol points (continuing the
   sequence after the ``n`` configurations so far, never repeating one), mapped into the
   interior box (``margin``, below).
2. **Champion** (eq. 15): ``x₁ = argmax μ_f`` over the space (``champion="space"``, the
   paper's; the mixed-space optimiser started at the best observed point) or over the observed
   points (``champion="observed"``). Every duel of the paper has the champion as one member; on
   a screen whose survivors stay, the champion is *on the screen* when a shown trial is as good
   by the model. If none is, the next new trial is the champion. ``"space"``: on the screen
   unless the model gives the champion probability above ``champion_margin`` (0.6) of beating
   every shown trial, ``P(x₁ ≻ x_j) = Φ(μ_g / sqrt(1 + σ_g²))``; ``"observed"``: unless it is
   one of the shown trials (it is then shown again).
3. **Challengers.** Otherwise the new trial maximises the epistemic variance of its duels with
   the trials on the screen, ``Σ_j V[Φ(f(x_j) - f(x))]`` (:class:`~bore_samplers.acquisitions.
   binary.BatchUncertainChallenge`). With one trial shown (``n_generate = 2``) the survivor is
   the champion and this is the Maximally Uncertain Challenge of eq. 16; with more it is
   eq. 20, the sum over every pair the new trial forms, chosen greedily one trial at a time
   (the pairs among trials already on the screen are constants). :meth:`PreferentialProposer.
   propose_batch` also offers the joint maximisation of eq. 20 over several new trials.

Interior and spacing
--------------------
The epistemic variance of a duel grows with the posterior variance of ``f``, which grows with
the distance to the data: on a box it peaks on the faces and above all at the corners, so the
unconstrained maximiser (L-BFGS on the unit cube) drives challengers onto the bounds, and two
such extreme configurations often look alike to a person (a colour at the lowest lightness is
black whatever its hue) although they are far apart in the cube. Two guards, on by default:

* ``margin``: challengers (and start-up points) are sought in the box shrunk by ``margin`` on
  every continuous unit coordinate, ``[margin, 1 - margin]`` (the acquisition is maximised
  over ``u' = margin + (1 - 2 margin) u``); the champion still ranges over the whole box.
  ``margin=0`` is the paper's whole box.
* ``min_distance``: a challenger lies at least ``min_distance`` (Euclidean, unit cube) from
  every configuration compared or on the screen and from the other new trials, so no card
  is a near-copy of another; the best-scoring point that keeps the distance is taken, and
  only if none of the points the optimiser scored does, the best one. ``0`` turns it off.
  (``batch="joint"`` then moves the challengers within the interior box without this check.)

``acquisition="thompson"`` (an ablation and the benchmark's dueling-Thompson baseline) keeps
the champion rule but makes each challenger the maximiser of one posterior sample of ``f``
(González et al., *Preferential Bayesian Optimization*, ICML 2017; Benavoli et al.,
*Preferential Bayesian optimisation with skew Gaussian processes*, GECCO 2021 companion).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bore_samplers.acquisitions.base import Acquisition, UnitCubeScore
from bore_samplers.acquisitions.binary import (
    BatchUncertainChallenge,
    UCBLatent,
    epistemic_variance,
    thompson_sample,
)
from bore_samplers.models.gp_classification import GPClassifierHyperparameters
from bore_samplers.models.preference import PreferenceGP
from bore_samplers.optimizers import maximize_over_space, select_distinct
from bore_samplers.proposers.base import ProposalSource, SeededRandomness, one_blas_thread
from bore_samplers.space import SearchSpace
from bore_samplers.validation import check_choice, check_float, check_int, check_seed

__all__ = [
    "PreferenceData",
    "PreferentialProposal",
    "PreferentialProposer",
    "batch_uncertainty",
    "duels_and_screen",
]

ACQUISITIONS = ("muc", "thompson")
BATCH_MODES = ("greedy", "joint")
Role = Literal["startup", "champion", "challenger"]


@dataclass(frozen=True)
class PreferenceData:
    """The duels of a preferential study, as the proposer sees them.

    Attributes
    ----------
    numbers
        Trial numbers of ``configs``, in order.
    configs
        The parameters of every trial in a kept duel or on the screen.
    duels
        ``(winner, loser)`` pairs of indices into ``configs``.
    shown
        Indices of the trials on the screen: active (in optuna-dashboard's preferential
        studies: RUNNING or COMPLETE, not skipped) and never reported worse.
    """

    numbers: list[int]
    configs: list[dict[str, Any]]
    duels: list[tuple[int, int]]
    shown: list[int]


def duels_and_screen(
    preferences: Sequence[tuple[int, int]],
    active: Iterable[int],
    usable: Callable[[int], bool],
    params: Callable[[int], dict[str, Any]],
) -> PreferenceData:
    """The reported ``(better, worse)`` trial numbers as the proposer takes them.

    Duels between two distinct ``usable`` trials are kept; the ``active`` trials that are
    usable and never reported worse are on the screen. Configurations (``params`` of a trial
    number) are indexed in order of first appearance, duels first.
    """
    index: dict[int, int] = {}
    numbers: list[int] = []

    def position(number: int) -> int:
        if number not in index:
            index[number] = len(numbers)
            numbers.append(number)
        return index[number]

    duels = [
        (position(b), position(w)) for b, w in preferences if b != w and usable(b) and usable(w)
    ]
    worse = {w for _, w in preferences}
    shown = [position(number) for number in active if number not in worse and usable(number)]
    configs = [params(number) for number in numbers]
    return PreferenceData(numbers, configs, duels, shown)


@dataclass(frozen=True)
class PreferentialProposal:
    """One new trial: its configuration and why it was chosen.

    Attributes
    ----------
    params
        The configuration, plain Python values valid in the space.
    role
        ``"startup"`` (a Sobol point, no duel yet), ``"champion"`` (``argmax μ_f``, brought
        to the screen) or ``"challenger"``.
    """

    params: dict[str, Any]
    role: Role

    @property
    def source(self) -> ProposalSource:
        """Where it came from, as for :class:`~bore_samplers.proposers.base.Proposal`: the
        start-up design, or the model (a champion or a challenger)."""
        return "start-up" if self.role == "startup" else "model"


def batch_uncertainty(model: PreferenceGP, features: np.ndarray, fixed: int = 0) -> float:
    """Eq. 20's objective: ``Σ_{i<j} V[Φ(f(x_i) - f(x_j))]`` over the pairs of a batch.

    Pairs between two of the first ``fixed`` rows (trials already on the screen) are left out:
    they are constants of the choice of the others.
    """
    features = np.atleast_2d(features)
    rows_i, rows_j = np.triu_indices(len(features), k=1)
    keep = rows_j >= fixed
    if not keep.any():
        return 0.0
    mean, var = model.predict_duel(features[rows_i[keep]], features[rows_j[keep]])
    return float(np.sum(epistemic_variance(mean, var)[0]))


class PreferentialProposer(SeededRandomness):
    """Proposes the trials a person compares next, by the Maximally Uncertain Challenge.

    Framework-free: it sees configurations, duels between them and the indices of those on the
    screen (see the module notes for the notation and the rule). The preference GP is refitted
    at every call, warm-started from the previous hyperparameters.

    Parameters
    ----------
    acquisition
        ``"muc"`` (default): challengers maximise the epistemic variance of their duels with
        the trials on the screen (eq. 16, eq. 20). ``"thompson"``: the maximiser of one
        posterior sample of ``f`` (the dueling-Thompson baseline).
    batch
        How :meth:`propose_batch` picks several new trials: ``"greedy"`` (one at a time, each
        joining the screen) or ``"joint"`` (eq. 20 maximised over all of them at once by
        L-BFGS-B on their continuous coordinates, started from the greedy batch and from
        random batches; discrete coordinates keep their greedy values).
    approximation
        Posterior approximation of the preference GP: ``"laplace"`` or ``"ep"`` (the paper's).
    n_candidates, n_restarts
        Sobol candidates scored by the acquisition optimiser, and its local searches.
    champion
        Where the champion ``argmax μ_f`` is sought: ``"space"`` (default, eq. 15) or
        ``"observed"`` (the trials compared or shown); see the module notes.
    champion_margin
        With ``champion="space"``, the champion joins the screen when the model gives it at
        least this probability of beating every trial shown (in ``[0.5, 1)``).
    margin
        Challengers and start-up points keep this far from the bounds of every continuous
        unit coordinate (in ``[0, 0.5)``; default 0.05); see the module notes.
    min_distance
        Least Euclidean distance in the unit cube between a challenger and every configuration
        compared, on the screen or new (default 0.1; ``0``: none); see the module notes.
    n_fit_restarts
        Random restarts of the hyperparameter fit (L-BFGS-B on the Laplace or EP marginal
        likelihood) besides its first start, the previous call's hyperparameters.
    seed
        Seed of the proposer's random generator (``None``: nondeterministic).

    Examples
    --------
    >>> from bore_samplers.space import FloatParam, SearchSpace
    >>> space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    >>> proposer = PreferentialProposer(seed=0)
    >>> configs = [{"x": 0.2, "y": 0.3}, {"x": 0.7, "y": 0.9}]
    >>> new = proposer.propose(space, configs, duels=[(1, 0)], shown=[1])
    >>> new.role
    'challenger'
    """

    name = "preferential"

    def __init__(
        self,
        *,
        acquisition: Literal["muc", "thompson"] = "muc",
        batch: Literal["greedy", "joint"] = "greedy",
        approximation: Literal["laplace", "ep"] = "laplace",
        n_candidates: int = 1024,
        n_restarts: int = 5,
        n_fit_restarts: int = 1,
        champion: Literal["space", "observed"] = "space",
        champion_margin: float = 0.6,
        margin: float = 0.05,
        min_distance: float = 0.1,
        seed: int | None = None,
    ) -> None:
        self.acquisition = acquisition
        self.batch = batch
        self.approximation = approximation
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts
        self.n_fit_restarts = n_fit_restarts
        self.champion = champion
        self.champion_margin = champion_margin
        self.margin = margin
        self.min_distance = min_distance
        self.seed = seed
        self._rng: np.random.Generator | None = None
        self._sobol_seed: int | None = None
        self._warm: tuple[int, GPClassifierHyperparameters] | None = None

    # ------------------------------------------------------------------ settings and seeds
    def validate(self) -> None:
        """Raise :class:`~bore_samplers.validation.InvalidOptionError` (a ``ValueError``) on
        invalid settings, building nothing."""
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_choice("batch", self.batch, BATCH_MODES)
        check_choice("approximation", self.approximation, ("laplace", "ep"))
        check_choice("champion", self.champion, ("space", "observed"))
        check_float("champion_margin", self.champion_margin, low=0.5, high=1.0, high_open=True)
        check_float("margin", self.margin, low=0.0, high=0.5, high_open=True)
        check_float("min_distance", self.min_distance, low=0.0)
        for name in ("n_candidates", "n_restarts"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("n_fit_restarts", self.n_fit_restarts, minimum=0)
        check_seed("seed", self.seed)

    # ------------------------------------------------------------------ model
    def fit(
        self,
        space: SearchSpace,
        configs: Sequence[Mapping[str, Any]],
        duels: Sequence[tuple[int, int]],
        rng: np.random.Generator | None = None,
    ) -> PreferenceGP:
        """The preference GP of ``duels`` between ``configs`` (see the module notation).

        Warm-started from the previous fit's hyperparameters. With ``rng`` (a generator other
        than the proposer's), the fit leaves the proposer's state alone: neither its random
        stream nor the warm start moves, so inspecting a study does not change what it
        proposes next.

        Raises
        ------
        ValueError
            Without a duel, or for a duel index outside ``configs``.
        """
        pairs = np.asarray(duels, dtype=int).reshape(-1, 2)
        if len(pairs) == 0:
            raise ValueError("Need at least one duel to fit a preference model.")
        if pairs.min() < 0 or pairs.max() >= len(configs):
            raise ValueError(f"Duel indices must lie in [0, {len(configs)}), got {duels!r}.")
        features = space.features(space.encode(list(configs)))
        width = features.shape[1]
        warm = self._warm[1] if self._warm is not None and self._warm[0] == width else None
        model = PreferenceGP(
            space.feature_columns(),
            approximation=self.approximation,
            n_restarts=self.n_fit_restarts,
            seed=int((self.rng if rng is None else rng).integers(2**31)),
        )
        model.fit(features[pairs[:, 0]], features[pairs[:, 1]], warm_start=warm)
        if rng is None:
            self._warm = (width, model.hyperparameters_)
        return model

    # ------------------------------------------------------------------ proposals
    def propose(
        self,
        space: SearchSpace,
        configs: Sequence[Mapping[str, Any]],
        duels: Sequence[tuple[int, int]],
        shown: Sequence[int] = (),
    ) -> PreferentialProposal:
        """The next new trial to show beside ``configs[shown]`` (one place on the screen)."""
        return self.propose_batch(space, configs, duels, shown, n_new=1)[0]

    def propose_batch(
        self,
        space: SearchSpace,
        configs: Sequence[Mapping[str, Any]],
        duels: Sequence[tuple[int, int]],
        shown: Sequence[int] = (),
        n_new: int = 1,
    ) -> list[PreferentialProposal]:
        """``n_new`` new trials to show beside ``configs[shown]``.

        The champion comes first if it is not on the screen; the rest are challengers chosen
        greedily or jointly (``batch``). BLAS runs on one thread meanwhile (small matrices).
        """
        self.validate()
        if n_new < 1:
            raise ValueError(f"n_new must be >= 1, got {n_new}.")
        shown = [int(i) for i in shown]
        if any(not 0 <= i < len(configs) for i in shown):
            raise ValueError(f"shown indices must lie in [0, {len(configs)}), got {shown}.")
        u = space.encode(list(configs)) if len(configs) else np.empty((0, space.n_dims))
        if len(duels) == 0:
            start = space.decode(self._startup(space, u, n_new))
            return [PreferentialProposal(params, "startup") for params in start]
        with one_blas_thread():
            model = self.fit(space, configs, duels)
            observed = sorted({int(i) for pair in duels for i in pair} | set(shown))
            mean, _ = model.predict_latent(space.features(u[observed]))
            champion = observed[int(np.argmax(mean))]
            on_screen = [space.snap(u[i : i + 1])[0] for i in shown]
            new: list[tuple[np.ndarray, Role]] = []
            if self.champion == "observed":
                if not any(np.allclose(point, u[champion]) for point in on_screen):
                    new.append((space.snap(u[champion : champion + 1])[0], "champion"))
            else:
                best = self._maximize(
                    UCBLatent(model, beta=0.0), model, space, None, u[champion][None], self.rng
                )
                beats = (
                    model.predict_preference(
                        space.features(best[None, :]), space.features(np.array(on_screen))
                    )
                    if on_screen
                    else np.ones(1)
                )
                if np.min(beats) > self.champion_margin:
                    new.append((best, "champion"))
            while len(new) < n_new:
                fixed = np.array(on_screen + [point for point, _ in new]).reshape(-1, space.n_dims)
                new.append((self._challenger(model, space, u, fixed), "challenger"))
            if self.batch == "joint" and self.acquisition == "muc":
                new = self._joint(model, space, on_screen, new)
        params = space.decode(np.array([point for point, _ in new]))
        return [PreferentialProposal(p, role) for p, (_, role) in zip(params, new, strict=True)]

    def inferred_best(
        self,
        space: SearchSpace,
        configs: Sequence[Mapping[str, Any]],
        duels: Sequence[tuple[int, int]],
        over: Literal["observed", "space"] = "observed",
    ) -> dict[str, Any]:
        """The configuration with the largest posterior mean utility, ``argmax μ_f``.

        Parameters
        ----------
        over
            ``"observed"`` (default): among the configurations in a duel, which the person has
            seen; ``"space"``: over the whole space (the optimiser, started around them).
        """
        if over not in ("observed", "space"):
            raise ValueError(f"over must be 'observed' or 'space', got {over!r}.")
        # A generator of its own: asking for the answer does not change later proposals.
        rng = np.random.default_rng(self.seed)
        with one_blas_thread():
            model = self.fit(space, configs, duels, rng)
            u = space.encode(list(configs))
            observed = sorted({int(i) for pair in duels for i in pair})
            mean, _ = model.predict_latent(space.features(u[observed]))
            best = u[observed[int(np.argmax(mean))]]
            if over == "space":
                # μ_f is UCB with β = 0.
                best = self._maximize(
                    UCBLatent(model, beta=0.0), model, space, None, best[None], rng
                )
        return space.decode(best[None, :])[0]

    # ------------------------------------------------------------------ internals
    def _startup(self, space: SearchSpace, u: np.ndarray, n_new: int) -> np.ndarray:
        """Next points of a scrambled Sobol sequence in the interior box, none a repeat."""
        if self._sobol_seed is None:
            self._sobol_seed = int(self.rng.integers(2**31))
        points: list[np.ndarray] = []
        for _ in range(n_new):
            taken = np.vstack([u, *points]) if points else u
            candidates = _Interior(space, self.margin).to_outer(
                space.sample_sobol(8, seed=self._sobol_seed, skip=len(taken))
            )
            points.append(select_distinct(candidates, -np.arange(8.0), taken)[None, :])
        return np.vstack(points)

    def _challenger(
        self, model: PreferenceGP, space: SearchSpace, u: np.ndarray, fixed: np.ndarray
    ) -> np.ndarray:
        """The best challenger in the interior box, ``min_distance`` from ``u`` and ``fixed``."""
        acquisition: Acquisition
        if self.acquisition == "thompson":
            acquisition = thompson_sample(model, self.rng)
        else:
            acquisition = BatchUncertainChallenge(model, space.features(fixed))
        interior = _Interior(space, self.margin)
        taken = np.vstack([u, fixed])
        # The optimiser searches u in [0, 1]; the acquisition sees the interior point. A
        # distance in u is at least the distance between the interior points over the
        # shrink factor, so the radius in u is min_distance over it.
        inner = maximize_over_space(
            [acquisition],
            space,
            self.rng,
            exclude=interior.to_inner(taken, clip=True),
            keep_away=interior.to_inner(taken),
            radii=[self.min_distance / interior.scale],
            lengthscales=np.asarray(model.lengthscales_, dtype=float) / interior.scale,
            anchors=interior.to_inner(fixed, clip=True),
            n_candidates=self.n_candidates,
            n_local=self.n_restarts,
            reparametrize=interior.wrap,
        )[0]
        return space.snap(interior.to_outer(inner[None, :]))[0]

    def _maximize(
        self,
        acquisition: Acquisition,
        model: PreferenceGP,
        space: SearchSpace,
        exclude: np.ndarray | None,
        anchors: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        # One lengthscale group per parameter (feature_columns): one per unit coordinate.
        (u,) = maximize_over_space(
            [acquisition],
            space,
            rng,
            exclude=exclude,
            lengthscales=np.asarray(model.lengthscales_, dtype=float),
            anchors=anchors,
            n_candidates=self.n_candidates,
            n_local=self.n_restarts,
        )
        return u

    def _joint(
        self,
        model: PreferenceGP,
        space: SearchSpace,
        on_screen: list[np.ndarray],
        new: list[tuple[np.ndarray, Role]],
    ) -> list[tuple[np.ndarray, Role]]:
        """Eq. 20 maximised jointly over the challengers' continuous coordinates."""
        movable = [k for k, (_, role) in enumerate(new) if role == "challenger"]
        continuous = np.flatnonzero(space.continuous_mask)
        if len(movable) < 2 or continuous.size == 0:
            return new
        base = np.array(on_screen + [point for point, _ in new]).reshape(-1, space.n_dims)
        rows = len(on_screen) + np.array(movable)
        fixed = len(on_screen) + (1 if new[0][1] == "champion" else 0)
        objective = _JointUncertainty(model, space, base, rows, continuous, fixed)
        # Within the interior box (the greedy challengers already are).
        low, high = self.margin, 1.0 - self.margin
        starts = [np.clip(base[rows][:, continuous].ravel(), low, high)]
        for _ in range(self.n_restarts - 1):
            starts.append(low + (high - low) * self.rng.random(len(rows) * continuous.size))
        best_z, best_value = starts[0], objective.value(starts[0])
        bounds = [(low, high)] * len(starts[0])
        for z0 in starts:
            import scipy.optimize  # lazy: imported only for the inferred best

            result = scipy.optimize.minimize(
                objective.negative, z0, jac=True, method="L-BFGS-B", bounds=bounds
            )
            value = objective.value(result.x)
            if value > best_value:
                best_z, best_value = result.x, value
        points = objective.points(best_z)
        out = list(new)
        for k, row in zip(movable, rows, strict=True):
            out[k] = (points[row], "challenger")
        return out


class _Interior:
    """The box shrunk by ``margin`` on every continuous unit coordinate, as an affine map.

    ``to_outer`` maps the unit cube onto the interior box (``u' = margin + (1 - 2 margin) u``
    on the continuous coordinates, the others unchanged); ``to_inner`` is its inverse;
    ``wrap`` makes an acquisition on unit points one on the cube the optimiser searches.
    """

    def __init__(self, space: SearchSpace, margin: float) -> None:
        self.mask = np.asarray(space.continuous_mask, dtype=bool)
        self.margin = float(margin)
        self.scale = 1.0 - 2.0 * self.margin

    def to_outer(self, u: np.ndarray) -> np.ndarray:
        """Points of the unit cube mapped into the interior box."""
        out = np.array(u, dtype=float, copy=True)
        out[..., self.mask] = self.margin + self.scale * out[..., self.mask]
        return out

    def to_inner(self, u: np.ndarray, clip: bool = False) -> np.ndarray:
        """The inverse of :meth:`to_outer`; with ``clip``, points outside land on the bounds."""
        out = np.array(u, dtype=float, copy=True)
        out[..., self.mask] = (out[..., self.mask] - self.margin) / self.scale
        return np.clip(out, 0.0, 1.0) if clip else out

    def wrap(self, acquisition: UnitCubeScore) -> _OnInterior:
        """``acquisition`` evaluated at ``to_outer(u)``, with the gradient by the chain rule."""
        return _OnInterior(acquisition, self)


class _OnInterior:
    """An acquisition on unit points, read through :class:`_Interior`'s map."""

    def __init__(self, acquisition: UnitCubeScore, interior: _Interior) -> None:
        self.acquisition = acquisition
        self.interior = interior

    def __call__(self, u: np.ndarray) -> np.ndarray:
        return self.acquisition(self.interior.to_outer(np.atleast_2d(u)))

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, grad = self.acquisition.value_and_grad(self.interior.to_outer(np.atleast_2d(u)))
        grad = np.array(grad, dtype=float, copy=True)
        grad[:, self.interior.mask] *= self.interior.scale
        return values, grad


class _JointUncertainty:
    """Eq. 20 as a function of the stacked continuous coordinates of the challengers."""

    def __init__(
        self,
        model: PreferenceGP,
        space: SearchSpace,
        base: np.ndarray,
        rows: np.ndarray,
        continuous: np.ndarray,
        fixed: int,
    ) -> None:
        self.model = model
        self.space = space
        self.base = base
        self.rows = rows
        self.continuous = continuous
        columns = space.feature_columns()
        self.columns = np.array([columns[j][0] for j in continuous], dtype=int)
        self.fixed = fixed
        pairs_i, pairs_j = np.triu_indices(len(base), k=1)
        keep = pairs_j >= fixed
        self.pairs = (pairs_i[keep], pairs_j[keep])

    def points(self, z: np.ndarray) -> np.ndarray:
        points = self.base.copy()
        points[np.ix_(self.rows, self.continuous)] = np.clip(
            z.reshape(len(self.rows), -1), 0.0, 1.0
        )
        return self.space.snap(points)

    def value(self, z: np.ndarray) -> float:
        return batch_uncertainty(self.model, self.space.features(self.points(z)), self.fixed)

    def negative(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        features = self.space.features(self.points(z))
        first, second = self.pairs
        total, grad = 0.0, np.zeros_like(features)
        # The duel's variance is symmetric in its orientation, so the gradient with respect to
        # its first member is that of the reversed duel with respect to its second.
        for k, (a, b) in enumerate(((first, second), (second, first))):
            mean, var, mean_grad, var_grad = self.model.predict_duel_with_grad(
                features[a], features[b]
            )
            value, d_mean, d_var = epistemic_variance(mean, var)
            if k == 0:
                total = float(np.sum(value))
            np.add.at(grad, b, d_mean[:, None] * mean_grad + d_var[:, None] * var_grad)
        unit_grad = grad[np.ix_(self.rows, self.columns)]
        if not math.isfinite(total):
            return 0.0, np.zeros(unit_grad.size)
        return -total, -unit_grad.ravel()
