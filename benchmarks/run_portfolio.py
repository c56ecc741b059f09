"""Portfolio benchmark: No-PASt-BO against GP-Hedge, a random portfolio, single acquisitions.

Usage (from the repository root)::

    python -m benchmarks.run_portfolio               # everything: 10 seeds x 100 trials
    python -m benchmarks.run_portfolio --problems branin --seeds 2 --trials 15 --workers 1 \\
        --out /tmp/portfolio_smoke                    # smoke test

The experiment of Vasconcelos et al. (No-PASt-BO, section IV) on
:mod:`benchmarks.portfolio_problems` (Branin, Hartmann-3, Hartmann-6, SVR and MLP tuning).
Samplers (``PortfolioSampler(seed=seed, ...)``, otherwise its defaults: 5 Latin-hypercube
startup trials, η = 4, PI with ξ = 0.01, EI with ξ = 0 and GP-LCB with δ = 0.1, ν = 0.2):

=====================  ====================================================================
``no-past-bo-m0.7``    No-PASt-BO, memory 0.7, 3-function portfolio (PI, EI, GP-LCB)
``no-past-bo-m0.9``    the same with memory 0.9
``gp-hedge``           GP-Hedge: memory 1, no normalisation, η = 1 (scikit-optimize's default;
                       GP-Hedge's softmax acts on raw posterior means, so η has the units of
                       the objective)
``random-portfolio``   η = 0: each step a uniformly random member's nominee
``pi``, ``ei``, ``lcb``  one-member portfolios: plain BO with that acquisition
``no-past-bo9-m0.7``,  the 9-function portfolio of §IV-B (PI and EI with ξ ∈ {0.01, 0.1, 1},
``no-past-bo9-m0.9``,  GP-LCB with ν ∈ {0.1, 0.2, 1}), synthetic problems only
``gp-hedge9``,
``random-portfolio9``
``ei-marginal``        EI averaged over 10 slice samples of the GP hyperparameters
``ei-per-second``      EI divided by a GP's prediction of the evaluation time
``optuna-gp``, ``tpe``   Optuna's GPSampler and TPESampler with their defaults
=====================  ====================================================================

Each run is one in-memory Optuna study. A finished run is cached as
``<out>/runs/<problem>__<sampler>__seed<k>__t<trials>.json`` (values, best-so-far trace,
wall/sampler/evaluation times and, for portfolio samplers, each trial's arm, probabilities and
rewards from its user attributes) and reused, so an interrupted benchmark resumes. The report
``<out>/results.md`` has the issue's targets (No-PASt-BO against GP-Hedge and the best single
acquisition per problem), mean ranks per comparison group, per-problem tables (final simple
regret or value, mean ± standard error, ratio to GP-Hedge's), best-so-far plots
``regret_<problem>.png`` and the paper's Fig. 1 for one run,
``portfolio_trace_<problem>_seed<k>.png`` (rewards and probabilities over the trials).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from benchmarks.harness import (
    CachedRunSpec,
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    format_mean_se,
    limit_threads,
    markdown_table,
    mean_se,
    run_argument_parser,
    run_arguments,
    run_cached,
)
from benchmarks.portfolio_problems import (
    PORTFOLIO_PROBLEMS,
    SYNTHETIC_PROBLEMS,
    get_portfolio_problem,
)
from benchmarks.problems import Problem
from benchmarks.report import compute_ranks, plot_problem
from benchmarks.run_benchmark import TimedObjective, _best_so_far, _has_all_trials

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "portfolio"
Record = dict[str, Any]

#: The 9-function portfolio of §IV-B, by member name (built fresh for every sampler).
NINE_FUNCTION_PORTFOLIO = (
    ("pi", 0.01),
    ("pi", 0.1),
    ("pi", 1.0),
    ("ei", 0.01),
    ("ei", 0.1),
    ("ei", 1.0),
    ("lcb", 0.1),
    ("lcb", 0.2),
    ("lcb", 1.0),
)

#: ``PortfolioSampler`` keyword arguments of every portfolio sampler of the benchmark
#: (``portfolio="nine"`` stands for :data:`NINE_FUNCTION_PORTFOLIO`).
PORTFOLIO_SAMPLERS: dict[str, dict[str, Any]] = {
    "no-past-bo-m0.7": dict(memory=0.7),
    "no-past-bo-m0.9": dict(memory=0.9),
    "gp-hedge": dict(memory=1.0, normalize=False, eta=1.0),
    "random-portfolio": dict(eta=0.0),
    "pi": dict(portfolio=["pi"]),
    "ei": dict(portfolio=["ei"]),
    "lcb": dict(portfolio=["lcb"]),
    "no-past-bo9-m0.7": dict(portfolio="nine", memory=0.7),
    "no-past-bo9-m0.9": dict(portfolio="nine", memory=0.9),
    "gp-hedge9": dict(portfolio="nine", memory=1.0, normalize=False, eta=1.0),
    "random-portfolio9": dict(portfolio="nine", eta=0.0),
    "ei-marginal": dict(portfolio=["ei"], marginalize_hyperparameters=True),
    "ei-per-second": dict(portfolio=["ei_per_second"]),
}
#: Optuna's own samplers in the comparison.
OPTUNA_SAMPLERS: tuple[str, ...] = ("optuna-gp", "tpe")
#: Every sampler, in report order.
SAMPLER_NAMES: tuple[str, ...] = (*PORTFOLIO_SAMPLERS, *OPTUNA_SAMPLERS)
#: Samplers run on the synthetic problems only (the paper's §IV-B experiment).
SYNTHETIC_ONLY: frozenset[str] = frozenset(
    name for name, kwargs in PORTFOLIO_SAMPLERS.items() if kwargs.get("portfolio") == "nine"
)

#: Comparison groups of the report: title -> (problems, samplers, reference sampler for ratios).
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "3-function portfolio (§IV-B, §IV-C)": (
        tuple(PORTFOLIO_PROBLEMS),
        (
            "no-past-bo-m0.7",
            "no-past-bo-m0.9",
            "gp-hedge",
            "random-portfolio",
            "pi",
            "ei",
            "lcb",
            "optuna-gp",
            "tpe",
        ),
        "gp-hedge",
    ),
    "9-function portfolio (§IV-B)": (
        SYNTHETIC_PROBLEMS,
        ("no-past-bo9-m0.7", "no-past-bo9-m0.9", "gp-hedge9", "random-portfolio9"),
        "gp-hedge9",
    ),
    "GP practice: hyperparameter marginalisation and EI per second": (
        tuple(PORTFOLIO_PROBLEMS),
        ("ei", "ei-marginal", "ei-per-second"),
        "ei",
    ),
}
#: Samplers whose arm probabilities and rewards are drawn like the paper's Fig. 1.
TRACE_SAMPLERS: tuple[str, ...] = ("gp-hedge", "no-past-bo-m0.7", "no-past-bo-m0.9")
SINGLE_ACQUISITIONS: tuple[str, ...] = ("pi", "ei", "lcb")


def make_portfolio_benchmark_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """Build the sampler called ``name`` (one of :data:`SAMPLER_NAMES`) with ``seed``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name == "optuna-gp":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name not in PORTFOLIO_SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose from {list(SAMPLER_NAMES)}")
    from bore_samplers import PortfolioSampler
    from bore_samplers.proposers.portfolio.members import (
        ExpectedImprovement,
        LowerConfidenceBoundMember,
        ProbabilityOfImprovement,
    )

    kwargs = dict(PORTFOLIO_SAMPLERS[name])
    if kwargs.get("portfolio") == "nine":
        builders = {"pi": ProbabilityOfImprovement, "ei": ExpectedImprovement}
        kwargs["portfolio"] = [
            LowerConfidenceBoundMember(nu=value) if kind == "lcb" else builders[kind](xi=value)
            for kind, value in NINE_FUNCTION_PORTFOLIO
        ]
    return PortfolioSampler(seed=seed, warn_independent_sampling=False, **kwargs)


