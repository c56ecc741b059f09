"""Tune a small torch network on scikit-learn's digits with Ray Tune, BORESearch and ASHA.

Each trial trains a multilayer perceptron and reports its validation loss after every epoch
with ``tune.report``; the ASHA scheduler stops unpromising trials early, and BORESearch
proposes the configurations. A trial that ASHA stopped before the last epoch enters BORE as
PRUNED ("not good", class 0; its early loss is not ranked against full-length runs), see
``bore_samplers.integrations.ray``. Progress is printed every 10 finished trials. At the end
the script prints the trials' states as BORE saw them, how many trials were model-based
proposals, start-up or fallback, the best validation loss among the trials of each source,
and the best trial. Needs the torch and ray extras: ``pip install ".[torch,ray]"``.

    python examples/ray_tune_torch_asha.py [--trials 40] [--epochs 15] [--seed 0] [--smoke]
                                           [--storage-path ~/ray_results]
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import sys
from typing import Any

try:
    import torch
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
except ImportError:
    sys.exit('This example needs torch and ray: pip install ".[torch,ray]"')
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bore_samplers.integrations.ray import BORESearch
from bore_samplers.integrations.reporting import track_proposals

SPACE = {
    "model": {
        "width": tune.lograndint(16, 257),
        "depth": tune.randint(1, 4),
        "activation": tune.choice(["relu", "tanh"]),
        "dropout": tune.quniform(0.0, 0.5, 0.05),
    },
    "optimizer": {
        "lr": tune.loguniform(1e-4, 1e-1),
        "weight_decay": tune.loguniform(1e-6, 1e-2),
        "batch_size": tune.choice([32, 64, 128]),
    },
}


def load_data() -> tuple[torch.Tensor, ...]:
    """Standardised train/validation split of the 8x8 digits (1797 images, 10 classes)."""
    data, target = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(
        data, target, test_size=0.25, random_state=0, stratify=target
    )
    scaler = StandardScaler().fit(x_train)
    return (
        torch.as_tensor(scaler.transform(x_train), dtype=torch.float32),
        torch.as_tensor(scaler.transform(x_val), dtype=torch.float32),
        torch.as_tensor(y_train),
        torch.as_tensor(y_val),
    )


def train_mlp(config: dict) -> None:
    """Train for ``config["epochs"]`` epochs, reporting validation loss and accuracy each."""
    torch.set_num_threads(1)  # one CPU per trial: Ray runs several side by side
    torch.manual_seed(0)
    x_train, x_val, y_train, y_val = load_data()
    model_cfg, opt_cfg = config["model"], config["optimizer"]
    act = torch.nn.ReLU if model_cfg["activation"] == "relu" else torch.nn.Tanh
    layers: list[torch.nn.Module] = []
    n_in = x_train.shape[1]
    for _ in range(model_cfg["depth"]):
        layers += [torch.nn.Linear(n_in, model_cfg["width"]), act()]
        layers.append(torch.nn.Dropout(model_cfg["dropout"]))
        n_in = model_cfg["width"]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(n_in, 10))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=opt_cfg["lr"], weight_decay=opt_cfg["weight_decay"]
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(config["epochs"]):
        model.train()
        order = torch.randperm(len(x_train))
        for start in range(0, len(order), opt_cfg["batch_size"]):
            batch = order[start : start + opt_cfg["batch_size"]]
            optimizer.zero_grad()
            loss_fn(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            logits = model(x_val)
            val_loss = float(loss_fn(logits, y_val))
            accuracy = float((logits.argmax(dim=1) == y_val).float().mean())
        tune.report({"val_loss": val_loss, "val_accuracy": accuracy})


class Progress(tune.Callback):
    """Prints a line every ``every`` finished trials: how many ASHA stopped, the best loss."""

    def __init__(self, n_trials: int, epochs: int, every: int = 10) -> None:
        self.n_trials, self.epochs, self.every = n_trials, epochs, every
        self.finished: dict[str, dict] = {}

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._finished(trial.trial_id, trial.last_result)

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._finished(trial.trial_id, {})

    def _finished(self, trial_id: str, result: dict) -> None:
        self.finished[trial_id] = result
        done = len(self.finished)
        if done % self.every and done != self.n_trials:
            return
        stopped = sum(r.get("training_iteration", 0) < self.epochs for r in self.finished.values())
        best = min(
            (r["val_loss"] for r in self.finished.values() if "val_loss" in r), default=math.nan
        )
        print(
            f"  {done}/{self.n_trials} trials finished, {stopped} of them stopped early by "
            f"ASHA (or crashed); best validation loss {best:.4f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage-path", default=None, help="Tune's results folder")
    parser.add_argument("--smoke", action="store_true", help="a few short trials (for tests)")
    args = parser.parse_args()
    trials, epochs, startup = (4, 2, 2) if args.smoke else (args.trials, args.epochs, 10)
    # Tune's classic console output is silent at verbose=0 (the new one prints a banner); the
    # script prints its own progress.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")

    searcher = BORESearch(n_startup_trials=startup, seed=args.seed)
    sources = track_proposals(searcher)  # for the report below; not needed to tune
    scheduler = ASHAScheduler(max_t=epochs, grace_period=1, reduction_factor=3)
    tuner = tune.Tuner(
        train_mlp,
        param_space={**SPACE, "epochs": epochs},
        tune_config=tune.TuneConfig(
            search_alg=searcher,
            scheduler=scheduler,
            metric="val_loss",
            mode="min",
            num_samples=trials,
            max_concurrent_trials=2,
            reuse_actors=True,  # one worker process per slot: torch is imported once
        ),
        run_config=tune.RunConfig(
            name="bore_asha_digits",
            storage_path=args.storage_path,
            callbacks=[Progress(trials, epochs)],
            verbose=0,
        ),
    )
    results = tuner.fit()

    best = results.get_best_result(metric="val_loss", mode="min")
    states = collections.Counter(o.state.name for o in searcher.observations.values())
    print(f"{len(results)} trials; as BORE saw them: {dict(states)} (PRUNED: stopped by ASHA)")
    print(sources.summary(len(results)))
    last_losses = {r.metrics.get("trial_id"): r.metrics.get("val_loss") for r in results}
    print(sources.best_by_source(last_losses) + " (last reported loss)")
    print(
        f"best validation loss {best.metrics['val_loss']:.4f}, accuracy "
        f"{best.metrics['val_accuracy']:.3f}, after {best.metrics['training_iteration']} epochs"
    )
    print("best configuration:", {k: best.config[k] for k in ("model", "optimizer")})
    print("results in", results.experiment_path)


if __name__ == "__main__":
    main()
