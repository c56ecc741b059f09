"""Ray Tune searchers: thin adapters from Tune trials to the framework-free proposers.

A searcher translates a Tune ``param_space`` into a core :class:`~bore_samplers.SearchSpace`
(:func:`search_space_from_tune`) and every trial it knows into an
:class:`~bore_samplers.Observation`; it holds no algorithm. Each :meth:`~_ProposerSearch.suggest`
hands the proposer all observations: finished trials, and trials still in flight as RUNNING
observations with the configuration proposed for them and the proposer's record, so that
concurrent trials (``max_concurrent_trials``, ``ConcurrencyLimiter``) spread out instead of
repeating each other.

How each Tune outcome enters the model
--------------------------------------
* Suggested and not finished: RUNNING, with its proposed params and the proposer's record.
* ``on_trial_complete`` with a finite metric: COMPLETE; the value is the metric (negated for
  ``mode="max"``: values are minimised), the duration is the result's ``time_total_s``.
* The same, but stopped by a scheduler or stopper (ASHA, HyperBand) at a smaller
  ``training_iteration`` than the largest any finished trial reached: PRUNED, with its last
  metric as value.
* ``on_trial_complete(error=True)`` (the trainable raised): FAILED, no value.
* A final result without the metric, or with NaN: FAILED, no value. (Tune itself aborts the
  run on a result without the metric unless ``TUNE_DISABLE_STRICT_METRIC_CHECKING=1``.)
* Stopped while paused (``result=None, error=False``; synchronous HyperBand stops the trials it
  paused this way): its last reported result counts, as for a trial stopped by a scheduler
  (below). Stopped while pending, before reporting anything: dropped, it was never evaluated.
* ``points_to_evaluate``: suggested first, exactly as given; then as any other trial.
* ``evaluated_rewards`` and :meth:`~_ProposerSearch.add_evaluated_point`: COMPLETE (FAILED
  for ``error=True`` or a NaN value, PRUNED for ``pruned=True``).

"Stopped by a scheduler" is read from the calls Tune makes: Tune does not pass a result on
which the scheduler decides STOP to ``on_trial_result``, so a final result whose
``training_iteration`` is past the last one seen there was cut short. Such a trial counts as
COMPLETE when it reached the largest ``training_iteration`` of any finished trial (ASHA's
``max_t``, or a ``stop={"training_iteration": n}`` criterion) and as PRUNED otherwise; the rule
is re-applied at every suggestion, so a value cut short is never ranked against full-length
ones. A trial that returns on its own, after however many iterations, is COMPLETE. (A
per-trial stopper on a metric threshold also stops trials early: those count as PRUNED.)

BORE labels PRUNED and FAILED trials "not good" (class 0) and keeps away from RUNNING ones;
cMES and the portfolio leave PRUNED trials out, learn FAILED ones as binary infeasible
feedback and condition their GPs on RUNNING ones (Kriging believer). See
:mod:`bore_samplers.proposers.bore`, :mod:`bore_samplers.proposers.cmes` and
:mod:`bore_samplers.proposers.portfolio`.
"""

from __future__ import annotations

import logging
import math
import pickle
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from ray import cloudpickle
from ray.tune.search import Searcher
from ray.tune.search.sample import (
    Categorical,
    Domain,
    Float,
    Integer,
    LogUniform,
    Quantized,
    Uniform,
)

from bore_samplers.acquisitions.density_ratio import GammaSchedule
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.base import Fallback, ModelFallbackWarning, Proposer, safe_propose
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio.proposer import DEFAULT_PORTFOLIO, PortfolioProposer
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace

__all__ = [
    "BORESearch",
    "CMESSearch",
    "ModelFallbackWarning",
    "PortfolioSearch",
    "TuneParam",
    "TuneSearchSpace",
    "search_space_from_tune",
]

_DELIMITER = "/"
# Under Ray Tune's logger, so that Tune's logging configuration applies.
_logger = logging.getLogger("ray.tune.search.bore_samplers")


