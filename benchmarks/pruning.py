"""Quality under Optuna's default pruner: pruned trials as bad evidence against left out.

Usage (from the repository root)::

    python -m benchmarks.pruning --jobs 2              # 4 problems x 8 samplers x 10 seeds
    python -m benchmarks.pruning --problems branin --samplers tpe random --seeds 2 \\
        --budget 64 --out /tmp/pruning_smoke          # smoke test

The user runs ``optuna.pruners.MedianPruner()`` (its defaults) on objectives that report a
learning curve, and the sampler is judged at equal compute, counted in reported steps. The
question is what a sampler should learn from a PRUNED trial: ``pruned_trials="bad"`` (the
default of :class:`~bore_samplers.CMESSampler`, :class:`~bore_samplers.PortfolioSampler` and
:class:`~bore_samplers.BORESampler`) counts it as evidence that its region is bad;
``pruned_trials="ignore"`` (the ``-prune-ignore`` variants, the old behaviour) leaves it out.

Learning curves
    A synthetic problem of :mod:`benchmarks.problems` (Branin, Hartmann-3, Hartmann-6,
    Ackley-5 by default; known optimum) gives the final value ``f(x)`` of a configuration.
    At step ``t = 1 .. T`` (``--steps``, 16) the trial reports
    ``y_t = f(x) + A exp(-(t - 1) / tau(x))``, where ``A`` is the standard deviation of ``f``
    over 256 configurations drawn by ``RandomSampler(seed=1)`` (once per problem), and
    ``tau(x) = 1 + 5 (1 + sin(2 pi <u(x), w>)) / 2``, in ``[1, 6]``, with ``u(x)`` the
    configuration in the unit cube (floats and integers mapped linearly, or in log space
    when ``log=True``; a categorical choice to ``index / (n - 1)``) and
    ``w = np.random.default_rng(12345).normal(size=d)``. The curves cross: a configuration
    that learns slowly may end better than one that looks good early, which is where a
    median pruner errs. After each report the objective asks ``trial.should_prune()`` and
    raises ``optuna.TrialPruned`` when told to; a trial that reports all ``T`` steps returns
    ``f(x)``.

Budget
    One in-memory study per (problem, sampler, seed), run sequentially until the steps
    reported by all its trials reach ``--budget`` (400 = 25 full trainings; checked after
    each trial, so the last trial may overshoot by up to ``T - 1`` steps; the total is
    recorded), with at most ``--max-trials`` (150) trials.

Per run
    The final simple regret (best value among COMPLETE trials minus the optimum, floored at
    0; infinite without a complete trial), the numbers of trials and of pruned trials, the
    total steps, and after each trial the cumulative steps with the regret of the best
    complete trial so far (the plotted curves). Seeds ``0 .. S-1`` are the same for every
    sampler.

Report
    Samplers are ranked by final regret within each (problem, seed) (1 = best, ties share
    the average rank, :func:`scipy.stats.rankdata`) and the ranks averaged (± standard
    error); per problem, the mean log10 regret (regrets floored at 1e-12) ± standard error,
    the median regret, the mean share of trials pruned and the mean number of trials; the
    paired comparison of ``cmes`` against ``cmes-prune-ignore`` and ``portfolio`` against
    ``portfolio-prune-ignore`` (better / equal / worse final regret over (problem, seed));
    and ``pruning.png``, the median best-so-far regret against cumulative steps, one panel
    per problem.

Every finished run is cached as ``<out>/runs/<problem>__<sampler>__seed<k>.json`` and reused
when its budget, steps and trial cap match, so that after a change to a sampler only that
sampler's files need deleting. Writes ``<out>/pruning.md``, ``<out>/pruning.json`` (the
summary and every run's record) and ``<out>/pruning.png`` (with matplotlib).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import math
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from scipy.stats import rankdata

from benchmarks.harness import (
    CMES_SAMPLERS,
    GP_SAMPLERS,
    CachedRunSpec,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    markdown_table,
    mean_se,
    run_cached,
    warn_unavailable_samplers,
    write_json,
)
from benchmarks.problems import get_problem, suggest_params

Record = dict[str, Any]

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "pruning"
DEFAULT_PROBLEMS: tuple[str, ...] = ("branin", "hartmann3", "hartmann6", "ackley5")
DEFAULT_SAMPLERS: tuple[str, ...] = (
    "cmes",
    "cmes-prune-ignore",
    "portfolio",
    "portfolio-prune-ignore",
    "bore-rf-ei",
    "gp",
    "tpe",
    "random",
)
#: The samplers built here -> (class of ``bore_samplers``, keyword arguments besides
#: ``seed``): the twin of the harness's sampler of the same name less ``-prune-ignore``
#: (same options), with pruned trials left out.
PRUNE_IGNORE: dict[str, tuple[str, dict[str, Any]]] = {
    "cmes-prune-ignore": ("CMESSampler", {**CMES_SAMPLERS["cmes"], "pruned_trials": "ignore"}),
    "portfolio-prune-ignore": (
        "PortfolioSampler",
        {**GP_SAMPLERS["portfolio"][1], "pruned_trials": "ignore"},
    ),
}
#: Each sampler with the default ``pruned_trials="bad"`` -> its twin that ignores them.
TWINS: dict[str, str] = {"cmes": "cmes-prune-ignore", "portfolio": "portfolio-prune-ignore"}
REGRET_FLOOR = 1e-12
#: Configurations of ``RandomSampler(seed=SCALE_SEED)`` whose standard deviation of ``f`` is
#: the curves' amplitude ``A``.
SCALE_SAMPLES = 256
SCALE_SEED = 1
#: Seed of the direction ``w`` of the curves' time constants.
TAU_SEED = 12345


# ------------------------------------------------------------------------- learning curves
def unit_point(params: Mapping[str, Any], space: Mapping[str, BaseDistribution]) -> np.ndarray:
    """The configuration ``params`` in the unit cube, one coordinate per parameter of ``space``.

    Floats and integers are mapped linearly (in log space when ``log=True``) from
    ``[low, high]`` to ``[0, 1]``; a categorical choice to ``index / (n - 1)`` (0 for a single
    choice).
    """
    u = np.zeros(len(space))
    for i, (name, dist) in enumerate(space.items()):
        value = params[name]
        if isinstance(dist, FloatDistribution | IntDistribution):
            low, high, x = float(dist.low), float(dist.high), float(value)
            if dist.log:
                low, high, x = math.log(low), math.log(high), math.log(x)
            u[i] = (x - low) / (high - low) if high > low else 0.0
        elif isinstance(dist, CategoricalDistribution):
            n = len(dist.choices)
            u[i] = dist.choices.index(value) / (n - 1) if n > 1 else 0.0
        else:
            raise TypeError(f"unsupported distribution for {name!r}: {dist!r}")
    return u


@dataclass(frozen=True)
class LearningCurves:
    """The learning curves of one problem: ``y_t = f + amplitude * exp(-(t - 1) / tau(x))``."""

    problem: str
    amplitude: float
    weights: tuple[float, ...]

    def tau(self, params: Mapping[str, Any]) -> float:
        """The time constant of configuration ``params``, in ``[1, 6]``."""
        u = unit_point(params, get_problem(self.problem).space)
        phase = 2.0 * math.pi * float(u @ np.asarray(self.weights))
        return 1.0 + 5.0 * (1.0 + math.sin(phase)) / 2.0

    def value(self, final: float, tau: float, step: int) -> float:
        """The value reported at ``step`` (1-based) by a configuration of final value ``final``."""
        return final + self.amplitude * math.exp(-(step - 1) / tau)


@functools.cache
def learning_curves(problem_name: str) -> LearningCurves:
    """The curves of ``problem_name`` (deterministic: the same in every process)."""
    problem = get_problem(problem_name)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=SCALE_SEED))
    values = []
    for _ in range(SCALE_SAMPLES):
        trial = study.ask()
        value = float(problem.function(suggest_params(trial, problem.space)))
        study.tell(trial, value)
        values.append(value)
    weights = np.random.default_rng(TAU_SEED).normal(size=len(problem.space))
    return LearningCurves(problem_name, float(np.std(values)), tuple(float(w) for w in weights))


# ------------------------------------------------------------------------------------ runs
@dataclass(frozen=True)
class RunSpec(CachedRunSpec):
    """One study: a problem, a sampler, a seed and the budget."""

    problem: str
    sampler: str
    seed: int
    budget: int
    steps: int
    max_trials: int

    @property
    def filename(self) -> str:
        return f"{self.problem}__{self.sampler}__seed{self.seed}.json"

    @property
    def label(self) -> str:
        return f"{self.problem}/{self.sampler}/seed{self.seed}"


def build_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """The sampler ``name``: a ``-prune-ignore`` twin of :data:`PRUNE_IGNORE`, else the
    harness's :func:`~benchmarks.harness.make_sampler`."""
    if name in PRUNE_IGNORE:
        class_name, options = PRUNE_IGNORE[name]
        sampler_class = getattr(importlib.import_module("bore_samplers"), class_name)
        return sampler_class(seed=seed, **options)
    return make_sampler(name, seed)


