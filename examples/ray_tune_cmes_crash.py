"""Ray Tune with CMESSearch where models over a memory budget crash, against two baselines.

Each trial trains a scikit-learn multilayer perceptron on generated data. Wide and deep
networks fit the data best, but a network with more than ``BUDGET`` hidden units in total
raises ``MemoryError`` before training, as an out-of-memory crash would (30 % of the space).
Tune records the trial as errored and calls ``on_trial_complete(error=True)``; CMESSearch
learns such trials as binary infeasible feedback (a Laplace GP classifier of where runs
crash), to propose configurations that are good *and* likely to run.

On the same seeds, the script runs three searchers side by side:

* ``random``: Tune's default search (``BasicVariantGenerator``), which learns nothing;
* ``cMES``: ``CMESSearch()``, which learns where runs crash;
* ``cMES, crashes ignored``: ``CMESSearch(failed_trials="ignore")``, the same GP searcher told
  that crashes are transient, so it leaves them out as a searcher that cannot learn from
  crashes would.

For each run it prints how many trials crashed (among the first ``n_startup_trials``, the
start-up, and among the rest), the best validation error and the hidden units of its network
(next to the budget or not), the run's wall-clock time (a crash costs more than its share of
it: Tune replaces the worker process that a crashed trial ran in), and for the cMES runs how
many trials were model-based proposals, start-up or fallback; then the means over the seeds.
Progress is printed every 10 finished trials. One seed takes about 10 minutes on two busy
cores; ``--seeds 0 1 2`` compares on three. Needs the ray extra: ``pip install ".[ray]"``.

    python examples/ray_tune_cmes_crash.py [--trials 40] [--seeds 0 [1 2]] [--smoke]
                                           [--storage-path ~/ray_results]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from typing import Any

try:
    from ray import tune
    from ray.tune.search import BasicVariantGenerator, SearchAlgorithm, Searcher
except ImportError:
    sys.exit('This example needs ray: pip install ".[ray]"')
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from bore_samplers.integrations.ray import CMESSearch
from bore_samplers.integrations.reporting import track_proposals

BUDGET = 256  # hidden units, all layers together

SPACE = {
    "width": tune.lograndint(4, 513),
    "depth": tune.randint(1, 5),
    "alpha": tune.loguniform(1e-6, 1e-1),
    "learning_rate_init": tune.loguniform(1e-4, 1e-1),
}

SEARCHERS = ("random", "cMES", "cMES, crashes ignored")


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


class Outcomes(tune.Callback):
    """Each finished trial's validation error (None: crashed), in order; prints progress."""

    def __init__(self, label: str, n_trials: int, every: int = 10) -> None:
        self.label, self.n_trials, self.every = label, n_trials, every
        self.errors: dict[str, float | None] = {}
        self.units: dict[str, int] = {}  # of the trials that ran

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.units[trial.trial_id] = trial.last_result.get("units")
        self._finished(trial.trial_id, trial.last_result.get("error"))

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._finished(trial.trial_id, None)

    def _finished(self, trial_id: str, error: float | None) -> None:
        self.errors[trial_id] = error
        done = len(self.errors)
        if done % self.every == 0 or done == self.n_trials:
            print(
                f"  [{self.label}] {done}/{self.n_trials} trials: {self.n_crashed()} crashed, "
                f"best error {self.best():.4f}",
                flush=True,
            )

    def n_crashed(self) -> int:
        return sum(error is None for error in self.errors.values())

    def best(self) -> float:
        return min((e for e in self.errors.values() if e is not None), default=float("nan"))

    def best_units(self) -> int | None:
        """Hidden units of the best trial: how close the best network is to the budget."""
        ran = [(e, trial_id) for trial_id, e in self.errors.items() if e is not None]
        return self.units[min(ran)[1]] if ran else None


def run(
    name: str, seed: int, trials: int, startup: int, max_iter: int, storage_path: str | None
) -> dict[str, Any]:
    """One tuning run of searcher ``name``: crashes, best error and proposal sources."""
    search_alg: SearchAlgorithm | Searcher
    sources = None
    if name == "random":
        search_alg = BasicVariantGenerator(random_state=seed)
    else:
        failed = {"failed_trials": "ignore"} if name == "cMES, crashes ignored" else {}
        search_alg = CMESSearch(n_startup_trials=startup, seed=seed, **failed)
        sources = track_proposals(search_alg)
    outcomes = Outcomes(f"{name}, seed {seed}", trials)
    tuner = tune.Tuner(
        train,
        param_space={**SPACE, "max_iter": max_iter},
        tune_config=tune.TuneConfig(
            search_alg=search_alg,
            metric="error",
            mode="min",
            num_samples=trials,
            # One trial at a time: each searcher sees every result before its next
            # proposal, so that a seed gives the same run every time.
            max_concurrent_trials=1,
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(
            name=f"cmes_memory_budget_{name.replace(', ', '_').replace(' ', '_')}_{seed}",
            storage_path=storage_path,
            callbacks=[outcomes],
            verbose=0,
        ),
    )
    start = time.perf_counter()
    tuner.fit()
    seconds = time.perf_counter() - start
    crashed = [error is None for error in outcomes.errors.values()]  # in trial order
    return {
        "seconds": seconds,
        "crashed": sum(crashed),
        "startup_crashed": sum(crashed[:startup]),
        "n": len(crashed),
        "best": outcomes.best(),
        "best_units": outcomes.best_units(),
        "sources": sources.summary(len(crashed)) if sources else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--storage-path", default=None, help="Tune's results folder")
    parser.add_argument("--smoke", action="store_true", help="a few short trials (for tests)")
    args = parser.parse_args()
    # The crashes are expected: keep Tune from printing each one's traceback, and use Tune's
    # classic console output, silent at verbose=0 (the new one still prints every crash and
    # a banner per run); the script prints its own progress.
    os.environ.setdefault("TUNE_PRINT_ALL_TRIAL_ERRORS", "0")
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    trials, startup, max_iter, seeds = (
        (6, 3, 20, args.seeds[:1]) if args.smoke else (args.trials, 10, 100, args.seeds)
    )

    seed_list = ", ".join(map(str, seeds))
    print(
        f"{len(SEARCHERS)} searchers, {trials} trials each, on seeds {seed_list}; a network over "
        f"{BUDGET} hidden units crashes; cMES starts with {startup} start-up trials."
    )
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in SEARCHERS}
    for seed in seeds:
        for name in SEARCHERS:
            result = run(name, seed, trials, startup, max_iter, args.storage_path)
            results[name].append(result)
            line = (
                f"seed {seed} {name:<22} crashed {result['crashed']:>2} of {result['n']} "
                f"({result['startup_crashed']} in the first {startup}, "
                f"{result['crashed'] - result['startup_crashed']} after), "
                f"best error {result['best']:.4f} ({result['best_units']} units), "
                f"{result['seconds']:.0f} s"
            )
            if result["sources"]:
                line += f"; {result['sources']}"
            print(line, flush=True)

    print(f"Means over seeds {seed_list}:")
    for name, runs in results.items():
        crashed = statistics.mean(r["crashed"] for r in runs)
        after = statistics.mean(r["crashed"] - r["startup_crashed"] for r in runs)
        best = statistics.mean(r["best"] for r in runs)
        seconds = statistics.mean(r["seconds"] for r in runs)
        print(
            f"  {name:<22} crashed {crashed:5.1f} of {trials} ({after:.1f} after the first "
            f"{startup}), best error {best:.4f}, {seconds:.0f} s"
        )


if __name__ == "__main__":
    main()
