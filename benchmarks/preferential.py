"""Preferential BO with a simulated person: MUC against optuna-dashboard's sampler and baselines.

Protocol (after Fauvel & Chalk, *Efficient Exploration in Binary and Preferential Bayesian
Optimization*, arXiv preprint, 2021, section 5):

* **Functions.** Standard 2-4-D test functions, negated (higher is better) and scaled to mean 0
  and variance 1 over their box (estimated on 2^16 scrambled Sobol points): Branin (2-D),
  six-hump camel (2-D), Hartmann (3-D) and Styblinski-Tang (4-D).
* **The person.** An optuna-dashboard preferential study (``create_study(n_generate=...)``,
  in memory) shows ``n_generate`` trials; the simulated person clicks the worst of them by the
  utility plus independent Gaussian noise of standard deviation ``1/√2`` per trial, so that a
  duel is won with probability ``Φ(f(x) - f(x'))``, the paper's likelihood (eq. 4). A click
  reports the worst as worse than each of the others (``n_generate - 1`` duels); the generator
  loop (``while study.should_generate(): study.ask() ...``) then fills the empty place.
* **Samplers**, all at the same number of clicks: ``muc`` (:class:`~bore_samplers.
  integrations.preferential.PreferentialSampler`, the Maximally Uncertain Challenge),
  ``thompson`` (the same sampler with ``acquisition="thompson"``: dueling Thompson sampling),
  ``pgp`` (optuna-dashboard's ``PreferentialGPSampler``, its default; needs BoTorch) and
  ``random`` (Optuna's ``RandomSampler``).
* **Referee**, the same for every sampler: one common preference model (a probit preference GP,
  Laplace, fixed seed, 3 hyperparameter starts) is fitted to all of the study's duels and ranks
  the compared configurations by posterior mean utility; the score is the true scaled utility
  of its first. Also reported: the best true utility among all trials shown (model-free).
* **Ranks.** Per function, ``n_generate`` and seed the samplers are ranked by the referee's
  score (1 = best, ties averaged); mean ranks with their standard errors over functions and
  seeds, and the fraction of paired runs that MUC wins against each other sampler.
* **Time per proposal**: wall time of ``study.ask()`` plus the suggest calls, for the trials
  proposed after the first preference (the model-based ones), with one thread per process
  (BLAS, OpenMP and torch).

A side measurement compares the greedy and the joint maximisation of eq. 20 (three new
challengers beside one trial on the screen) on states of simulated studies: the value of the
objective reached and the time.

Run from the repository root (``nice -n 19`` on a shared machine)::

    python -m benchmarks.preferential --seeds 10
    python -m benchmarks.preferential --smoke --out /tmp/pref_smoke   # a quick check

Results go to ``benchmarks/results/preferential/`` (``results.md``, ``results.json`` and
``referee.png``); runs already in ``results.json`` are reused (``--fresh`` to start over).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from scipy.stats import qmc, rankdata

from benchmarks.harness import (
    atomic_write_text,
    environment_lines,
    format_mean_se,
    limit_threads,
    markdown_table,
    mean_se,
)

SAMPLERS = ("muc", "pgp", "thompson", "random")
DEFAULT_OUT = Path("benchmarks/results/preferential")
#: Standard deviation of the person's noise on each trial's utility: a duel is then won with
#: probability Phi(f(x) - f(x')), the probit likelihood of the paper.
DEFAULT_NOISE = 1.0 / math.sqrt(2.0)
CHECKPOINT_EVERY = 5


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Compact JSON (the runs keep every trial's parameters and duels)."""
    atomic_write_text(path, json.dumps(payload, separators=(",", ":")) + "\n")


# ----------------------------------------------------------------------------- functions
def _branin(x: np.ndarray) -> np.ndarray:
    b, c, t = 5.1 / (4.0 * math.pi**2), 5.0 / math.pi, 1.0 / (8.0 * math.pi)
    x1, x2 = x[:, 0], x[:, 1]
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * np.cos(x1) + 10.0


def _camel(x: np.ndarray) -> np.ndarray:
    x1, x2 = x[:, 0], x[:, 1]
    return (4.0 - 2.1 * x1**2 + x1**4 / 3.0) * x1**2 + x1 * x2 + (-4.0 + 4.0 * x2**2) * x2**2


_H3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_A = np.array([[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]])
_H3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)


