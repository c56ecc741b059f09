"""Many workers on real storages: processes, threads, a killed worker, a late joiner.

For every sampler: four worker processes on SQLite, a journal file and PostgreSQL, and four
``n_jobs`` threads, end with every trial finished and no configuration twice; a worker killed
mid-trial is failed by Optuna's heartbeat (and retried once) while the others go on; a new
process proposes (to 1e-3) what the worker that ran the study from the start would (sampler
state comes from the storage alone). And two workers that propose the same configuration at
the same moment end up apart (the adapter publishes, then compares).

Everything is real: worker processes (``spawn``), Optuna's SQLite, journal-file and PostgreSQL
storages, the RDB heartbeat and ``SIGKILL``. PostgreSQL is a throwaway server started on
loopback for this module (``initdb``/``pg_ctl`` of the installed PostgreSQL, as user
``nobody`` when the tests run as root); its tests are skipped, with the reason, only when
psycopg2 or the server binaries are missing or the server does not start.

Each sampler runs with its own small settings (``N_STARTUP`` startup trials, a coarse cMES
discretisation) so that the whole file stays well under three minutes on two cores: the
properties tested here (no lost or duplicated trial, model proposals in every worker) do not
depend on the budget. Quality at equal trial count is measured by
``python -m benchmarks run parallel``, not here.

"The model was used" is checked from the storage alone: a trial that started after at least
``N_STARTUP + N_WORKERS`` trials had finished was proposed by the model (the proposers use
their initial design only while fewer than ``N_STARTUP`` trials are finished; the extra
``N_WORKERS`` covers finishes still being committed), its whole proposal is published in
``<prefix>:relative_params:*`` (a failed proposal publishes nothing and would fall back to
independent sampling), and no worker saw a :class:`ModelFallbackWarning`.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.samplers import BaseSampler
from optuna.storages import JournalStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from bore_samplers import BORESampler, CMESSampler, ProposerSampler
from bore_samplers.observations import Observation
from bore_samplers.proposers.base import ModelFallbackWarning, Proposal
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.space import SearchSpace

# A hang guard, not a speed check: generous, so that a busy machine never trips it.
HANG_GUARD_S = 600

optuna.logging.set_verbosity(optuna.logging.WARNING)

N_WORKERS = 4
N_STARTUP = 4
FINISHED = {TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED}
# A coarse y* discretisation keeps cMES's proposals fast; the algorithm is tested elsewhere.
FAST_CMES = {"n_discretization": 128, "n_y_star_samples": 4}
# A live worker whose heartbeat thread stalls longer than grace_period on a loaded machine
# would have its trial failed under it: 5 s leaves room, and the test waits that long once.
HEARTBEAT = {"heartbeat_interval": 1, "grace_period": 5}


def _portfolio_unavailable() -> str | None:
    try:
        from bore_samplers import PortfolioSampler  # noqa: F401
    except ImportError as error:
        return f"PortfolioSampler is not importable here ({error})"
    return None


SAMPLERS = [
    "bore",
    "cmes",
    pytest.param(
        "portfolio",
        marks=pytest.mark.skipif(
            _portfolio_unavailable() is not None, reason=str(_portfolio_unavailable())
        ),
    ),
]


def make_sampler(name: str, seed: int | None) -> BaseSampler:
    """The sampler called ``name`` with this module's small settings."""
    if name == "bore":
        return BORESampler(n_startup_trials=N_STARTUP, seed=seed)
    if name == "cmes":
        return CMESSampler(n_startup_trials=N_STARTUP, seed=seed, **FAST_CMES)
    from bore_samplers import PortfolioSampler

    return PortfolioSampler(n_startup_trials=N_STARTUP, seed=seed)


def _prefix(name: str) -> str:
    return make_sampler(name, 0).proposer.name


# ------------------------------------------------------------------------------ objectives
def mixed_objective(trial: optuna.Trial) -> float:
    """Float, log-float, int and categorical parameters; FAIL for ``x > 4``; minimum 0."""
    x = trial.suggest_float("x", -5.0, 5.0)
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    n = trial.suggest_int("n", 0, 8)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    time.sleep(0.05)  # long enough for trials of different workers to overlap
    if x > 4.0:
        raise ValueError("crash")  # a FAIL trial, learnt as a bad region
    return (x - 1.0) ** 2 + (math.log10(lr) + 2.0) ** 2 + 0.3 * (n - 3) ** 2 + (kind != "b")