# ----------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class PortfolioRunSpec(CachedRunSpec):
    """One run: a problem optimised by a sampler with a seed for some trials."""

    problem: str
    sampler: str
    seed: int
    n_trials: int

    @property
    def filename(self) -> str:
        """Cache file name of this run."""
        return f"{self.problem}__{self.sampler}__seed{self.seed}__t{self.n_trials}.json"

    @property
    def label(self) -> str:
        """Short description for progress lines."""
        return f"{self.problem} {self.sampler} seed={self.seed}"


def _portfolio_trace(study: optuna.Study) -> list[dict[str, Any] | None]:
    """Per trial, the arm, probabilities and rewards the sampler noted (None at startup)."""
    trace: list[dict[str, Any] | None] = []
    for trial in study.trials:
        attrs = trial.user_attrs
        if "portfolio:probabilities" not in attrs:
            trace.append(None)
            continue
        trace.append(
            {
                "arm": attrs["portfolio:arm"],
                "probabilities": attrs["portfolio:probabilities"],
                "rewards": attrs.get("portfolio:rewards"),
            }
        )
    return trace


def run_portfolio_one(spec: PortfolioRunSpec) -> Record:
    """Execute one run and return its record (never raises for a failing sampler).

    Returns
    -------
    Record
        ``status`` ``"ok"`` (values, best-so-far trace, timings, portfolio trace) or
        ``"error"`` with a ``message``.
    """
    limit_threads()
    configure_quiet_logging()
    problem = get_portfolio_problem(spec.problem)
    try:
        sampler = make_portfolio_benchmark_sampler(spec.sampler, spec.seed)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        objective = TimedObjective(problem)
        start = time.perf_counter()
        objective.start()
        study.optimize(objective, n_trials=spec.n_trials)
        objective.finish()
        wall = time.perf_counter() - start
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
        return spec.record("error", message=message)
    values = [
        t.value if t.state == optuna.trial.TrialState.COMPLETE else None for t in study.trials
    ]
    best = study.best_trial if any(v is not None for v in values) else None
    return spec.record(
        "ok",
        values=values,
        best_so_far=_best_so_far(values),
        best_params=best.params if best is not None else None,
        n_failed=sum(v is None for v in values),
        wall_time_s=wall,
        sampler_time_s=objective.sampler_time,
        eval_time_s=objective.eval_time,
        portfolio_trace=_portfolio_trace(study) if spec.sampler in PORTFOLIO_SAMPLERS else None,
    )


