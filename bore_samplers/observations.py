"""Plain records of what happened to each proposed configuration.

Adapters (Optuna, Ray Tune) translate their trials into :class:`Observation` objects; proposers
consume nothing else. Values are always to be *minimised*: adapters negate maximised metrics.
A multi-objective study gives each observation all its objective values
(:attr:`Observation.values`); proposers turn those into one value per observation
(:meth:`~bore_samplers.proposers.Proposer.scalarized`).

Constraints are matched by name across observations. A constraint that an observation does not
carry is *unknown* there: it is left out of that constraint's model, and it does not make the
observation infeasible (:attr:`History.feasible` is "no known constraint violated").

The treatment of extreme values that every model shares lives here too, so that single- and
multi-objective histories get the same: :func:`impute_infinite` ranks ``±inf`` among the
finite values, :func:`close_outlier_gaps` moves a penalty plateau (``1e10`` over part of the
space) next to the other values, and :func:`robust_location_scale` never overflows.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bore_samplers.space import SearchSpace

__all__ = [
    "History",
    "Observation",
    "TrialState",
    "close_outlier_gaps",
    "history_from_observations",
    "impute_infinite",
    "robust_location_scale",
]


class TrialState(enum.Enum):
    """What became of a proposed configuration."""

    COMPLETE = "complete"  #: finished with an objective value
    FAILED = "failed"  #: crashed or returned no usable value (NaN)
    PRUNED = "pruned"  #: stopped early; ``value`` is its last intermediate value, if any
    RUNNING = "running"  #: still being evaluated (a pending point)


@dataclass(frozen=True)
class Observation:
    """One configuration and its outcome.

    Parameters
    ----------
    params
        Parameter name -> value. May contain names outside the search space (ignored) and, for
        failed or running trials, may miss some (such observations are skipped).
    value
        Objective value to minimise, ``None`` when there is none (failed, running, or pruned
        before reporting anything).
    state
        The trial's :class:`TrialState`.
    constraints
        Constraint name -> value; the configuration is feasible iff every value is ``<= 0``
        (``+inf`` is infeasible, ``-inf`` feasible). A sequence is accepted too and named
        ``"0"``, ``"1"``, ... (Optuna's names for the values of a legacy ``constraints_func``).
        Empty when the study has no constraints; a constraint missing here is unknown for this
        observation. NaN values are unknown too.
    record
        What the proposer noted when it proposed this configuration (the record of
        :meth:`~bore_samplers.proposers.Proposer.propose_with_record`, JSON-serialisable),
        handed back with the outcome. Adapters keep it with the trial, so that a proposer
        whose state depends on its own past choices (the portfolio's rewards) can rebuild that
        state from the observations alone. Empty when there is none.
    duration
        Wall-clock seconds the evaluation took, when known (cost-aware acquisitions such as
        EI per second model it); ``None`` otherwise.
    values
        In a multi-objective study, every objective value (each to minimise), or ``None``
        when there are none (failed, running); ``value`` is then not used by the proposers
        (adapters set it to the first objective). ``None`` in a single-objective study.
    """

    params: Mapping[str, Any]
    value: float | None = None
    state: TrialState = TrialState.COMPLETE
    constraints: Mapping[str, float] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    duration: float | None = None
    values: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.values is not None:
            object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        constraints = self.constraints
        if type(constraints) is dict and not constraints:
            # The usual case, kept cheap (adapters build an observation per trial): a fresh
            # empty dict, so that the caller's cannot change this frozen observation.
            object.__setattr__(self, "constraints", {})
            return
        if not isinstance(constraints, Mapping):
            constraints = {str(i): value for i, value in enumerate(constraints)}
        object.__setattr__(
            self, "constraints", {str(name): float(value) for name, value in constraints.items()}
        )

    @property
    def is_feasible(self) -> bool:
        """True iff no known constraint value is ``> 0`` (true without constraints)."""
        constraints = self.constraints
        return not constraints or not any(value > 0 for value in constraints.values())


@dataclass
class History:
    """Observations in array form over one search space, grouped the way proposers use them.

    Attributes
    ----------
    u
        Snapped unit coordinates of every usable observation, shape ``(n, n_dims)``.
    values
        Objective values to minimise (NaN where there is none).
    states
        The :class:`TrialState` of each row.
    feasible
        Whether each row violates none of its known constraints.
    constraints
        Constraint values, shape ``(n, len(constraint_names))``, one column per name; NaN
        where a row does not carry that constraint (unknown there).
    records
        The :attr:`Observation.record` of each row.
    durations
        Evaluation time in seconds of each row (NaN where unknown).
    objectives
        Multi-objective studies: every objective value of each row, shape ``(n, k)`` (a row
        of NaN where there are none); ``None`` when no observation carries
        :attr:`Observation.values`. ``values`` is then the first objective until a proposer
        scalarises the history.
    has_branch_parameters
        Some parameter outside ``space`` is in some usable observations but not all (the
        branch of a conditional space, which the adapter samples outside the model). One in
        every observation is not a branch: a one-value parameter the space leaves out.
    """

    space: SearchSpace
    u: np.ndarray
    values: np.ndarray
    states: list[TrialState]
    feasible: np.ndarray
    constraints: np.ndarray
    records: list[Mapping[str, Any]] = field(default_factory=list)
    durations: np.ndarray = field(default_factory=lambda: np.empty(0))
    constraint_names: list[str] = field(default_factory=list)
    objectives: np.ndarray | None = None
    has_branch_parameters: bool = False

    def without(self, *states: TrialState) -> History:
        """The rows not in any of ``states``, as a new history."""
        return self.take(np.flatnonzero(~self.mask(*states)))

    def take(self, rows: np.ndarray) -> History:
        """The rows at the integer indices ``rows`` (in that order), as a new history."""
        rows = np.asarray(rows, dtype=int)
        return History(
            space=self.space,
            u=self.u[rows],
            values=self.values[rows],
            states=[self.states[i] for i in rows],
            feasible=self.feasible[rows],
            constraints=self.constraints[rows],
            records=[self.records[i] for i in rows] if self.records else [],
            durations=self.durations[rows] if len(self.durations) else self.durations,
            constraint_names=list(self.constraint_names),
            objectives=None if self.objectives is None else self.objectives[rows],
            has_branch_parameters=self.has_branch_parameters,
        )

    def mask(self, *states: TrialState) -> np.ndarray:
        """Boolean mask of the rows in any of ``states``."""
        return np.array([s in states for s in self.states], dtype=bool)

    def __len__(self) -> int:
        return len(self.states)


def history_from_observations(space: SearchSpace, observations: Sequence[Observation]) -> History:
    """Encode the observations that carry every parameter of ``space``.

    Observations missing a parameter of ``space`` (a failed or running trial that crashed
    before suggesting everything, or a conditional parameter) are left out; so are values that
    do not fit the space (a categorical value that is not a choice). COMPLETE observations with
    a NaN value (or, in a multi-objective study, a NaN among their values) are treated as
    FAILED, since nothing can be learned from the number.
    """
    names = set(space.names)
    usable = [obs for obs in observations if names <= obs.params.keys()]
    try:
        u = space.encode([obs.params for obs in usable])  # one vectorised pass: the usual case
    except (ValueError, TypeError):
        # Some value does not fit the space: encode row by row and drop the misfits.
        rows, kept = [], []
        for obs in usable:
            try:
                rows.append(space.encode([obs.params])[0])
                kept.append(obs)
            except (ValueError, TypeError):
                continue
        usable = kept
        u = np.array(rows) if rows else np.empty((0, space.n_dims))
    values = np.array([math.nan if o.value is None else float(o.value) for o in usable])
    objectives = _objective_matrix(usable)
    unusable = np.isnan(values) if objectives is None else np.isnan(objectives).any(axis=1)
    states = [
        TrialState.FAILED if o.state is TrialState.COMPLETE and bad else o.state
        for o, bad in zip(usable, unusable, strict=True)
    ]
    names, constraints = _constraint_matrix(usable)
    return History(
        space=space,
        u=space.snap(u) if len(usable) else np.empty((0, space.n_dims)),
        values=values.astype(float).reshape(len(usable)),
        states=states,
        feasible=np.array([o.is_feasible for o in usable], dtype=bool),
        constraints=constraints,
        records=[o.record for o in usable],
        durations=np.array(
            [math.nan if o.duration is None else float(o.duration) for o in usable], dtype=float
        ),
        constraint_names=names,
        objectives=objectives,
        has_branch_parameters=_has_branch_parameters(usable, space),
    )


def _has_branch_parameters(observations: Sequence[Observation], space: SearchSpace) -> bool:
    """Whether a parameter outside ``space`` is missing from some of the ``observations``."""
    names = set(space.names)
    outside = [set(o.params) - names for o in observations]
    return bool(outside) and bool(set.union(*outside) - set.intersection(*outside))


def _objective_matrix(observations: Sequence[Observation]) -> np.ndarray | None:
    """The :attr:`Observation.values` as rows (NaN rows where none), or None if none has any."""
    n_objectives = max((len(o.values) for o in observations if o.values is not None), default=0)
    if not n_objectives:
        return None
    matrix = np.full((len(observations), n_objectives), np.nan)
    for i, obs in enumerate(observations):
        if obs.values is not None:
            if len(obs.values) != n_objectives:
                raise ValueError(
                    f"Observations carry {len(obs.values)} and {n_objectives} objective values."
                )
            matrix[i] = obs.values
    return matrix


def _constraint_matrix(observations: Sequence[Observation]) -> tuple[list[str], np.ndarray]:
    """Sorted constraint names and the values by name, NaN where a row lacks one."""
    names = sorted({name for obs in observations if obs.constraints for name in obs.constraints})
    column = {name: k for k, name in enumerate(names)}
    matrix = np.full((len(observations), len(names)), np.nan)
    if not names:
        return names, matrix
    for i, obs in enumerate(observations):
        for name, value in obs.constraints.items():
            matrix[i, column[name]] = value
    return names, matrix


# ------------------------------------------------------------------------- extreme values
#: A spread below this fraction of the values' magnitude is rounding noise: constant values.
RELATIVE_SPREAD_TOLERANCE = 1e-12
#: A gap between sorted values wider than this many times the spread between the median and
#: the gap's inner end separates outliers (:func:`close_outlier_gaps`).
OUTLIER_GAP_RATIO = 1000.0


def robust_location_scale(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of finite ``values``, computed without overflow.

    The deviations from the median are divided by their largest magnitude before they are
    squared. A spread within :data:`RELATIVE_SPREAD_TOLERANCE` of the median's magnitude
    (or no values) gives a scale of 0.

    Returns
    -------
    location, scale
        ``scale`` is 0 for constant values.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return 0.0, 0.0
    median = float(np.median(values))
    deviations = values - median
    largest = float(np.max(np.abs(deviations)))
    if largest == 0.0 or largest <= RELATIVE_SPREAD_TOLERANCE * abs(median):
        return median, 0.0
    unit = deviations / largest
    return median + largest * float(np.mean(unit)), largest * float(np.std(unit))


def impute_infinite(values: np.ndarray, threshold: float | None = None) -> np.ndarray:
    """A copy of ``values`` with ``±inf`` replaced by finite values of the same rank.

    ``+inf`` becomes the largest finite value plus one robust scale unit (the standard
    deviation of the finite values; their magnitude, or 1, when they are constant); ``-inf``
    the smallest minus one unit. With a ``threshold`` (a constraint's ``c <= 0``), ``+inf``
    is also placed above the threshold and ``-inf`` below it, so that feasibility is kept.
    NaN values are left as they are.

    Parameters
    ----------
    values
        Raw values, shape ``(n,)``.
    threshold
        Optional value that ``+inf`` must exceed and ``-inf`` stay below.
    """
    values = np.array(values, dtype=float)
    infinite = np.isinf(values)
    if not infinite.any():
        return values
    finite = values[np.isfinite(values)]
    if finite.size:
        high, low = float(np.max(finite)), float(np.min(finite))
        unit = robust_location_scale(finite)[1]
        if unit == 0.0:
            unit = abs(high) if high != 0.0 else 1.0
    else:
        high = low = 0.0 if threshold is None else float(threshold)
        unit = 1.0
    if threshold is not None:
        high, low = max(high, threshold), min(low, threshold)
    values[infinite & (values > 0)] = high + unit
    values[infinite & (values < 0)] = low - unit
    return values


def close_outlier_gaps(values: np.ndarray, ratio: float = OUTLIER_GAP_RATIO) -> np.ndarray:
    """A copy of ``values`` with far outliers moved next to the others, order kept.

    A penalty (``1e10`` returned over part of the space, a diverged loss) sits many orders of
    magnitude away from the ordinary values. Any location and scale computed from all values
    is then the outliers', and the ordinary values, the ones that say where the optimum is,
    become one flat level to a model. Walking the sorted values up from the median, a gap
    wider than ``ratio`` times the spread below it (from the lower quartile to the gap's
    lower end) is closed to that spread: the values above it shift down together; the same
    walk runs down from the median against the upper quartile, and both are repeated until
    nothing moves (a quartile may lie among outliers at first). The values between the
    median and the first such gap on either side, so at least half of them, are unchanged,
    and so is everything when no gap is that wide: ordinary objectives, heavy-tailed ones
    included (``ratio`` is 1000). Ties stay ties, and the map commutes with positive affine
    maps and negation of the values, so units do not matter. It is a winsorisation whose
    cut-off is found from gaps rather than a fixed quantile: a penalty on any share of the
    observations below half is caught, and no ordinary value is clipped. (With more, the
    model sees two levels and its proposals soon bring the share below half.)

    Parameters
    ----------
    values
        Values, shape ``(n,)``; non-finite ones are left as they are and ignored.
    ratio
        The smallest gap, relative to the spread below it, that is closed.

    Returns
    -------
    numpy.ndarray
        The values, shape ``(n,)``.
    """
    values = np.array(values, dtype=float)
    finite = np.flatnonzero(np.isfinite(values))
    if len(finite) < 4:
        return values
    largest = float(np.max(np.abs(values[finite])))
    if largest == 0.0:
        return values
    # Work on values scaled by a power of two: exact, and no difference can overflow.
    exponent = int(np.frexp(largest)[1])
    order = finite[np.argsort(values[finite], kind="stable")]
    raw = np.ldexp(values[order], -exponent)
    current = raw
    for _ in range(4):
        median = float(np.median(current))
        lower, upper = np.quantile(current, [0.25, 0.75])
        up = _close_gaps_upward(current, median, float(lower), ratio)
        down = -_close_gaps_upward(-current[::-1], -median, -float(upper), ratio)[::-1]
        closed = np.where(current > median, up, np.where(current < median, down, current))
        if np.array_equal(closed, current):
            break
        current = closed
    if np.array_equal(current, raw):
        return values
    values[order] = np.ldexp(current, exponent)
    return values


def _close_gaps_upward(
    ascending: np.ndarray, median: float, lower: float, ratio: float
) -> np.ndarray:
    """The upward walk of :func:`close_outlier_gaps` over sorted values."""
    above = np.flatnonzero(ascending > median)
    above = above[above > 0]
    gaps = ascending[above] - ascending[above - 1]
    spreads = ascending[above - 1] - lower
    opened = np.flatnonzero((spreads > 0.0) & (gaps > ratio * spreads))
    if len(opened) == 0:  # the usual case: nothing to close
        return ascending
    moved = ascending.copy()
    # Values past the last closed gap keep their distance to its upper end (the anchor), so
    # that nothing cancels against the large distance it moved.
    anchor_raw = anchor_moved = 0.0
    for position in above[opened[0] :]:
        spread = moved[position - 1] - lower
        if spread > 0.0 and ascending[position] - ascending[position - 1] > ratio * spread:
            anchor_raw, anchor_moved = ascending[position], moved[position - 1] + spread
        moved[position] = anchor_moved + (ascending[position] - anchor_raw)
    return moved