def quadratic(trial: optuna.Trial) -> float:
    """Two floats on [0, 1]; minimum 0 at (0.25, 0.75), values up to 1.125 in the corners."""
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    return (x - 0.25) ** 2 + (y - 0.75) ** 2


def slow_quadratic(trial: optuna.Trial) -> float:
    """:func:`quadratic`, taking long enough for the workers' trials to overlap."""
    value = quadratic(trial)
    time.sleep(0.1)
    return value


# ------------------------------------------------------------------------------ storages
def _open_storage(location: str, heartbeat: bool = False) -> optuna.storages.BaseStorage:
    """A storage object for ``location``: an RDB URL or the path of a journal file."""
    if "://" not in location:
        return JournalStorage(JournalFileBackend(location))
    if heartbeat:
        return RDBStorage(location, **HEARTBEAT)
    return RDBStorage(location)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # Debian's postgresql package keeps the server binaries off PATH.
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None


class _Postgres:
    """A running throwaway server: :meth:`database` creates a fresh database and gives its URL."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._count = 0

    def database(self) -> str:
        import psycopg2

        self._count += 1
        name = f"test{self._count}"
        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres")
        connection.autocommit = True  # CREATE DATABASE cannot run inside a transaction
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name}")
        connection.close()
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/{name}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[_Postgres]:
    """A PostgreSQL server on loopback for this session, removed afterwards."""
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        pytest.skip("psycopg2 is not installed (pip install psycopg2-binary)")
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
    user = "nobody" if os.geteuid() == 0 else None  # PostgreSQL refuses to run as root
    root = Path(tempfile.mkdtemp(prefix="bore-test-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data, port = root / "data", _free_port()
    # Durability is not under test: fsync off keeps the many small commits cheap.
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, user=user, capture_output=True, text=True, timeout=120)

    started = False
    try:
        init = run(initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync")
        if init.returncode == 0:
            log = str(root / "log")
            start = run(pg_ctl, "-D", str(data), "-o", options, "-l", log, "-w", "start")
            started = start.returncode == 0
        if not started:
            log = (root / "log").read_text() if (root / "log").exists() else ""
            failed = init if init.returncode else start
            pytest.skip(f"the PostgreSQL server did not start: {failed.stderr.strip()} {log}")
        yield _Postgres(port)
    finally:
        if started:
            run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def _location(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    if kind == "journal":
        return str(tmp_path / "study.journal")
    return request.getfixturevalue("postgres").database()


# ------------------------------------------------------------------------------ worker pool
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    """``N_WORKERS`` spawned worker processes, started once (imports cost ~2 s of CPU each)."""
    saved = {var: os.environ.get(var) for var in _THREAD_VARS}
    os.environ.update({var: "1" for var in _THREAD_VARS})  # inherited by the workers
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(N_WORKERS, mp_context=context) as executor:
            yield executor
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def _wait_for_peers(barrier: str, n: int, timeout: float = 120.0) -> None:
    """Return once ``n`` distinct processes have called this with the same folder."""
    Path(barrier, str(os.getpid())).touch()
    deadline = time.monotonic() + timeout
    while len(os.listdir(barrier)) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(os.listdir(barrier))} of {n} workers started")
        time.sleep(0.01)


def _fallbacks(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ModelFallbackWarning)]


def _optimize_worker(
    location: str, study_name: str, sampler: str, seed: int, n_trials: int, barrier: str
) -> dict[str, Any]:
    """One worker process: its own storage object, sampler and ``load_study``."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = _open_storage(location)
    study = optuna.load_study(
        study_name=study_name, storage=storage, sampler=make_sampler(sampler, seed)
    )
    _wait_for_peers(barrier, N_WORKERS)  # all workers run at the same time
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        study.optimize(mixed_objective, n_trials=n_trials, catch=(ValueError,))
    return {"pid": os.getpid(), "fallbacks": _fallbacks(caught)}


