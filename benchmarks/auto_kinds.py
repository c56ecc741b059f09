"""AutoSampler against each sampler of ours and Optuna's built-ins, per kind of problem.

Kinds: continuous (smooth, ill-conditioned, multimodal, step-like), mixed integer,
categorical (tabulated main effects and interactions, ordinal grids as integer indices),
conditional (a model choice and each model's own parameters; a network's layer count and each
layer's width),
constrained (``trial.set_constraint``; classic problems of the constrained-BO literature,
most with the optimum on a boundary) and crashing (the objective
raises in a region). Every problem is cheap and deterministic, so the time goes to the
samplers. None of them tuned a sampler of this package, except that the last four
constrained problems were also run, on other seeds, in the side check that chose cMES's
margin below the incumbent.

Each run records the best feasible value after every trial; the report ranks the samplers of a
kind per (problem, seed) by the best value at the last trial (1 = best, ties share), and gives
mean rank ± standard error per kind, and AutoSampler's paired wins / ties / losses.

    python -m benchmarks.auto_kinds --seeds 10 --trials 50 --workers 2 \
        --out benchmarks/results/auto_kinds
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from benchmarks import problems
from benchmarks.harness import (
    StudyRunSpec,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    markdown_table,
    mean_se,
    run_cached,
    write_json,
)

# ----------------------------------------------------------------------------- problems
_TABLE_RNG = np.random.default_rng(20261126)  # fixed tables, the same in every process
_CAT_MAIN = _TABLE_RNG.normal(size=(6, 4))
_CAT_PAIRS = [(0, 3), (1, 4), (2, 5), (0, 1), (3, 5)]
_CAT_INTERACTIONS = _TABLE_RNG.normal(scale=0.8, size=(len(_CAT_PAIRS), 4, 4))
_ORD_LEVELS = (4, 5, 6, 8, 10)
_ORD_CENTRES = _TABLE_RNG.uniform(0.1, 0.9, size=len(_ORD_LEVELS))
_ORD_JITTER = [_TABLE_RNG.normal(scale=0.15, size=k) for k in _ORD_LEVELS]
_STEP_ROTATION = np.linalg.qr(np.random.default_rng(5).normal(size=(5, 5)))[0]


def zakharov5(t: optuna.Trial) -> float:
    x = np.array([t.suggest_float(f"x{i}", -5.0, 10.0) for i in range(5)]) - 1.3
    s = float(np.sum(0.5 * np.arange(1, 6) * x))
    return float(np.sum(x**2) + s**2 + s**4)


def hartmann6(t: optuna.Trial) -> float:
    # The smooth six-dimensional Hartmann function (Dixon & Szego), minimum -3.32237.
    x = np.array([t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)])
    return problems.hartmann6(_coordinates(x))


def rosenbrock4(t: optuna.Trial) -> float:
    # A smooth curved valley whose values span orders of magnitude; minimum 0 at x = 1.
    x = np.array([t.suggest_float(f"x{i}", -2.048, 2.048) for i in range(4)])
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


def rastrigin4(t: optuna.Trial) -> float:
    z = np.array([t.suggest_float(f"x{i}", -5.12, 5.12) for i in range(4)]) - 0.7
    return float(10 * len(z) + np.sum(z**2 - 10 * np.cos(2 * np.pi * z)))


def step_ellipsoid5(t: optuna.Trial) -> float:
    # BBOB's step ellipsoid, simplified: plateaus of a rotated ill-conditioned ellipsoid.
    x = np.array([t.suggest_float(f"x{i}", -5.0, 5.0) for i in range(5)]) - 1.1
    z = np.floor(_STEP_ROTATION @ x + 0.5)
    return float(np.sum(10 ** (2 * np.arange(5) / 4) * z**2) / 100 + 0.01 * np.sum(x**2))


def mixed_quad5(t: optuna.Trial) -> float:
    a = t.suggest_int("a", 0, 2)
    b = t.suggest_int("b", 0, 5)
    c = t.suggest_int("c", 0, 10)
    d = t.suggest_int("d", 0, 15)
    x = t.suggest_float("x", 0.0, 1.0)
    return float(
        0.5 * (a - 1) ** 2
        + 4 * (b / 5 - 0.3) ** 2
        + 6 * (c / 10 - 0.72) ** 2
        + 3 * abs(d / 15 - 0.4)
        + 5 * (x - 0.25) ** 2
        + 0.5 * math.cos(3 * math.pi * x * c / 10)
    )


def mixed_ackley5(t: optuna.Trial) -> float:
    z = np.array(
        [t.suggest_int(f"n{i}", -5, 5) - 1 for i in range(3)]
        + [t.suggest_float(f"x{i}", -5.0, 5.0) - 0.4 for i in range(2)],
        dtype=float,
    )
    d = len(z)
    return float(
        -20 * np.exp(-0.2 * np.sqrt(np.sum(z**2) / d))
        - np.exp(np.sum(np.cos(2 * np.pi * z)) / d)
        + 20
        + math.e
    )


def categorical_table6(t: optuna.Trial) -> float:
    idx = [t.suggest_categorical(f"c{i}", ["a", "b", "c", "d"]) for i in range(6)]
    k = ["abcd".index(v) for v in idx]
    main = sum(_CAT_MAIN[i, k[i]] for i in range(6))
    pairs = sum(_CAT_INTERACTIONS[j, k[p], k[q]] for j, (p, q) in enumerate(_CAT_PAIRS))
    return float(main + pairs)


def ordinal_table5(t: optuna.Trial) -> float:
    total = 0.0
    for i, levels in enumerate(_ORD_LEVELS):
        k = t.suggest_int(f"o{i}", 0, levels - 1)
        total += (k / (levels - 1) - _ORD_CENTRES[i]) ** 2 * (i + 1) + _ORD_JITTER[i][k]
    return float(total)


def conditional_models(t: optuna.Trial) -> float:
    model = t.suggest_categorical("model", ["linear", "tree", "knn"])
    if model == "linear":
        c = math.log10(t.suggest_float("C", 1e-3, 1e3, log=True))
        penalty = t.suggest_categorical("penalty", ["l1", "l2"])
        return 0.20 + 0.02 * (c - 0.5) ** 2 + (0.0 if penalty == "l2" else 0.03)
    if model == "tree":
        depth = t.suggest_int("max_depth", 1, 20)
        leaf = t.suggest_int("min_samples_leaf", 1, 50, log=True)
        criterion = t.suggest_categorical("criterion", ["gini", "entropy"])
        return (
            0.10
            + 0.004 * (depth - 7) ** 2
            + 0.05 * abs(math.log(leaf / 4))
            + (0.0 if criterion == "entropy" else 0.02)
        )
    k = t.suggest_int("n_neighbors", 1, 50)
    weights = t.suggest_categorical("weights", ["uniform", "distance"])
    p = t.suggest_float("p", 1.0, 2.0)
    return 0.15 + 0.0004 * (k - 12) ** 2 + 0.05 * (p - 1.3) ** 2 + (weights == "uniform") * 0.01


def conditional_network(t: optuna.Trial) -> float:
    n_layers = t.suggest_int("n_layers", 1, 3)
    lr = math.log10(t.suggest_float("lr", 1e-5, 1e-1, log=True))
    loss = 0.3 + 0.03 * (lr + 2.5) ** 2 - 0.05 * n_layers
    for i in range(n_layers):
        width = math.log2(t.suggest_int(f"units_{i}", 4, 512, log=True))
        loss += 0.02 * (width - (7 - i)) ** 2 / n_layers
        loss += 0.03 * t.suggest_float(f"dropout_{i}", 0.0, 0.5) * (i == n_layers - 1)
    return float(loss)


def constrained_quad5(t: optuna.Trial) -> float:
    x = np.array([t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(5)])
    t.set_constraint("budget", float(np.sum(x) - 2.0))  # feasible iff sum(x) <= 2
    return float(np.sum((x - np.array([0.9, 0.8, 0.7, 0.2, 0.6])) ** 2))


def gardner2(t: optuna.Trial) -> float:
    # Gardner et al., Bayesian Optimization with Inequality Constraints, ICML 2014, sec. 5.1.
    x1 = t.suggest_float("x1", 0.0, 6.0)
    x2 = t.suggest_float("x2", 0.0, 6.0)
    t.set_constraint("c", math.cos(x1) * math.cos(x2) - math.sin(x1) * math.sin(x2) - 0.5)
    return math.cos(2 * x1) * math.cos(x2) + math.sin(x1)


def gramacy2(t: optuna.Trial) -> float:
    # Gramacy et al., Modeling an Augmented Lagrangian for Blackbox Constrained Optimization,
    # Technometrics 2016: a linear objective, a sinusoidal and a disk constraint.
    x1 = t.suggest_float("x1", 0.0, 1.0)
    x2 = t.suggest_float("x2", 0.0, 1.0)
    t.set_constraint("c1", 1.5 - x1 - 2 * x2 - 0.5 * math.sin(2 * math.pi * (x1**2 - 2 * x2)))
    t.set_constraint("c2", x1**2 + x2**2 - 1.5)
    return x1 + x2


def branin_disk2(t: optuna.Trial) -> float:
    # Gelbart et al., Bayesian Optimization with Unknown Constraints, UAI 2014: Branin inside a
    # disk that excludes two of its three minima.
    x1 = t.suggest_float("x1", -5.0, 10.0)
    x2 = t.suggest_float("x2", 0.0, 15.0)
    t.set_constraint("disk", (x1 - 2.5) ** 2 + (x2 - 7.5) ** 2 - 50.0)
    return problems.branin({"x0": x1, "x1": x2})


def hartmann6_ball(t: optuna.Trial) -> float:
    # Letham et al., Constrained Bayesian Optimization with Noisy Experiments, 2019: Hartmann-6
    # in the unit ball.
    x = np.array([t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)])
    t.set_constraint("norm", float(np.linalg.norm(x) - 1.0))
    return problems.hartmann6(_coordinates(x))


def spring3(t: optuna.Trial) -> float:
    # The tension/compression spring design (Arora, Introduction to Optimum Design): the weight
    # of a spring of wire diameter d, coil diameter D and N coils under four constraints, of
    # which the feasible region is a small share.
    d = t.suggest_float("d", 0.05, 2.0)
    D = t.suggest_float("D", 0.25, 1.3)
    n = t.suggest_float("N", 2.0, 15.0)
    t.set_constraint("deflection", 1.0 - D**3 * n / (71785.0 * d**4))
    shear = (4 * D**2 - d * D) / (12566.0 * d**3 * ((D - d) or 1e-12)) + 1 / (5108.0 * d**2)
    t.set_constraint("shear", shear - 1.0)
    t.set_constraint("surge", 1.0 - 140.45 * d / (D**2 * n))
    t.set_constraint("diameter", (D + d) / 1.5 - 1.0)
    return (n + 2) * D * d**2


def _coordinates(x: np.ndarray) -> dict[str, float]:
    return {f"x{i}": float(v) for i, v in enumerate(x)}


class CrashError(RuntimeError):
    """The objective crashed (think: out of memory for a large model)."""


def crashing_hartmann3(t: optuna.Trial) -> float:
    x = np.array([t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)])
    if x[0] + 0.5 * x[2] > 1.0:  # the optimum (0.11, 0.56, 0.85) is near the crash boundary
        raise CrashError("out of memory")
    return problems.hartmann3(_coordinates(x))


def crashing_branin(t: optuna.Trial) -> float:
    x1 = t.suggest_float("x1", -5.0, 10.0)
    x2 = t.suggest_float("x2", 0.0, 15.0)
    if x2 > 12.0 - 0.6 * x1:
        raise CrashError("diverged")
    b, c, r, s, tt = 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - tt) * math.cos(x1) + s


PROBLEMS: dict[str, tuple[str, Callable[[optuna.Trial], float]]] = {
    "hartmann6": ("continuous", hartmann6),
    "rosenbrock4": ("continuous", rosenbrock4),
    "zakharov5": ("continuous", zakharov5),
    "rastrigin4": ("continuous", rastrigin4),
    "step-ellipsoid5": ("continuous", step_ellipsoid5),
    "mixed-quad5": ("mixed", mixed_quad5),
    "mixed-ackley5": ("mixed", mixed_ackley5),
    "categorical-table6": ("categorical", categorical_table6),
    "ordinal-table5": ("categorical", ordinal_table5),
    "conditional-models": ("conditional", conditional_models),
    "conditional-network": ("conditional", conditional_network),
    "constrained-quad5": ("constrained", constrained_quad5),
    "gardner2": ("constrained", gardner2),
    "gramacy2": ("constrained", gramacy2),
    "branin-disk2": ("constrained", branin_disk2),
    "hartmann6-ball": ("constrained", hartmann6_ball),
    "spring3": ("constrained", spring3),
    "crashing-hartmann3": ("crashing", crashing_hartmann3),
    "crashing-branin": ("crashing", crashing_branin),
}

KINDS = ("continuous", "mixed", "categorical", "conditional", "constrained", "crashing")

#: Samplers of each kind: AutoSampler, ours that apply, and Optuna's built-ins.
_BUILT_INS = ("gp", "tpe", "random")
SAMPLERS_BY_KIND: dict[str, tuple[str, ...]] = {
    "continuous": ("auto", "portfolio", "bore", "cmaes", *_BUILT_INS),
    "mixed": ("auto", "portfolio", "bore", "cmaes", *_BUILT_INS),
    "categorical": ("auto", "portfolio", "bore", *_BUILT_INS),
    "conditional": ("auto", "portfolio", "bore", "tpe-group", *_BUILT_INS),
    "constrained": ("auto", "cmes", "cmes-cei", "portfolio", *_BUILT_INS),
    "crashing": ("auto", "cmes", "cmes-cei", "portfolio", "bore", *_BUILT_INS),
}
OURS = ("portfolio", "bore", "cmes", "cmes-cei")


# ----------------------------------------------------------------------------- runs
def run_one(spec: StudyRunSpec) -> dict[str, Any]:
    """One study; the best feasible value after each trial (None before the first)."""
    try:
        return _run(spec)
    except Exception as error:  # a sampler that crashes is a result, not the end of the run
        return spec.record("error", message=f"{type(error).__name__}: {error}")


def _run(spec: StudyRunSpec) -> dict[str, Any]:
    limit_threads(1)
    configure_quiet_logging()
    _, objective = PROBLEMS[spec.problem]
    study = optuna.create_study(sampler=make_sampler(spec.sampler, spec.seed))
    start = time.perf_counter()
    study.optimize(objective, n_trials=spec.trials, catch=(CrashError,))
    elapsed = time.perf_counter() - start
    best, curve, proposers, wasted = math.inf, [], [], []
    for trial in study.trials:
        constraints = trial.system_attrs.get("constraints") or list(
            (getattr(trial, "constraints", None) or {}).values()
        )
        feasible = all(c <= 0 for c in constraints)
        complete = trial.state == optuna.trial.TrialState.COMPLETE
        if complete and feasible:
            best = min(best, float(trial.value))
        curve.append(None if math.isinf(best) else best)
        proposers.append(trial.system_attrs.get("bore_samplers:auto_proposer"))
        wasted.append(not (complete and feasible))
    n_failed = sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials)
    return spec.record(
        "ok",
        best=curve,
        seconds=elapsed,
        failed=n_failed,
        auto_proposers=proposers,
        infeasible_or_failed=wasted,
    )


def _describe(record: dict[str, Any]) -> str:
    return f"best {record['best'][-1]} in {record['seconds']:.1f} s"


# ----------------------------------------------------------------------------- report
def _ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks (1 = smallest), ties sharing their average rank."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[order[j + 1]] == values[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


#: Kinds whose report also gives the share of the last half of the trials spent on
#: infeasible or failed points: trials spent across a boundary the sampler has already seen.
WASTE_KINDS = ("constrained", "crashing")


def _late_waste(
    by_key: dict[tuple[str, str, int], dict[str, Any]],
    sampler: str,
    cells: Sequence[tuple[str, int]],
    trials: int,
) -> float | None:
    """Mean share of the last ``trials // 2`` trials that were infeasible or failed, over
    ``cells``; ``None`` if a run predates the record."""
    shares = []
    for problem, seed in cells:
        wasted = by_key[(problem, sampler, seed)].get("infeasible_or_failed")
        if wasted is None:
            return None
        shares.append(float(np.mean(wasted[trials - trials // 2 : trials])))
    return float(np.mean(shares))


def report(records: list[dict[str, Any]], seeds: int, trials: int) -> tuple[str, dict]:
    """The Markdown report and the aggregates, per kind."""
    by_key = {(r["problem"], r["sampler"], r["seed"]): r for r in records if r["status"] == "ok"}

    def final(problem: str, sampler: str, seed: int, at: int) -> float:
        value = by_key[(problem, sampler, seed)]["best"][at - 1]
        return math.inf if value is None else value

    lines, summary = [], {"kinds": {}}
    overview_rows = []
    for kind in KINDS:
        samplers = SAMPLERS_BY_KIND[kind]
        problems = [p for p, (k, _) in PROBLEMS.items() if k == kind]
        cells = [
            (p, s)
            for p in problems
            for s in range(seeds)
            if all((p, name, s) in by_key for name in samplers)
        ]
        if not cells:
            continue
        ranks = np.array(
            [_ranks([final(p, name, s, trials) for name in samplers]) for p, s in cells]
        )
        stats = {name: mean_se(ranks[:, j]) for j, name in enumerate(samplers)}
        auto = samplers.index("auto")
        rows = []
        kind_summary: dict[str, Any] = {"cells": len(cells), "problems": problems}
        finals_auto = [final(p, "auto", s, trials) for p, s in cells]
        for j, name in enumerate(samplers):
            m, se = stats[name]
            finals = [final(p, name, s, trials) for p, s in cells]
            wins = sum(a < b for a, b in zip(finals_auto, finals, strict=True))
            losses = sum(a > b for a, b in zip(finals_auto, finals, strict=True))
            ties = len(cells) - wins - losses
            paired = "–" if j == auto else f"{wins} / {ties} / {losses}"
            per_problem = [
                float(np.mean([ranks[i, j] for i, (p, _) in enumerate(cells) if p == prob]))
                for prob in problems
            ]
            row = [name, f"{m:.2f} ± {se:.2f}", paired, *(f"{r:.2f}" for r in per_problem)]
            kind_summary[name] = {
                "mean_rank": m,
                "se": se,
                "auto_wins_ties_losses": None if j == auto else [wins, ties, losses],
                "rank_by_problem": dict(zip(problems, per_problem, strict=True)),
            }
            if kind in WASTE_KINDS:
                share = _late_waste(by_key, name, cells, trials)
                row.append("–" if share is None else f"{share:.0%}")
                kind_summary[name]["late_infeasible_or_failed"] = share
            rows.append(row)
        rows.sort(key=lambda row: float(row[1].split(" ")[0]))
        lines += [
            f"## {kind}",
            "",
            f"{len(cells)} (problem, seed) cells; problems: {', '.join(problems)}.",
            "",
            markdown_table(
                [
                    "sampler",
                    "mean rank",
                    "auto wins / ties / losses",
                    *problems,
                    *(["infeasible or failed, last half"] if kind in WASTE_KINDS else []),
                ],
                rows,
            ),
            "",
        ]
        summary["kinds"][kind] = kind_summary
        best_builtin = min(
            (n for n in samplers if n not in ("auto", *OURS)), key=lambda n: stats[n][0]
        )
        ours = [n for n in samplers if n in OURS]
        best_ours = min(ours, key=lambda n: stats[n][0])
        overview_rows.append(
            [
                kind,
                f"{stats['auto'][0]:.2f} ± {stats['auto'][1]:.2f}",
                f"{best_builtin} {stats[best_builtin][0]:.2f}",
                f"{best_ours} {stats[best_ours][0]:.2f}",
                len(samplers),
            ]
        )
    header = [
        "# AutoSampler across kinds of problems",
        "",
        "Regenerate: `python -m benchmarks.auto_kinds "
        f"--seeds {seeds} --trials {trials} --out benchmarks/results/auto_kinds` "
        "(runs are cached under `runs/`, which git ignores).",
        "",
        f"Best feasible value after {trials} trials, ranked per (problem, seed) among the "
        "samplers of each kind (1 = best; ties share). Mean rank ± standard error over the "
        "cells of the kind. Paired counts: AutoSampler better / equal / worse. On the "
        "constrained and crashing kinds, the share of the last half of the trials that were "
        "infeasible or failed.",
        "",
        markdown_table(
            ["kind", "AutoSampler", "best Optuna built-in", "best other of ours", "samplers"],
            overview_rows,
        ),
        "",
    ]
    return "\n".join(header + lines), summary


def _plot(records: list[dict[str, Any]], out: Path, trials: int) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    problems = list(PROBLEMS)
    n_cols = 5
    n_rows = math.ceil(len(problems) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4 * n_cols, 3.2 * n_rows))
    names = list(dict.fromkeys(n for kind in KINDS for n in SAMPLERS_BY_KIND[kind]))
    colours = dict(zip(names, plt.cm.tab10.colors, strict=False))
    for ax, problem in zip(axes.flat, problems, strict=False):
        kind = PROBLEMS[problem][0]
        curves_by_sampler = {}
        for name in SAMPLERS_BY_KIND[kind]:
            curves = [
                r["best"]
                for r in records
                if r["status"] == "ok" and r["problem"] == problem and r["sampler"] == name
            ]
            if curves:
                curves_by_sampler[name] = np.array(
                    [[np.nan if v is None else v for v in c] for c in curves], dtype=float
                )
        if not curves_by_sampler:
            continue
        # Gap to the best value any run found, on a log scale: late differences stay visible.
        floor = np.nanmin([np.nanmin(a) for a in curves_by_sampler.values()])
        for name, arr in curves_by_sampler.items():
            gap = np.nanmedian(arr - floor, axis=0) + 1e-6 * (1 + abs(floor))
            ax.semilogy(np.arange(1, trials + 1), gap, label=name, color=colours[name])
        ax.set_title(f"{problem} ({kind})", fontsize=9)
        ax.set_xlabel("trial")
    for ax in axes.flat[len(problems) :]:
        ax.axis("off")
    handles = [plt.Line2D([], [], color=colours[n], label=n) for n in names]
    fig.legend(handles=handles, loc="lower right", fontsize=9, ncol=2)
    fig.suptitle("Median gap of the best feasible value so far to the best any run found")
    fig.tight_layout()
    fig.savefig(out / "best_so_far.png", dpi=80)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--samplers", nargs="+", default=None, help="only these samplers")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/auto_kinds"))
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    specs = [
        StudyRunSpec(problem, sampler, seed, args.trials)
        for problem, (kind, _) in PROBLEMS.items()
        if kind in args.kinds
        for sampler in SAMPLERS_BY_KIND[kind]
        if args.samplers is None or sampler in args.samplers
        for seed in range(args.seeds)
    ]
    runs = args.out / "runs"
    if args.report_only:
        from benchmarks.harness import load_cached_run

        records = [r for s in specs if (r := load_cached_run(runs / s.filename, s)) is not None]
    else:
        records = run_cached(specs, runs, args.workers, run_one, _describe)
    text, summary = report(records, args.seeds, args.trials)
    args.out.mkdir(parents=True, exist_ok=True)
    env = "\n".join(environment_lines("benchmarks.auto_kinds", sys.argv[1:]))
    atomic_write_text(args.out / "README.md", text + "\n" + env + "\n")
    write_json(args.out / "summary.json", summary)
    _plot(records, args.out, args.trials)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
