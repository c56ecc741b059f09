"""Each example runs in its smoke mode and prints what its docstring says it prints.

The examples run as a user runs them: as a script (``sys.executable``) from the repository
root, with their files (SQLite studies, Tune results, plots) in a temporary folder, and every
test checks that nothing new appeared in the repository root or in ``examples/``. The checks are
on the structure of the printed claims, not on their numbers: the comparison lines exist and
the proposal counts add up to the number of trials. An example whose extra is missing says so
in one line and exits with status 1.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: What :meth:`bore_samplers.integrations.reporting.ProposalSources.summary` prints.
PROPOSALS = re.compile(
    r"proposals: (\d+) trials = (\d+) model-based \+ (\d+) start-up \+ (\d+) fallback"
)
BEST_BY_SOURCE = re.compile(r"best by source: model-based [-\d.]+ \(trial \S+\)")


def untracked_entries() -> set[str]:
    """The entries of the repository root and of ``examples/``, bytecode caches left out."""
    folders = (ROOT, ROOT / "examples")
    return {
        str(entry.relative_to(ROOT))
        for folder in folders
        for entry in folder.iterdir()
        if entry.name != "__pycache__"
    }


@pytest.fixture(autouse=True)
def nothing_written_into_the_repository() -> Iterator[None]:
    """Every example here runs from the repository root: it must write nothing there."""
    before = untracked_entries()
    yield
    assert untracked_entries() == before


def needs(*modules: str) -> None:
    """Skip the test unless every module (an optional extra) is installed."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install '.[{','.join(missing)}]')")


