"""The report of one benchmark: ranks with standard errors, paired counts, timings and a plot.

Per kind of problem, the samplers are ranked per (problem, seed) cell by their final score
(1 = best, ties share the average rank; a run without a feasible trial ranks last); the
table gives the mean rank ± one standard error over the cells where every sampler has a run,
the reference sampler's paired counts (better / equal / worse), the mean rank per problem,
the mean seconds per trial and the share of trials that failed or were infeasible. Where a
benchmark runs several worker counts, each sampler's many-worker runs are paired with its
one-worker runs; where it preloads studies, the first trial (cold) and the others (warm) are
timed per size; where it runs synchronous rounds of B trials, each batch size is ranked
apart and the sampler's share of wall time for a 10-second objective is modelled. Written:
``README.md`` (the tables and the command), ``summary.json`` (the numbers) and
``best_so_far.png`` (the median gap to the best score any run found).
"""

from __future__ import annotations

import datetime
import json
import math
import platform
from collections import defaultdict
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

__all__ = ["label", "write_report"]

_PACKAGES = ("bore-samplers", "optuna", "scikit-learn", "coco-experiment", "pymoo", "cmaes")


def label(record: dict[str, Any]) -> str:
    """The sampler's name, with ``×J`` for J workers and ``@N`` for N preloaded trials."""
    text = record["sampler"]
    if record.get("jobs", 1) > 1:
        text += f"×{record['jobs']}"
    if record.get("preload"):
        text += f"@{record['preload']}"
    return text


def _setting(record: dict[str, Any], text: str) -> str:
    """``text`` and the preloaded trials and batch size of synchronous rounds, if any (each
    setting is ranked and drawn apart)."""
    if record.get("preload"):
        text = f"{text}, after {record['preload']} trials"
    if not record.get("batch"):
        return text
    told = ", told one by one" if record.get("interleaved") else ""
    return f"{text}, rounds of {record['batch']}{told}"


def _final(record: dict[str, Any]) -> float:
    value = record.get("final")
    return math.inf if value is None or math.isnan(value) else float(value)


def _mean_se(values: Sequence[float]) -> tuple[float, float | None]:
    array = np.asarray(values, dtype=float)
    se = float(array.std(ddof=1) / math.sqrt(array.size)) if array.size > 1 else None
    return float(array.mean()), se


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    return "\n".join([*lines, *("| " + " | ".join(map(str, row)) + " |" for row in rows)])


def _paired(mine: Sequence[float], theirs: Sequence[float]) -> list[int]:
    better = int(sum(a < b for a, b in zip(mine, theirs, strict=True)))
    worse = int(sum(a > b for a, b in zip(mine, theirs, strict=True)))
    return [better, len(mine) - better - worse, worse]


def kind_ranks(records: list[dict[str, Any]], reference: str | None) -> dict[str, Any]:
    """Mean ranks per kind over the complete (problem, seed) cells, with paired counts."""
    by_cell: dict[tuple[str, str, int], dict[str, dict]] = defaultdict(dict)
    for record in records:
        kind = _setting(record, record["kind"])
        # The kind names the preloaded trials, so the sampler keeps its plain name.
        name = label({**record, "preload": 0})
        by_cell[(kind, record["problem"], record["seed"])][name] = record
    summary: dict[str, Any] = {}
    for kind in dict.fromkeys(k for k, _, _ in by_cell):
        labels = sorted(
            {name for (k, _, _), runs in by_cell.items() if k == kind for name in runs}
        )
        cells = [key for key in by_cell if key[0] == kind and set(by_cell[key]) == set(labels)]
        if not cells:
            continue
        finals = np.array([[_final(by_cell[c][name]) for name in labels] for c in cells])
        ranks = np.array([rankdata(row) for row in finals])
        problems = list(dict.fromkeys(p for _, p, _ in cells))
        rows = {}
        for j, name in enumerate(labels):
            runs = [by_cell[c][name] for c in cells]
            trial_seconds = [s for r in runs for s in r["trial_seconds"]]
            n_trials = sum(len(r["curve"]) for r in runs)
            rows[name] = {
                "mean_rank": _mean_se(ranks[:, j]),
                "rank_by_problem": {
                    p: float(ranks[[c[1] == p for c in cells], j].mean()) for p in problems
                },
                "seconds_per_trial": float(np.mean(trial_seconds)) if trial_seconds else None,
                "failed_or_infeasible": sum(r["infeasible"] for r in runs) / max(n_trials, 1),
                "duplicates": sum(r["duplicates"] for r in runs),
            }
            if reference in labels and name != reference:
                rows[name]["reference_better_equal_worse"] = _paired(
                    finals[:, labels.index(reference)], finals[:, j]
                )
        summary[kind] = {"cells": len(cells), "problems": problems, "samplers": rows}
    return summary


