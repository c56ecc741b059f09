"""Turn cached benchmark runs into ``results.md`` and ``regret_<problem>.png`` plots."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from benchmarks.harness import atomic_write_text, format_mean_se, markdown_table, mean_se
from benchmarks.problems import Problem

__all__ = ["compute_ranks", "plot_problem", "write_constrained_report", "write_report"]

#: Floor for simple regret before taking logs (regret can be 0 or, by rounding, negative).
REGRET_FLOOR = 1e-12

Record = dict[str, Any]


def _index(records: Sequence[Record]) -> dict[tuple[str, str], dict[int, Record]]:
    """Successful runs as ``{(problem, sampler): {seed: record}}``."""
    out: dict[tuple[str, str], dict[int, Record]] = defaultdict(dict)
    for rec in records:
        if rec["status"] == "ok":
            out[rec["problem"], rec["sampler"]][rec["seed"]] = rec
    return out


def _final_best(rec: Record) -> float:
    value = rec["best_so_far"][-1]
    return math.inf if value is None else float(value)


def compute_ranks(
    records: Sequence[Record],
    problems: Sequence[str],
    samplers: Sequence[str],
    seeds: Sequence[int],
) -> tuple[list[str], dict[str, dict[str, list[float]]]]:
    """Rank samplers by final best value for every (problem, seed).

    Only samplers with a successful run for every requested (problem, seed) are ranked, so
    that all ranks come from the same set of competitors. Ties share the average rank.

    Parameters
    ----------
    records : Sequence[Record]
        Run records (any status).
    problems, samplers : Sequence[str]
        Requested problem and sampler names.
    seeds : Sequence[int]
        Requested seeds.

    Returns
    -------
    ranked : list[str]
        The samplers that were ranked, in the order of ``samplers``.
    ranks : dict[str, dict[str, list[float]]]
        ``ranks[problem][sampler]`` is the list of ranks over seeds (1 = best).
    """
    index = _index(records)
    ranked = [s for s in samplers if all(seed in index[p, s] for p in problems for seed in seeds)]
    ranks: dict[str, dict[str, list[float]]] = {p: {s: [] for s in ranked} for p in problems}
    if len(ranked) < 2:
        return ranked, ranks
    for p in problems:
        for seed in seeds:
            finals = [_final_best(index[p, s][seed]) for s in ranked]
            for s, r in zip(ranked, rankdata(finals, method="average"), strict=True):
                ranks[p][s].append(float(r))
    return ranked, ranks


def _traces(runs: dict[int, Record], problem: Problem) -> np.ndarray:
    """Best-so-far traces (runs x trials), as log10 simple regret for synthetic problems."""
    arr = np.array(
        [[np.nan if v is None else v for v in rec["best_so_far"]] for rec in runs.values()],
        dtype=float,
    )
    if problem.optimum is not None:
        arr = np.log10(np.maximum(arr - problem.optimum, REGRET_FLOOR))
    return arr


def plot_problem(
    problem: Problem | Any,
    runs_by_sampler: dict[str, dict[int, Record]],
    path: Path,
    title: str | None = None,
    value_label: str = "best value so far",
    regret_label: str = "log10 simple regret of best so far",
) -> None:
    """Plot mean best-so-far (log10 simple regret if the optimum is known) vs trial.

    Runs without a value yet (``None`` in ``best_so_far``) are left out of that trial's mean,
    and the legend's ``n`` counts every run.

    Parameters
    ----------
    problem : Problem
        The problem (for its name and optimum; anything with ``name`` and ``optimum``).
    runs_by_sampler : dict[str, dict[int, Record]]
        Successful runs, ``{sampler: {seed: record}}``.
    path : pathlib.Path
        Output PNG.
    title : str or None
        Plot title (default: the problem's name and "mean ± standard error over seeds").
    value_label : str
        Y-axis label when the optimum is unknown.
    regret_label : str
        Y-axis label when the optimum is known.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for sampler, runs in runs_by_sampler.items():
        traces = _traces(runs, problem)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (no value yet)
            mean = np.nanmean(traces, axis=0)
            count = np.sum(~np.isnan(traces), axis=0)
            se = np.nanstd(traces, axis=0, ddof=1) / np.sqrt(count) if len(runs) > 1 else 0.0
        x = np.arange(1, traces.shape[1] + 1)
        (line,) = ax.plot(x, mean, label=f"{sampler} (n={len(runs)})", lw=1.6)
        ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("trial")
    if problem.optimum is not None:
        ax.set_ylabel(regret_label)
    else:
        ax.set_ylabel(value_label)
    ax.set_title(title or f"{problem.name}: mean ± standard error over seeds")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fmt_ratio(value: float, reference: float | None) -> str:
    if reference is None or not reference or math.isnan(value):
        return "–"
    return f"{value / reference:.3f}"


def _problem_section(
    problem: Problem,
    samplers: Sequence[str],
    runs_by_sampler: dict[str, dict[int, Record]],
    ranks: dict[str, list[float]],
) -> str:
    headers = ["sampler", "runs", "final best value"]
    if problem.optimum is not None:
        headers.append("simple regret")
    headers += ["mean rank", "wall time / run (s)", "sampler time / trial (ms)"]
    rows = []
    for sampler in samplers:
        runs = runs_by_sampler.get(sampler, {})
        finals = [_final_best(rec) for rec in runs.values()]
        row: list[Any] = [sampler, len(runs), format_mean_se(finals)]
        if problem.optimum is not None:
            row.append(format_mean_se([f - problem.optimum for f in finals], ".3g"))
        sampler_ms = [1e3 * rec["sampler_time_s"] / rec["n_trials"] for rec in runs.values()]
        row += [
            format_mean_se(ranks[sampler], ".2f") if sampler in ranks else "–",
            format_mean_se([rec["wall_time_s"] for rec in runs.values()], ".3g"),
            format_mean_se(sampler_ms, ".3g"),
        ]
        rows.append(row)
    optimum = "unknown" if problem.optimum is None else f"{problem.optimum:.6g}"
    return (
        f"## {problem.name}\n\n{problem.description}. Known optimum: {optimum}. "
        f"Plot: `regret_{problem.name}.png`.\n\n" + markdown_table(headers, rows)
    )


def _summary_section(
    problems: Sequence[Problem],
    ranked: Sequence[str],
    ranks: dict[str, dict[str, list[float]]],
) -> str:
    if len(ranked) < 2:
        return "## Summary\n\nFewer than two samplers have every run; no ranking.\n"

    def pooled(sampler: str, subset: Sequence[Problem]) -> list[float]:
        return [r for p in subset for r in ranks[p.name][sampler]]

    synthetic = [p for p in problems if p.optimum is not None]
    real = [p for p in problems if p.optimum is None]
    tpe_rank = mean_se(pooled("tpe", problems))[0] if "tpe" in ranked else None
    headers = ["sampler", "mean rank (all)", "mean rank / TPE's"]
    if synthetic and real:
        headers += ["mean rank (synthetic)", "mean rank (real)"]
    headers += [f"rank on {p.name}" for p in problems]
    rows = []
    for sampler in sorted(ranked, key=lambda s: mean_se(pooled(s, problems))[0]):
        mean_rank = mean_se(pooled(sampler, problems))[0]
        row: list[Any] = [
            sampler,
            format_mean_se(pooled(sampler, problems), ".2f"),
            _fmt_ratio(mean_rank, tpe_rank),
        ]
        if synthetic and real:
            row += [
                format_mean_se(pooled(sampler, synthetic), ".2f"),
                format_mean_se(pooled(sampler, real), ".2f"),
            ]
        row += [f"{np.mean(ranks[p.name][sampler]):.2f}" for p in problems]
        rows.append(row)
    return (
        "## Summary\n\n"
        f"Samplers ranked per problem and seed by final best value (1 = best, ties share the "
        f"average rank; {len(ranked)} samplers), then averaged over all problem-seed pairs "
        "(± standard error over those pairs). A ratio below 1 means better than TPE.\n\n"
        + markdown_table(headers, rows)
    )


def _notes_section(records: Sequence[Record], ranked: Sequence[str]) -> str:
    grouped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for rec in records:
        if rec["status"] != "ok":
            key = (rec["sampler"], rec["status"], rec.get("message", ""))
            grouped[key].append(f"{rec['problem']}/seed{rec['seed']}")
    if not grouped:
        return ""
    lines = ["## Runs that did not complete\n"]
    for (sampler, status, message), where in sorted(grouped.items()):
        shown = ", ".join(where[:12]) + (f", … ({len(where)} runs)" if len(where) > 12 else "")
        lines.append(f"- **{sampler}** {status}: {message}  \n  ({shown})")
    unranked = sorted({k[0] for k in grouped} - set(ranked))
    if unranked:
        lines.append(f"\nNot in the ranking (missing runs): {', '.join(unranked)}.")
    return "\n".join(lines) + "\n"


def write_report(
    out: Path,
    records: Sequence[Record],
    problems: Sequence[Problem],
    samplers: Sequence[str],
    seeds: Sequence[int],
    header_lines: Sequence[str],
) -> Path:
    """Write ``<out>/results.md`` and one ``<out>/regret_<problem>.png`` per problem.

    Parameters
    ----------
    out : pathlib.Path
        Output folder.
    records : Sequence[Record]
        Run records of the requested grid (any status).
    problems : Sequence[Problem]
        Requested problems, in report order.
    samplers : Sequence[str]
        Requested samplers, in report order.
    seeds : Sequence[int]
        Requested seeds.
    header_lines : Sequence[str]
        Markdown lines for the top of the report (command, date, machine, ...).

    Returns
    -------
    pathlib.Path
        The path of ``results.md``.
    """
    index = _index(records)
    names = [p.name for p in problems]
    ranked, ranks = compute_ranks(records, names, samplers, seeds)
    sections = [
        "# bore-samplers benchmark\n\n" + "\n".join(header_lines) + "\n",
        _summary_section(problems, ranked, ranks),
    ]
    for problem in problems:
        runs_by_sampler = {s: index[problem.name, s] for s in samplers if index[problem.name, s]}
        sections.append(_problem_section(problem, samplers, runs_by_sampler, ranks[problem.name]))
        if runs_by_sampler:
            plot_problem(problem, runs_by_sampler, out / f"regret_{problem.name}.png")
    notes = _notes_section(records, ranked)
    if notes:
        sections.append(notes)
    path = out / "results.md"
    atomic_write_text(path, "\n".join(sections))
    return path


# --------------------------------------------------------------------------------------
# Constrained benchmark (benchmarks.run_constrained)
# --------------------------------------------------------------------------------------


def _finite_mean_se(values: Sequence[float], fmt: str = ".4g") -> str:
    """``mean ± SE`` of the finite values, noting how many were infinite (no feasible)."""
    finite = [v for v in values if math.isfinite(v)]
    text = format_mean_se(finite, fmt)
    missing = len(values) - len(finite)
    return text if not missing else f"{text} ({missing}/{len(values)} runs: none feasible)"


def _constrained_problem_section(
    problem: Any,
    mode: str,
    samplers: Sequence[str],
    runs_by_sampler: dict[str, dict[int, Record]],
    ranks: dict[str, list[float]],
) -> str:
    headers = ["sampler", "runs", "final best feasible value"]
    if problem.optimum is not None:
        headers.append("simple regret")
    headers += ["infeasible fraction", "mean rank", "sampler time / trial (ms)"]
    rows = []
    for sampler in samplers:
        runs = runs_by_sampler.get(sampler, {})
        finals = [_final_best(rec) for rec in runs.values()]
        row: list[Any] = [sampler, len(runs), _finite_mean_se(finals)]
        if problem.optimum is not None:
            row.append(_finite_mean_se([f - problem.optimum for f in finals], ".3g"))
        sampler_ms = [1e3 * rec["sampler_time_s"] / rec["n_trials"] for rec in runs.values()]
        row += [
            format_mean_se([rec["infeasible_fraction"] for rec in runs.values()], ".2f"),
            format_mean_se(ranks[sampler], ".2f") if sampler in ranks else "–",
            format_mean_se(sampler_ms, ".3g"),
        ]
        rows.append(row)
    optimum = "unknown" if problem.optimum is None else f"{problem.optimum:.6g}"
    return (
        f"### {problem.name} ({mode} feedback)\n\n{problem.description}. Known constrained "
        f"optimum: {optimum}. Plot: `best_{problem.name}_{mode}.png`.\n\n"
        + markdown_table(headers, rows)
    )


def _constrained_summary(
    modes: Sequence[str],
    samplers: Sequence[str],
    ranked: dict[str, list[str]],
    ranks: dict[str, dict[str, dict[str, list[float]]]],
    infeasible: dict[tuple[str, str], list[float]],
) -> str:
    headers = ["sampler"]
    for mode in modes:
        headers += [f"mean rank ({mode})", f"infeasible fraction ({mode})"]
    rows = []
    for sampler in samplers:
        row: list[Any] = [sampler]
        for mode in modes:
            pooled = [r for per in ranks[mode].values() for r in per.get(sampler, [])]
            rank = format_mean_se(pooled, ".2f") if sampler in ranked[mode] else "–"
            row += [rank, format_mean_se(infeasible.get((mode, sampler), []), ".2f")]
        rows.append(row)
    counts = "; ".join(f"{mode}: {len(ranked[mode])} samplers" for mode in modes)
    return (
        "## Summary\n\n"
        "Per feedback mode, samplers are ranked per problem and seed by the final best "
        "FEASIBLE value (1 = best; ties, including runs that never found a feasible point, "
        "share the average rank), then averaged over all problem-seed pairs (± standard "
        "error over those pairs). Only samplers with a run for every problem and seed of a "
        f"mode are ranked in it ({counts}). Infeasible fraction: share of evaluations that "
        "failed (binary) or violated the constraint (real), mean ± SE over runs.\n\n"
        + markdown_table(headers, rows)
    )


def write_constrained_report(
    out: Path,
    records: Sequence[Record],
    problems: Sequence[Any],
    modes: Sequence[str],
    samplers: Sequence[str],
    seeds: Sequence[int],
    header_lines: Sequence[str],
) -> Path:
    """Write ``<out>/results.md`` and ``<out>/best_<problem>_<mode>.png`` plots.

    Parameters
    ----------
    out : pathlib.Path
        Output folder.
    records : Sequence[Record]
        Run records of the requested grid (any status); successful ones carry ``mode``,
        ``best_so_far`` (best feasible value, ``None`` until the first feasible one),
        ``infeasible_fraction``, ``sampler_time_s`` and ``n_trials``.
    problems : Sequence[ConstrainedProblem]
        Requested problems, in report order.
    modes : Sequence[str]
        Requested feedback modes.
    samplers : Sequence[str]
        Requested samplers, in report order.
    seeds : Sequence[int]
        Requested seeds.
    header_lines : Sequence[str]
        Markdown lines for the top of the report.

    Returns
    -------
    pathlib.Path
        The path of ``results.md``.
    """
    names = [p.name for p in problems]
    ranked: dict[str, list[str]] = {}
    ranks: dict[str, dict[str, dict[str, list[float]]]] = {}
    infeasible: dict[tuple[str, str], list[float]] = defaultdict(list)
    sections: list[str] = []
    for mode in modes:
        mode_records = [rec for rec in records if rec.get("mode") == mode]
        ranked[mode], ranks[mode] = compute_ranks(mode_records, names, samplers, seeds)
        index = _index(mode_records)
        sections.append(f"## {mode.capitalize()} feedback\n")
        for problem in problems:
            runs_by_sampler = {
                s: index[problem.name, s] for s in samplers if index[problem.name, s]
            }
            for s, runs in runs_by_sampler.items():
                infeasible[mode, s] += [rec["infeasible_fraction"] for rec in runs.values()]
            sections.append(
                _constrained_problem_section(
                    problem, mode, samplers, runs_by_sampler, ranks[mode][problem.name]
                )
            )
            if runs_by_sampler:
                plot_problem(
                    problem,
                    runs_by_sampler,
                    out / f"best_{problem.name}_{mode}.png",
                    title=f"{problem.name}, {mode} feedback: mean ± SE over seeds",
                    value_label="best feasible value so far",
                    regret_label="log10 simple regret of best feasible so far",
                )
    summary = _constrained_summary(modes, samplers, ranked, ranks, infeasible)
    all_ranked = sorted({s for mode in modes for s in ranked[mode]})
    notes = _notes_section(
        [{**rec, "problem": f"{rec['problem']}/{rec.get('mode')}"} for rec in records],
        all_ranked,
    )
    text = "\n".join(
        [
            "# bore-samplers constrained benchmark\n\n" + "\n".join(header_lines) + "\n",
            summary,
            *sections,
            *([notes] if notes else []),
        ]
    )
    path = out / "results.md"
    atomic_write_text(path, text)
    return path