def _hartmann3(x: np.ndarray) -> np.ndarray:
    inner = np.sum(_H3_A[None] * (x[:, None, :] - _H3_P[None]) ** 2, axis=2)
    return -np.exp(-inner) @ _H3_ALPHA


def _styblinski_tang(x: np.ndarray) -> np.ndarray:
    return 0.5 * np.sum(x**4 - 16.0 * x**2 + 5.0 * x, axis=1)


@dataclass(frozen=True)
class TestFunction:
    """A function to minimise on a box, seen by the person as a scaled utility to maximise."""

    name: str
    low: tuple[float, ...]
    high: tuple[float, ...]
    raw: Callable[[np.ndarray], np.ndarray]
    minimum: float

    @property
    def dim(self) -> int:
        return len(self.low)

    def distributions(self) -> dict[str, optuna.distributions.FloatDistribution]:
        return {
            f"x{i}": optuna.distributions.FloatDistribution(lo, hi)
            for i, (lo, hi) in enumerate(zip(self.low, self.high, strict=True))
        }

    @cache  # noqa: B019 - a handful of module-level instances, cached for the process
    def moments(self) -> tuple[float, float]:
        """Mean and standard deviation of the raw function over the box (2^16 Sobol points)."""
        unit = qmc.Sobol(self.dim, scramble=True, seed=0).random_base2(16)
        values = self.raw(np.asarray(self.low) + unit * (np.asarray(self.high) - self.low))
        return float(values.mean()), float(values.std())

    def utility(self, x: np.ndarray) -> np.ndarray:
        """``-(f(x) - mean) / std``: mean 0, variance 1 over the box, higher is better."""
        mean, std = self.moments()
        return -(self.raw(np.atleast_2d(x)) - mean) / std

    @property
    def best_utility(self) -> float:
        mean, std = self.moments()
        return -(self.minimum - mean) / std

    def params_to_x(self, params: dict[str, Any]) -> np.ndarray:
        return np.array([[params[f"x{i}"] for i in range(self.dim)]], dtype=float)


FUNCTIONS: dict[str, TestFunction] = {
    f.name: f
    for f in [
        TestFunction("branin", (-5.0, 0.0), (10.0, 15.0), _branin, 0.39788735772973816),
        TestFunction("camel", (-3.0, -2.0), (3.0, 2.0), _camel, -1.0316284534898774),
        TestFunction("hartmann3", (0.0,) * 3, (1.0,) * 3, _hartmann3, -3.86278214782076),
        TestFunction(
            "styblinski-tang4", (-5.0,) * 4, (5.0,) * 4, _styblinski_tang, -39.16616570377142 * 4
        ),
    ]
}


# ----------------------------------------------------------------------------- samplers
def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """A fresh sampler by benchmark name."""
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "pgp":
        from optuna_dashboard.preferential.samplers.gp import PreferentialGPSampler

        return PreferentialGPSampler(seed=seed)
    from bore_samplers.integrations.preferential import PreferentialSampler

    if name == "muc":
        return PreferentialSampler(seed=seed)
    if name == "thompson":
        return PreferentialSampler(seed=seed, acquisition="thompson")
    raise ValueError(f"Unknown sampler {name!r}; choose from {SAMPLERS}.")


def unavailable_reason(name: str) -> str | None:
    """Why a sampler cannot run here (``None`` if it can)."""
    try:
        make_sampler(name, 0)
    except ImportError as error:
        return f"{type(error).__name__}: {error}"
    return None


# ----------------------------------------------------------------------------- referee
def referee(
    function: TestFunction, points: Sequence[Sequence[float]], duels: Sequence[Sequence[int]]
) -> float:
    """True utility of the configuration the common preference model ranks first.

    ``points`` are the trials' parameters by trial number and ``duels`` ``(winner, loser)``
    trial numbers (a third entry, the click, is ignored).
    """
    from bore_samplers.integrations.optuna import search_space_from_distributions
    from bore_samplers.proposers.preferential import PreferentialProposer

    space = search_space_from_distributions(function.distributions())
    configs = [{f"x{i}": float(v) for i, v in enumerate(point)} for point in points]
    pairs = [(int(d[0]), int(d[1])) for d in duels]
    # A fresh model each time, the same settings for every sampler: no warm start carried over.
    common = PreferentialProposer(n_fit_restarts=2, seed=0)
    best = common.inferred_best(space, configs, pairs, over="observed")
    return float(function.utility(function.params_to_x(best))[0])


