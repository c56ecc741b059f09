"""The plots of :mod:`bore_samplers.integrations.visualization`, drawn with matplotlib.

As in :mod:`optuna.visualization.matplotlib`, each function returns a
:class:`matplotlib.axes.Axes` on a new figure (matplotlib is imported when a plot is drawn),
and a study without the data to draw gives empty axes whose title says what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import optuna
from optuna.trial import FrozenTrial

from bore_samplers.integrations.optuna_base import logger
from bore_samplers.integrations.visualization import proposer_symbols, source_colors
from bore_samplers.integrations.visualization._info import (
    PROBABILITIES_KEY,
    SOURCE_KEY,
    has_recorded_sources,
    portfolio_weights,
    proposal_points,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_portfolio_weights", "plot_proposal_sources"]


#: matplotlib's markers for plotly's symbol names (see ``PROPOSER_SYMBOLS``).
_MARKERS = {
    "circle": "o",
    "square": "s",
    "diamond": "D",
    "triangle-up": "^",
    "x": "x",
    "star": "*",
    "cross": "P",
}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "bore_samplers.integrations.visualization.matplotlib needs matplotlib: "
            "pip install matplotlib"
        ) from error
    return plt


def _axes(title: str) -> Axes:
    _, ax = _pyplot().subplots(tight_layout=True)
    ax.set_title(title)
    return ax


def _empty(title: str, reason: str) -> Axes:
    logger.warning(reason)
    return _axes(f"{title}\n{reason}")


def plot_portfolio_weights(study: optuna.Study) -> Axes:
    """Each portfolio member's probability over the trials, one line per member.

    See :func:`bore_samplers.integrations.visualization.plot_portfolio_weights`.

    Parameters
    ----------
    study
        A study sampled by a ``PortfolioSampler``.

    Returns
    -------
    matplotlib.axes.Axes
        Empty, with a title saying why, if no trial has ``"portfolio:probabilities"``.
    """
    _pyplot()  # first: without matplotlib, say so before reading the study
    title = "Portfolio weights"
    info = portfolio_weights(study)
    if not info.trials:
        return _empty(title, f"No trial has the user attribute {PROBABILITIES_KEY!r}.")
    ax = _axes(title)
    for name, probabilities in info.probabilities.items():
        values = [float("nan") if p is None else p for p in probabilities]
        ax.plot(info.trials, values, marker="o", markersize=3, label=name)
    ax.set_xlabel("Trial")
    ax.set_ylabel("Probability")
    ax.set_ylim(0.0, 1.0)
    ax.legend(loc="best")
    return ax


def plot_proposal_sources(
    study: optuna.Study,
    *,
    target: Callable[[FrozenTrial], float] | None = None,
    target_name: str = "Objective Value",
) -> Axes:
    """The value of each completed trial against its number, coloured by its source.

    See :func:`bore_samplers.integrations.visualization.plot_proposal_sources`.

    Parameters
    ----------
    study, target, target_name
        As for the plotly version.

    Returns
    -------
    matplotlib.axes.Axes
        Empty, with a title saying why, if the study has no completed trial.

    Raises
    ------
    ValueError
        For a multi-objective study without ``target``.
    """
    _pyplot()  # first: without matplotlib, say so before reading the study
    title = "Proposal sources"
    groups = proposal_points(study, target)
    if not groups:
        return _empty(title, "The study has no completed trials.")
    if not has_recorded_sources(study):
        logger.warning(
            f"No trial has the system attribute {SOURCE_KEY!r}: every trial is shown as "
            "start-up (the sampler records no sources, or has not left its start-up design)."
        )
    ax = _axes(title)
    colors = source_colors([group.source for group in groups])
    symbols = proposer_symbols([group.proposer for group in groups])
    for group in groups:
        name = group.source if group.proposer is None else f"{group.source} / {group.proposer}"
        marker: Any = _MARKERS.get(symbols[group.proposer], "o")
        ax.scatter(group.trials, group.values, c=colors[group.source], marker=marker, label=name)
    ax.set_xlabel("Trial")
    ax.set_ylabel(target_name)
    ax.legend(title="source", loc="best")
    return ax
