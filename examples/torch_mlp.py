"""Tune a small torch network on scikit-learn's diabetes data with BORE-MLP and pruning.

Each trial trains for a few epochs and reports its validation loss; Optuna's median pruner
stops unpromising trials early, and BORESampler labels pruned trials as "not good" (see the
README). Needs the torch extra: ``pip install ".[torch]"``.

    python examples/torch_mlp.py [--trials 30] [--classifier mlp]
"""

from __future__ import annotations

import argparse

import optuna
import torch
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bore_samplers import BORESampler

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


def objective(trial: optuna.Trial) -> float:
    """Validation mean squared error (standardised target) after training."""
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
    for epoch in range(EPOCHS):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--classifier", default="mlp", choices=["mlp", "xgboost", "rf"])
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    torch.set_num_threads(1)
    study = optuna.create_study(
        sampler=BORESampler(classifier=args.classifier, seed=0),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=5),
    )
    study.optimize(objective, n_trials=args.trials, show_progress_bar=True)
    pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
    print(f"Best validation MSE {study.best_value:.4f} ({pruned} trials pruned)")
    print(f"Best parameters: {study.best_params}")


if __name__ == "__main__":
    main()