# --------------------------------------------------------------------------- search space
@dataclass(frozen=True)
class TuneParam:
    """One Tune domain as a core parameter, and how values cross between the two.

    Parameters
    ----------
    param
        The core parameter the proposers search over.
    codec
        How a core value becomes a Tune value: ``"value"`` (unchanged), ``"grid"`` (a float
        on a ``q`` grid, rounded as Tune rounds it: ``round(v / q) * q``), ``"index"`` (the core
        value is the grid index ``k`` of the Tune value ``k * q``: log-scaled quantized domains,
        which the core cannot express directly) or ``"choice"`` (the core value is the index
        of a category, so that any Python object round-trips).
    q
        The quantization step for ``"grid"`` and ``"index"``.
    categories
        The categories of a ``"choice"``.
    integer
        Whether Tune casts the values of an ``"index"`` parameter to ``int``.
    """

    param: Param
    codec: Literal["value", "grid", "index", "choice"] = "value"
    q: float = 1
    categories: tuple[Any, ...] = ()
    integer: bool = False

    def to_tune(self, value: Any) -> Any:
        """A core value -> the value Tune's own sampler would have produced."""
        if self.codec == "grid":
            return float(round(value / self.q) * self.q)
        if self.codec == "index":
            return int(value * self.q) if self.integer else float(value * self.q)
        if self.codec == "choice":
            return self.categories[value]
        return value

    def to_core(self, value: Any, name: str) -> Any:
        """A Tune value (a point given by the user) -> the core value.

        Raises
        ------
        ValueError
            If ``value`` is not one of the categories of a choice.
        """
        if self.codec == "index":
            return int(round(float(value) / self.q))
        if self.codec == "choice":
            return _category_index(self.categories, value, name)
        return value


