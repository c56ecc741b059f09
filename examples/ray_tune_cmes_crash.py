"""Ray Tune with CMESSearch where models over a memory budget crash: the searcher learns where.

Each trial trains a scikit-learn multilayer perceptron on generated data. Wide and deep
networks fit the data best, but a network with more than ``BUDGET`` hidden units in total
raises ``MemoryError`` before training, as an out-of-memory crash would. Tune records the trial
as errored and calls ``on_trial_complete(error=True)``; CMESSearch learns such trials as binary
infeasible feedback (a Laplace GP classifier of where runs crash) and proposes configurations
that are good *and* likely to run. The script prints how many trials crashed in the first and
in the second half of the run. Needs the ray extra: ``pip install ".[ray]"``.

    python examples/ray_tune_cmes_crash.py [--trials 40] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import warnings

from ray import tune
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from bore_samplers.integrations.ray import CMESSearch

BUDGET = 256  # hidden units, all layers together

SPACE = {
    "width": tune.lograndint(4, 513),
    "depth": tune.randint(1, 5),
    "alpha": tune.loguniform(1e-6, 1e-1),
    "learning_rate_init": tune.loguniform(1e-4, 1e-1),
}


def train(config: dict) -> None:
    """Validation error of an MLP; raises MemoryError over the budget (30 % of the space)."""
    units = config["width"] * config["depth"]
    if units > BUDGET:
        raise MemoryError(f"{units} hidden units do not fit in the budget of {BUDGET}")
    data, target = make_classification(
        n_samples=1500, n_features=20, n_informative=12, n_classes=3, random_state=0
    )
    x_train, x_val, y_train, y_val = train_test_split(data, target, random_state=0)
    model = MLPClassifier(
        hidden_layer_sizes=(config["width"],) * config["depth"],
        alpha=config["alpha"],
        learning_rate_init=config["learning_rate_init"],
        max_iter=config["max_iter"],
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    tune.report({"error": 1.0 - model.score(x_val, y_val), "units": units})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage-path", default=None, help="Tune's results folder")
    parser.add_argument("--smoke", action="store_true", help="a few short trials (for tests)")
    args = parser.parse_args()
    # The crashes are expected: keep Tune from printing each one's traceback.
    os.environ.setdefault("TUNE_PRINT_ALL_TRIAL_ERRORS", "0")
    trials, startup, max_iter = (6, 3, 20) if args.smoke else (args.trials, 10, 100)

    searcher = CMESSearch(
        SPACE, metric="error", mode="min", n_startup_trials=startup, seed=args.seed
    )
    tuner = tune.Tuner(
        train,
        param_space={"max_iter": max_iter},  # a constant; the domains are the searcher's
        tune_config=tune.TuneConfig(search_alg=searcher, num_samples=trials, reuse_actors=True),
        run_config=tune.RunConfig(
            name="cmes_memory_budget", storage_path=args.storage_path, verbose=0
        ),
    )
    results = tuner.fit()

    crashed = [o.state.name == "FAILED" for o in searcher.observations.values()]
    half = len(crashed) // 2
    print(
        f"{sum(crashed)} of {len(crashed)} trials crashed: {sum(crashed[:half])} in the first "
        f"{half}, {sum(crashed[half:])} in the last {len(crashed) - half}"
    )
    best = results.get_best_result(metric="error", mode="min")
    print(
        f"best validation error {best.metrics['error']:.4f} with {best.metrics['units']} "
        f"hidden units (budget {BUDGET}):",
        {k: best.config[k] for k in SPACE},
    )


if __name__ == "__main__":
    main()