def _describe(rec: Record) -> str:
    return (
        f"best={rec['best_so_far'][-1]:.6g} wall={rec['wall_time_s']:.1f}s "
        f"sampler={rec['sampler_time_s']:.1f}s eval={rec['eval_time_s']:.1f}s"
    )


def run_all_portfolio(
    specs: Sequence[PortfolioRunSpec], runs_dir: Path, workers: int
) -> list[Record]:
    """Run ``specs`` (reusing cached runs in ``runs_dir``) and return their records in order.

    The same cache format and process pool (:func:`benchmarks.harness.run_cached`) as
    :func:`benchmarks.run_benchmark.run_all`, for this benchmark's sampler names.
    """
    return run_cached(
        specs, runs_dir, workers, run_portfolio_one, _describe, is_complete=_has_all_trials
    )


# ----------------------------------------------------------------------------- report
def _final(rec: Record, problem: Problem) -> float:
    """Final best value, as simple regret when the optimum is known."""
    value = rec["best_so_far"][-1]
    value = math.inf if value is None else float(value)
    return value - problem.optimum if problem.optimum is not None else value


def _index(records: Sequence[Record]) -> dict[tuple[str, str], dict[int, Record]]:
    out: dict[tuple[str, str], dict[int, Record]] = defaultdict(dict)
    for rec in records:
        if rec["status"] == "ok":
            out[rec["problem"], rec["sampler"]][rec["seed"]] = rec
    return out


