"""Tune a gradient-boosted classifier on scikit-learn's breast-cancer data with AutoSampler.

The model is scikit-learn's ``HistGradientBoostingClassifier``, so the script needs only the
base install (``pip install bore-samplers``).

The study lives in an SQLite file (Optuna's embedded default storage), so it survives the
process: run the script again and it continues the same study, or inspect it with
``optuna-dashboard sqlite:///bore_quickstart.db``. Optuna logs one line per finished trial
while it runs. At the end the script prints the best trial and where the study is stored, and
for the trials of this run: how many were model-based proposals, start-up (scrambled Sobol
points before a model takes over) or fallback, and the best log loss among the trials
of each source. ``--smoke`` runs 20 trials (10 start-up, then 10 model-based) in a study in a
fresh temporary folder, unless ``--storage`` names one.

    python examples/quickstart.py [--trials 40] [--storage sqlite:///bore_quickstart.db]
                                  [--study-name bore-quickstart] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import cross_val_score
from threadpoolctl import threadpool_limits

from bore_samplers import AutoSampler
from bore_samplers.integrations.reporting import track_proposals


def objective(trial: optuna.Trial) -> float:
    """3-fold cross-validated log loss of a gradient-boosted classifier (to minimise)."""
    data, target = load_breast_cancer(return_X_y=True)
    model = HistGradientBoostingClassifier(
        max_iter=trial.suggest_int("max_iter", 20, 200, step=10),
        learning_rate=trial.suggest_float("learning_rate", 1e-3, 1.0, log=True),
        max_depth=trial.suggest_int("max_depth", 1, 8),
        max_leaf_nodes=trial.suggest_int("max_leaf_nodes", 4, 64, log=True),
        min_samples_leaf=trial.suggest_int("min_samples_leaf", 2, 50, log=True),
        l2_regularization=trial.suggest_float("l2_regularization", 1e-3, 10.0, log=True),
        # With early stopping, max_iter is an upper bound: training stops once the loss on a
        # held-out tenth of the training folds has not improved for 10 rounds.
        early_stopping=trial.suggest_categorical("early_stopping", [False, True]),
        random_state=0,  # the same model for the same parameters (and the same held-out tenth)
    )
    # One OpenMP thread: the fits are small, and on a busy machine the histogram booster's
    # thread pool spends far longer waiting for cores than computing.
    with threadpool_limits(limits=1, user_api="openmp"):
        scores = cross_val_score(model, data, target, cv=3, scoring="neg_log_loss")
    return -float(scores.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="trials to run (default 40)")
    parser.add_argument(
        "--storage",
        help="Optuna storage URL (default sqlite:///bore_quickstart.db in the current folder; "
        "with --smoke, a new SQLite file in a temporary folder)",
    )
    parser.add_argument("--study-name", default="bore-quickstart")
    parser.add_argument("--smoke", action="store_true", help="20 trials (for tests)")
    args = parser.parse_args()
    n_trials = 20 if args.smoke else args.trials  # smoke: 10 start-up and 10 model-based
    if args.storage is None:
        folder = Path(tempfile.mkdtemp(prefix="bore_quickstart_")) if args.smoke else Path()
        args.storage = f"sqlite:///{folder / 'bore_quickstart.db'}"

    sampler = AutoSampler(seed=0)  # the one line that changes in an existing script
    sources = track_proposals(sampler)  # for the report below; not needed to tune
    study = optuna.create_study(
        study_name=args.study_name, storage=args.storage, load_if_exists=True, sampler=sampler
    )
    n_before = len(study.trials)
    print(
        f"Study {study.study_name!r} is stored in {args.storage} ({n_before} trials "
        f"so far); running {n_trials} more. Optuna logs one line per finished trial."
    )
    study.optimize(objective, n_trials=n_trials)

    this_run = study.trials[n_before:]
    print(f"This run's {sources.summary(len(this_run))}")
    print(f"This run's {sources.best_by_source({t.number: t.value for t in this_run})}")
    chosen = this_run[-1].system_attrs.get("bore_samplers:auto_proposer")
    reason = this_run[-1].system_attrs.get("bore_samplers:auto_reason")
    print(f"AutoSampler's last trial was proposed by {chosen} ({reason}).")
    best = study.best_trial
    print(f"Finished {len(study.trials)} trials of study {study.study_name!r}.")
    print(f"Best trial #{best.number}: cross-validated log loss {best.value:.4f}")
    for name, value in best.params.items():
        print(f"  {name} = {value}")
    print(f"The study is stored in {args.storage}")


if __name__ == "__main__":
    main()
