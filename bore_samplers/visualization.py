"""``bore_samplers.visualization``: an alias of :mod:`bore_samplers.integrations.visualization`.

The plots read Optuna studies, so they live with the Optuna adapters; this module imports
them (and so optuna and plotly) only when a plot is drawn, so that the framework-free core
never imports optuna at import time.
"""

from __future__ import annotations

from typing import Any

__all__ = ["plot_portfolio_weights", "plot_proposal_sources"]


def plot_portfolio_weights(study: Any) -> Any:
    """See :func:`bore_samplers.integrations.visualization.plot_portfolio_weights`."""
    from bore_samplers.integrations.visualization import plot_portfolio_weights as plot

    return plot(study)


def plot_proposal_sources(study: Any, **options: Any) -> Any:
    """See :func:`bore_samplers.integrations.visualization.plot_proposal_sources`."""
    from bore_samplers.integrations.visualization import plot_proposal_sources as plot

    return plot(study, **options)