@dataclass(frozen=True)
class TuneSearchSpace:
    """A Tune ``param_space`` translated for the proposers (see :func:`search_space_from_tune`).

    Parameters
    ----------
    space
        The core search space; nested keys are flattened to ``"a/b"``.
    params
        Flat name -> :class:`TuneParam`, in the order of ``space``.
    paths
        Flat name -> key path of the parameter in the nested ``param_space``.
    constants
        Key path -> value of everything in ``param_space`` that is not a domain.
    """

    space: SearchSpace
    params: dict[str, TuneParam]
    paths: dict[str, tuple[Any, ...]]
    constants: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    def to_config(
        self, params: Mapping[str, Any], given: Mapping[str, Any] | None = None
    ) -> dict[Any, Any]:
        """The nested Tune config of core ``params``, with the constants.

        ``given`` (flat name -> Tune value) overrides the translated values: a point of
        ``points_to_evaluate`` is passed on exactly as the user wrote it.
        """
        given = given or {}
        config: dict[Any, Any] = {}
        for path, value in self.constants.items():
            _set_path(config, path, value)
        for name, param in self.params.items():
            value = given[name] if name in given else param.to_tune(params[name])
            _set_path(config, self.paths[name], value)
        return config

    def read_point(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The Tune values of a user-given configuration (nested or with ``"a/b"`` keys).

        Parameters missing from ``point`` are left out; constants are ignored.

        Raises
        ------
        ValueError
            For a key that is neither a parameter nor a constant.
        """
        known = set(self.params) | {_DELIMITER.join(map(str, p)) for p in self.constants}
        unknown = [k for k in _flat_keys(point, self.paths.values()) if k not in known]
        if unknown:
            raise ValueError(
                f"Unknown parameter(s) {unknown} in {dict(point)!r}; the search space has "
                f"{sorted(self.params)}."
            )
        values = {}
        for name, path in self.paths.items():
            found, value = _lookup(point, name, path)
            if found:
                values[name] = value
        return values


def search_space_from_tune(config: Mapping[str, Any]) -> TuneSearchSpace:
    """Translate a Tune ``param_space`` into a core :class:`SearchSpace`.

    Nested dicts are flattened to ``"a/b"`` names; everything that is not a domain is a
    constant, passed through to every suggested configuration. Bounds follow what Tune's own
    samplers produce (``ray/tune/search/sample.py``), so no proposal is a value that the
    domain itself could not have drawn:

    * ``uniform(l, u)``: ``FloatParam(l, u⁻)``, ``u⁻`` the float just below ``u`` (Tune draws
      from ``[l, u)``); ``loguniform(l, u)``: the same with ``log=True``.
    * ``quniform(l, u, q)``: ``FloatParam(l, u, step=q)``, values rounded to the multiples of
      ``q`` as Tune rounds them (``u`` included).
    * ``qloguniform(l, u, q)``: the grid index ``k`` of the value ``k·q``, as
      ``IntParam(l/q, u/q, log=True)`` (the core has no log-scaled stepped floats).
    * ``randint(l, u)``, ``qrandint(l, u, 1)``: ``IntParam(l, u - 1)`` (Tune excludes ``u``);
      ``lograndint(l, u)``, ``qlograndint(l, u, 1)``: the same with ``log=True``.
    * ``qrandint(l, u, q)`` with ``q > 1``: the multiples of ``q`` in ``[l, u]``, both bounds
      included, as ``IntParam(⌈l/q⌉·q, ⌊u/q⌋·q, step=q)``.
    * ``qlograndint(l, u, q)`` with ``q > 1``: the grid index, ``IntParam(⌈l/q⌉, ⌊u/q⌋,
      log=True)``.
    * ``choice(c)``: ``CategoricalParam((0, ..., len(c) - 1))``, the index of the category, so
      that any object (``None``, tuples, arrays) round-trips.
    * ``grid_search``, ``sample_from``, ``randn``, ``qrandn``, ``{"eval": ...}`` and domains
      inside lists: ``ValueError``.

    Raises
    ------
    ValueError
        Naming the key of an unsupported or empty domain, of a domain inside a list, of a name
        that two paths flatten to, or when there is no domain at all.
    """
    params: dict[str, TuneParam] = {}
    paths: dict[str, tuple[Any, ...]] = {}
    constants: dict[tuple[Any, ...], Any] = {}
    for path, value in _walk(config, ()):
        name = _DELIMITER.join(map(str, path))
        if isinstance(value, Domain):
            if name in paths:
                raise ValueError(f"Two parameters flatten to the same name {name!r}.")
            params[name] = _convert_domain(name, value)
            paths[name] = path
        else:
            constants[path] = value
    if not params:
        raise ValueError(
            "The search space has no Tune domain to search (tune.uniform, tune.choice, ...); "
            f"got {dict(config)!r}."
        )
    space = SearchSpace({name: p.param for name, p in params.items()})
    return TuneSearchSpace(space, params, paths, constants)


def _walk(node: Mapping[str, Any], prefix: tuple[Any, ...]) -> list[tuple[tuple, Any]]:
    """(path, leaf) pairs of a nested config; domains and constants are leaves."""
    leaves: list[tuple[tuple, Any]] = []
    for key, value in node.items():
        path = (*prefix, key)
        name = _DELIMITER.join(map(str, path))
        if isinstance(value, Mapping) and set(value) == {"grid_search"}:
            raise ValueError(
                f"Parameter {name!r} is a grid_search, which a model-based searcher cannot "
                "follow; use tune.choice(...) instead."
            )
        if isinstance(value, Mapping) and set(value) == {"eval"}:
            raise ValueError(f"Parameter {name!r} uses the 'eval' syntax; it is not supported.")
        if isinstance(value, Mapping) and value:
            leaves.extend(_walk(value, path))
        else:
            if isinstance(value, list | tuple) and _contains_domain(value):
                raise ValueError(
                    f"Parameter {name!r} is a list with Tune domains inside; put them in a dict "
                    "instead (a model-based searcher needs named parameters)."
                )
            leaves.append((path, value))
    return leaves


def _contains_domain(value: Any) -> bool:
    if isinstance(value, Domain):
        return True
    if isinstance(value, Mapping):
        return any(_contains_domain(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_contains_domain(v) for v in value)
    return False


def _convert_domain(name: str, domain: Domain) -> TuneParam:
    sampler = domain.get_sampler()
    q: float | None = None
    if isinstance(sampler, Quantized):
        q, sampler = sampler.q, sampler.get_sampler()
    try:
        if isinstance(domain, Categorical) and isinstance(sampler, Uniform) and q is None:
            indices = CategoricalParam(tuple(range(len(domain.categories))))
            return TuneParam(indices, "choice", categories=tuple(domain.categories))
        if isinstance(domain, Float) and isinstance(sampler, Uniform | LogUniform):
            return _convert_float(domain, isinstance(sampler, LogUniform), q)
        if isinstance(domain, Integer) and isinstance(sampler, Uniform | LogUniform):
            return _convert_integer(domain, isinstance(sampler, LogUniform), q)
    except ValueError as error:
        raise ValueError(f"Parameter {name!r} ({_describe(domain)}): {error}") from error
    raise ValueError(
        f"Parameter {name!r} has an unsupported Tune domain {_describe(domain)}; use uniform, "
        "loguniform, quniform, qloguniform, randint, lograndint, qrandint, qlograndint or "
        "choice (sample_from, randn, qrandn and grid search cannot be modelled)."
    )


def _describe(domain: Domain) -> str:
    sampler = domain.sampler if domain.sampler is not None else "default sampler"
    return f"{type(domain).__name__} {domain.domain_str} with {sampler}"


def _grid_index(bound: float, q: float, round_up: bool) -> int:
    """``bound``'s index on the multiples of ``q``, rounded inwards (as Tune's Quantized)."""
    scaled = bound / q
    nearest = round(scaled)
    if math.isclose(scaled, nearest):
        return int(nearest)
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


def _convert_float(domain: Float, log: bool, q: float | None) -> TuneParam:
    low, high = float(domain.lower), float(domain.upper)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("bounds must be finite")
    if q is None:
        # Tune draws from [low, high): the upper bound itself is never produced.
        top = math.nextafter(high, -math.inf) if high > low else high
        return TuneParam(FloatParam(low, top, log=log))
    k_low, k_high = _grid_index(low, q, True), _grid_index(high, q, False)
    if k_high < k_low:
        raise ValueError(f"no multiple of q={q} lies between the bounds")
    if log:
        if k_low < 1:
            raise ValueError("a log-scaled domain needs a lower bound of at least q")
        return TuneParam(IntParam(k_low, k_high, log=True), "index", q)
    return TuneParam(FloatParam(k_low * q, k_high * q, step=q), "grid", q)


def _convert_integer(domain: Integer, log: bool, q: float | None) -> TuneParam:
    low, high = domain.lower, domain.upper
    if not (_is_int(low) and _is_int(high)):
        raise ValueError("integer bounds must be finite integers")
    if q is None or q == 1:
        # Tune's integer samplers exclude the upper bound (also qrandint with q == 1).
        if high - 1 < low:
            raise ValueError("the domain is empty (the upper bound is exclusive)")
        return TuneParam(IntParam(int(low), int(high) - 1, log=log))
    if not _is_int(q) or q < 1:
        raise ValueError(f"the quantization q={q} of an integer domain must be an integer")
    q = int(q)
    # Quantized integers are the multiples of q in [low, high], both bounds inclusive.
    k_low, k_high = _grid_index(low, q, True), _grid_index(high, q, False)
    if k_high < k_low:
        raise ValueError(f"no multiple of q={q} lies between the bounds")
    if log:
        return TuneParam(IntParam(k_low, k_high, log=True), "index", q, integer=True)
    return TuneParam(IntParam(k_low * q, k_high * q, step=q))


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) or (isinstance(value, float) and value.is_integer())


def _category_index(categories: tuple[Any, ...], value: Any, name: str) -> int:
    for i, category in enumerate(categories):
        if category is value:
            return i
    for strict in (True, False):
        for i, category in enumerate(categories):
            if strict and type(category) is not type(value):
                continue  # True must not match the category 1
            try:
                if bool(category == value):
                    return i
            except (TypeError, ValueError):  # e.g. numpy arrays: no truth value
                continue
    raise ValueError(f"{value!r} is not one of the choices {list(categories)} of {name!r}.")


def _set_path(config: dict, path: tuple[Any, ...], value: Any) -> None:
    node = config
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _lookup(point: Mapping[str, Any], name: str, path: tuple[Any, ...]) -> tuple[bool, Any]:
    if name in point:
        return True, point[name]
    node: Any = point
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _flat_keys(point: Mapping[str, Any], paths: Any) -> list[str]:
    """Flat names of a user point's leaves, not descending into parameter values."""
    stops = {tuple(p) for p in paths}
    keys: list[str] = []

    def visit(node: Mapping[str, Any], prefix: tuple[Any, ...]) -> None:
        for key, value in node.items():
            path = (*prefix, key)
            if path not in stops and isinstance(value, Mapping) and value:
                visit(value, path)
            else:
                keys.append(_DELIMITER.join(map(str, path)))

    visit(point, ())
    return keys


