"""Cold and warm asks, and resident memory, on long studies.

Usage (from the repository root)::

    python -m benchmarks.long_studies --sizes 1000 2000 3000 10000 \\
        --out benchmarks/results/long_studies
    python -m benchmarks.long_studies --sizes 300 --samplers portfolio gp --out /tmp/long_smoke
    python -m benchmarks.long_studies --quality --out /tmp/long_quality   # subset-fit cost

For every size N (``--sizes``) and sampler (``--samplers``; default ``bore cmes portfolio
auto gp tpe``: our four samplers with their defaults, Optuna's ``GPSampler`` and
``TPESampler``), a fresh ``python -m benchmarks.long_studies --child`` process builds an
in-memory study, injects N COMPLETE trials of :func:`objective` (5-D, uniform random
parameters from ``--seed``) with ``study.add_trials``, and times ``--asks`` (6) suggestions,
each ``study.ask()``, five ``suggest_float`` calls and ``study.tell`` with the function's
value (``time.perf_counter``). The first is the cold ask (lazy imports, first fits, caches
built on first use); the warm ask is the mean of the others. The resident set size
(``psutil``) after the asks, and the process's peak (``getrusage``), are reported in MB.

A cell that runs past ``--time-limit`` seconds (default 300) is killed and reported as
``> limit``; GPSampler is skipped above ``--gp-max-n`` (default 3000: at 3,000 trials its cold
ask took about 100 s, and it grows as ``N³``). A sampler that is not importable (an older
``bore_samplers`` without ``AutoSampler``) is reported as skipped with the reason.

``--quality`` runs the quality smoke of the subset fit instead: ``--quality-seeds`` runs of
the portfolio for ``--quality-trials`` trials on :func:`objective`, once with the GPs fitted
on at most ``--quality-n-max`` observations
(:data:`~bore_samplers.models.model_set.N_MAX_FIT`) and once on all of them, and the best
value of each run.

Writes ``<out>/README.md`` (the command, the table) and ``<out>/summary.json``
(``quality.md`` / ``quality.json`` with ``--quality``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (
    atomic_write_text,
    environment_lines,
    load_average,
    markdown_table,
    write_json,
)

SAMPLERS = ("bore", "cmes", "portfolio", "auto", "gp", "tpe")
_CLASSES = {
    "bore": "BORESampler",
    "cmes": "CMESSampler",
    "portfolio": "PortfolioSampler",
    "auto": "AutoSampler",
}
N_DIMS = 5
PARAMS = [f"x{i}" for i in range(N_DIMS)]


def objective(x: np.ndarray) -> float:
    """Styblinski-Tang in 5-D on ``[-5, 5]^5`` (minimum about -195.8 at ``x_i ≈ -2.9035``)."""
    x = np.asarray(x, dtype=float)
    return float(0.5 * np.sum(x**4 - 16.0 * x**2 + 5.0 * x))


def _make_sampler(name: str, seed: int) -> Any:
    import optuna

    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    import bore_samplers

    return getattr(bore_samplers, _CLASSES[name])(seed=seed)


def _unavailable(name: str) -> str | None:
    if name not in SAMPLERS:
        return f"unknown sampler {name!r}; choose from {list(SAMPLERS)}"
    if name in _CLASSES:
        import bore_samplers

        if not hasattr(bore_samplers, _CLASSES[name]):
            return f"bore_samplers has no {_CLASSES[name]} on this branch"
    return None


def _ask_tell(study: Any) -> float:
    trial = study.ask()
    x = np.array([trial.suggest_float(name, -5.0, 5.0) for name in PARAMS])
    study.tell(trial, objective(x))
    return float(np.min(x))  # touch the values (nothing timed depends on it)


def child(sampler: str, n: int, seed: int, asks: int) -> dict[str, Any]:
    """One cell: N injected trials, then ``asks`` timed suggestions (run in a fresh process)."""
    import optuna
    import psutil

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=_make_sampler(sampler, seed))
    rng = np.random.default_rng(seed)
    distributions = {name: optuna.distributions.FloatDistribution(-5.0, 5.0) for name in PARAMS}
    points = rng.uniform(-5.0, 5.0, size=(n, N_DIMS))
    study.add_trials(
        [
            optuna.trial.create_trial(
                params=dict(zip(PARAMS, map(float, x), strict=True)),
                distributions=distributions,
                value=objective(x),
            )
            for x in points
        ]
    )
    times = []
    for _ in range(asks):
        start = time.perf_counter()
        _ask_tell(study)
        times.append(time.perf_counter() - start)
    rss = psutil.Process().memory_info().rss / 2**20
    scale = 2**10 if sys.platform != "darwin" else 2**20  # ru_maxrss: KiB on Linux
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    return {
        "sampler": sampler,
        "n": n,
        "times_s": times,
        "cold_s": times[0],
        "warm_s": statistics.fmean(times[1:]) if len(times) > 1 else math.nan,
        "rss_mb": rss,
        "peak_rss_mb": peak,
        "best": float(study.best_value),
    }


def _run_cell(sampler: str, n: int, args: argparse.Namespace) -> dict[str, Any]:
    reason = _unavailable(sampler)
    if reason is None and sampler == "gp" and n > args.gp_max_n:
        reason = f"GPSampler skipped above --gp-max-n {args.gp_max_n} (cost grows as N³)"
    if reason is not None:
        return {"sampler": sampler, "n": n, "status": "skipped", "reason": reason}
    command = [sys.executable, "-m", "benchmarks.long_studies", "--child", sampler, str(n)]
    command += ["--seed", str(args.seed), "--asks", str(args.asks)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.time_limit, check=False
        )
    except subprocess.TimeoutExpired:
        return {"sampler": sampler, "n": n, "status": "timeout", "limit_s": args.time_limit}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"sampler": sampler, "n": n, "status": "failed", "reason": " | ".join(tail)}
    return {**json.loads(lines[-1]), "status": "ok"}


def _cell_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return "not run"
    status = cell["status"]
    if status == "ok":
        return f"{cell['cold_s']:.2f} / {cell['warm_s']:.2f} / {cell['rss_mb']:.0f}"
    if status == "timeout":
        return f"> {cell['limit_s']:.0f} s"
    return status


def report(
    cells: list[dict[str, Any]], sizes: list[int], samplers: list[str], argv: list[str]
) -> str:
    """The Markdown summary: one row per sampler, one column per size."""
    by_key = {(c["sampler"], c["n"]): c for c in cells}
    rows = [[s, *(_cell_text(by_key.get((s, n))) for n in sizes)] for s in samplers]
    notes = [
        f"* {c['sampler']} at {c['n']}: {c['status']}, {c.get('reason', '')}"
        for c in cells
        if c["status"] in ("skipped", "failed")
    ]
    lines = [
        "# Long studies: cold ask, warm ask and memory",
        "",
        "```",
        "python -m benchmarks.long_studies " + " ".join(argv),
        "```",
        "",
        *environment_lines("benchmarks.long_studies", argv),
        f"- Load average at the end: {load_average()}",
        "",
        "Each cell: cold ask s / mean warm ask s / resident MB after the asks, in a fresh "
        "process with N injected complete trials of a 5-D function (in-memory storage).",
        "",
        markdown_table(["sampler", *(f"N = {n}" for n in sizes)], rows),
        "",
        *notes,
    ]
    return "\n".join(lines) + "\n"


def quality(args: argparse.Namespace) -> dict[str, Any]:
    """Best values of the portfolio with a small fit subset and with none, paired by seed."""
    import optuna

    import bore_samplers
    from bore_samplers.models import model_set

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    results: dict[str, list[float]] = {}
    for label, n_max in ((f"n_max={args.quality_n_max}", args.quality_n_max), ("all", None)):
        results[label] = []
        for seed in range(args.quality_seeds):
            model_set.N_MAX_FIT = n_max  # read when the sampler's fit policy is made
            sampler = bore_samplers.PortfolioSampler(seed=seed)
            study = optuna.create_study(sampler=sampler)
            start = time.perf_counter()
            for _ in range(args.quality_trials):
                _ask_tell(study)
            results[label].append(float(study.best_value))
            print(
                f"{label} seed {seed}: best {study.best_value:.3f} "
                f"({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 3000, 10000])
    parser.add_argument("--samplers", nargs="+", default=list(SAMPLERS))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/long_studies"))
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--gp-max-n", type=int, default=3000)
    parser.add_argument("--asks", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("SAMPLER", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--quality-seeds", type=int, default=5)
    parser.add_argument("--quality-trials", type=int, default=200)
    parser.add_argument("--quality-n-max", type=int, default=100)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.seed, args.asks)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.quality:
        results = quality(args)
        rows = [
            [label, f"{statistics.fmean(v):.3f}", " ".join(f"{b:.2f}" for b in v)]
            for label, v in results.items()
        ]
        text = "\n".join(
            [
                "# Subset fit: best value of the portfolio (lower is better)",
                "",
                "```",
                "python -m benchmarks.long_studies " + " ".join(argv),
                "```",
                "",
                *environment_lines("benchmarks.long_studies", argv),
                "",
                markdown_table(["fit rows", "mean best", "per seed"], rows),
            ]
        )
        atomic_write_text(args.out / "quality.md", text + "\n")
        write_json(args.out / "quality.json", {"argv": argv, "results": results})
        print(text)
        return
    cells = []
    for n in args.sizes:
        for sampler in args.samplers:
            cell = _run_cell(sampler, n, args)
            cells.append(cell)
            print(f"N={n} {sampler}: {_cell_text(cell)}", flush=True)
            # Rewritten after every cell, so a long run leaves what it has measured.
            write_json(args.out / "summary.json", {"argv": argv, "cells": cells})
            partial = report(cells, args.sizes, args.samplers, argv)
            atomic_write_text(args.out / "README.md", partial)
    text = report(cells, args.sizes, args.samplers, argv)
    atomic_write_text(args.out / "README.md", text)
    print(text)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
