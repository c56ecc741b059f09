"""Ask latency on a large shared study in SQLite and PostgreSQL, split into where it goes.

Usage (from the repository root)::

    python -m benchmarks.storage_latency                     # 10 000 trials, SQLite + PostgreSQL
    python -m benchmarks.storage_latency --trials 500 --asks 2 --out /tmp/storage_smoke

For each storage, one study gets ``--trials`` COMPLETE trials on a 10-D float space
``[-5, 5]^10`` (uniform random parameters, sphere values: the trials of
:mod:`benchmarks.latency`), written in one transaction through Optuna's own RDB models (the
public ``add_trials`` commits every parameter separately and counts past trials per insert:
37 ms a trial on SQLite here, six minutes for 10 000). PostgreSQL 15 is started on loopback
in a temporary folder (as user ``nobody`` when run as root; server defaults, so commits are
durable as SQLite's are) unless ``--postgres-url`` names a server; without ``initdb`` or
psycopg2 that storage is skipped with a message. ``inmemory`` (``add_trials`` into
:class:`~optuna.storages.InMemoryStorage`) is available as a no-database reference.

Every sampler then gets a fresh storage object, as a new worker process would, and loads
the study (the first read fills Optuna's ``_CachedStorage`` with every finished trial: paid
once per process, reported as "first load"). One ask is ``study.ask()`` followed by
``trial.suggest_float`` for the 10 parameters (the sampler works there), then the trial is
told COMPLETE (untimed), so each ask sees one more finished trial, as in a running study.
After one untimed warm-up, ``--asks`` asks are timed and split by wrapping (not replacing)
the methods of the study's storage, sampler and proposer with timers that count exclusive
time:

history
    ``storage.get_all_trials`` (every call in the ask: Optuna's own, for waiting trials,
    and the sampler's); with a warm cache one call re-reads only unfinished and new trials.
storage writes/reads
    every other storage call: creating the trial, one commit per parameter, publishing the
    proposal in system attributes.
sampler
    the sampler's own Python work outside storage calls and the model: for our samplers,
    translating trials into observations and encoding them.
model
    ``proposer.propose_from_model_with_record`` (fit and acquisition; our samplers only).
optuna
    the rest of ``ask`` and ``suggest_float``.

"one read" is one ``study._get_trials(deepcopy=False, use_cache=True)`` with the
thread-local snapshot cleared (the history read a sampler does once per ask), timed
separately. Everything runs in this process with one BLAS/OpenMP thread. Writes
``<out>/storage_latency.md`` and ``<out>/storage_latency.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import distribution_to_json
from optuna.storages import BaseStorage, RDBStorage

from benchmarks.harness import (
    atomic_write_text,
    configure_quiet_logging,
    environment_lines,
    limit_threads,
    make_sampler,
    markdown_table,
    write_json,
)
from benchmarks.latency import SPACE, make_trials
from benchmarks.problems import suggest_params

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "parallel"
STORAGES: tuple[str, ...] = ("sqlite", "postgresql", "inmemory")
DEFAULT_STORAGES: tuple[str, ...] = ("sqlite", "postgresql")
DEFAULT_SAMPLERS: tuple[str, ...] = ("bore-xgb", "tpe", "random")
STUDY_NAME = "storage-latency"
PARTS: tuple[str, ...] = ("history", "storage", "sampler", "model", "optuna")


# ------------------------------------------------------------------------------ PostgreSQL
def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # Debian's postgresql package keeps the server binaries off PATH.
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def postgres_server(durable: bool = True) -> Iterator[str]:
    """Start a throwaway PostgreSQL server on loopback; yield a SQLAlchemy URL of a database.

    Parameters
    ----------
    durable
        Keep the server's default ``fsync``/``synchronous_commit`` (a fair latency
        comparison with SQLite); ``False`` turns them off for speed.

    Yields
    ------
    str
        ``postgresql+psycopg2://postgres@127.0.0.1:<port>/bench``.

    Raises
    ------
    RuntimeError
        With the reason, when psycopg2 or the server binaries are missing or it does not start.
    """
    try:
        import psycopg2
    except ImportError as error:
        raise RuntimeError(
            f"psycopg2 is not installed ({error}): pip install psycopg2-binary"
        ) from error
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
    # PostgreSQL refuses to run as root: run it as nobody then.
    user = "nobody" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="bore-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data, port = root / "data", _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"

    def run(*args: str) -> None:
        result = subprocess.run(args, user=user, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            log = (root / "log").read_text() if (root / "log").exists() else ""
            raise RuntimeError(
                f"{Path(args[0]).name} failed: {result.stderr.strip()} {log.strip()}"[-2000:]
            )

    started = False
    try:
        run(initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        run(pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start")
        started = True
        connection = psycopg2.connect(host="127.0.0.1", port=port, user="postgres")
        connection.autocommit = True  # CREATE DATABASE cannot run inside a transaction
        with connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE bench")
        connection.close()
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/bench"
    finally:
        if started:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------- study set-up
def populate(storage: BaseStorage | str, n_trials: int, seed: int) -> BaseStorage | str:
    """Create the study with ``n_trials`` COMPLETE trials; return what to load it from.

    An RDB URL is filled in one transaction through Optuna's RDB models; ``"inmemory"``
    returns the :class:`~optuna.storages.InMemoryStorage` filled by ``add_trials``.
    """
    trials = make_trials(n_trials, seed)
    if storage == "inmemory":
        memory = optuna.storages.InMemoryStorage()
        optuna.create_study(storage=memory, study_name=STUDY_NAME).add_trials(trials)
        return memory
    from optuna.storages._rdb import models

    rdb = RDBStorage(str(storage))
    study_id = optuna.create_study(storage=rdb, study_name=STUDY_NAME)._study_id
    now = _dt.datetime.now()
    encoded = {name: distribution_to_json(dist) for name, dist in SPACE.items()}
    session = rdb.scoped_session()
    try:
        for start in range(0, n_trials, 2000):
            chunk = trials[start : start + 2000]
            rows = [
                models.TrialModel(
                    number=start + i,
                    study_id=study_id,
                    state=optuna.trial.TrialState.COMPLETE,
                    datetime_start=now,
                    datetime_complete=now,
                )
                for i in range(len(chunk))
            ]
            session.add_all(rows)
            session.flush()  # assigns the trial ids
            children: list[Any] = []
            for row, trial in zip(rows, chunk, strict=True):
                children += [
                    models.TrialParamModel(
                        trial_id=row.trial_id,
                        param_name=name,
                        param_value=value,
                        distribution_json=encoded[name],
                    )
                    for name, value in trial.params.items()
                ]
                value, value_type = models.TrialValueModel.value_to_stored_repr(trial.value)
                children.append(
                    models.TrialValueModel(
                        trial_id=row.trial_id, objective=0, value=value, value_type=value_type
                    )
                )
            session.add_all(children)
            session.flush()
        session.commit()
    finally:
        session.close()
    rdb.remove_session()
    rdb.engine.dispose()
    return str(storage)


def fresh_storage(source: BaseStorage | str) -> BaseStorage:
    """The storage a new worker process would open (an empty ``_CachedStorage`` for RDB)."""
    return optuna.storages.get_storage(source)


# ---------------------------------------------------------------------------- timing
class ExclusiveTimer:
    """Exclusive wall time per category of wrapped calls (a nested call pauses its caller)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        self._last = 0.0

    def reset(self) -> None:
        self.totals.clear()

    def wrap(self, obj: Any, name: str, category: str) -> None:
        """Replace the bound method ``obj.name`` by a timed call of the same method."""
        original: Callable[..., Any] = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._enter(category)
            try:
                return original(*args, **kwargs)
            finally:
                self._exit()

        setattr(obj, name, timed)

    def _enter(self, category: str) -> None:
        now = time.perf_counter()
        if self._stack:
            self.totals[self._stack[-1]] += now - self._last
        self._stack.append(category)
        self._last = now

    def _exit(self) -> None:
        now = time.perf_counter()
        self.totals[self._stack.pop()] += now - self._last
        self._last = now