def referee_curve(function: TestFunction, run: dict[str, Any]) -> list[tuple[int, float]]:
    """The referee's score after every ``CHECKPOINT_EVERY`` clicks and at the end."""
    clicks = run["clicks"]
    marks = [c for c in range(1, clicks + 1) if c % CHECKPOINT_EVERY == 0 or c == clicks]
    return [
        (c, referee(function, run["points"], [d for d in run["duels"] if d[2] <= c]))
        for c in marks
    ]


# ----------------------------------------------------------------------------- one run
def _active(study: Any) -> list[optuna.trial.FrozenTrial]:
    """The trials on the screen (optuna-dashboard's active trials)."""
    from optuna_dashboard.preferential._system_attrs import (
        get_preferences,
        get_skipped_trial_ids,
    )

    attrs = study._study._storage.get_study_system_attrs(study._study._study_id)
    worse = {w for _, w in get_preferences(attrs)}
    skipped = set(get_skipped_trial_ids(attrs))
    states = (optuna.trial.TrialState.RUNNING, optuna.trial.TrialState.COMPLETE)
    return [
        t
        for t in study.get_trials(deepcopy=False, states=states)
        if t.number not in worse and t._trial_id not in skipped
    ]


def _time_limit(signum: int, frame: Any) -> None:
    raise TimeoutError("no result within the run's time limit (--max-run-seconds)")


def run_one(
    function_name: str,
    sampler_name: str,
    n_generate: int,
    seed: int,
    clicks: int,
    noise: float,
    max_seconds: int = 0,
) -> dict[str, Any]:
    """One simulated preferential study; returns its scores and proposal times.

    With ``max_seconds`` the run raises :class:`TimeoutError` once it has taken that long (a
    sampler that hangs is reported as such instead of stopping the benchmark).
    """
    # Imported before the alarm is set: an import cut short would leave a broken module behind.
    import optuna_dashboard.preferential  # noqa: F401

    if max_seconds > 0:
        signal.signal(signal.SIGALRM, _time_limit)
        signal.alarm(max_seconds)
    try:
        return _run_one(function_name, sampler_name, n_generate, seed, clicks, noise)
    finally:
        if max_seconds > 0:
            signal.alarm(0)


def _run_one(
    function_name: str, sampler_name: str, n_generate: int, seed: int, clicks: int, noise: float
) -> dict[str, Any]:
    limit_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")
    if sampler_name == "pgp":
        import torch

        torch.set_num_threads(1)
    from optuna_dashboard.preferential import create_study

    function = FUNCTIONS[function_name]
    distributions = function.distributions()
    study = create_study(n_generate=n_generate, sampler=make_sampler(sampler_name, seed))
    # The person's noise depends on the problem and seed only, not on the sampler.
    person = np.random.default_rng([seed, n_generate, sorted(FUNCTIONS).index(function_name)])
    times: list[float] = []
    duels: list[tuple[int, int, int]] = []
    shown_best = -math.inf
    started = time.perf_counter()
    for click in range(1, clicks + 1):
        while study.should_generate():
            tic = time.perf_counter()
            trial = study.ask()
            params = {
                name: trial.suggest_float(name, d.low, d.high) for name, d in distributions.items()
            }
            if click > 1:  # the first preference is reported at the end of click 1
                times.append(time.perf_counter() - tic)
            shown_best = max(shown_best, float(function.utility(function.params_to_x(params))[0]))
        active = _active(study)
        utilities = np.array([function.utility(function.params_to_x(t.params))[0] for t in active])
        worst = int(np.argmin(utilities + noise * person.standard_normal(len(active))))
        study.report_preference([t for k, t in enumerate(active) if k != worst], active[worst])
        duels += [
            (t.number, active[worst].number, click) for k, t in enumerate(active) if k != worst
        ]
    points = [[t.params[name] for name in distributions] for t in study.trials]
    run = {
        "function": function_name,
        "sampler": sampler_name,
        "n_generate": n_generate,
        "seed": seed,
        "clicks": clicks,
        "noise": noise,
        "best_shown": shown_best,
        "n_trials": len(study.trials),
        "proposal_seconds": times,
        "wall_seconds": time.perf_counter() - started,
        "points": points,
        "duels": duels,
    }
    run["curve"] = referee_curve(function, run)
    run["referee"] = run["curve"][-1][1]
    return run


def _recompute(run: dict[str, Any]) -> list[tuple[int, float]]:
    limit_threads(1)
    return referee_curve(FUNCTIONS[run["function"]], run)