# ------------------------------------------------------------------------------- searcher
@dataclass
class _Trial:
    """What the searcher knows about one trial (metric values in Tune's units)."""

    params: dict[str, Any]  # core values
    record: Mapping[str, Any] = field(default_factory=dict)
    state: TrialState = TrialState.RUNNING
    value: float | None = None
    duration: float | None = None
    iteration: int | None = None  # training_iteration of the final result
    stopped: bool = False  # the final result was cut short by a scheduler or stopper
    seen_iteration: int | None = None  # last training_iteration passed to on_trial_result
    seen_time: float | None = None  # last time_total_s passed to on_trial_result
    seen_value: float | None = None  # last metric value passed to on_trial_result


class _ProposerSearch(Searcher):
    """Everything a Tune searcher over a core :class:`Proposer` needs, but the proposer.

    Subclasses call ``super().__init__`` and then set ``self._proposer`` (and validate it).
    The shared Ray arguments are documented in :class:`BORESearch`.
    """

    def __init__(
        self,
        space: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        _check_metric_mode(metric, mode)
        super().__init__(metric=metric, mode=mode)
        if evaluated_rewards is not None and (
            points_to_evaluate is None or len(points_to_evaluate) != len(evaluated_rewards)
        ):
            raise ValueError(
                "evaluated_rewards needs points_to_evaluate of the same length (one reward per "
                "point)."
            )
        self._seed = seed
        self._rng = np.random.default_rng(seed)  # for fallbacks and incomplete given points
        self._proposer: Proposer  # set by the subclass
        self._space: TuneSearchSpace | None = None
        self._trials: dict[str, _Trial] = {}
        self._points: list[Mapping[str, Any]] = []  # still to suggest, as the user gave them
        # Evaluated points added before the space was known: (point, value, state).
        self._unconverted: list[tuple[Mapping[str, Any], float | None, TrialState]] = []
        self._n_added = 0
        if evaluated_rewards is not None:
            for point, reward in zip(points_to_evaluate or (), evaluated_rewards, strict=True):
                self._add(point, reward, TrialState.COMPLETE)
        else:
            self._points = [dict(p) for p in points_to_evaluate or ()]
        if space is not None:
            self._set_space(search_space_from_tune(space))

    # ---------------------------------------------------------------- Tune's hooks
    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict, **spec: Any
    ) -> bool:
        """Take ``metric``/``mode`` (when given) and the ``param_space`` from the Tuner.

        Returns False, leaving ``config`` to Tune, when the space was given to the constructor.
        """
        _check_metric_mode(metric, mode)
        for name, given, own in (("metric", metric, self._metric), ("mode", mode, self._mode)):
            if given and own and given != own:
                # What Tune does for a scheduler built with its own metric and mode.
                raise ValueError(
                    f"{type(self).__name__} was created with {name}={own!r}, but the Tuner "
                    f"passes {name}={given!r}. Give the metric and mode in one place only: "
                    f"to {type(self).__name__} or to tune.TuneConfig."
                )
        if metric:
            self._metric = metric
        if mode:
            self._mode = mode
        if self._space is not None:
            return False
        self._set_space(search_space_from_tune(config))
        return True

    def suggest(self, trial_id: str) -> dict | None:
        """The next configuration (nested, with the constants) for the trial ``trial_id``."""
        space = self._ready()
        if self._points:
            given = space.read_point(self._points.pop(0))
            params = {n: space.params[n].to_core(v, n) for n, v in given.items()}
            if len(params) < len(space.params):  # a partial point: draw the rest uniformly
                params = {**self._uniform_params(space), **params}
            record: Mapping[str, Any] = {}
        else:
            params, record = self._propose(space)
            given = {}
        self._trials[trial_id] = _Trial(params=params, record=record)
        return space.to_config(params, given)

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        trial = self._trials.get(trial_id)
        if trial is not None:
            trial.seen_iteration = result.get("training_iteration", trial.seen_iteration)
            trial.seen_time = result.get("time_total_s", trial.seen_time)
            trial.seen_value = _finite_or_none(result.get(self._metric))

    def on_trial_complete(
        self, trial_id: str, result: dict | None = None, error: bool = False
    ) -> None:
        trial = self._trials.get(trial_id)
        if trial is None:
            return  # not suggested by this searcher
        if error:
            trial.state, trial.value, trial.duration = TrialState.FAILED, None, trial.seen_time
            return
        if result is None:  # stopped while pending or paused
            if trial.seen_value is None:
                del self._trials[trial_id]  # never evaluated: nothing to learn
            else:  # paused after reporting, then stopped (HyperBand): its last result counts
                trial.state, trial.value, trial.stopped = (
                    TrialState.COMPLETE,
                    trial.seen_value,
                    True,
                )
                trial.duration, trial.iteration = trial.seen_time, trial.seen_iteration
            return
        value = _finite_or_none(result.get(self._metric))
        trial.state = TrialState.COMPLETE if value is not None else TrialState.FAILED
        trial.value = value
        trial.duration = result.get("time_total_s", trial.seen_time)
        trial.iteration = result.get("training_iteration")
        # Cut short: the scheduler stopped it on a result it kept from on_trial_result, or it
        # was paused (HyperBand) and then stopped with its last, not-done result.
        trial.stopped = (
            trial.iteration is not None and trial.iteration != trial.seen_iteration
        ) or result.get("done") is False

    def add_evaluated_point(
        self,
        parameters: dict,
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """Warm-start from a configuration evaluated elsewhere.

        ``parameters`` may be nested or use ``"a/b"`` keys. ``error=True`` (or a NaN or
        missing value) adds a FAILED observation; ``pruned=True`` a PRUNED one with ``value``,
        or the last of ``intermediate_values`` when ``value`` is None.
        """
        if pruned and value is None and intermediate_values:
            value = intermediate_values[-1]
        state = TrialState.PRUNED if pruned else TrialState.COMPLETE
        self._add(parameters, None if error else value, TrialState.FAILED if error else state)

    def save(self, checkpoint_path: str) -> None:
        """Pickle the searcher's whole state (history, proposer, random generators)."""
        with open(checkpoint_path, "wb") as file:
            cloudpickle.dump(self.__dict__.copy(), file)

    def restore(self, checkpoint_path: str) -> None:
        """Continue from a :meth:`save`: the same history, space, metric and generators."""
        with open(checkpoint_path, "rb") as file:
            self.__dict__.update(pickle.load(file))

    # -------------------------------------------------------------------- public views
    @property
    def search_space(self) -> TuneSearchSpace | None:
        """The translated search space, once known."""
        return self._space

    @property
    def observations(self) -> dict[str, Observation]:
        """Trial id -> the trial as the proposer sees it at the next suggestion.

        Values are minimised (negated for ``mode="max"``); points added through
        ``evaluated_rewards`` or :meth:`add_evaluated_point` have ids ``"evaluated_<i>"``.
        """
        sign = -1.0 if self._mode == "max" else 1.0
        budget = max(
            (
                t.iteration
                for t in self._trials.values()
                if t.state is TrialState.COMPLETE and t.iteration is not None
            ),
            default=None,
        )
        observations = {}
        for trial_id, trial in self._trials.items():
            state = trial.state
            if (
                state is TrialState.COMPLETE
                and trial.stopped
                and budget is not None
                and trial.iteration is not None
                and trial.iteration < budget
            ):
                state = TrialState.PRUNED  # cut short by a scheduler: see the module docstring
            value = None if trial.value is None else sign * trial.value
            observations[trial_id] = Observation(
                trial.params, value, state, (), trial.record, trial.duration
            )
        return observations

    # ------------------------------------------------------------------------ helpers
    def _ready(self) -> TuneSearchSpace:
        name = type(self).__name__
        if self._space is None:
            raise RuntimeError(
                f"{name} has no search space: pass space= to {name}, or a param_space with Tune "
                "domains to tune.Tuner."
            )
        if not self._metric or not self._mode:
            raise RuntimeError(
                f"{name} does not know which metric to optimise: pass metric= and mode= to "
                f"{name}, or to tune.TuneConfig (Tune forwards them only together with a "
                "param_space)."
            )
        return self._space

    def _set_space(self, space: TuneSearchSpace) -> None:
        for point in self._points:  # fail now, not at the n-th suggestion
            for name, value in space.read_point(point).items():
                try:
                    space.params[name].to_core(value, name)
                except ValueError as error:
                    raise ValueError(f"points_to_evaluate: {error}") from error
        self._space = space
        pending, self._unconverted = self._unconverted, []
        for point, value, state in pending:
            self._add(point, value, state)

    def _add(self, point: Mapping[str, Any], value: float | None, state: TrialState) -> None:
        if self._space is None:
            self._unconverted.append((dict(point), value, state))
            return
        given = self._space.read_point(point)
        missing = sorted(set(self._space.params) - set(given))
        if missing:
            raise ValueError(f"The evaluated point {dict(point)!r} misses {missing}.")
        params = {n: self._space.params[n].to_core(v, n) for n, v in given.items()}
        value = _finite_or_none(value)
        if value is None and state is TrialState.COMPLETE:
            state = TrialState.FAILED
        self._trials[f"evaluated_{self._n_added}"] = _Trial(
            params=params, state=state, value=value
        )
        self._n_added += 1

    def _propose(self, space: TuneSearchSpace) -> tuple[dict[str, Any], Mapping[str, Any]]:
        proposal = safe_propose(self._proposer, space.space, list(self.observations.values()))
        if isinstance(proposal, Fallback):  # never let a model failure crash the experiment
            message = proposal.message(
                type(self).__name__,
                f"trial {len(self._trials) + 1}",
                "using a uniform random configuration instead",
            )
            _logger.warning(message)
            warnings.warn(message, ModelFallbackWarning, stacklevel=3)
            return self._uniform_params(space), {}
        return proposal

    def _uniform_params(self, space: TuneSearchSpace) -> dict[str, Any]:
        return space.space.decode(space.space.sample_uniform(1, self._rng))[0]


def _check_metric_mode(metric: Any, mode: Any) -> None:
    if isinstance(metric, list | tuple) or isinstance(mode, list | tuple):
        raise ValueError("Only one metric can be optimised (multi-objective is not supported).")
    if mode not in (None, "min", "max"):
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}.")