_SAMPLER_METHODS = (
    "infer_relative_search_space",
    "sample_relative",
    "sample_independent",
    "before_trial",
    "after_trial",
)


def _instrument(study: optuna.Study, timer: ExclusiveTimer) -> None:
    storage = study._storage
    for name in dir(BaseStorage):
        if not name.startswith("_") and callable(getattr(storage, name, None)):
            timer.wrap(storage, name, "history" if name == "get_all_trials" else "storage")
    for name in _SAMPLER_METHODS:
        timer.wrap(study.sampler, name, "sampler")
    proposer = getattr(study.sampler, "_proposer", None)
    if proposer is not None:
        timer.wrap(proposer, "propose_from_model_with_record", "model")


@dataclass
class Measurement:
    """Ask latency of one sampler on one storage."""

    storage: str
    sampler: str
    n_trials: int
    first_load_s: float = float("nan")
    one_read_s: list[float] = field(default_factory=list)
    total_s: list[float] = field(default_factory=list)
    parts_s: dict[str, list[float]] = field(default_factory=dict)

    def median(self, part: str) -> float:
        """Median over the timed asks of ``part`` (``"total"``, ``"one_read"`` or a part)."""
        if part == "total":
            values = self.total_s
        elif part == "one_read":
            values = self.one_read_s
        else:
            values = self.parts_s.get(part, [])
        return statistics.median(values) if values else float("nan")


