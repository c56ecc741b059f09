"""``python -m benchmarks list | run <name> [options]``: run a declared benchmark and report it.

Examples (from the repository root, after ``pip install -e ".[bench]"``)::

    python -m benchmarks list
    python -m benchmarks run kinds                       # the declared size
    python -m benchmarks run kinds --seeds 2 --trials 12 --out /tmp/kinds   # a smoke run
    python -m benchmarks run real-tuning --problems real_tuning.grid-forest.wine \\
        --samplers gp tpe random --report-only
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.declarations import BENCHMARKS
from benchmarks.report import write_report
from benchmarks.runner import Cell, default_workers, load_records, run_cells
from benchmarks.samplers import unavailable_reason


def cells(name: str, seeds: int | None, trials: int, problems=None, samplers=None) -> list[Cell]:
    """The cells of benchmark ``name`` (optionally only some problems or samplers), seeds
    ``0..seeds-1`` (``None``: as declared, per group); a group that runs in batches of B runs
    ``trials`` rounds, ``trials * B`` trials."""
    benchmark = BENCHMARKS[name]
    return [
        Cell(
            problem, sampler, seed, trials * (batch or 1), jobs, preload, batch, group.interleaved
        )
        for group in benchmark.groups
        for problem in group.problems
        if problems is None or problem in problems
        for sampler in group.samplers
        if samplers is None or sampler in samplers
        for jobs in group.jobs
        for preload in group.preload
        for batch in group.batches
        for seed in range(seeds or group.seeds or benchmark.seeds)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the declared benchmarks")
    run = commands.add_parser("run", help="run a benchmark (resuming) and write its report")
    run.add_argument("name", choices=list(BENCHMARKS))
    run.add_argument("--seeds", type=int, help="seeds 0..S-1 (default: as declared)")
    run.add_argument("--trials", type=int, help="trials (rounds in batches) per study")
    run.add_argument("--workers", type=int, default=default_workers(), help="processes")
    run.add_argument("--out", type=Path, help="default: benchmarks/results/<name>")
    run.add_argument("--problems", nargs="+", help="only these of the declared problems")
    run.add_argument("--samplers", nargs="+", help="only these of the declared samplers")
    run.add_argument("--report-only", action="store_true", help="report the cached runs")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, benchmark in BENCHMARKS.items():
            size = sum(len(g.problems) * len(g.samplers) for g in benchmark.groups)
            print(f"{name:18} {size:4} problem-sampler pairs  {benchmark.title}")
        return 0
    benchmark = BENCHMARKS[args.name]
    trials = args.trials or benchmark.trials
    out = args.out or Path("benchmarks/results") / args.name
    todo = cells(args.name, args.seeds, trials, args.problems, args.samplers)
    skipped = {}
    for sampler in dict.fromkeys(cell.sampler for cell in todo):
        reason = unavailable_reason(sampler)
        if reason is not None:  # an optional package missing: the others still run
            print(f"skipping {sampler}: {reason}", file=sys.stderr)
            skipped[sampler] = reason
            todo = [cell for cell in todo if cell.sampler != sampler]
    if not todo:
        parser.error("no cell matches --problems and --samplers")
    runs = out / "runs"
    records = load_records(todo, runs) if args.report_only else run_cells(todo, runs, args.workers)
    command = shlex.join(
        ["python", "-m", "benchmarks", *(a for a in argv if a != "--report-only")]
    )
    summary = write_report(
        records,
        out,
        title=benchmark.title,
        description=benchmark.description,
        command=command,
        reference=benchmark.reference,
        skipped=skipped,
        rank_preloaded=benchmark.rank_preloaded,
    )
    print((out / "README.md").read_text())
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