def _targets_section(
    problems: Sequence[Problem], index: dict[tuple[str, str], dict[int, Record]]
) -> str:
    """The issue's targets: No-PASt-BO beats GP-Hedge, and is within noise of the best single."""
    rows = []
    for problem in problems:
        finals = {
            s: [_final(rec, problem) for rec in index[problem.name, s].values()]
            for s in ("no-past-bo-m0.7", "no-past-bo-m0.9", "gp-hedge", *SINGLE_ACQUISITIONS)
        }
        if not finals["gp-hedge"]:
            continue
        hedge_mean, hedge_se = mean_se(finals["gp-hedge"])
        singles = {s: mean_se(finals[s]) for s in SINGLE_ACQUISITIONS if finals[s]}
        best_single = min(singles, key=lambda s: singles[s][0]) if singles else None
        for sampler in ("no-past-bo-m0.7", "no-past-bo-m0.9"):
            if not finals[sampler]:
                continue
            mean, se = mean_se(finals[sampler])
            row: list[Any] = [
                problem.name,
                sampler,
                format_mean_se(finals[sampler], ".3g"),
                format_mean_se(finals["gp-hedge"], ".3g"),
                "yes" if mean < hedge_mean else "no",
            ]
            if best_single is None:
                row += ["–", "–"]
            else:
                single_mean, single_se = singles[best_single]
                noise = math.sqrt(np.nansum([se**2, single_se**2]))
                gap = (mean - single_mean) / noise if noise > 0 else math.nan
                row += [
                    f"{best_single}: {format_mean_se(finals[best_single], '.3g')}",
                    "–" if math.isnan(gap) else f"{gap:+.2f}",  # one seed: no standard error
                ]
            rows.append(row)
    if not rows:
        return ""
    return (
        "## Targets\n\nNo-PASt-BO should beat GP-Hedge on every problem and be within noise of "
        "the best single acquisition on each. Final simple regret (synthetic) or best value "
        "(tuning), mean ± standard error over seeds; *gap* is (No-PASt-BO − best single) "
        "divided by the combined standard error (|gap| < 2: within noise).\n\n"
        + markdown_table(
            [
                "problem",
                "sampler",
                "final",
                "GP-Hedge",
                "beats GP-Hedge",
                "best single acquisition",
                "gap (SE)",
            ],
            rows,
        )
    )


