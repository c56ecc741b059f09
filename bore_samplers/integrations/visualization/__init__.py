"""Plots of what the samplers recorded, in the style of :mod:`optuna.visualization` (plotly).

* :func:`plot_portfolio_weights`: each portfolio member's probability over the trials of a
  :class:`~bore_samplers.integrations.optuna.PortfolioSampler` study.
* :func:`plot_proposal_sources`: the objective value of each trial, coloured by where its
  configuration came from (start-up design, model or fallback) and, for an AutoSampler, marked
  by the proposer it chose.

Needs plotly (``pip install plotly``), imported when a plot is drawn. The same
plots drawn with matplotlib (returning an ``Axes``) are in
:mod:`bore_samplers.integrations.visualization.matplotlib`. As Optuna's plots do, a study
without the data to draw gives an empty figure whose title says what is missing, and a
warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import optuna
from optuna.trial import FrozenTrial

from bore_samplers.integrations.optuna_base import logger
from bore_samplers.integrations.visualization._info import (
    PROBABILITIES_KEY,
    SOURCE_KEY,
    SOURCES,
    has_recorded_sources,
    portfolio_weights,
    proposal_points,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["plot_portfolio_weights", "plot_proposal_sources"]


#: Colour per source (plotly's default qualitative palette), shared with the matplotlib twin.
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

    :class:`~bore_samplers.integrations.optuna.PortfolioSampler` stores the probabilities it
    chose its member with as the user attribute ``"portfolio:probabilities"`` of each
    model-based trial; start-up trials have none and are left out.

    Parameters
    ----------
    study
        A study sampled by a ``PortfolioSampler`` (any process, any storage).

    Returns
    -------
    plotly.graph_objects.Figure
        x: trial number, y: probability; empty, with a title saying why, if no trial has the
        attribute.
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

    A trial's source is its system attribute ``"bore_samplers:source"``: ``"start-up"`` (the
    start-up design), ``"model"`` (a model-based proposal) or ``"fallback"`` (a random point
    where the model could not propose); a trial without it counts as start-up. Where an
    AutoSampler recorded the proposer it chose (``"bore_samplers:auto_proposer"``), each
    proposer gets its own marker symbol. There is one trace per source and proposer, named
    ``"<source>"`` or ``"<source> / <proposer>"``.

    Parameters
    ----------
    study
        The study to plot (completed trials only).
    target
        The value to plot of each trial; needed for a multi-objective study. Default: the
        trial's objective value.
    target_name
        The y-axis title.

    Returns
    -------
    plotly.graph_objects.Figure
        Empty, with a title saying why, if the study has no completed trial.

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
    if not has_recorded_sources(study):
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