# ----------------------------------------------------------------------------- joint vs greedy
def batch_modes(n_states: int, seed: int = 0) -> dict[str, Any]:
    """Greedy against joint eq. 20: three challengers beside the champion, on Hartmann-3.

    Each state is the data of a random-sampler study after 15 clicks with ``n_generate = 4``
    (45 duels); both modes see the same fitted model (proposers with the same seed), and the
    objective is evaluated by :func:`~bore_samplers.proposers.preferential.batch_uncertainty`
    on the batch of champion plus challengers (pairs among challengers included).
    """
    limit_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    from optuna_dashboard.preferential import create_study

    from bore_samplers.integrations.optuna import search_space_from_distributions
    from bore_samplers.integrations.preferential import preference_data
    from bore_samplers.proposers.preferential import PreferentialProposer, batch_uncertainty

    function = FUNCTIONS["hartmann3"]
    distributions = function.distributions()
    space = search_space_from_distributions(distributions)
    rows = []
    for state in range(n_states):
        rng = np.random.default_rng([seed, state])
        study = create_study(
            n_generate=4, sampler=optuna.samplers.RandomSampler(seed=int(rng.integers(2**31)))
        )
        for _ in range(15):
            while study.should_generate():
                trial = study.ask()
                for name, d in distributions.items():
                    trial.suggest_float(name, d.low, d.high)
            active = _active(study)
            u = np.array([function.utility(function.params_to_x(t.params))[0] for t in active])
            worst = int(np.argmin(u + DEFAULT_NOISE * rng.standard_normal(len(active))))
            study.report_preference([t for k, t in enumerate(active) if k != worst], active[worst])
        data = preference_data(study, distributions)
        result = {}
        for mode in ("greedy", "joint"):
            proposer = PreferentialProposer(batch=mode, seed=state)
            model = PreferentialProposer(seed=state).fit(space, data.configs, data.duels)
            champion_only: list[int] = []  # nothing shown: the champion comes first
            tic = time.perf_counter()
            batch = proposer.propose_batch(space, data.configs, data.duels, champion_only, 4)
            seconds = time.perf_counter() - tic
            features = space.features(space.encode([p.params for p in batch]))
            result[mode] = (batch_uncertainty(model, features, fixed=1), seconds)
        rows.append(
            {
                "state": state,
                "greedy_value": result["greedy"][0],
                "joint_value": result["joint"][0],
                "greedy_seconds": result["greedy"][1],
                "joint_seconds": result["joint"][1],
            }
        )
    return {"function": "hartmann3", "n_new": 3, "rows": rows}


# ----------------------------------------------------------------------------- paired timing
def paired_timing(
    runs: list[dict[str, Any]], samplers: Sequence[str], repeats: int
) -> list[dict[str, Any]]:
    """Seconds per proposal of fresh samplers on the same study states, interleaved.

    The states are the final ones (all duels of 30 clicks) of the ``random`` runs of seed 0;
    every sampler starts cold (no warm start) and proposes one trial, in turn, ``repeats``
    times, so that all see the same load on a shared machine.
    """
    limit_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")
    if "pgp" in samplers:
        import torch

        torch.set_num_threads(1)
    from optuna_dashboard.preferential import create_study

    rows = []
    states = [r for r in runs if r["sampler"] == "random" and r["seed"] == 0]
    for run in sorted(states, key=lambda r: (r["n_generate"], r["function"])):
        function = FUNCTIONS[run["function"]]
        distributions = function.distributions()
        study = create_study(n_generate=run["n_generate"], sampler=optuna.samplers.RandomSampler())
        inner = study._study
        for point in run["points"]:
            params = {f"x{i}": float(v) for i, v in enumerate(point)}
            inner.add_trial(
                optuna.trial.create_trial(params=params, distributions=distributions, value=0.0)
            )
        pairs = [[int(d[0]), int(d[1])] for d in run["duels"]]
        inner._storage.set_study_system_attr(inner._study_id, "preference:valuesbench", pairs)
        seconds: dict[str, list[float]] = {s: [] for s in samplers}
        for repeat in range(repeats):
            for name in samplers:
                sampler = make_sampler(name, repeat)
                trial_id = inner._storage.create_new_trial(inner._study_id)
                frozen = inner._storage.get_trial(trial_id)
                tic = time.perf_counter()
                space = sampler.infer_relative_search_space(inner, frozen)
                sampler.sample_relative(inner, frozen, space)
                seconds[name].append(time.perf_counter() - tic)
                inner._storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
        rows.append(
            {
                "function": run["function"],
                "n_generate": run["n_generate"],
                "n_duels": len(pairs),
                "seconds": seconds,
            }
        )
        print(
            f"timing {run['function']} n_generate={run['n_generate']}: "
            + ", ".join(f"{k} {np.mean(v):.3f} s" for k, v in seconds.items()),
            flush=True,
        )
    return rows