def _group_section(
    title: str,
    problems: Sequence[Problem],
    samplers: Sequence[str],
    reference: str,
    records: Sequence[Record],
    seeds: Sequence[int],
) -> str:
    index = _index(records)
    names = [p.name for p in problems]
    ranked, ranks = compute_ranks(records, names, samplers, seeds)
    lines = [f"## {title}\n"]
    if len(ranked) >= 2:
        pooled = {s: [r for p in names for r in ranks[p][s]] for s in ranked}
        rows = [
            [
                s,
                format_mean_se(pooled[s], ".2f"),
                *[f"{np.mean(ranks[p][s]):.2f}" for p in names],
            ]
            for s in sorted(ranked, key=lambda s: np.mean(pooled[s]))
        ]
        lines.append(
            f"Mean rank by final best value over {len(names)} problem(s) x {len(seeds)} seeds "
            "(1 = best; ties share the average rank; only samplers with every run).\n\n"
            + markdown_table(["sampler", "mean rank", *[f"rank on {p}" for p in names]], rows)
        )
    else:
        lines.append("Fewer than two samplers have every run; no ranking.\n")
    for problem in problems:
        quantity = "simple regret" if problem.optimum is not None else "best value"
        reference_finals = [
            _final(rec, problem) for rec in index[problem.name, reference].values()
        ]
        reference_mean = mean_se(reference_finals)[0] if reference_finals else math.nan
        rows = []
        for sampler in samplers:
            runs = index[problem.name, sampler]
            if not runs:
                continue
            finals = [_final(rec, problem) for rec in runs.values()]
            ratio = np.mean(finals) / reference_mean if reference_mean else math.nan
            rows.append(
                [
                    sampler,
                    len(runs),
                    format_mean_se(finals, ".4g"),
                    "–" if math.isnan(ratio) else f"{ratio:.3f}",
                    format_mean_se(ranks[problem.name].get(sampler, []), ".2f"),
                    format_mean_se(
                        [1e3 * r["sampler_time_s"] / r["n_trials"] for r in runs.values()], ".3g"
                    ),
                    format_mean_se([r["eval_time_s"] for r in runs.values()], ".3g"),
                ]
            )
        if rows:
            lines.append(
                f"### {problem.name} ({title.split(' (')[0]})\n\n{problem.description}. "
                f"Plot: `regret_{problem.name}.png`.\n\n"
                + markdown_table(
                    [
                        "sampler",
                        "runs",
                        f"final {quantity}",
                        f"/ {reference}'s",
                        "mean rank",
                        "sampler time / trial (ms)",
                        "evaluation time / run (s)",
                    ],
                    rows,
                )
            )
    return "\n".join(lines)


def plot_portfolio_trace(records: Sequence[Record], problem: Problem, path: Path) -> bool:
    """The paper's Fig. 1 for one seed: rewards (top) and probabilities (bottom) per trial.

    One column per sampler of :data:`TRACE_SAMPLERS` with a run on ``problem`` for the
    smallest seed they all share. Returns False (and draws nothing) without such runs.
    """
    index = _index(records)
    samplers = [s for s in TRACE_SAMPLERS if index[problem.name, s]]
    shared = set.intersection(*(set(index[problem.name, s]) for s in samplers)) if samplers else []
    if not shared:
        return False
    seed = min(shared)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = max(4.2 * len(samplers), 7.0)  # room for the title with a single column
    fig, axes = plt.subplots(2, len(samplers), figsize=(width, 6), squeeze=False)
    for column, sampler in enumerate(samplers):
        trace = index[problem.name, sampler][seed].get("portfolio_trace") or []
        steps = [(i + 1, entry) for i, entry in enumerate(trace) if entry]
        if not steps:
            continue
        names = list(steps[0][1]["probabilities"])
        trials = [t for t, _ in steps]
        for name in names:
            rewards = [e["rewards"][name] if e.get("rewards") else np.nan for _, e in steps]
            axes[0, column].plot(trials, rewards, label=name, lw=1.4)
            axes[1, column].plot(
                trials, [e["probabilities"][name] for _, e in steps], label=name, lw=1.4
            )
        axes[0, column].set_title(sampler)
        axes[0, column].set_ylabel("reward G before the trial")
        axes[1, column].set_ylabel("probability of being chosen")
        axes[1, column].set_xlabel("trial")
        axes[1, column].set_ylim(-0.02, 1.02)
        for ax in axes[:, column]:
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
    fig.suptitle(f"{problem.name}, seed {seed}: rewards and arm probabilities (cf. Fig. 1)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_portfolio_report(
    out: Path,
    records: Sequence[Record],
    problems: Sequence[Problem],
    samplers: Sequence[str],
    seeds: Sequence[int],
    header_lines: Sequence[str],
) -> Path:
    """Write ``<out>/results.md``, ``regret_<problem>.png`` and the Fig. 1-style trace plot."""
    index = _index(records)
    problem_names = [p.name for p in problems]
    sections = ["# bore-samplers portfolio benchmark\n\n" + "\n".join(header_lines) + "\n"]
    targets = _targets_section(problems, index)
    if targets:
        sections.append(targets)
    for title, (group_problems, group_samplers, reference) in GROUPS.items():
        chosen = [s for s in group_samplers if s in samplers]
        chosen_problems = [p for p in problems if p.name in group_problems]
        if chosen and chosen_problems:
            sections.append(
                _group_section(title, chosen_problems, chosen, reference, records, seeds)
            )
    for problem in problems:
        runs_by_sampler = {s: index[problem.name, s] for s in samplers if index[problem.name, s]}
        if runs_by_sampler:
            plot_problem(problem, runs_by_sampler, out / f"regret_{problem.name}.png")
    trace_problem = next(
        (p for p in ("hartmann6", *problem_names) if p in problem_names), problem_names[0]
    )
    problem = next(p for p in problems if p.name == trace_problem)
    trace_path = out / f"portfolio_trace_{problem.name}.png"
    if plot_portfolio_trace(records, problem, trace_path):
        sections.append(
            f"## Rewards and probabilities over the trials\n\n`{trace_path.name}`: one run on "
            f"{problem.name} (the smallest seed), rewards G before each trial (top) and the "
            "probability of each member (bottom), as in the paper's Fig. 1.\n"
        )
    failed = [r for r in records if r["status"] != "ok"]
    if failed:
        sections.append(
            "## Runs that did not complete\n\n"
            + "\n".join(
                f"- {r['problem']} {r['sampler']} seed {r['seed']}: {r.get('message', '')}"
                for r in failed
            )
            + "\n"
        )
    path = out / "results.md"
    atomic_write_text(path, "\n".join(sections))
    return path


