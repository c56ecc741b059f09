"""The benchmark harness: its declarations name registered problems and samplers, COCO's
instance 1 stays held out, and one cell runs a real study (when the suites are installed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.declarations import BENCHMARKS
from benchmarks.problems import FAMILIES
from benchmarks.samplers import SAMPLERS


def _families() -> list[str]:
    from benchmarks import feedback, real_tuning

    return [*FAMILIES, *feedback.FAMILIES, *real_tuning.FAMILIES]


def test_declarations_name_registered_problems_and_samplers() -> None:
    patterns = _families()
    for name, benchmark in BENCHMARKS.items():
        for group in benchmark.groups:
            assert set(group.samplers) <= set(SAMPLERS), name
            for problem in group.problems:
                assert any(re.fullmatch(p, problem) for p in patterns), problem
                instance = re.search(r"\.i(\d+)", problem)
                assert instance is None or int(instance.group(1)) >= 2, problem


def test_a_group_with_its_own_seeds_runs_them_unless_the_command_line_sets_them() -> None:
    from benchmarks.__main__ import cells

    def seeds(todo: list) -> dict[str, int]:
        return {
            c.problem: max(cell.seed for cell in todo if cell.problem == c.problem) + 1
            for c in todo
        }

    declared = seeds(cells("real-tuning", None, 30))
    assert declared["real_tuning.categorical-svm.wine"] == 30
    assert declared["real_tuning.grid-forest.wine"] == BENCHMARKS["real-tuning"].seeds
    assert set(seeds(cells("real-tuning", 2, 30)).values()) == {2}


def test_coco_instance_one_is_refused() -> None:
    pytest.importorskip("cocoex")
    from benchmarks.problems import get_problem

    for name in ("bbob.f1.d2.i1", "bbob-constrained.f1.d2.i1", "crashing.f1.d2.i1"):
        with pytest.raises(ValueError, match="held out"):
            get_problem(name)


def test_one_cell_runs_and_is_judged() -> None:
    pytest.importorskip("cocoex")
    from benchmarks.runner import Cell, run_cell

    record = run_cell(Cell("bbob-constrained.f1.d2.i2", "random", seed=0, trials=8))
    assert record["status"] == "ok", record.get("traceback")
    assert len(record["curve"]) == 8
    assert record["infeasible"] <= 8


def test_a_cell_in_synchronous_rounds_runs_and_older_records_still_load(tmp_path: Path) -> None:
    pytest.importorskip("cocoex")
    from benchmarks.report import round_timings
    from benchmarks.runner import Cell, load_records, run_cell

    cell = Cell("bbob.f1.d2.i2", "tpe", seed=0, trials=8, batch=4)
    assert cell.filename == "bbob.f1.d2.i2__tpe__s0__t8__b4.json"
    record = run_cell(cell)
    assert record["status"] == "ok", record.get("traceback")
    assert len(record["curve"]) == len(record["trial_seconds"]) == 8
    assert 0.0 <= round_timings([record])["tpe×4"]["share_driver"] < 1.0
    # A record written before the field existed is the cell at the field's default.
    older = Cell("bbob.f1.d2.i2", "tpe", seed=0, trials=8)
    assert older.filename == "bbob.f1.d2.i2__tpe__s0__t8.json"
    fields = {k: v for k, v in record.items() if k != "batch"}
    (tmp_path / older.filename).write_text(json.dumps(fields))
    assert len(load_records([older], tmp_path)) == 1
