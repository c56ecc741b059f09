"""Trade a random forest's error against its size with BORESampler, in a SQLite study.

Two objectives, both minimised: the 3-fold cross-validated error of a scikit-learn
``RandomForestClassifier`` on the breast cancer data, and the number of nodes in its trees (a
deterministic measure of the model's size: smaller forests predict faster and fit on smaller
devices). BORESampler handles several objectives as MBORE does: its classifier learns where the
best Pareto fronts lie. At the end the script prints how many trials were model-based
proposals, start-up or fallback, then the Pareto front (error, nodes and parameters of each
non-dominated trial), and saves Optuna's Pareto front plot as ``pareto_front.html`` in
``--out`` (by default a fresh temporary folder) when plotly is installed (the plot extra:
``pip install ".[plot]"``). ``--smoke`` runs 20 trials (10 start-up, then 10 model-based) in a
study in that folder too, unless ``--storage`` names one.

    python examples/multi_objective.py [--trials 60] [--storage sqlite:///multi_objective.db]
                                       [--out DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_validate

from bore_samplers import BORESampler
from bore_samplers.integrations.reporting import track_proposals

DATA, TARGET = load_breast_cancer(return_X_y=True)


def objective(trial: optuna.Trial) -> tuple[float, float]:
    """(cross-validated error, mean number of tree nodes) of a random forest."""
    model = RandomForestClassifier(
        n_estimators=trial.suggest_int("n_estimators", 1, 50, log=True),
        max_depth=trial.suggest_int("max_depth", 1, 12),
        max_features=trial.suggest_float("max_features", 0.05, 1.0),
        min_samples_leaf=trial.suggest_int("min_samples_leaf", 1, 20, log=True),
        random_state=0,
    )
    result = cross_validate(model, DATA, TARGET, cv=3, return_estimator=True)
    nodes = [
        sum(tree.tree_.node_count for tree in fitted.estimators_) for fitted in result["estimator"]
    ]
    return 1.0 - float(result["test_score"].mean()), sum(nodes) / len(nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument(
        "--storage",
        help="Optuna storage URL (default sqlite:///multi_objective.db in the current folder; "
        "with --smoke, a new SQLite file in --out)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the plot (default: a fresh temporary folder)",
    )
    parser.add_argument("--smoke", action="store_true", help="20 trials (for tests)")
    args = parser.parse_args()
    n_trials = 20 if args.smoke else args.trials  # smoke: 10 start-up and 10 model-based
    out = args.out or Path(tempfile.mkdtemp(prefix="multi_objective_"))
    out.mkdir(parents=True, exist_ok=True)
    if args.storage is None:
        folder = out if args.smoke else Path()
        args.storage = f"sqlite:///{folder / 'multi_objective.db'}"

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = BORESampler(seed=0)
    sources = track_proposals(sampler)  # for the report below; not needed to tune
    study = optuna.create_study(
        study_name="forest-error-vs-size",
        storage=args.storage,
        load_if_exists=True,
        directions=["minimize", "minimize"],
        sampler=sampler,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["cv error", "tree nodes"])  # axis titles of the plot
    study.optimize(objective, n_trials=n_trials)

    print(sources.summary(n_trials))
    print(f"The study is stored in {args.storage}")
    front = sorted(study.best_trials, key=lambda t: t.values[0])
    print(f"Pareto front: {len(front)} of {len(study.trials)} trials")
    for trial in front:
        error, nodes = trial.values
        params = ", ".join(
            f"{name}={value:.3g}" if isinstance(value, float) else f"{name}={value}"
            for name, value in trial.params.items()
        )
        print(f"  trial {trial.number:3d}: cv error {error:.4f}, {nodes:6.0f} nodes ({params})")
    try:
        import plotly  # noqa: F401
    except ImportError:
        print('plotly is not installed: no Pareto front plot (pip install ".[plot]")')
        return
    figure = optuna.visualization.plot_pareto_front(study)
    html = out / "pareto_front.html"
    figure.write_html(html, include_plotlyjs="cdn")  # plotly.js from its CDN: a small file
    print(f"Pareto front plot: {html}")


if __name__ == "__main__":
    main()