# ----------------------------------------------------------------------------- report
def _rank_table(runs: list[dict[str, Any]], samplers: Sequence[str]) -> tuple[str, dict]:
    """Mean ranks (1 = best) over the (function, n_generate, seed) cells every sampler ran."""
    cells: dict[tuple[str, int, int], dict[str, float]] = {}
    for run in runs:
        cells.setdefault((run["function"], run["n_generate"], run["seed"]), {})[run["sampler"]] = (
            run["referee"]
        )
    complete = {k: v for k, v in cells.items() if all(s in v for s in samplers)}
    ranks: dict[tuple[str, int | str], list[float]] = {}
    wins: dict[tuple[str, int | str], list[float]] = {}
    for (_, n_generate, _), scores in complete.items():
        values = np.array([scores[s] for s in samplers])
        cell_ranks = rankdata(-values)
        for group in (n_generate, "all"):
            for s, r in zip(samplers, cell_ranks, strict=True):
                ranks.setdefault((s, group), []).append(float(r))
                if s != "muc" and "muc" in samplers:
                    diff = scores["muc"] - scores[s]
                    wins.setdefault((s, group), []).append(1.0 if diff > 0 else 0.5 * (diff == 0))
    groups = sorted({n for (_, n, _) in complete}) + ["all"]
    headers = ["sampler"] + [f"mean rank, n_generate = {g}" for g in groups[:-1]] + ["all"]
    rows = [
        [s] + [format_mean_se(ranks.get((s, g), []), ".2f", ".2f") for g in groups]
        for s in samplers
    ]
    table = markdown_table(headers, rows)
    if "muc" in samplers:
        headers = ["MUC against"] + [f"n_generate = {g}" for g in groups[:-1]] + ["all"]
        rows = [
            [s]
            + [f"{100 * np.mean(wins[(s, g)]):.0f} %" if wins.get((s, g)) else "–" for g in groups]
            for s in samplers
            if s != "muc"
        ]
        table += "\nShare of paired runs (same function, n_generate and seed) in which MUC's "
        table += "referee score is higher (ties count half):\n\n" + markdown_table(headers, rows)
    summary = {f"{s}@{g}": mean_se(v) for (s, g), v in ranks.items()}
    return table, {"n_cells": len(complete), "mean_ranks": summary}


def _score_tables(runs: list[dict[str, Any]], samplers: Sequence[str], key: str) -> str:
    out = []
    for n_generate in sorted({r["n_generate"] for r in runs}):
        headers = ["function (max)"] + list(samplers)
        rows = []
        for name, function in FUNCTIONS.items():
            chosen = [r for r in runs if r["function"] == name and r["n_generate"] == n_generate]
            if not chosen:
                continue
            rows.append(
                [f"{name} ({function.best_utility:.2f})"]
                + [
                    format_mean_se([r[key] for r in chosen if r["sampler"] == s], ".2f", ".2f")
                    + f" (n={sum(r['sampler'] == s for r in chosen)})"
                    for s in samplers
                ]
            )
        out.append(f"n_generate = {n_generate}:\n\n" + markdown_table(headers, rows))
    return "\n".join(out)


def _timing_table(runs: list[dict[str, Any]], samplers: Sequence[str]) -> tuple[str, dict]:
    headers = ["sampler"]
    groups = sorted({r["n_generate"] for r in runs})
    headers += [f"n_generate = {g}: mean (median) s" for g in groups]
    rows, means = [], {}
    for s in samplers:
        row = [s]
        for g in groups:
            times = [
                t
                for r in runs
                if r["sampler"] == s and r["n_generate"] == g
                for t in r["proposal_seconds"]
            ]
            if times:
                means[(s, g)] = float(np.mean(times))
                row.append(f"{np.mean(times):.3f} ({np.median(times):.3f})")
            else:
                row.append("–")
        rows.append(row)
    table = markdown_table(headers, rows)
    if "muc" in samplers and "pgp" in samplers:
        ratios = [
            f"n_generate = {g}: {means[('muc', g)] / means[('pgp', g)]:.3f}"
            for g in groups
            if ("muc", g) in means and ("pgp", g) in means
        ]
        table += "\nMUC's mean time per proposal as a fraction of PreferentialGPSampler's: "
        table += "; ".join(ratios) + " (target: at most 0.2).\n"
    return table, {f"{s}@{g}": v for (s, g), v in means.items()}


