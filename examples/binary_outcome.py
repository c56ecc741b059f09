"""Binary outcomes: does a linear model reach 94% accuracy on digits within 3 epochs?

Each trial trains scikit-learn's ``SGDClassifier`` on a fresh random split of the digits data
for a fixed budget of 3 epochs and reports only whether it reached the target accuracy (1) or
not (0): the kind of success/failure objective where no score exists (a run converged, a
deployment met its SLO). The split and the initialisation change with every trial, so the
outcome at a configuration is itself random: a Bernoulli draw with an unknown success rate.

``BinaryOutcomeSampler`` learns ``P(success | configuration)`` with a probit GP classifier and
samples by UCB_Φ; random search runs beside it in the same SQLite storage. At the end, both
studies are judged the same way: the configuration with the largest inferred ``P(success)``
(``inferred_best_params``), whose real success rate is then measured on fresh splits.

    python examples/binary_outcome.py [--trials 40] [--startup 10] [--repeats 20] [--seed 0]
                                      [--storage sqlite:///binary_outcome.db]
    python examples/binary_outcome.py --smoke   # 12 trials (6 start-up), 4 repeats

``--smoke`` stores its studies in a fresh temporary folder, unless ``--storage`` names one.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

from bore_samplers.integrations.binary import BinaryOutcomeSampler

TARGET_ACCURACY = 0.94
EPOCHS = 3
DATA, LABELS = load_digits(return_X_y=True)


def train(params: dict[str, Any], seed: int) -> bool:
    """Whether the model with ``params`` reaches the target accuracy on split ``seed``."""
    x_train, x_valid, y_train, y_valid = train_test_split(
        DATA / 16.0, LABELS, test_size=0.3, random_state=seed
    )
    model = SGDClassifier(
        loss=params["loss"],
        learning_rate="constant",
        eta0=params["learning_rate"],
        alpha=params["alpha"],
        max_iter=EPOCHS,  # the fixed budget
        tol=None,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 3 epochs never converge
        model.fit(x_train, y_train)
    return bool(model.score(x_valid, y_valid) >= TARGET_ACCURACY)


def objective(trial: optuna.Trial) -> bool:
    """1 (``True``) if this trial's run reached the target accuracy, else 0."""
    params = {
        "learning_rate": trial.suggest_float("learning_rate", 1e-5, 10.0, log=True),
        "alpha": trial.suggest_float("alpha", 1e-7, 1.0, log=True),
        "loss": trial.suggest_categorical("loss", ["hinge", "log_loss", "modified_huber"]),
    }
    return train(params, seed=trial.number)


def success_rate(params: dict[str, Any], repeats: int) -> float:
    """The measured success rate of ``params`` on ``repeats`` splits no trial used."""
    return float(np.mean([train(params, seed=10_000 + k) for k in range(repeats)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--startup", type=int, default=10, help="start-up trials (Sobol)")
    parser.add_argument(
        "--storage",
        help="Optuna storage URL (default sqlite:///binary_outcome.db in the current folder; "
        "with --smoke, a new SQLite file in a temporary folder)",
    )
    parser.add_argument("--repeats", type=int, default=20, help="fresh runs to check a result")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a fast run: 12 trials")
    args = parser.parse_args()
    if args.smoke:
        args.trials, args.startup, args.repeats = 12, 6, 4
    if args.storage is None:
        folder = Path(tempfile.mkdtemp(prefix="binary_outcome_")) if args.smoke else Path()
        args.storage = f"sqlite:///{folder / 'binary_outcome.db'}"

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = BinaryOutcomeSampler(n_startup_trials=args.startup, seed=args.seed)
    samplers: dict[str, optuna.samplers.BaseSampler] = {
        "BinaryOutcomeSampler (UCB_Φ)": sampler,
        "RandomSampler": optuna.samplers.RandomSampler(seed=args.seed),
    }
    # One judge for both studies: the same classifier fitted to each study's outcomes.
    judge = BinaryOutcomeSampler()
    print(
        f"Does SGDClassifier reach {TARGET_ACCURACY:.0%} validation accuracy on digits within "
        f"{EPOCHS} epochs? {args.trials} trials per sampler, stored in {args.storage}\n"
    )
    for name, study_sampler in samplers.items():
        study = optuna.create_study(
            study_name=f"binary-outcome-{type(study_sampler).__name__}-seed{args.seed}",
            storage=args.storage,
            direction="maximize",  # maximise P(success)
            sampler=study_sampler,
            load_if_exists=True,
        )
        study.optimize(objective, n_trials=args.trials)
        trials = study.trials
        successes = sum(int(t.value) for t in trials if t.value is not None)
        print(f"{name}: {len(trials)} trials in {study.study_name!r}, {successes} successes")
        if study_sampler is sampler:
            # Trials run one after another here, so every trial from the start-up count on
            # was proposed by the model (a model failure would have warned).
            n_model = sum(t.number >= args.startup for t in trials)
            print(f"  {len(trials) - n_model} start-up trials, {n_model} model-based trials")
        best = judge.inferred_best_params(study)
        shown = {k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in best.items()}
        print(f"  inferred best parameters: {shown}")
        print(f"  inferred P(success) there: {judge.success_probability(study, best):.2f}")
        rate = success_rate(best, args.repeats)
        print(f"  measured success rate there on {args.repeats} fresh splits: {rate:.2f}\n")


if __name__ == "__main__":
    main()
