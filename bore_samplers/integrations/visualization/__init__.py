"""Plots of what the samplers recorded, in the style of :mod:`optuna.visualization` (plotly).

:func:`plot_portfolio_weights` draws a portfolio's arm probabilities over the trials,
:func:`plot_proposal_sources` each trial's value by where its configuration came from. Needs
plotly, imported when a plot is drawn. As Optuna's plots do, a study without the data to draw
gives an empty figure whose title says what is missing, and a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import optuna
from optuna.trial import FrozenTrial, TrialState

from bore_samplers.integrations.auto import AUTO_PROPOSER_KEY
from bore_samplers.integrations.optuna_base import SOURCE_KEY, logger
from bore_samplers.proposers.base import PROPOSAL_SOURCES

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["plot_portfolio_weights", "plot_proposal_sources"]

#: User attribute in which :class:`~bore_samplers.integrations.optuna.PortfolioSampler` stores
#: each model-based trial's member probabilities (member name -> probability).
PROBABILITIES_KEY = "portfolio:probabilities"
#: The sources a sampler records, in the order the plots list them.
SOURCES = PROPOSAL_SOURCES


class PortfolioWeights(NamedTuple):
    """Each member's probability over the trials that recorded them: trial numbers (ascending)
    and member name (in order of first appearance) -> one probability per trial (``None``
    where that trial's portfolio did not have the member)."""

    trials: list[int]
    probabilities: dict[str, list[float | None]]


class ProposalPoints(NamedTuple):
    """The completed trials of one source (one of :data:`SOURCES`, or an unknown value shown
    as is) and AutoSampler proposer (``None``: none recorded): numbers and target values."""

    source: str
    proposer: str | None
    trials: list[int]
    values: list[float]


def check_study(study: object) -> None:
    """Raise a ``TypeError`` naming the argument unless ``study`` is an Optuna study."""
    if not isinstance(study, optuna.Study):
        raise TypeError(f"study must be an optuna.Study, got {type(study).__name__}.")


def portfolio_weights(study: optuna.Study) -> PortfolioWeights:
    """The members' probabilities of every trial that recorded them (any trial state)."""
    check_study(study)
    trials = sorted(study.get_trials(deepcopy=False), key=lambda trial: trial.number)
    recorded = [trial for trial in trials if PROBABILITIES_KEY in trial.user_attrs]
    names: dict[str, None] = {}  # ordered set: members in order of first appearance
    for trial in recorded:
        names.update(dict.fromkeys(trial.user_attrs[PROBABILITIES_KEY]))
    probabilities = {
        name: [_as_float(trial.user_attrs[PROBABILITIES_KEY].get(name)) for trial in recorded]
        for name in names
    }
    return PortfolioWeights([trial.number for trial in recorded], probabilities)


def proposal_points(
    study: optuna.Study, target: Callable[[FrozenTrial], float] | None = None
) -> list[ProposalPoints]:
    """The completed trials grouped by source and AutoSampler proposer.

    Groups come in the order of :data:`SOURCES` (unknown sources after them, sorted), and
    within a source by proposer name (``None`` first).

    Raises
    ------
    ValueError
        For a multi-objective study without ``target`` (as Optuna's plots do).
    TypeError
        If ``study`` is not an Optuna study.
    """
    check_study(study)
    if target is None:
        if study._is_multi_objective():
            raise ValueError(
                "The study has several objectives: pass target (a function of a FrozenTrial "
                "that returns the value to plot)."
            )

        def target(trial: FrozenTrial) -> float:
            return float(trial.value)

    groups: dict[tuple[str, str | None], ProposalPoints] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        source = str(trial.system_attrs.get(SOURCE_KEY, "start-up"))
        proposer = trial.system_attrs.get(AUTO_PROPOSER_KEY)
        # A start-up trial names no model proposer, whatever the sampler recorded.
        proposer = None if proposer is None or proposer == source else str(proposer)
        key = (source, proposer)
        group = groups.setdefault(key, ProposalPoints(key[0], key[1], [], []))
        group.trials.append(trial.number)
        group.values.append(float(target(trial)))

    def order(key: tuple[str, str | None]) -> tuple[int, str, int, str]:
        source, proposer = key
        rank = SOURCES.index(source) if source in SOURCES else len(SOURCES)
        return rank, source, proposer is not None, proposer or ""

    return [groups[key] for key in sorted(groups, key=order)]


def _as_float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


#: Colour per source (plotly's default qualitative palette).
SOURCE_COLORS = {"start-up": "#636EFA", "model": "#EF553B", "fallback": "#00CC96"}
#: Marker symbols for an AutoSampler's proposers, assigned in order of their names.
PROPOSER_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross")
_OTHER_COLORS = ("#AB63FA", "#FFA15A", "#19D3F3", "#FF6692")


def _go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as error:
        raise ImportError(
            "bore_samplers.integrations.visualization needs plotly: pip install plotly"
        ) from error
    return go


def _empty(title: str, reason: str) -> go.Figure:
    logger.warning(reason)
    go = _go()
    return go.Figure(layout=go.Layout(title={"text": f"{title}<br><sub>{reason}</sub>"}))


def plot_portfolio_weights(study: optuna.Study) -> go.Figure:
    """Each portfolio member's probability over the trials, one line per member.

    Read from the user attribute ``"portfolio:probabilities"`` that
    :class:`~bore_samplers.integrations.optuna.PortfolioSampler` sets on each model-based
    trial (any process, any storage); start-up trials have none and are left out.

    Returns
    -------
    plotly.graph_objects.Figure
        x: trial number, y: probability.
    """
    go = _go()  # first: without plotly, say so before reading the study
    title = "Portfolio weights"
    info = portfolio_weights(study)
    if not info.trials:
        return _empty(title, f"No trial has the user attribute {PROBABILITIES_KEY!r}.")
    figure = go.Figure(
        layout=go.Layout(
            title={"text": title},
            xaxis={"title": {"text": "Trial"}},
            yaxis={"title": {"text": "Probability"}, "range": [0.0, 1.0]},
        )
    )
    for name, probabilities in info.probabilities.items():
        figure.add_trace(
            go.Scatter(
                x=info.trials,
                y=probabilities,
                mode="lines+markers",
                name=name,
                hovertemplate=f"{name}<br>trial %{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )
    return figure


def plot_proposal_sources(
    study: optuna.Study,
    *,
    target: Callable[[FrozenTrial], float] | None = None,
    target_name: str = "Objective Value",
) -> go.Figure:
    """The value of each completed trial against its number, coloured by its source.

    The source is the trial's system attribute ``"bore_samplers:source"`` (``"start-up"``,
    ``"model"`` or ``"fallback"``; start-up if absent); an AutoSampler's proposer
    (``"bore_samplers:auto_proposer"``) gets its own marker symbol. One trace per source and
    proposer, named ``"<source>"`` or ``"<source> / <proposer>"``.

    Parameters
    ----------
    study
        The study to plot (completed trials only).
    target
        The value to plot of each trial (default: its value); needed with several objectives.
    target_name
        The y-axis title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        For a multi-objective study without ``target``.
    """
    go = _go()  # first: without plotly, say so before reading the study
    title = "Proposal sources"
    groups = proposal_points(study, target)
    if not groups:
        return _empty(title, "The study has no completed trials.")
    if not any(SOURCE_KEY in t.system_attrs for t in study.get_trials(deepcopy=False)):
        logger.warning(
            f"No trial has the system attribute {SOURCE_KEY!r}: every trial is shown as "
            "start-up (the sampler records no sources, or has not left its start-up design)."
        )
    figure = go.Figure(
        layout=go.Layout(
            title={"text": title},
            xaxis={"title": {"text": "Trial"}},
            yaxis={"title": {"text": target_name}},
            legend={"title": {"text": "source"}},
        )
    )
    colors = source_colors([group.source for group in groups])
    symbols = proposer_symbols([group.proposer for group in groups])
    for group in groups:
        name = group.source if group.proposer is None else f"{group.source} / {group.proposer}"
        figure.add_trace(
            go.Scatter(
                x=group.trials,
                y=group.values,
                mode="markers",
                name=name,
                legendgroup=group.source,
                marker={
                    "color": colors[group.source],
                    "symbol": symbols[group.proposer],
                    "size": 9,
                    "line": {"width": 0.5, "color": "white"},
                },
                hovertemplate=f"{name}<br>trial %{{x}}: %{{y}}<extra></extra>",
            )
        )
    return figure


def source_colors(sources: list[str]) -> dict[str, str]:
    """A colour for each source: fixed for :data:`SOURCES`, then from a spare palette."""
    others = sorted(set(sources) - set(SOURCES))
    return {
        **SOURCE_COLORS,
        **{s: _OTHER_COLORS[i % len(_OTHER_COLORS)] for i, s in enumerate(others)},
    }


def proposer_symbols(proposers: list[str | None]) -> dict[str | None, str]:
    """A plotly marker symbol for each proposer name (``None``: a circle)."""
    names = sorted({name for name in proposers if name is not None})
    symbols = PROPOSER_SYMBOLS[1:]  # the circle stays for trials without a proposer
    return {None: "circle", **{n: symbols[i % len(symbols)] for i, n in enumerate(names)}}