def _plot(runs: list[dict[str, Any]], samplers: Sequence[str], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    groups = sorted({r["n_generate"] for r in runs})
    names = [n for n in FUNCTIONS if any(r["function"] == n for r in runs)]
    fig, axes = plt.subplots(
        len(groups), len(names), figsize=(3.6 * len(names), 3.0 * len(groups)), squeeze=False
    )
    for i, g in enumerate(groups):
        for j, name in enumerate(names):
            ax = axes[i][j]
            for s in samplers:
                chosen = [
                    r
                    for r in runs
                    if r["function"] == name and r["n_generate"] == g and r["sampler"] == s
                ]
                if not chosen:
                    continue
                clicks = [c for c, _ in chosen[0]["curve"]]
                values = np.array([[v for _, v in r["curve"]] for r in chosen])
                mean = values.mean(axis=0)
                se = (
                    values.std(axis=0, ddof=1) / math.sqrt(len(values))
                    if len(values) > 1
                    else 0 * mean
                )
                ax.plot(clicks, mean, marker="o", ms=3, label=s)
                ax.fill_between(clicks, mean - se, mean + se, alpha=0.2)
            ax.axhline(FUNCTIONS[name].best_utility, color="grey", lw=0.8, ls="--")
            ax.set_title(f"{name}, n_generate = {g}", fontsize=9)
            ax.set_xlabel("clicks")
            if j == 0:
                ax.set_ylabel("referee: true utility")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(
    out: Path, payload: dict[str, Any], argv: Sequence[str], samplers: Sequence[str]
) -> None:
    runs = payload["runs"]
    rank_table, rank_summary = _rank_table(runs, samplers)
    timing_table, timing_summary = _timing_table(runs, samplers)
    payload["summary"] = {"ranks": rank_summary, "mean_proposal_seconds": timing_summary}
    write_json(out / "results.json", payload)
    plotted = _plot(runs, samplers, out / "referee.png")
    runs_per = "; ".join(
        f"{s}: {sum(r['sampler'] == s for r in runs)} runs, seeds "
        + ",".join(str(x) for x in sorted({r["seed"] for r in runs if r["sampler"] == s}))
        for s in samplers
    )
    lines = [
        "# Preferential BO: Maximally Uncertain Challenge against PreferentialGPSampler",
        "",
        *environment_lines("benchmarks.preferential", argv),
        f"- optuna-dashboard {_version('optuna-dashboard')}, botorch {_version('botorch')}",
        *[f"- Runs produced by: `{command}`" for command in payload.get("commands", [])],
        "",
        "Protocol: see the docstring of `benchmarks/preferential.py`. Functions scaled to mean 0 "
        "and variance 1 (higher is better); the simulated person clicks the worst shown trial "
        f"by utility plus N(0, {payload['noise']:.3f}²) noise per trial; "
        f"{payload['clicks']} clicks per study. Runs ({runs_per}); a run is one function "
        "and one n_generate. Referee: the true utility of the configuration "
        "that one common preference GP, fitted to all of the study's duels, ranks first among "
        "the compared configurations.",
        "",
    ]
    if payload.get("crashed"):
        lines += [
            "Runs in which the sampler raised (no scores; their cells count as incomplete): "
            + "; ".join(
                f"`{c['sampler']}` on {c['function']}, n_generate = {c['n_generate']}, seed "
                f"{c['seed']}: {c['error']}"
                for c in payload["crashed"]
            ),
            "",
        ]
    if payload.get("unavailable"):
        lines += [
            "Samplers that could not run: "
            + "; ".join(f"`{k}` ({v})" for k, v in payload["unavailable"].items()),
            "",
        ]
    lines += [
        f"## Mean ranks by the referee ({rank_summary['n_cells']} complete cells)",
        "",
        "Cells (function, n_generate, seed) in which every sampler ran.",
        "",
        rank_table,
    ]
    cheap = [s for s in samplers if s != "pgp"]
    if "pgp" in samplers and len(cheap) > 1:
        cheap_table, cheap_summary = _rank_table(runs, cheap)
        payload["summary"]["ranks_without_pgp"] = cheap_summary
        write_json(out / "results.json", payload)
        lines += [
            f"### Without PreferentialGPSampler ({cheap_summary['n_cells']} complete cells)",
            "",
            "The same ranking among the other samplers, over every cell they ran, including "
            "those in which the dashboard's sampler did not finish.",
            "",
            cheap_table,
        ]
    lines += [
        "## Referee score (true scaled utility of the common model's first), mean ± SE",
        "",
        _score_tables(runs, samplers, "referee"),
        "## Best true utility among the trials shown (model-free), mean ± SE",
        "",
        _score_tables(runs, samplers, "best_shown"),
        "## Time per model-based proposal (ask + suggest, one thread)",
        "",
        timing_table,
    ]
    if payload.get("paired_timing"):
        rows = payload["paired_timing"]
        names = list(rows[0]["seconds"])
        table_rows = [
            [r["function"], r["n_generate"], r["n_duels"]]
            + [f"{np.mean(r['seconds'][n]):.3f}" for n in names]
            + (
                [f"{np.mean(r['seconds']['muc']) / np.mean(r['seconds']['pgp']):.3f}"]
                if "muc" in names and "pgp" in names
                else []
            )
            for r in rows
        ]
        headers = ["function", "n_generate", "duels"] + [f"{n} s" for n in names]
        headers += ["muc / pgp"] if "muc" in names and "pgp" in names else []
        lines += [
            "## Paired timing: one cold proposal per sampler on the same final study states",
            "",
            "The final states (30 clicks) of the random runs of seed 0; each sampler is built "
            "fresh (no warm start) and proposes one trial, the samplers taking turns, "
            f"{len(rows[0]['seconds'][names[0]])} times each. One thread per process.",
            "",
            markdown_table(headers, table_rows),
        ]
        if "muc" in names and "pgp" in names:
            ratio = np.mean([np.mean(r["seconds"]["muc"]) for r in rows]) / np.mean(
                [np.mean(r["seconds"]["pgp"]) for r in rows]
            )
            lines += [f"Mean over the states, MUC / PreferentialGPSampler: {ratio:.3f}.", ""]
    if payload.get("batch_modes"):
        rows = payload["batch_modes"]["rows"]
        greedy = np.array([r["greedy_value"] for r in rows])
        joint = np.array([r["joint_value"] for r in rows])
        lines += [
            "## Eq. 20 for three challengers beside the champion: greedy against joint",
            "",
            f"{len(rows)} states of Hartmann-3 studies (random sampler, n_generate = 4, "
            "15 clicks). "
            "Joint: L-BFGS-B over all challengers' coordinates, started from the greedy batch "
            "and from random batches.",
            "",
            markdown_table(
                ["mode", "eq. 20 objective", "seconds per batch"],
                [
                    [
                        "greedy",
                        format_mean_se(greedy, ".4f", ".2g"),
                        format_mean_se([r["greedy_seconds"] for r in rows], ".3f", ".2g"),
                    ],
                    [
                        "joint",
                        format_mean_se(joint, ".4f", ".2g"),
                        format_mean_se([r["joint_seconds"] for r in rows], ".3f", ".2g"),
                    ],
                ],
            ),
            f"Joint / greedy objective: mean {np.mean(joint / greedy):.4f}, "
            f"max {np.max(joint / greedy):.4f}.",
            "",
        ]
    if plotted:
        lines += ["![referee score against clicks](referee.png)", ""]
    atomic_write_text(out / "results.md", "\n".join(lines))


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


# ----------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds first..first+N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--n-generate", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    parser.add_argument("--samplers", nargs="+", default=list(SAMPLERS), choices=list(SAMPLERS))
    parser.add_argument("--noise", type=float, default=DEFAULT_NOISE)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--max-run-seconds", type=int, default=0, help="time limit of one run (0: none)"
    )
    parser.add_argument("--batch-states", type=int, default=10, help="states for greedy vs joint")
    parser.add_argument(
        "--timing-repeats", type=int, default=3, help="paired timing repeats (0: none)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--fresh", action="store_true", help="ignore runs in results.json")
    parser.add_argument(
        "--recompute-referee",
        action="store_true",
        help="recompute every reused run's referee scores from its stored duels",
    )
    parser.add_argument("--smoke", action="store_true", help="1 seed, 6 clicks, 2 functions")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="run no study: report the runs in results.json (with the side measurements)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.clicks, args.batch_states = 1, 6, 1
        args.functions = args.functions[:2]
    limit_threads(1)
    unavailable = {s: r for s in args.samplers if (r := unavailable_reason(s)) is not None}
    for name, reason in unavailable.items():
        print(f"skipping sampler {name}: {reason}", flush=True)
    samplers = [s for s in args.samplers if s not in unavailable]
    args.out.mkdir(parents=True, exist_ok=True)
    previous = args.out / "results.json"
    runs: list[dict[str, Any]] = []
    commands: list[str] = []
    crashed: list[dict[str, Any]] = []
    if previous.exists() and not args.fresh:
        old = json.loads(previous.read_text())
        if old.get("clicks") == args.clicks and math.isclose(old.get("noise", -1.0), args.noise):
            runs, commands = old["runs"], old.get("commands", [])
            crashed = old.get("crashed", [])
    if args.recompute_referee and runs:
        print(f"recomputing the referee of {len(runs)} runs", flush=True)
        with ProcessPoolExecutor(max_workers=max(args.workers, 1)) as pool:
            curves = pool.map(_recompute, runs)
            for run, curve in zip(runs, curves, strict=True):
                run["curve"], run["referee"] = curve, curve[-1][1]
    if args.report_only and not runs:
        parser.error(f"--report-only: no runs with these settings in {previous}")
    # A run that raised (or ran out of time) is reported, not retried, so that running the
    # command again finishes; --fresh starts over.
    done = {(r["function"], r["sampler"], r["n_generate"], r["seed"]) for r in runs + crashed}
    # Seed-major, so that a run cut short leaves whole seeds behind.
    tasks = (
        []
        if args.report_only
        else [
            (f, s, g, seed)
            for seed in range(args.first_seed, args.first_seed + args.seeds)
            for g in args.n_generate
            for f in args.functions
            for s in samplers
            if (f, s, g, seed) not in done
        ]
    )
    payload: dict[str, Any] = {
        "clicks": args.clicks,
        "noise": args.noise,
        "unavailable": unavailable,
        "runs": runs,
        "commands": commands,
        "crashed": crashed,
    }
    print(f"{len(tasks)} runs to do ({len(done)} reused)", flush=True)
    with ProcessPoolExecutor(max_workers=max(args.workers, 1)) as pool:
        futures = {
            pool.submit(run_one, f, s, g, seed, args.clicks, args.noise, args.max_run_seconds): (
                f,
                s,
                g,
                seed,
            )
            for f, s, g, seed in tasks
        }
        for future in as_completed(futures):
            function_name, sampler_name, n_generate, seed = futures[future]
            try:
                result = future.result()
            except Exception as error:  # the sampler's failure is a result, not the end
                message = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
                crashed.append(
                    {
                        "function": function_name,
                        "sampler": sampler_name,
                        "n_generate": n_generate,
                        "seed": seed,
                        "error": message,
                    }
                )
                print(
                    f"{function_name} {sampler_name} n_generate={n_generate} seed={seed}: "
                    f"raised {message}",
                    flush=True,
                )
                write_json(args.out / "results.json", payload)
                continue
            runs.append(result)
            times = result["proposal_seconds"]
            print(
                f"{result['function']:>16} n_generate={result['n_generate']} "
                f"seed={result['seed']:>2} {result['sampler']:>8}: referee "
                f"{result['referee']:+.3f}, best shown {result['best_shown']:+.3f}, "
                f"{np.mean(times) if times else 0:.3f} s/proposal, "
                f"{result['wall_seconds']:.0f} s",
                flush=True,
            )
            write_json(args.out / "results.json", payload)
    timed = [s for s in ("muc", "pgp", "thompson") if s in samplers]
    if args.timing_repeats > 0 and timed:
        print(f"paired timing of {timed}", flush=True)
        payload["paired_timing"] = paired_timing(runs, timed, args.timing_repeats)
    if args.batch_states > 0:
        print(f"greedy vs joint eq. 20 on {args.batch_states} states", flush=True)
        payload["batch_modes"] = batch_modes(args.batch_states)
    write_report(args.out, payload, argv, samplers)
    print(f"wrote {args.out / 'results.md'}", flush=True)


if __name__ == "__main__":
    main()
