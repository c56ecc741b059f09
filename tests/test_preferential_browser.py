"""The preferential loop in a real browser: optuna-dashboard, headless Chromium, our sampler.

``optuna-dashboard`` (its command-line server) serves a SQLite preferential study on loopback;
a generator loop with :class:`~bore_samplers.integrations.preferential.PreferentialSampler`
fills the screen in a background thread; Playwright drives Debian's ``chromium`` binary (no
browser download), clicks "Worst" a few times and checks that the trials the sampler proposes
in answer show up on the page.

Skipped, with the reason, where playwright or a ``chromium`` binary is missing. To run it on
Debian or Ubuntu: ``apt-get install chromium`` and ``pip install playwright`` (without
``playwright install``: the test uses the system browser).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("optuna_dashboard", reason="needs the preferential extra (optuna-dashboard)")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from optuna.trial import TrialState  # noqa: E402
from optuna_dashboard import save_note  # noqa: E402
from optuna_dashboard.preferential import create_study, load_study  # noqa: E402

from bore_samplers.integrations.preferential import ROLE_KEY, PreferentialSampler  # noqa: E402

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium binary on PATH (Debian/Ubuntu: apt-get install chromium)",
)

N_CLICKS = 3
TIMEOUT_S = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, process: subprocess.Popen, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"optuna-dashboard exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"optuna-dashboard did not answer at {url} within {timeout} s")


def _generate(study, stop: threading.Event, errors: list[BaseException]) -> None:
    """The generator loop of a preferential study, as a user's script runs it."""
    try:
        while not stop.is_set():
            if study.should_generate():
                trial = study.ask()
                x = trial.suggest_float("x", -1.0, 1.0)
                y = trial.suggest_float("y", -1.0, 1.0)
                # The page offers a trial for comparison once it has something to show: by
                # default its note (a generator would put an image or a text there).
                save_note(trial, f"x = {x:.3f}, y = {y:.3f}")
            else:
                time.sleep(0.1)
    except BaseException as error:  # reported by the test
        errors.append(error)


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A SQLite preferential study served by ``optuna-dashboard`` on a free loopback port."""
    storage = f"sqlite:///{tmp_path / 'preferential.db'}"
    create_study(
        n_generate=2, storage=storage, study_name="browser", sampler=PreferentialSampler()
    )
    port = _free_port()
    command = [
        sys.executable,
        "-c",
        "from optuna_dashboard._cli import main; main()",
        storage,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--quiet",
    ]
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ)
    )
    try:
        _wait_until_up(f"http://127.0.0.1:{port}/api/studies", server)
        yield storage, f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_clicks_in_the_dashboard_bring_the_samplers_trials(dashboard: tuple[str, str]) -> None:
    storage, base_url = dashboard
    study = load_study(study_name="browser", storage=storage, sampler=PreferentialSampler(seed=0))
    stop, errors = threading.Event(), []
    generator = threading.Thread(target=_generate, args=(study, stop, errors), daemon=True)
    generator.start()
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
            )
            try:
                page = browser.new_page()
                page.set_default_timeout(TIMEOUT_S * 1000)
                page.goto(f"{base_url}/dashboard/studies/{study._study._study_id}")
                page.get_by_text("Which trial is the worst?").wait_for()
                for click in range(N_CLICKS):
                    # The screen holds n_generate = 2 trials: the newest is trial click + 1.
                    newest = f"Trial {click + 1}"
                    page.get_by_text(newest, exact=True).wait_for()
                    before = len(study.trials)
                    page.get_by_role("button", name="Worst").first.click()
                    # The generator loop answers the click with a trial from the sampler...
                    deadline = time.monotonic() + TIMEOUT_S
                    while len(study.trials) == before and time.monotonic() < deadline:
                        time.sleep(0.1)
                    assert not errors, errors
                    assert len(study.trials) == before + 1, "no new trial after the click"
                    # ...which shows up on the page.
                    page.reload()
                    page.get_by_text(f"Trial {before}", exact=True).wait_for()
            finally:
                browser.close()
    finally:
        stop.set()
        generator.join(timeout=30)
    assert not errors, errors
    trials = study.trials
    assert len(study.preferences) == N_CLICKS
    assert sum(t.state == TrialState.COMPLETE for t in trials) >= N_CLICKS + 1
    roles = [t.system_attrs.get(ROLE_KEY) for t in trials[2:]]
    assert len(roles) == N_CLICKS and set(roles) <= {"champion", "challenger"}, roles