def run_example(name: str, *args: str, smoke: bool = True) -> str:
    """Run ``examples/<name>`` (in smoke mode) from the repository root; its checked stdout."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *(["--smoke"] if smoke else []), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        # A guard against hangs, not a speed check: Ray's workers run at a lower priority, and
        # beside a 2-process benchmark on 2 cores the crash example took 863 s.
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout


def proposal_counts(output: str) -> list[tuple[int, int, int, int]]:
    """Every proposals line as (total, model-based, start-up, fallback), checked to add up."""
    counts = [tuple(map(int, match)) for match in PROPOSALS.findall(output)]
    assert counts, f"no proposals line in:\n{output}"
    for total, model, startup, fallback in counts:
        assert model + startup + fallback == total, counts
    return counts


def test_quickstart(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'quickstart.db'}"
    output = run_example("quickstart.py", "--storage", storage)
    assert proposal_counts(output) == [(20, 10, 10, 0)]
    assert BEST_BY_SOURCE.search(output)
    assert re.search(r"Best trial #\d+: cross-validated log loss [\d.]+", output)
    assert (tmp_path / "quickstart.db").exists()


def test_sklearn_svm() -> None:
    output = run_example("sklearn_svm.py")
    [(total, model, _, _)] = proposal_counts(output)
    assert total == 20 and model >= 8
    assert BEST_BY_SOURCE.search(output)
    kernels = re.search(
        r"trials per kernel: (.*) \(degree sampled independently in the (\d+)", output
    )
    assert kernels, output
    per_kernel = dict(part.split() for part in kernels.group(1).split(", "))
    assert sum(map(int, per_kernel.values())) == total
    assert int(per_kernel.get("poly", 0)) == int(kernels.group(2))
    assert re.search(r"Best accuracy [\d.]+ with \{", output)


def test_torch_mlp() -> None:
    needs("torch")
    output = run_example("torch_mlp.py")
    [(total, model, _, _)] = proposal_counts(output)
    assert total == 20 and model >= 8
    assert BEST_BY_SOURCE.search(output)
    bounds = re.search(
        r"model-based proposals with a float parameter on a bound: (\d+) of (\d+) "
        r"\(lr: (\d+), weight_decay: (\d+)\)",
        output,
    )
    assert bounds, output
    on_bound, of, lr, weight_decay = map(int, bounds.groups())
    assert of == model and on_bound <= of and max(lr, weight_decay) <= on_bound
    assert "best trial's float parameters on a bound: " in output
    assert re.search(r"Best validation MSE [\d.]+ \(\d+ trials pruned\)", output)


def test_ray_tune_torch_asha(tmp_path: Path) -> None:
    needs("torch", "ray")
    output = run_example("ray_tune_torch_asha.py", "--storage-path", str(tmp_path))
    # Two trials run at once, so how many finished before each proposal depends on timing.
    [(total, _, startup, _)] = proposal_counts(output)
    assert total == 4 and startup >= 2
    assert re.search(r"4/4 trials finished", output), output  # progress
    assert re.search(r"best by source: .*start-up [-\d.]+", output)
    assert re.search(r"best validation loss [\d.]+, accuracy [\d.]+", output)


def test_ray_tune_cmes_crash(tmp_path: Path) -> None:
    needs("ray")
    output = run_example("ray_tune_cmes_crash.py", "--storage-path", str(tmp_path))
    # One line per searcher on the same seed: crashes and best error side by side.
    runs = re.findall(
        r"seed 0 (random|cMES|cMES, crashes ignored) +crashed +(\d+) of (\d+) "
        r"\((\d+) in the first \d+, (\d+) after\), best error [\d.na]+ \(\w+ units\), \d+ s(.*)",
        output,
    )
    assert [run[0] for run in runs] == ["random", "cMES", "cMES, crashes ignored"], output
    for _, crashed, n, first, after, _ in runs:
        assert int(n) == 6 and int(first) + int(after) == int(crashed) <= 6
    # The cMES runs say where their proposals came from; random search has no model.
    counts = proposal_counts(output)
    assert len(counts) == 2 and all(total == 6 for total, *_ in counts)
    assert "proposals" not in runs[0][5]
    assert re.search(r"\[cMES, seed 0\] 6/6 trials: \d+ crashed", output)  # progress
    means = output[output.index("Means over seeds 0:") :]
    for name in ("random", "cMES", "cMES, crashes ignored"):
        assert re.search(rf"  {re.escape(name)} +crashed +[\d.]+ of 6 \(", means), means


# ------------------------------------------------- the counting helper the examples use
def test_track_proposals_counts_each_source_once_per_trial() -> None:
    import optuna

    from bore_samplers.integrations.optuna import ProposerSampler
    from bore_samplers.integrations.reporting import track_proposals
    from bore_samplers.proposers.bore import BOREProposer

    class FailsOnce(BOREProposer):
        calls = 0

        def propose_from_model(self, history):  # type: ignore[no-untyped-def]
            self.calls += 1
            if self.calls == 4:
                raise RuntimeError("the model failed")
            return super().propose_from_model(history)

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = ProposerSampler(FailsOnce(classifier="rf", n_startup=3, seed=0))
    sources = track_proposals(sampler)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -5, 5)
        return 1.0 if trial.number < 5 else (x - 1) ** 2  # equal values: one class only

    study = optuna.create_study(sampler=sampler)
    with pytest.warns(UserWarning, match="the model failed"):
        study.optimize(objective, n_trials=9)
    # Trial 0: no search space yet; 1-2: Sobol; 3-5: labels of one class (trial 5 sees
    # trials 0-4, all equal); 6: the model raised; 7-8: the model.
    assert [sources.by_trial[n] for n in range(9)] == [
        *["start-up"] * 3,
        *["fallback"] * 4,
        *["model"] * 2,
    ]
    assert sources.summary(9) == "proposals: 9 trials = 2 model-based + 3 start-up + 4 fallback"


def test_a_tracked_searcher_checkpoints_without_its_taps(tmp_path: Path) -> None:
    needs("ray")
    from ray import tune

    from bore_samplers.integrations.ray import BORESearch
    from bore_samplers.integrations.reporting import track_proposals

    space = {"x": tune.uniform(-5, 5)}
    searcher = BORESearch(space, metric="loss", mode="min", n_startup_trials=2, seed=0)
    sources = track_proposals(searcher)
    for i in range(3):
        config = searcher.suggest(f"t{i}")
        searcher.on_trial_complete(f"t{i}", {"loss": config["x"] ** 2})
    searcher.save(str(tmp_path / "searcher.pkl"))
    fresh = BORESearch(space, metric="loss", mode="min", n_startup_trials=2, seed=0)
    fresh.restore(str(tmp_path / "searcher.pkl"))
    assert "suggest" not in vars(fresh)  # Tune's restore gets the plain searcher
    assert len(fresh.observations) == 3 and fresh.suggest("t3")
    searcher.restore(str(tmp_path / "searcher.pkl"))  # still counted after a restore
    searcher.suggest("t4")
    assert sources.by_trial == {"t0": "start-up", "t1": "start-up", "t2": "model", "t4": "model"}


def test_multi_objective_writes_into_a_fresh_temporary_folder() -> None:
    output = run_example("multi_objective.py")
    assert proposal_counts(output) == [(20, 10, 10, 0)]
    front = re.search(r"Pareto front: (\d+) of 20 trials", output)
    assert front, output
    rows = re.findall(r"trial +\d+: cv error [\d.]+, +\d+ nodes \(.*n_estimators=", output)
    assert len(rows) == int(front.group(1)) >= 1
    # Smoke mode's study and the plot share one new folder, printed, outside the repository.
    stored = re.search(r"The study is stored in sqlite:///(\S+)", output)
    assert stored, output
    folder = Path(stored.group(1)).parent
    try:
        assert folder.name.startswith("multi_objective_") and ROOT not in folder.parents
        assert Path(stored.group(1)).is_file()
        if importlib.util.find_spec("plotly") is not None:
            assert f"Pareto front plot: {folder / 'pareto_front.html'}" in output
            assert (folder / "pareto_front.html").is_file()
    finally:
        shutil.rmtree(folder)


def test_multi_objective_without_plotly_writes_no_plot(tmp_path: Path) -> None:
    result = run_without("multi_objective.py", "plotly", "--smoke", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr[-4000:]
    assert proposal_counts(result.stdout) == [(20, 10, 10, 0)]
    assert 'plotly is not installed: no Pareto front plot (pip install ".[plot]")' in result.stdout
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["multi_objective.db"]


def test_preferential_dashboard_puts_its_swatches_in_a_fresh_temporary_folder(
    tmp_path: Path,
) -> None:
    needs("optuna_dashboard")
    storage = f"sqlite:///{tmp_path / 'colours.db'}"
    output = run_example(
        "preferential_dashboard.py",
        "--simulate",
        "--clicks",
        "2",
        "--storage",
        storage,
        smoke=False,
    )
    swatches = re.search(r"The swatches are in (\S+)", output)
    assert swatches, output
    folder = Path(swatches.group(1))
    try:
        assert folder.name.startswith("preferential_artifacts_") and ROOT not in folder.parents
        assert f"--artifact-dir {folder}" in output  # the dashboard command serves them
        assert any(folder.iterdir())  # the artifacts: one per colour shown
    finally:
        shutil.rmtree(folder)


# ------------------------------------------------------------- without an example's extra
MISSING_EXTRA = [
    ("torch_mlp.py", "torch", (), 'This example needs torch: pip install ".[torch]"'),
    (
        "torch_mlp.py",
        "xgboost",
        ("--classifier", "xgboost"),
        'This example needs xgboost for --classifier xgboost: pip install ".[xgboost]"',
    ),
    (
        "ray_tune_torch_asha.py",
        "torch",
        (),
        'This example needs torch and ray: pip install ".[torch,ray]"',
    ),
    (
        "ray_tune_torch_asha.py",
        "ray",
        (),
        'This example needs torch and ray: pip install ".[torch,ray]"',
    ),
    ("ray_tune_cmes_crash.py", "ray", (), 'This example needs ray: pip install ".[ray]"'),
    (
        "preferential_dashboard.py",
        "optuna_dashboard",
        (),
        'This example needs optuna-dashboard: pip install ".[preferential]"',
    ),
]


def run_without(name: str, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``examples/<name>`` as ``__main__`` in a Python that cannot import ``module``."""
    path = str(ROOT / "examples" / name)
    code = (
        "import runpy, sys\n"
        f"sys.modules[{module!r}] = None  # import {module} now raises ModuleNotFoundError\n"
        f"sys.argv = {[path, *args]!r}\n"
        f"runpy.run_path({path!r}, run_name='__main__')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize(
    ("name", "module", "args", "message"),
    MISSING_EXTRA,
    ids=[f"{name}-without-{module}" for name, module, _, _ in MISSING_EXTRA],
)
def test_an_example_without_its_extra_says_what_to_install(
    name: str, module: str, args: tuple[str, ...], message: str
) -> None:
    if module == "xgboost":
        needs("torch")  # the script reads its options only once torch is imported
    result = run_without(name, module, "--smoke", *args)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [message], result.stderr  # one line, no traceback
    assert result.stdout == ""