def worker_pairs(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Each sampler's J-worker finals paired with its one-worker finals (same problem, seed)."""
    finals = {(r["sampler"], r["jobs"], r["problem"], r["seed"]): _final(r) for r in records}
    out: dict[str, Any] = {}
    for sampler, jobs, _, _ in finals:
        if jobs == 1 or f"{sampler}×{jobs}" in out:
            continue
        keys = [
            (p, s)
            for (a, j, p, s) in finals
            if a == sampler and j == jobs
            if (sampler, 1, p, s) in finals
        ]
        many = [finals[(sampler, jobs, p, s)] for p, s in keys]
        one = [finals[(sampler, 1, p, s)] for p, s in keys]
        if keys:
            out[f"{sampler}×{jobs}"] = {
                "cells": len(keys),
                "better_equal_worse_than_one_worker": _paired(many, one),
                "mean_final": float(np.mean(many)),
                "mean_final_one_worker": float(np.mean(one)),
            }
    return out


def preload_timings(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per sampler and study size: the first trial's seconds, the others' mean, peak memory."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for record in records:
        if record.get("preload"):
            groups[(record["sampler"], record["preload"])].append(record)
    return {
        f"{sampler}@{size}": {
            "cold_seconds": float(np.mean([r["trial_seconds"][0] for r in runs])),
            "warm_seconds": float(np.mean([np.mean(r["trial_seconds"][1:]) for r in runs])),
            "max_rss_mb": float(np.mean([r["max_rss_mb"] for r in runs])),
        }
        for (sampler, size), runs in groups.items()
        if all(len(r["trial_seconds"]) > 1 for r in runs)
    }


def round_timings(records: list[dict[str, Any]], objective_seconds: float = 10.0) -> dict:
    """Per sampler and batch size B: the seconds per trial, and the sampler's share of wall
    time with an objective of ``objective_seconds``, in the whole study and in its last round:
    B processes, each asking for itself (t / (t + T)), or one driver suggesting a round's
    trials one after another (sum t / (sum t + T) per round)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in records:
        if record.get("batch"):
            told = " told one by one" if record.get("interleaved") else ""
            groups[(record["sampler"], f"{record['batch']}{told}")].append(record)

    def share(busy: np.ndarray, waits: float) -> float:  # mean over the cells
        return float(np.mean(busy / (busy + waits)))

    out = {}
    for (sampler, batch), runs in groups.items():
        seconds = np.array([r["trial_seconds"] for r in runs])  # cells x trials
        rounds = seconds.reshape(len(runs), -1, runs[0]["batch"])  # cells x rounds x trials
        driver = rounds.sum(axis=2)
        out[f"{sampler}×{batch}"] = {
            "seconds_per_trial": float(seconds.mean()),
            "max_seconds_per_trial": float(seconds.max()),
            "share_processes": share(seconds.mean(1), objective_seconds),
            "share_processes_last_round": share(rounds[:, -1].mean(1), objective_seconds),
            "share_driver": share(driver.sum(1), objective_seconds * driver.shape[1]),
            "share_driver_last_round": share(driver[:, -1], objective_seconds),
        }
    return out


def _environment(command: str) -> list[str]:
    versions = []
    for package in _PACKAGES:
        try:
            versions.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            pass
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"Regenerate: `{command}` (from the repository root; run caches in `runs/`, ignored).",
        "",
        f"Made {now} on {platform.machine()} with Python {platform.python_version()}; "
        + ", ".join(versions)
        + ".",
    ]


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "–" if value is None or math.isnan(value) else format(value, spec)


def markdown(summary: dict[str, Any], title: str, description: str, command: str) -> str:
    """The README of a benchmark's results."""
    lines = [f"# {title}", "", description, "", *_environment(command), ""]
    for reason in summary.get("skipped", {}).values():
        lines += [f"Not run here: {reason}.", ""]
    reference = summary.get("reference")
    for kind, block in summary["kinds"].items():
        rows = []
        problems = block["problems"]
        order = sorted(block["samplers"].items(), key=lambda item: item[1]["mean_rank"][0])
        for name, row in order:
            mean, se = row["mean_rank"]
            paired = row.get("reference_better_equal_worse")
            rows.append(
                [
                    name,
                    f"{mean:.2f} ± {_fmt(se, '.2f')}",
                    "–" if paired is None else " / ".join(map(str, paired)),
                    _fmt(row["seconds_per_trial"]),
                    f"{row['failed_or_infeasible']:.0%}",
                    *(f"{row['rank_by_problem'][p]:.2f}" for p in problems),
                ]
            )
        versus = f"{reference} better / equal / worse" if reference else "paired"
        headers = ["sampler", "mean rank", versus, "s / trial", "failed or infeasible"]
        lines += [
            f"## {kind}: {block['cells']} (problem, seed) cells",
            "",
            _table([*headers, *problems], rows),
            "",
        ]
    if summary.get("workers"):
        rows = [
            [
                name,
                v["cells"],
                " / ".join(map(str, v["better_equal_worse_than_one_worker"])),
                _fmt(v["mean_final"]),
                _fmt(v["mean_final_one_worker"]),
            ]
            for name, v in summary["workers"].items()
        ]
        headers = ["sampler", "cells", "better / equal / worse than 1 worker", "mean final", "1w"]
        lines += ["## Workers", "", _table(headers, rows), ""]
    if summary.get("preload"):
        rows = [
            [name, _fmt(v["cold_seconds"]), _fmt(v["warm_seconds"]), f"{v['max_rss_mb']:.0f}"]
            for name, v in summary["preload"].items()
        ]
        headers = ["sampler@finished trials", "first ask (s)", "later asks (s)", "peak MB"]
        lines += ["## Preloaded studies", "", _table(headers, rows), ""]
    if summary.get("rounds"):
        rows = [
            [name, *(_fmt(v[k]) for k in ("seconds_per_trial", "max_seconds_per_trial"))]
            + [f"{v[k]:.1%}" for k in list(v)[2:]]
            for name, v in summary["rounds"].items()
        ]
        headers = ["sampler×B", "s / trial", "max s", "processes", "processes, last round"]
        headers += ["Ray driver", "Ray driver, last round"]
        lines += ["## Sampler's share of wall time, 10-s objective", "", _table(headers, rows), ""]
    return "\n".join(lines)


def plot(records: list[dict[str, Any]], path: Path) -> None:
    """Median gap of each sampler's best-so-far score to the best any run found, per problem."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    warnings.filterwarnings("ignore", "All-NaN", RuntimeWarning)  # before a first feasible trial
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(_setting(r, r["problem"]) for r in records))[:24]
    labels = sorted({label(r) for r in records})
    columns = min(4, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3 * rows), squeeze=False)
    palette = plt.cm.tab20.colors
    colours = {name: palette[k % len(palette)] for k, name in enumerate(labels)}
    for ax, panel in zip(axes.flat, panels, strict=False):
        curves = defaultdict(list)
        for r in records:
            # In synchronous rounds, the best after each round.
            curve = r["curve"][r["batch"] - 1 :: r["batch"]] if r.get("batch") else r["curve"]
            if _setting(r, r["problem"]) == panel and curve:
                curves[label(r)].append([np.nan if v is None else v for v in curve])
        length = min(len(c) for runs in curves.values() for c in runs)
        arrays = {name: np.array([c[:length] for c in runs]) for name, runs in curves.items()}
        if all(np.isnan(a).all() for a in arrays.values()):
            continue  # no feasible trial in any run
        floor = np.nanmin([np.nanmin(a) for a in arrays.values()])
        for name, array in arrays.items():
            gap = np.nanmedian(array - floor, axis=0) + 1e-9 * (1 + abs(floor))
            ax.semilogy(np.arange(1, length + 1), gap, label=name, color=colours[name])
        ax.set_title(panel, fontsize=8)
        ax.set_xlabel("round" if "rounds of" in panel else "trial")
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    handles = [plt.Line2D([], [], color=colours[n], label=n) for n in labels]
    figure.legend(handles=handles, loc="lower right", fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=70)
    plt.close(figure)


def write_report(
    records: list[dict[str, Any]],
    out: Path,
    *,
    title: str,
    description: str,
    command: str,
    reference: str | None,
    skipped: dict[str, str] | None = None,
    rank_preloaded: bool = False,
) -> dict[str, Any]:
    """Write ``README.md``, ``summary.json`` and ``best_so_far.png`` to ``out``; the summary.

    ``skipped`` names the declared samplers that could not run here, with the reason;
    ``rank_preloaded`` ranks the values of preloaded studies too (by default they measure
    time and memory only).
    """
    ok = [r for r in records if r["status"] == "ok"]
    ranked = [r for r in ok if rank_preloaded or not r.get("preload")]
    summary = {
        "command": command,
        "reference": reference,
        "kinds": kind_ranks(ranked, reference),
        "workers": worker_pairs(ok),
        "preload": preload_timings(ok),
        "rounds": round_timings(ok),
        "errors": len(records) - len(ok),
        "skipped": skipped or {},
    }
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(summary, indent=1, default=lambda value: value.item())  # numpy scalars
    (out / "summary.json").write_text(text + "\n")
    (out / "README.md").write_text(markdown(summary, title, description, command) + "\n")
    if ranked:
        try:
            plot(ranked, out / "best_so_far.png")
        except ImportError:  # matplotlib is in the bench extra; the tables do without it
            pass
    return summary