# ----------------------------------------------------------------------------- command line
def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = run_argument_parser(
        "python -m benchmarks.run_portfolio",
        "Portfolio benchmark: No-PASt-BO, GP-Hedge, single acquisitions, Optuna.",
        problems=PORTFOLIO_PROBLEMS,
        samplers=SAMPLER_NAMES,
    )
    return run_arguments(
        parser,
        argv,
        seeds=10,
        trials=100,
        out=DEFAULT_OUT,
        out_label="benchmarks/results/portfolio",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parse_args(argv)
    limit_threads()  # inherited by the spawned workers
    configure_quiet_logging()
    seeds = list(range(args.seeds))
    specs = [
        PortfolioRunSpec(problem, sampler, seed, args.trials)
        for seed in seeds
        for problem in args.problems
        for sampler in args.samplers
        if problem in SYNTHETIC_PROBLEMS or sampler not in SYNTHETIC_ONLY
    ]
    start = time.perf_counter()
    records = run_all_portfolio(specs, args.out / "runs", args.workers)
    header = [
        *environment_lines("benchmarks.run_portfolio", argv),
        f"- Problems: {', '.join(args.problems)}",
        f"- Samplers: {', '.join(args.samplers)} (9-function portfolios on the synthetic "
        "problems only)",
        f"- Seeds: {', '.join(map(str, seeds))}; trials per run: {args.trials}; "
        f"workers: {args.workers} (one thread each)",
        f"- This invocation took {time.perf_counter() - start:.0f} s; runs are cached in "
        "`runs/` and reused.",
        "- Values are minimised. Portfolio samplers: `PortfolioSampler` with 5 Latin-hypercube "
        "startup trials, η = 4 (GP-Hedge: η = 1, memory 1, no normalisation; random "
        "portfolio: η = 0), PI ξ = 0.01, EI ξ = 0, GP-LCB δ = 0.1, ν = 0.2. Optuna's GPSampler "
        "and TPESampler keep their defaults (10 startup trials). Sampler time per trial "
        "covers ask, sampling, tell and Optuna's bookkeeping, not the objective.",
    ]
    problems = [get_portfolio_problem(name) for name in args.problems]
    path = write_portfolio_report(args.out, records, problems, args.samplers, seeds, header)
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