# ------------------------------------------------------------------------------ checks
def _configuration(trial: FrozenTrial) -> tuple:
    return tuple(sorted(trial.params.items()))


def _model_phase(trials: list[FrozenTrial]) -> list[FrozenTrial]:
    """Trials started after at least ``N_STARTUP + N_WORKERS`` trials had finished."""
    ends = sorted(t.datetime_complete for t in trials if t.datetime_complete is not None)
    return [
        t
        for t in trials
        if sum(end < t.datetime_start for end in ends) >= N_STARTUP + N_WORKERS  # type: ignore[operator]
    ]


def _assert_parallel_run_is_clean(
    study: optuna.Study, n_trials: int, sampler: str, min_model_trials: int
) -> None:
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == n_trials
    assert all(t.state in FINISHED for t in trials), [(t.number, t.state) for t in trials]
    # Retried trials re-run a failed configuration on purpose; nothing else may repeat one.
    configurations = [_configuration(t) for t in trials if "failed_trial" not in t.system_attrs]
    assert len(set(configurations)) == len(configurations), configurations
    model = _model_phase(trials)
    assert len(model) >= min_model_trials, len(model)
    key = f"{_prefix(sampler)}:relative_params:0"
    unpublished = [t.number for t in model if key not in t.system_attrs]
    assert unpublished == [], f"model-phase trials without a published proposal: {unpublished}"


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("storage", ["sqlite", "journal", "postgresql"])
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_four_processes_share_one_study(
    sampler: str,
    storage: str,
    pool: ProcessPoolExecutor,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    location = _location(storage, tmp_path, request)
    optuna.create_study(study_name="shared", storage=_open_storage(location))
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    per_worker = 5
    futures = [
        pool.submit(_optimize_worker, location, "shared", sampler, seed, per_worker, str(barrier))
        for seed in range(N_WORKERS)
    ]
    results = [future.result(timeout=300) for future in futures]
    assert len({r["pid"] for r in results}) == N_WORKERS  # four processes at once
    assert [r["fallbacks"] for r in results] == [[]] * N_WORKERS
    study = optuna.load_study(study_name="shared", storage=_open_storage(location))
    _assert_parallel_run_is_clean(study, N_WORKERS * per_worker, sampler, min_model_trials=6)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_four_threads_with_n_jobs(sampler: str) -> None:
    study = optuna.create_study(sampler=make_sampler(sampler, seed=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        study.optimize(mixed_objective, n_trials=20, n_jobs=N_WORKERS, catch=(ValueError,))
    assert _fallbacks(caught) == []
    _assert_parallel_run_is_clean(study, 20, sampler, min_model_trials=6)


def _blocking_worker(location: str, sampler: str, marker: str) -> None:
    """A worker whose trial never ends: it writes the trial number to ``marker`` and waits."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name="kill",
        storage=_open_storage(location, heartbeat=True),
        sampler=make_sampler(sampler, seed=11),
    )

    def objective(trial: optuna.Trial) -> float:
        quadratic(trial)
        tmp = Path(f"{marker}.tmp")
        tmp.write_text(str(trial.number))
        tmp.replace(marker)  # atomically: the test never reads half a number
        time.sleep(600)  # killed long before
        return 0.0

    study.optimize(objective, n_trials=1)


def _trial_state(study: optuna.Study, number: int) -> TrialState:
    return next(t.state for t in study.get_trials(deepcopy=False) if t.number == number)


def _worker_until_stale_trial_failed(
    location: str, sampler: str, seed: int, stale: int, extra: int
) -> dict[str, Any]:
    """Optimize until trial ``stale`` is failed (by any worker's heartbeat check), then more.

    ``study.optimize`` calls ``optuna.storages.fail_stale_trials`` before every trial: this
    worker does nothing special to fail the killed one.
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name="kill",
        storage=_open_storage(location, heartbeat=True),
        sampler=make_sampler(sampler, seed),
    )
    numbers: list[int] = []

    def record(study: optuna.Study, trial: FrozenTrial) -> None:
        numbers.append(trial.number)

    deadline = time.monotonic() + HANG_GUARD_S
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        while _trial_state(study, stale) == TrialState.RUNNING:
            if time.monotonic() > deadline:
                raise TimeoutError(f"trial {stale} was never failed by the heartbeat")
            study.optimize(slow_quadratic, n_trials=1, callbacks=[record])
        study.optimize(slow_quadratic, n_trials=extra, callbacks=[record])
    return {"numbers": numbers, "fallbacks": _fallbacks(caught)}


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_killed_worker_is_failed_by_the_heartbeat_and_the_others_go_on(
    sampler: str, pool: ProcessPoolExecutor, tmp_path: Path
) -> None:
    """SIGKILL mid-trial, with Optuna's heartbeat, then a retry of the stale trial."""
    location = f"sqlite:///{tmp_path / 'kill.db'}"
    # The worker that was there from the start: the first trials, enough to fit a model.
    first = optuna.create_study(
        study_name="kill",
        storage=_open_storage(location, heartbeat=True),
        sampler=make_sampler(sampler, seed=0),
    )
    first.optimize(quadratic, n_trials=N_STARTUP + N_WORKERS)

    context = multiprocessing.get_context("spawn")
    marker = tmp_path / "victim"
    victim = context.Process(target=_blocking_worker, args=(location, sampler, str(marker)))
    victim.start()
    deadline = time.monotonic() + HANG_GUARD_S
    while not marker.exists():
        assert victim.is_alive() and time.monotonic() < deadline, "the victim never started"
        time.sleep(0.05)
    stale = int(marker.read_text())
    # Two more workers (running processes) are busy with the study when the victim dies.
    workers: list[Future] = [
        pool.submit(_worker_until_stale_trial_failed, location, sampler, seed, stale, 3)
        for seed in (1, 2)
    ]
    os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
    victim.join(timeout=30)
    assert victim.exitcode == -signal.SIGKILL
    killed = first._storage.get_trial(first.trials[stale]._trial_id)
    assert killed.state == TrialState.RUNNING  # nothing but the heartbeat can tell
    assert f"{_prefix(sampler)}:relative_params:0" in killed.system_attrs  # a model proposal
    # The first worker goes on too, with the sampler object it has had from the start.
    numbers: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        first.optimize(
            slow_quadratic, n_trials=3, callbacks=[lambda _, trial: numbers.append(trial.number)]
        )
    results = [future.result(timeout=300) for future in workers]
    results.append({"numbers": numbers, "fallbacks": _fallbacks(caught)})
    assert [r["fallbacks"] for r in results] == [[]] * 3

    study = optuna.load_study(study_name="kill", storage=location)
    trials = study.get_trials(deepcopy=False)
    assert trials[stale].state == TrialState.FAIL
    assert all(len(r["numbers"]) >= 3 for r in results)  # every worker kept going
    _assert_parallel_run_is_clean(study, len(trials), sampler, min_model_trials=6)

    # A retry of the killed trial, re-queued by Optuna's own heartbeat callback. Run here, with
    # one process left: on SQLite (no row locks) two processes asking at once can both pop the
    # same WAITING trial and one then fails with "Cannot tell a COMPLETE trial" -- an Optuna
    # storage race, not ours (see README, "Scaling out").
    RetryHeartbeatStaleTrialCallback(max_retry=1)(first, trials[stale])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFallbackWarning)
        first.optimize(slow_quadratic, n_trials=1)
    assert _fallbacks(caught) == []
    trials = study.get_trials(deepcopy=False)
    retried = [t for t in trials if t.system_attrs.get("failed_trial") == stale]
    assert len(retried) == 1 and retried[0].params == trials[stale].params  # retried once
    assert retried[0].state == TrialState.COMPLETE
    # The retry carries a copy of the killed trial's proposal record: not handed back twice.
    assert make_sampler(sampler, 0)._observation(retried[0], 1.0).record == {}  # type: ignore[attr-defined]


def _fresh_proposal(location: str, sampler: str, seed: int, out: str) -> None:
    """In a new process: the first proposal of a new sampler on the stored study."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name="joined", storage=location, sampler=make_sampler(sampler, seed)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        trial = study.ask()
        params = {"x": trial.suggest_float("x", 0.0, 1.0), "y": trial.suggest_float("y", 0.0, 1.0)}
    Path(out).write_text(json.dumps(params))


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_a_fresh_process_proposes_what_the_first_worker_would(
    sampler: str, tmp_path: Path
) -> None:
    """Sampler state is rebuilt from the storage alone: same history and seed, same proposal.

    The first worker's sampler object has run the whole study (warm caches, advanced random
    streams); a new process has nothing but the storage. On two identical copies of the study,
    with the random streams restarted from one seed, both propose the same configuration
    (cMES to optimiser tolerance: its GP hyperparameter fit is warm-started from the previous
    fit, which moves the optimum in the sixth decimal).
    """
    original, copy = tmp_path / "original.db", tmp_path / "copy.db"
    first = optuna.create_study(
        study_name="joined", storage=f"sqlite:///{original}", sampler=make_sampler(sampler, 0)
    )
    first.optimize(quadratic, n_trials=N_STARTUP + 8)
    shutil.copy(original, copy)  # a quiescent study: the copy holds exactly the same trials

    out = tmp_path / "fresh.json"
    context = multiprocessing.get_context("spawn")
    joiner = context.Process(
        target=_fresh_proposal, args=(f"sqlite:///{copy}", sampler, 7, str(out))
    )
    joiner.start()
    first.sampler._proposer.reseed(7)  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        trial = first.ask()
        expected = {
            "x": trial.suggest_float("x", 0.0, 1.0),
            "y": trial.suggest_float("y", 0.0, 1.0),
        }
    joiner.join(timeout=300)
    assert joiner.exitcode == 0
    fresh = json.loads(out.read_text())
    # The same proposal up to the optimisers' numerics (GP fits and L-BFGS through BLAS,
    # whose threading differs between processes and machines).
    assert fresh == pytest.approx(expected, abs=1e-3)
    # A model proposal (the study is past its startup), published for the other workers.
    assert (
        f"{_prefix(sampler)}:relative_params:0"
        in first._storage.get_trial(trial._trial_id).system_attrs
    )


class _SimultaneousProposer(BOREProposer):
    """BORE whose first proposal waits until the other worker has read the same history.

    Two workers then propose at the same moment, neither seeing the other's proposal: what
    happens by chance between processes (here forced, and with one seed for both, so that
    they propose the same configuration).
    """

    def __init__(self, barrier: threading.Barrier, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.barrier: threading.Barrier | None = barrier
        self.proposals: list[dict[str, Any]] = []

    def next_proposal(self, space: SearchSpace, observations: list[Observation]) -> Proposal:
        barrier, self.barrier = self.barrier, None
        if barrier is not None:
            barrier.wait(timeout=60)
        proposal = super().next_proposal(space, observations)
        self.proposals.append(proposal.params)
        return proposal


def test_two_workers_proposing_the_same_configuration_at_once_end_up_apart(
    tmp_path: Path,
) -> None:
    """Published first, compared second: the trial with the larger number proposes again."""
    url = f"sqlite:///{tmp_path / 'race.db'}"
    first = optuna.create_study(
        study_name="race", storage=url, sampler=BORESampler(n_startup_trials=N_STARTUP, seed=0)
    )
    first.optimize(quadratic, n_trials=N_STARTUP + 4)
    barrier = threading.Barrier(2)
    studies, proposers = [], []
    for _ in range(2):  # two workers, each with its own storage object and sampler
        proposer = _SimultaneousProposer(barrier, n_startup=N_STARTUP, seed=5)
        sampler = ProposerSampler(proposer)
        proposers.append(proposer)
        studies.append(
            optuna.load_study(study_name="race", storage=RDBStorage(url), sampler=sampler)
        )

    def ask(study: optuna.Study) -> tuple[int, tuple[float, float]]:
        trial = study.ask()
        return trial.number, (trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1))

    with ThreadPoolExecutor(2) as executor:
        (number_a, point_a), (number_b, point_b) = executor.map(ask, studies)
    assert proposers[0].proposals[0] == proposers[1].proposals[0]  # the race did happen
    assert point_a != point_b
    # One of the two proposed again (normally the later trial; the earlier one only if the
    # later one had compared before the earlier one published).
    assert sorted(len(p.proposals) for p in proposers) == [1, 2]
