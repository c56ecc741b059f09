"""Import time of ``bore_samplers`` against ``import optuna``, each in a fresh process.

Usage (from the repository root)::

    python -m benchmarks.import_time --repeats 15
    python -m benchmarks.import_time --repeats 3 --out /tmp/import_time_smoke

Each statement of :data:`STATEMENTS` runs in its own ``python -c`` subprocess, started in the
repository root (so the checkout's code is imported), which times it with
``time.perf_counter`` around the statement alone: interpreter start-up and ``site`` are
excluded. The statements run in the same order in every repeat (A B C D A B C D ...), so a
busy machine slows all of them alike; one round before the timed ones fills the byte-code and
disk caches and is not counted.

The report (``README.md`` in ``--out``, default ``benchmarks/results/import_time``; the
command comes first) is a Markdown table of the median, minimum and maximum seconds over the
repeats and each median's ratio to ``import optuna``'s; ``summary.json`` has the same numbers,
every repeat and whether the target holds: the median of ``import bore_samplers`` at most the
median of ``import optuna``. ``from bore_samplers import BORESampler`` imports optuna and the
proposers (scipy) by design, so it is reported, not held to the target, as are
``import bore_samplers.proposers`` (what a first proposal pays) and ``import scipy.special``
(numpy included: the floor under it, which every model needs).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "import_time"

#: Label -> statement, timed in the order given.
STATEMENTS = {
    "import optuna": "import optuna",
    "import bore_samplers": "import bore_samplers",
    "import bore_samplers.proposers": "import bore_samplers.proposers",
    "from bore_samplers import BORESampler": "from bore_samplers import BORESampler",
    # What every model in bore_samplers.models needs: a floor for the proposers' time.
    "import scipy.special": "import scipy.special",
}
BASELINE = "import optuna"
TARGET = "import bore_samplers"

_CHILD = "import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"


def time_import(statement: str, timeout: float = 120.0) -> float:
    """Seconds ``statement`` takes in a fresh interpreter started in the repository root."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD.format(statement=statement)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


def measure(repeats: int) -> dict[str, list[float]]:
    """Every statement's times over ``repeats`` alternating rounds, after one untimed round."""
    for statement in STATEMENTS.values():
        time_import(statement)
    times: dict[str, list[float]] = {label: [] for label in STATEMENTS}
    for _ in range(repeats):
        for label, statement in STATEMENTS.items():
            times[label].append(time_import(statement))
    return times


def table(times: dict[str, list[float]]) -> str:
    """The Markdown table of medians, ranges and ratios to :data:`BASELINE`."""
    baseline = statistics.median(times[BASELINE])
    lines = [
        "| statement | median (s) | min (s) | max (s) | median / `import optuna` |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label, values in times.items():
        median = statistics.median(values)
        lines.append(
            f"| `{label}` | {median:.3f} | {min(values):.3f} | {max(values):.3f} "
            f"| {median / baseline:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure, print the table, and write ``README.md`` and ``summary.json`` to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report folder")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")

    times = measure(args.repeats)
    medians = {label: statistics.median(values) for label, values in times.items()}
    met = medians[TARGET] <= medians[BASELINE]
    command = "python -m benchmarks.import_time " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    report = "\n".join(
        [
            "# Import time",
            "",
            "```bash",
            command.strip(),
            "```",
            "",
            f"Python {platform.python_version()} on {platform.machine()}; each statement in a "
            f"fresh process, {args.repeats} alternating rounds after one untimed round; "
            "seconds around the statement alone (interpreter start-up excluded).",
            "",
            table(times),
            "",
            f"Target, median `{TARGET}` <= median `{BASELINE}`: "
            f"{'met' if met else 'not met'} ({medians[TARGET]:.3f} s against "
            f"{medians[BASELINE]:.3f} s).",
            "",
            "`import bore_samplers` loads its public names on first access; "
            "`import bore_samplers.proposers` is what the first proposal, or "
            "`from bore_samplers import BORESampler` (optuna included), pays. "
            "`import scipy.special` (numpy included) is the part of it that every model "
            "needs.",
            "",
        ]
    )
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "README.md").write_text(report)
    summary = {
        "command": command.strip(),
        "python": platform.python_version(),
        "repeats": args.repeats,
        "median_s": medians,
        "ratio_to_optuna": {label: m / medians[BASELINE] for label, m in medians.items()},
        "target": f"median {TARGET} <= median {BASELINE}",
        "target_met": met,
        "times_s": times,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
