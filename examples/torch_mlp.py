"""Tune a small torch network on scikit-learn's diabetes data with BORE-MLP and pruning.

Each trial trains for a few epochs and reports its validation loss; Optuna's median pruner
stops unpromising trials early, and BORESampler labels pruned trials as "not good" (see the
README). Optuna shows a progress bar while it runs. At the end the script prints the best
validation MSE and the number of pruned trials; how many trials were model-based proposals,
start-up or fallback, and the best MSE among the trials of each source; and how many
model-based proposals put a float parameter (``lr``, ``weight_decay``) exactly on a bound of
its range, and whether the best trial does. Many such proposals point to a classifier that
extrapolates to the box's faces, or to a range that ends before the optimum (integers are not
counted: a bound is one of their few values). Needs the torch extra: ``pip install ".[torch]"``
(and ``--classifier xgboost`` the xgboost extra).

    python examples/torch_mlp.py [--trials 30] [--classifier {mlp,xgboost,rf}] [--smoke]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys

try:
    import torch
except ImportError:
    sys.exit('This example needs torch: pip install ".[torch]"')
import optuna
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bore_samplers import BORESampler
from bore_samplers.integrations.reporting import track_proposals

EPOCHS = 20


def load_data() -> tuple[torch.Tensor, ...]:
    """Standardised train/validation split of the diabetes regression data."""
    data, target = load_diabetes(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(data, target, random_state=0)
    x_scaler, y_scaler = StandardScaler().fit(x_train), StandardScaler().fit(y_train[:, None])
    arrays = (
        x_scaler.transform(x_train),
        x_scaler.transform(x_val),
        y_scaler.transform(y_train[:, None]),
        y_scaler.transform(y_val[:, None]),
    )
    return tuple(torch.as_tensor(a, dtype=torch.float32) for a in arrays)


def objective(trial: optuna.Trial, epochs: int = EPOCHS) -> float:
    """Validation mean squared error (standardised target) after ``epochs`` epochs."""
    x_train, x_val, y_train, y_val = load_data()
    width = trial.suggest_int("width", 8, 256, log=True)
    depth = trial.suggest_int("depth", 1, 3)
    activation = trial.suggest_categorical("activation", ["relu", "tanh"])
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    weight_decay = trial.suggest_float("weight_decay", 1e-6, 1e-1, log=True)
    batch_size = trial.suggest_int("batch_size", 16, 128, step=16)

    torch.manual_seed(trial.number)
    act = torch.nn.ReLU if activation == "relu" else torch.nn.Tanh
    layers: list[torch.nn.Module] = []
    n_in = x_train.shape[1]
    for _ in range(depth):
        layers += [torch.nn.Linear(n_in, width), act()]
        n_in = width
    model = torch.nn.Sequential(*layers, torch.nn.Linear(n_in, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.MSELoss()

    val_loss = float("inf")
    for epoch in range(epochs):
        order = torch.randperm(len(x_train))
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            optimizer.zero_grad()
            loss_fn(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        with torch.no_grad():
            val_loss = float(loss_fn(model(x_val), y_val))
        trial.report(val_loss, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return val_loss


def floats_on_bounds(trial: optuna.trial.FrozenTrial) -> list[str]:
    """The trial's continuous float parameters that sit on a bound of their range."""
    names = []
    for name, dist in trial.distributions.items():
        if isinstance(dist, optuna.distributions.FloatDistribution) and dist.step is None:
            value = trial.params[name]
            # Relative tolerance: a bound decoded from the log scale may be off by an ulp.
            if any(math.isclose(value, bound, rel_tol=1e-9) for bound in (dist.low, dist.high)):
                names.append(name)
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--classifier", default="mlp", choices=["mlp", "xgboost", "rf"])
    parser.add_argument("--smoke", action="store_true", help="20 short trials (for tests)")
    args = parser.parse_args()
    if args.classifier == "xgboost" and importlib.util.find_spec("xgboost") is None:
        sys.exit('This example needs xgboost for --classifier xgboost: pip install ".[xgboost]"')
    # Smoke: 10 start-up and 10 model-based trials of 3 epochs.
    n_trials, epochs = (20, 3) if args.smoke else (args.trials, EPOCHS)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    torch.set_num_threads(1)
    sampler = BORESampler(classifier=args.classifier, seed=0)
    sources = track_proposals(sampler)  # for the report below; not needed to tune
    study = optuna.create_study(
        sampler=sampler,
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=5),
    )
    study.optimize(
        lambda trial: objective(trial, epochs), n_trials=n_trials, show_progress_bar=True
    )
    pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
    print(f"Best validation MSE {study.best_value:.4f} ({pruned} trials pruned)")
    print(sources.summary(len(study.trials)))
    print(sources.best_by_source({t.number: t.value for t in study.trials}))

    model_based = [study.trials[number] for number in sources.trials("model")]
    on_bounds = [floats_on_bounds(t) for t in model_based]
    per_param = ", ".join(
        f"{name}: {sum(name in names for names in on_bounds)}" for name in ("lr", "weight_decay")
    )
    print(
        f"model-based proposals with a float parameter on a bound: "
        f"{sum(bool(names) for names in on_bounds)} of {len(model_based)} ({per_param})"
    )
    best_on_bounds = ", ".join(floats_on_bounds(study.best_trial)) or "none"
    print(f"best trial's float parameters on a bound: {best_on_bounds}")
    print(f"Best parameters: {study.best_params}")


if __name__ == "__main__":
    main()