def _finite_or_none(value: Any) -> float | None:
    """A usable metric value: None for a missing, non-numeric or NaN one (±inf are kept)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


# --------------------------------------------------------------------------- searchers
class BORESearch(_ProposerSearch):
    """Ray Tune searcher using BORE: Bayesian optimisation by density-ratio estimation.

    Each suggestion splits the finished trials into the best γ-quantile (class 1) and the rest
    (class 0); a probabilistic classifier learns ``π(x) = P(class 1 | x)``, which equals the
    expected improvement up to a constant (Tiao et al., 2021, eq. 10), and the searcher
    proposes its maximiser. Failed trials (the trainable raised, or reported no usable
    metric) and trials a scheduler stopped early are class 0: the classifier learns to avoid
    crashing regions; suggestions keep away from trials still running, so they spread out. The
    module docstring of :mod:`bore_samplers.integrations.ray` tabulates how every Tune outcome
    enters; :mod:`bore_samplers.proposers.bore` has the algorithm.

    Parameters
    ----------
    space
        A Tune search space (``{"lr": tune.loguniform(1e-4, 1e-1), ...}``, nested dicts
        allowed), or None to take the Tuner's ``param_space``. See
        :func:`search_space_from_tune` for the supported domains.
    metric, mode
        The metric to optimise and ``"min"`` or ``"max"``; or None to take them from
        ``tune.TuneConfig`` (which forwards them only when a ``param_space`` is given).
    points_to_evaluate
        Configurations (nested, or with ``"a/b"`` keys; possibly partial: missing parameters
        are drawn uniformly) suggested first, exactly as given.
    evaluated_rewards
        Metric values of ``points_to_evaluate`` measured before: the points are then not run
        again but enter the model at once (warm start). See also :meth:`add_evaluated_point`.
    gamma
        Proportion γ of trials labelled "good" (paper default 1/3), or a callable from the
        number of ranked trials to γ.
    classifier
        ``"xgboost"`` (default), ``"rf"`` (random forest) or ``"mlp"`` (torch; install
        ``bore-samplers[torch]``), or a
        :class:`~bore_samplers.models.classifiers.ProbabilisticClassifier` instance.
    classifier_options
        Keyword arguments for the named classifier.
    n_startup_trials
        Finished trials (complete, failed or pruned) drawn from a scrambled Sobol sequence
        before the classifier takes over.
    n_candidates
        Budget of the acquisition optimiser (random candidates or DE evaluations); ``None``
        keeps the paper's defaults (500 random candidates, 2000 DE evaluations).
    acquisition_optimizer
        ``"random"``, ``"de"``, ``"lbfgs"`` or ``None``: multi-start L-BFGS for the MLP, random
        search for trees.
    seed
        Seed for reproducible suggestion sequences (given the same order of results, as with
        ``max_concurrent_trials=1``).

    Raises
    ------
    ValueError
        For invalid settings, an unsupported domain (naming its key) or several metrics.

    Notes
    -----
    Quiet: the searcher logs nothing. Should the model fail unexpectedly, a
    :class:`ModelFallbackWarning` is issued and that one trial gets a uniform random
    configuration; the experiment goes on. The searcher is picklable (``Tuner`` pickles it)
    and implements ``save``/``restore``, so ``Tuner.restore`` and ``restore_from_dir``
    continue with the same history.

    References
    ----------
    L. C. Tiao, A. Klein, M. Seeger, E. V. Bonilla, C. Archambeau, F. Ramos. *BORE: Bayesian
    Optimization by Density-Ratio Estimation.* ICML 2021.

    Examples
    --------
    >>> from ray import tune
    >>> from bore_samplers.integrations.ray import BORESearch
    >>> def trainable(config):
    ...     tune.report({"loss": (config["x"] - 1) ** 2})
    >>> tuner = tune.Tuner(
    ...     trainable,
    ...     param_space={"x": tune.uniform(-5, 5)},
    ...     tune_config=tune.TuneConfig(
    ...         search_alg=BORESearch(seed=0), metric="loss", mode="min", num_samples=20
    ...     ),
    ... )
    >>> results = tuner.fit()  # doctest: +SKIP
    """

    def __init__(
        self,
        space: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        gamma: GammaSchedule = 1 / 3,
        classifier: str | ProbabilisticClassifier = "xgboost",
        classifier_options: dict[str, Any] | None = None,
        n_startup_trials: int = 10,
        n_candidates: int | None = None,
        acquisition_optimizer: str | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(space, metric, mode, points_to_evaluate, evaluated_rewards, seed=seed)
        self._proposer = BOREProposer(
            gamma=gamma,
            classifier=classifier,
            classifier_options=classifier_options,
            acquisition_optimizer=acquisition_optimizer,
            n_candidates=n_candidates,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()


class CMESSearch(_ProposerSearch):
    """Ray Tune searcher using constrained max-value entropy search (cMES) on GPs.

    The objective is modelled by a Gaussian process with a Matérn 5/2 ARD kernel. A trial that
    raises (``on_trial_complete(error=True)``: out of memory, say) or reports no usable metric
    is binary feedback: an infeasible point learnt by a Laplace GP classifier, so the searcher
    learns where runs crash instead of treating them as holes in the data. Each suggestion
    maximises the information about the feasible minimum, averaged over jointly dependent
    Thompson samples of it. Trials a scheduler stopped early are left out of the models;
    running trials condition the GP on its predicted mean (Kriging believer). See the module
    docstring of :mod:`bore_samplers.integrations.ray` and :mod:`bore_samplers.proposers.cmes`.

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards
        As for :class:`BORESearch`.
    acquisition
        ``"cmes"`` (default), or the baselines ``"cei"`` (constrained EI) and ``"ap"``
        (adaptive percentile).
    n_startup_trials
        Finished trials drawn from a scrambled Sobol sequence before the GPs take over.
    n_y_star_samples, n_discretization, y_star_sampler, binary_confidence, ap_percentile
        See :class:`~bore_samplers.proposers.CMESProposer`.
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisition over slice samples of the objective GP's hyperparameters
        (Snoek et al., 2012) instead of the MAP point; about that many times the cost.
    seed
        Seed for reproducible suggestion sequences (with ``max_concurrent_trials=1``).

    Raises
    ------
    ValueError
        For invalid settings, an unsupported domain (naming its key) or several metrics.

    References
    ----------
    V. Perrone, I. Shcherbatyi, R. Jenatton, C. Archambeau, M. Seeger. *Constrained Bayesian
    Optimization with Max-Value Entropy Search.* NeurIPS 2019 Workshop on Meta-Learning.
    """

    def __init__(
        self,
        space: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        acquisition: str = "cmes",
        n_startup_trials: int = 10,
        n_y_star_samples: int = 10,
        n_discretization: int = 2000,
        y_star_sampler: str = "joint",
        binary_confidence: float = 0.5,
        ap_percentile: float = 75.0,
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        seed: int | None = None,
    ) -> None:
        super().__init__(space, metric, mode, points_to_evaluate, evaluated_rewards, seed=seed)
        self._proposer = CMESProposer(
            acquisition=acquisition,  # type: ignore[arg-type]
            n_y_star_samples=n_y_star_samples,
            n_discretization=n_discretization,
            y_star_sampler=y_star_sampler,  # type: ignore[arg-type]
            binary_confidence=binary_confidence,
            ap_percentile=ap_percentile,
            marginalize_hyperparameters=marginalize_hyperparameters,
            n_hyperparameter_samples=n_hyperparameter_samples,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()


class PortfolioSearch(_ProposerSearch):
    """Ray Tune searcher using a hedged portfolio of GP acquisitions: No-PASt-BO and GP-Hedge.

    Every acquisition of the portfolio (by default PI, EI and GP-LCB on one Matérn 5/2 ARD GP)
    nominates its maximiser; one nominee is chosen with probability ``softmax(η r)`` over the
    members' normalised rewards, which are updated with the refitted posterior mean at each
    nominee (Vasconcelos et al., Algorithm 2). The rewards are rebuilt from the records that
    this searcher keeps with every trial (saved and restored with it). See
    :class:`~bore_samplers.proposers.PortfolioProposer`.

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards
        As for :class:`BORESearch`.
    portfolio
        Member names (``"pi"``, ``"ei"``, ``"lcb"``, ``"mes"``, ``"ei_per_second"``, which
        divides EI by the predicted ``time_total_s``, and ``"bore"``) or
        :class:`~bore_samplers.proposers.portfolio.PortfolioMember` instances.
    eta, memory, normalize
        Inverse temperature η (paper: 4), memory factor m (paper: 0.7) and reward
        normalisation (``memory=1, normalize=False`` is GP-Hedge).
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisitions over slice samples of the GP hyperparameters.
    n_startup_trials
        Trials from a seeded Latin hypercube before the GP takes over (paper: 5).
    seed
        Seed for reproducible suggestion sequences (with ``max_concurrent_trials=1``).

    References
    ----------
    T. de P. Vasconcelos, D. A. R. M. A. de Souza, C. L. C. Mattos, J. P. P. Gomes.
    *No-PASt-BO: Normalized Portfolio Allocation Strategy for Bayesian Optimization.* ICTAI 2019.
    """

    def __init__(
        self,
        space: Mapping[str, Any] | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        portfolio: Sequence[Any] = DEFAULT_PORTFOLIO,
        eta: float = 4.0,
        memory: float = 0.7,
        normalize: bool = True,
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        n_startup_trials: int = 5,
        seed: int | None = None,
    ) -> None:
        super().__init__(space, metric, mode, points_to_evaluate, evaluated_rewards, seed=seed)
        self._proposer = PortfolioProposer(
            portfolio=portfolio,
            eta=eta,
            memory=memory,
            normalize=normalize,
            marginalize_hyperparameters=marginalize_hyperparameters,
            n_hyperparameter_samples=n_hyperparameter_samples,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()