def _pruned_trials_setting(sampler: optuna.samplers.BaseSampler) -> str | None:
    """The ``pruned_trials`` option in effect for one of our samplers (``None`` for Optuna's
    or where it cannot be read): recorded so that a cached run says what it measured."""
    proposer = getattr(sampler, "_proposer", None)
    setting = getattr(proposer, "pruned_trials", None)
    return setting if isinstance(setting, str) else None


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def run_one(spec: RunSpec) -> Record:
    """Execute one run (see the module docstring); a failing sampler gives an error record."""
    limit_threads(1)
    configure_quiet_logging()
    try:
        problem = get_problem(spec.problem)
        assert problem.optimum is not None, f"{spec.problem} has no known optimum"
        curves = learning_curves(spec.problem)
        sampler = build_sampler(spec.sampler, spec.seed)
        study = optuna.create_study(sampler=sampler, pruner=optuna.pruners.MedianPruner())
        used = 0
        best = math.inf
        curve_steps: list[int] = []
        curve_regret: list[float | None] = []

        def objective(trial: optuna.Trial) -> float:
            nonlocal used
            params = suggest_params(trial, problem.space)
            final = float(problem.function(params))
            tau = curves.tau(params)
            for step in range(1, spec.steps + 1):
                trial.report(curves.value(final, tau, step), step)
                used += 1
                if trial.should_prune():
                    raise optuna.TrialPruned()
            return final

        def after_trial(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
            nonlocal best
            if trial.state == optuna.trial.TrialState.COMPLETE:
                best = min(best, float(trial.value))
            curve_steps.append(used)
            curve_regret.append(_finite_or_none(max(best - problem.optimum, 0.0)))
            if used >= spec.budget:
                study.stop()

        start = time.perf_counter()
        study.optimize(objective, n_trials=spec.max_trials, callbacks=[after_trial])
        wall = time.perf_counter() - start
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
        return spec.record("error", message=message)
    states = [t.state for t in study.trials]
    return spec.record(
        "ok",
        final_regret=_finite_or_none(max(best - problem.optimum, 0.0)),
        n_trials=len(states),
        n_pruned=states.count(optuna.trial.TrialState.PRUNED),
        n_complete=states.count(optuna.trial.TrialState.COMPLETE),
        total_steps=used,
        curve_steps=curve_steps,
        curve_regret=curve_regret,
        amplitude=curves.amplitude,
        pruned_trials=_pruned_trials_setting(sampler),
        wall_time_s=wall,
    )


def _describe(rec: Record) -> str:
    return (
        f"regret {_regret(rec):.3g}, {rec['n_trials']} trials ({rec['n_pruned']} pruned), "
        f"{rec['total_steps']} steps, {rec['wall_time_s']:.1f} s"
    )


def run_all(specs: Sequence[RunSpec], runs_dir: Path, jobs: int) -> list[Record]:
    """Run ``specs``, reusing the cached runs in ``runs_dir``; records in the order of specs."""
    return run_cached(specs, runs_dir, jobs, run_one, _describe)


# ---------------------------------------------------------------------------------- report
def _regret(rec: Record) -> float:
    """The final regret of a record (``inf`` without a complete trial)."""
    value = rec["final_regret"]
    return math.inf if value is None else float(value)


def _log_regret(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.log10(np.maximum(np.asarray(values, dtype=float), REGRET_FLOOR))


def _pair(values: Sequence[float] | np.ndarray) -> list[float]:
    return list(mean_se(values))


def _fmt(pair: Sequence[float], fmt: str = ".2f") -> str:
    mean, se = pair
    if math.isnan(mean):
        return "–"
    return f"{mean:{fmt}}" if math.isnan(se) else f"{mean:{fmt}} ± {se:.2f}"


def summarise(
    records: Sequence[Record],
    problems: Sequence[str],
    samplers: Sequence[str],
    seeds: Sequence[int],
) -> dict[str, Any]:
    """Ranks, per-problem statistics and the paired comparisons of the ``ok`` records."""
    index = {(r["problem"], r["sampler"], r["seed"]): r for r in records if r["status"] == "ok"}
    ranks: dict[str, list[float]] = {s: [] for s in samplers}
    ranks_by_problem: dict[str, dict[str, list[float]]] = {
        p: {s: [] for s in samplers} for p in problems
    }
    n_ranked = 0
    for problem in problems:
        for seed in seeds:
            runs = [index.get((problem, s, seed)) for s in samplers]
            if any(run is None for run in runs):
                continue
            n_ranked += 1
            values = [_regret(run) for run in runs if run is not None]
            for sampler, rank in zip(samplers, rankdata(values), strict=True):
                ranks[sampler].append(float(rank))
                ranks_by_problem[problem][sampler].append(float(rank))
    by_problem: dict[str, dict[str, dict[str, Any]]] = {}
    for problem in problems:
        by_problem[problem] = {}
        for sampler in samplers:
            runs = [index[(problem, sampler, k)] for k in seeds if (problem, sampler, k) in index]
            if not runs:
                continue
            regrets = [_regret(r) for r in runs]
            by_problem[problem][sampler] = {
                "runs": len(runs),
                "mean_log10_regret": _pair(_log_regret(regrets)),
                "median_regret": float(np.median(regrets)),
                "pruned_share": _pair([r["n_pruned"] / r["n_trials"] for r in runs]),
                "trials": _pair([r["n_trials"] for r in runs]),
                "total_steps": _pair([r["total_steps"] for r in runs]),
                "mean_rank": _pair(ranks_by_problem[problem][sampler]),
            }
    paired: list[dict[str, Any]] = []
    for bad, ignore in TWINS.items():
        if bad not in samplers or ignore not in samplers:
            continue
        for problem in [*problems, "all"]:
            chosen = problems if problem == "all" else [problem]
            keys = [
                (p, k)
                for p in chosen
                for k in seeds
                if (p, bad, k) in index and (p, ignore, k) in index
            ]
            a = np.array([_regret(index[(p, bad, k)]) for p, k in keys])
            b = np.array([_regret(index[(p, ignore, k)]) for p, k in keys])
            with np.errstate(invalid="ignore"):  # inf - inf: both without a complete trial
                delta = _log_regret(a) - _log_regret(b)
            paired.append(
                {
                    "sampler": bad,
                    "twin": ignore,
                    "problem": problem,
                    "pairs": len(keys),
                    "better": int(np.sum(a < b)),
                    "equal": int(np.sum(a == b)),
                    "worse": int(np.sum(a > b)),
                    "mean_log10_diff": _pair(delta[np.isfinite(delta)]),
                }
            )
    return {
        "n_ranked": n_ranked,
        "mean_rank": {s: _pair(ranks[s]) for s in samplers},
        "by_problem": by_problem,
        "paired": paired,
    }


def _best_so_far(rec: Record, grid: np.ndarray) -> np.ndarray:
    """The run's best-so-far regret at each cumulative step of ``grid`` (``inf`` before its
    first complete trial; the last value carried on after the run ended)."""
    steps = np.asarray(rec["curve_steps"], dtype=float)
    regret = np.array([math.inf if v is None else v for v in rec["curve_regret"]], dtype=float)
    where = np.searchsorted(steps, grid, side="right") - 1
    return np.where(where >= 0, regret[np.maximum(where, 0)], math.inf)


def _styles(samplers: Sequence[str]) -> dict[str, tuple[Any, str]]:
    """A colour and line style per sampler: each ``-prune-ignore`` twin dashed in the colour
    of the sampler it is the twin of."""
    import matplotlib.pyplot as plt

    colours = plt.get_cmap("tab10").colors
    twin_of = {ignore: bad for bad, ignore in TWINS.items() if bad in samplers}
    styles: dict[str, tuple[Any, str]] = {}
    n = 0
    for sampler in samplers:
        if sampler not in twin_of:
            styles[sampler] = (colours[n % len(colours)], "-")
            n += 1
    for sampler in samplers:
        if sampler in twin_of:
            styles[sampler] = (styles[twin_of[sampler]][0], "--")
    return styles


def _plot(
    path: Path, records: Sequence[Record], problems: Sequence[str], samplers: Sequence[str]
) -> bool:
    """``pruning.png``: median best-so-far regret against cumulative steps, per problem."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ok = [r for r in records if r["status"] == "ok"]
    styles = _styles(samplers)
    fig, axes = plt.subplots(1, len(problems), figsize=(3.8 * len(problems), 3.4), squeeze=False)
    for ax, problem in zip(axes[0], problems, strict=True):
        runs = [r for r in ok if r["problem"] == problem]
        if not runs:
            continue
        grid = np.arange(1, max(r["total_steps"] for r in runs) + 1)
        for sampler in samplers:
            chosen = [r for r in runs if r["sampler"] == sampler]
            if not chosen:
                continue
            median = np.median(np.stack([_best_so_far(r, grid) for r in chosen]), axis=0)
            median = np.where(np.isfinite(median), np.maximum(median, REGRET_FLOOR), np.nan)
            colour, style = styles[sampler]
            ax.plot(grid, median, color=colour, ls=style, lw=1.4, label=sampler)
        ax.set_yscale("log")
        ax.set_title(problem)
        ax.set_xlabel("cumulative steps")
    axes[0][0].set_ylabel("median best-so-far regret")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(
    out: Path,
    summary: dict[str, Any],
    records: Sequence[Record],
    problems: Sequence[str],
    samplers: Sequence[str],
    header: Sequence[str],
) -> Path:
    """Write ``pruning.md``, ``pruning.json`` and (with matplotlib) ``pruning.png``."""
    ranking = sorted(samplers, key=lambda s: summary["mean_rank"][s][0])
    lines = [
        "# Samplers under Optuna's median pruner: pruned trials as bad evidence or left out",
        "",
        *header,
        "",
        f"## Mean rank by final regret (1 = best; mean ± SE over {summary['n_ranked']} "
        "(problem, seed) pairs)",
        "",
        markdown_table(
            ["sampler", "mean rank", *(f"rank on {p}" for p in problems)],
            [
                [
                    s,
                    _fmt(summary["mean_rank"][s]),
                    *(
                        _fmt(summary["by_problem"][p][s]["mean_rank"])
                        if s in summary["by_problem"][p]
                        else "–"
                        for p in problems
                    ),
                ]
                for s in ranking
            ],
        ),
    ]
    for problem in problems:
        stats = summary["by_problem"][problem]
        lines += [f"## {problem}", ""]
        rows = [
            [
                s,
                stats[s]["runs"],
                _fmt(stats[s]["mean_log10_regret"]),
                f"{stats[s]['median_regret']:.3g}",
                _fmt(stats[s]["pruned_share"]),
                _fmt(stats[s]["trials"], ".1f"),
                f"{stats[s]['total_steps'][0]:.0f}",
            ]
            for s in samplers
            if s in stats
        ]
        lines.append(
            markdown_table(
                [
                    "sampler",
                    "runs",
                    "mean log10 regret",
                    "median regret",
                    "share pruned",
                    "trials",
                    "mean steps",
                ],
                rows,
            )
        )
    if summary["paired"]:
        lines += [
            "## Pruned trials as bad evidence against left out, paired by (problem, seed)",
            "",
            'Better / equal / worse: final regret of the sampler (`pruned_trials="bad"`, the '
            "default) below / equal to / above its `-prune-ignore` twin's; mean Δ log10 regret "
            "(sampler - twin, floored at 1e-12) ± SE, over the pairs where both runs have a "
            "complete trial (the counts take every pair).",
            "",
            markdown_table(
                [
                    "sampler",
                    "twin",
                    "problem",
                    "pairs",
                    "better",
                    "equal",
                    "worse",
                    "mean Δ log10",
                ],
                [
                    [
                        row["sampler"],
                        row["twin"],
                        row["problem"],
                        row["pairs"],
                        row["better"],
                        row["equal"],
                        row["worse"],
                        _fmt(row["mean_log10_diff"], "+.2f"),
                    ]
                    for row in summary["paired"]
                ],
            ),
        ]
    settings = {
        s: sorted(
            {
                str(r.get("pruned_trials"))
                for r in records
                if r["sampler"] == s and r["status"] == "ok"
            }
        )
        for s in samplers
    }
    lines += [
        "`pruned_trials` in effect, as read from each run's sampler (None: an Optuna sampler): "
        + "; ".join(f"{s} {', '.join(v) or '–'}" for s, v in settings.items())
        + ".",
        "",
    ]
    errors = [r for r in records if r["status"] != "ok"]
    if errors:
        lines += ["## Failed runs", ""]
        lines += [
            f"- {r['problem']}/{r['sampler']}/seed{r['seed']}: {r['message']}" for r in errors
        ]
        lines.append("")
    if _plot(out / "pruning.png", records, problems, samplers):
        lines += [
            "## Median best-so-far regret against cumulative steps",
            "",
            "Dashed: the `-prune-ignore` twin, in its sampler's colour. A line starts once more "
            "than half of its runs have a complete trial (before, the median is infinite).",
            "",
            "![median best-so-far regret against cumulative steps](pruning.png)",
            "",
        ]
    path = out / "pruning.md"
    atomic_write_text(path, "\n".join(lines))
    write_json(out / "pruning.json", {"summary": summary, "runs": list(records)})
    return path


# ------------------------------------------------------------------------------------ main
def _unavailable(samplers: Sequence[str]) -> list[str]:
    """Warn about and return the samplers that cannot be built here."""
    unavailable = warn_unavailable_samplers([s for s in samplers if s not in PRUNE_IGNORE])
    for sampler in samplers:
        if sampler in PRUNE_IGNORE:
            try:
                build_sampler(sampler, 0)
            except Exception as exc:
                print(
                    f"WARNING: skipping {sampler}: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                    flush=True,
                )
                unavailable.append(sampler)
    return unavailable


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.pruning", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS))
    parser.add_argument("--samplers", nargs="+", default=list(DEFAULT_SAMPLERS))
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..S-1 (default: 10)")
    parser.add_argument("--steps", type=int, default=16, help="steps of a full training (16)")
    parser.add_argument(
        "--budget", type=int, default=400, help="reported steps per run (default: 400)"
    )
    parser.add_argument("--max-trials", type=int, default=150, help="trial cap (default: 150)")
    parser.add_argument(
        "--jobs", type=int, default=1, help="benchmark processes, one thread each (default: 1)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for name in ("seeds", "steps", "budget", "max_trials", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    problems = list(dict.fromkeys(args.problems))
    for problem in problems:
        try:
            optimum = get_problem(problem).optimum
        except KeyError as exc:
            parser.error(str(exc))
        if optimum is None:
            parser.error(f"{problem} has no known optimum")
    limit_threads(1)  # inherited by the spawned processes
    configure_quiet_logging()
    requested = list(dict.fromkeys(args.samplers))
    unavailable = _unavailable(requested)
    samplers = [s for s in requested if s not in unavailable]
    seeds = list(range(args.seeds))
    specs = [
        RunSpec(problem, sampler, seed, args.budget, args.steps, args.max_trials)
        for problem in problems
        for seed in seeds
        for sampler in samplers
    ]
    start = time.perf_counter()
    records = run_all(specs, args.out / "runs", args.jobs)
    total = time.perf_counter() - start
    summary = summarise(records, problems, samplers, seeds)
    amplitudes = ", ".join(f"{p} {learning_curves(p).amplitude:.3g}" for p in problems)
    header = [
        *environment_lines("benchmarks.pruning", argv),
        f"- {len(problems)} problems x {len(samplers)} samplers x {args.seeds} seeds (0.."
        f"{args.seeds - 1}, the same for every sampler); in-memory studies with "
        "`optuna.pruners.MedianPruner()` (defaults); one thread per run, "
        f"{args.jobs} process(es); this invocation {total / 60:.1f} min (cached runs reused).",
        f"- Learning curves: step t = 1..{args.steps} reports f(x) + A exp(-(t - 1) / tau(x)), "
        "tau(x) = 1 + 5 (1 + sin(2 pi <u(x), w>)) / 2 in [1, 6], u(x) in the unit cube, "
        f"w ~ N(0, I) (seed {TAU_SEED}); A = standard deviation of f over {SCALE_SAMPLES} "
        f"random configurations (RandomSampler(seed={SCALE_SEED})): {amplitudes}. A trial that "
        "is not pruned returns f(x).",
        f"- Budget: {args.budget} reported steps per run ({args.budget / args.steps:g} full "
        "trainings), checked after each trial (the last may overshoot by up to "
        f"{args.steps - 1} steps), at most {args.max_trials} trials. Final regret: best value "
        "among COMPLETE trials minus the optimum (inf without one).",
        "- Samplers: harness names via `benchmarks.harness.make_sampler` (`cmes`, `portfolio`, "
        '`bore-rf-ei` with the library\'s default `pruned_trials="bad"`); '
        + "; ".join(
            f"`{name}` = `{cls}(seed=seed, "
            + ", ".join(f"{k}={v!r}" for k, v in options.items())
            + ")`"
            for name, (cls, options) in PRUNE_IGNORE.items()
        )
        + ".",
    ]
    if unavailable:
        header.append(f"- Skipped (not available here): {', '.join(unavailable)}.")
    path = write_report(args.out, summary, records, problems, samplers, header)
    print(path.read_text())
    print(f"wrote {path}")
    return 0 if all(r["status"] == "ok" for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