def measure(
    source: BaseStorage | str, storage_name: str, sampler_name: str, asks: int
) -> Measurement:
    """Load the study with a fresh storage object and time ``asks`` asks after a warm-up."""
    storage = fresh_storage(source)
    study = optuna.load_study(
        study_name=STUDY_NAME, storage=storage, sampler=make_sampler(sampler_name, seed=0)
    )
    result = Measurement(storage_name, sampler_name, 0)
    start = time.perf_counter()
    result.n_trials = len(study._get_trials(deepcopy=False, use_cache=True))
    result.first_load_s = time.perf_counter() - start
    timer = ExclusiveTimer()
    _instrument(study, timer)
    for i in range(asks + 1):
        timer.reset()
        start = time.perf_counter()
        trial = study.ask()
        suggest_params(trial, SPACE)
        total = time.perf_counter() - start
        parts = dict(timer.totals)
        study._thread_local.cached_all_trials = None
        read_start = time.perf_counter()
        study._get_trials(deepcopy=False, use_cache=True)
        one_read = time.perf_counter() - read_start
        study.tell(trial, 1.0)
        if i == 0:
            continue  # warm-up: first model fit, lazy imports
        result.total_s.append(total)
        result.one_read_s.append(one_read)
        parts["optuna"] = total - sum(parts.values())
        for part in PARTS:
            result.parts_s.setdefault(part, []).append(parts.get(part, 0.0))
    return result


# ---------------------------------------------------------------------------- report
def _ms(seconds: float) -> str:
    if seconds != seconds:  # NaN
        return "–"
    return f"{1e3 * seconds:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def write_report(
    out: Path, results: Sequence[Measurement], header: Sequence[str], skipped: dict[str, str]
) -> Path:
    """Write ``storage_latency.md`` and ``storage_latency.json`` to ``out``."""
    rows = []
    for m in results:
        total = m.median("total")
        rows.append(
            [
                m.storage,
                m.sampler,
                m.n_trials,
                _ms(total),
                *(_ms(m.median(p)) for p in PARTS),
                f"{m.median('history') / total:.0%}",
                _ms(m.median("one_read")),
                f"{m.first_load_s:.1f} s",
            ]
        )
    table = markdown_table(
        [
            "storage",
            "sampler",
            "finished trials",
            "ask (median)",
            "history",
            "storage writes/reads",
            "sampler",
            "model",
            "optuna",
            "history share",
            "one read",
            "first load",
        ],
        rows,
    )
    lines = ["# Ask latency with a large shared study", "", *header, ""]
    if skipped:
        lines += [f"- Skipped {name}: {reason}" for name, reason in skipped.items()] + [""]
    lines += ["## Median time of one ask (ask + 10 suggest_float), and where it goes", "", table]
    path = out / "storage_latency.md"
    atomic_write_text(path, "\n".join(lines))
    write_json(
        out / "storage_latency.json",
        {"results": [asdict(m) for m in results], "skipped": skipped},
    )
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--asks", type=int, default=5)
    parser.add_argument("--storages", nargs="+", choices=STORAGES, default=list(DEFAULT_STORAGES))
    parser.add_argument("--samplers", nargs="+", default=list(DEFAULT_SAMPLERS))
    parser.add_argument("--postgres-url", default=None, help="an empty database to use")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    limit_threads(1)
    configure_quiet_logging()

    results: list[Measurement] = []
    skipped: dict[str, str] = {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        for name in args.storages:
            if name == "sqlite":
                url: str = f"sqlite:///{Path(tmp) / 'latency.db'}"
            elif name == "postgresql":
                if args.postgres_url:
                    url = args.postgres_url
                else:
                    try:
                        url = stack.enter_context(postgres_server(durable=True))
                    except RuntimeError as error:
                        skipped[name] = str(error)
                        print(f"WARNING: skipping {name}: {error}", file=sys.stderr, flush=True)
                        continue
            else:
                url = name
            start = time.perf_counter()
            source = populate(url, args.trials, args.seed)
            print(f"{name}: {args.trials} trials written in {time.perf_counter() - start:.1f} s")
            for sampler in args.samplers:
                m = measure(source, name, sampler, args.asks)
                results.append(m)
                print(
                    f"{name} {sampler}: ask {_ms(m.median('total'))}, history "
                    f"{_ms(m.median('history'))}, first load {m.first_load_s:.1f} s",
                    flush=True,
                )
    header = [
        *environment_lines(
            "benchmarks.storage_latency", argv if argv is not None else sys.argv[1:]
        ),
        f"- 10-D float space [-5, 5]^10, {args.trials} COMPLETE trials (random parameters, "
        "sphere values), each sampler on a fresh storage object; one untimed warm-up ask, "
        f"then the median of {args.asks} timed asks, each told COMPLETE; one thread; seed "
        f"{args.seed}. Columns: see the module docstring of `benchmarks/storage_latency.py`.",
    ]
    path = write_report(args.out, results, header, skipped)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
