"""The plots of bore_samplers.integrations.visualization, on real studies.

Sources are the contract of the samplers' ``"bore_samplers:source"`` and
``"bore_samplers:auto_proposer"`` system attributes; the trials here are annotated through the
storage, as a sampler does.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable

import optuna
import pytest

from bore_samplers import PortfolioSampler
from bore_samplers.integrations import visualization
from bore_samplers.integrations.visualization import (
    plot_portfolio_weights,
    plot_proposal_sources,
)

pytest.importorskip("plotly")


def quadratic(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -2.0, 2.0)
    y = trial.suggest_float("y", -2.0, 2.0)
    return (x - 0.5) ** 2 + y**2


@pytest.fixture(scope="module")
def portfolio_study() -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=PortfolioSampler(n_startup_trials=5, seed=0))
    study.optimize(quadratic, n_trials=12)
    return study


def test_plot_portfolio_weights_has_one_line_per_member(portfolio_study: optuna.Study) -> None:
    figure = plot_portfolio_weights(portfolio_study)
    model_based = [
        t.number for t in portfolio_study.trials if "portfolio:probabilities" in t.user_attrs
    ]
    assert model_based == list(range(5, 12))  # every trial after the start-up design
    assert [trace.name for trace in figure.data] == ["pi", "ei", "lcb"]  # the default members
    for trace in figure.data:
        assert list(trace.x) == model_based
        assert all(0.0 <= p <= 1.0 for p in trace.y)
    for i, number in enumerate(model_based):
        total = sum(trace.y[i] for trace in figure.data)
        assert total == pytest.approx(1.0), number
        recorded = portfolio_study.trials[number].user_attrs["portfolio:probabilities"]
        assert {trace.name: trace.y[i] for trace in figure.data} == pytest.approx(recorded)
    assert figure.layout.title.text == "Portfolio weights"


def test_plots_of_a_study_without_the_data_are_empty_and_say_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    with caplog.at_level(logging.WARNING):
        figure = plot_proposal_sources(study)
    assert not figure.data and "no completed trials" in figure.layout.title.text
    study.optimize(quadratic, n_trials=3)
    figure = plot_portfolio_weights(study)
    assert not figure.data
    assert "portfolio:probabilities" in figure.layout.title.text
    # No recorded sources: every trial counts as start-up, with a warning under Optuna's
    # logger, which optuna.logging.set_verbosity silences.
    optuna_logger = logging.getLogger("optuna")
    optuna_logger.addHandler(caplog.handler)
    try:
        caplog.clear()
        figure = plot_proposal_sources(study)
        assert [(trace.name, len(trace.x)) for trace in figure.data] == [("start-up", 3)]
        assert "bore_samplers:source" in caplog.text
        assert all(r.name.startswith("optuna.") for r in caplog.records), caplog.records
        caplog.clear()
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        plot_proposal_sources(study)
        assert not caplog.records
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        optuna_logger.removeHandler(caplog.handler)


@pytest.mark.parametrize("plot", [plot_portfolio_weights, plot_proposal_sources])
def test_the_plots_name_an_argument_that_is_not_a_study(plot: Callable) -> None:
    with pytest.raises(TypeError, match="study must be an optuna.Study, got list"):
        plot([])


def annotated_study(annotations: list[tuple[str | None, str | None]]) -> optuna.Study:
    """A study of ``len(annotations)`` trials; trial ``n`` gets the ``n``-th (source, proposer).

    The attributes are set while the trial runs, as a sampler sets them (a finished trial's
    attributes cannot change); ``None`` leaves an attribute out.
    """
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial: optuna.Trial) -> float:
        source, proposer = annotations[trial.number]
        storage = study._storage
        if source is not None:
            storage.set_trial_system_attr(trial._trial_id, "bore_samplers:source", source)
        if proposer is not None:
            storage.set_trial_system_attr(trial._trial_id, "bore_samplers:auto_proposer", proposer)
        return quadratic(trial)

    study.optimize(objective, n_trials=len(annotations))
    return study


def test_plot_proposal_sources_colours_by_source() -> None:
    sources = [None, "start-up", None, "model", "model", "fallback", "model", "model"]
    study = annotated_study([(source, None) for source in sources])
    study.optimize(lambda trial: 1 / 0, n_trials=1, catch=(ZeroDivisionError,))
    figure = plot_proposal_sources(study)
    names = [trace.name for trace in figure.data]
    assert names == ["start-up", "model", "fallback"]  # the failed trial is left out
    by_name = {trace.name: trace for trace in figure.data}
    assert list(by_name["start-up"].x) == [0, 1, 2]  # a missing attribute counts as start-up
    assert list(by_name["model"].x) == [3, 4, 6, 7]
    assert list(by_name["fallback"].x) == [5]
    assert list(by_name["model"].y) == [study.trials[n].value for n in (3, 4, 6, 7)]
    colours = {trace.marker.color for trace in figure.data}
    assert len(colours) == 3
    assert figure.layout.yaxis.title.text == "Objective Value"


def test_plot_proposal_sources_marks_the_auto_proposers() -> None:
    study = annotated_study(
        [
            (None, None),
            (None, None),
            ("model", "portfolio"),
            ("model", "cmes"),
            ("fallback", "cmes"),
            ("model", "portfolio"),
            ("start-up", "tpe"),
        ]
    )
    figure = plot_proposal_sources(study, target=lambda t: -t.value, target_name="negated")
    traces = {trace.name: trace for trace in figure.data}
    assert list(traces) == [
        "start-up",
        "start-up / tpe",
        "model / cmes",
        "model / portfolio",
        "fallback / cmes",
    ]
    assert list(traces["model / portfolio"].x) == [2, 5]
    assert list(traces["start-up / tpe"].y) == [-study.trials[6].value]
    symbols = {name: trace.marker.symbol for name, trace in traces.items()}
    assert symbols["start-up"] == "circle"
    assert symbols["model / cmes"] == symbols["fallback / cmes"] != symbols["model / portfolio"]
    assert len({symbols[n] for n in ("start-up", "start-up / tpe", "model / cmes")}) == 3
    assert traces["model / cmes"].marker.color != traces["fallback / cmes"].marker.color
    assert figure.layout.yaxis.title.text == "negated"


def test_without_plotly_the_plots_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    for plot in (plot_portfolio_weights, plot_proposal_sources):
        with pytest.raises(ImportError, match="pip install plotly"):
            plot(optuna.create_study())


def test_plot_proposal_sources_needs_a_target_for_several_objectives() -> None:
    study = optuna.create_study(directions=["minimize", "minimize"])
    study.optimize(lambda trial: (trial.suggest_float("x", 0, 1), 1.0), n_trials=2)
    with pytest.raises(ValueError, match="target"):
        plot_proposal_sources(study)
    figure = plot_proposal_sources(study, target=lambda t: t.values[0], target_name="first")
    assert len(figure.data[0].x) == 2


def test_the_alias_in_the_core_imports_optuna_only_when_plotting(
    portfolio_study: optuna.Study,
) -> None:
    code = (
        "import sys, bore_samplers.visualization;"
        "bad = [m for m in ('optuna', 'plotly') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    from bore_samplers import visualization as alias

    figure = alias.plot_portfolio_weights(portfolio_study)
    assert [trace.name for trace in figure.data] == ["pi", "ei", "lcb"]
    assert alias.plot_proposal_sources(portfolio_study).data
    assert visualization.plot_portfolio_weights is plot_portfolio_weights


def test_plot_proposal_sources_of_a_real_auto_sampler_study() -> None:
    from bore_samplers import AutoSampler

    def crashes_on_the_right(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        if x > 1.5 and trial.number >= 4:
            raise RuntimeError("out of memory")
        return (x - 1.0) ** 2

    study = optuna.create_study(sampler=AutoSampler(seed=0, n_startup_trials=4))
    study.optimize(crashes_on_the_right, n_trials=10, catch=(RuntimeError,))
    names = {trace.name for trace in plot_proposal_sources(study).data}
    assert "start-up" in names
    assert any(name.startswith("model / ") for name in names), names
