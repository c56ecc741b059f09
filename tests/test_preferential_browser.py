"""The preferential loop in a real browser: optuna-dashboard, headless Chromium, our sampler.

``optuna-dashboard`` (its command-line server, with ``--artifact-dir``) serves a SQLite
preferential study on loopback; the colour example's generator
(``examples/preferential_dashboard.py``: :class:`~bore_samplers.integrations.preferential.
PreferentialSampler`, one colour-swatch PNG per trial uploaded as its artifact and shown on its
card) fills the screen in a background thread; Playwright drives Debian's ``chromium`` binary
(no browser download), checks that every card shows its swatch (an ``<img>`` of the trial's
artifact, loaded: ``naturalWidth > 0``), clicks "Worst" a few times and checks that each
preference reaches the storage (the server answers 204) and that the trials the sampler
proposes in answer show up on the page, with their swatches.

Error toasts fail the test, except one known upstream issue: optuna-dashboard 0.21.0's front
end parses JSON from the empty 204 reply to a reported preference, so every click shows "Failed
to report preference. Reason: undefined" although the preference was recorded (0.20.0, whose
client was axios, did not). That toast is recorded (printed) and allowed only together with
the 204 reply and the preference in the storage.

With ``PREFERENTIAL_SCREENSHOT=path.png`` the test also saves a screenshot of the page with its
cards there (``docs/images/preferential.png`` was made so).

Skipped, with the reason, where playwright or a ``chromium`` binary is missing. To run it on
Debian or Ubuntu: ``apt-get install chromium`` and ``pip install playwright`` (without
``playwright install``: the test uses the system browser; ``.ci/run`` installs chromium).
"""

from __future__ import annotations

import importlib.util
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

from optuna.artifacts import FileSystemArtifactStore  # noqa: E402
from optuna.trial import TrialState  # noqa: E402
from optuna_dashboard import register_preference_feedback_component  # noqa: E402
from optuna_dashboard.preferential import create_study, load_study  # noqa: E402

from bore_samplers.integrations.preferential import ROLE_KEY, PreferentialSampler  # noqa: E402

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium binary on PATH (Debian/Ubuntu: apt-get install chromium)",
)

N_GENERATE = 3
N_CLICKS = 3
TIMEOUT_S = 120.0

#: The toast every reported preference brings in optuna-dashboard 0.21.0 (see the module notes).
UPSTREAM_TOAST = "Failed to report preference. Reason: undefined"

# Every artifact image on the page, and whether each has loaded.
SWATCHES_JS = """() => [...document.querySelectorAll('img')]
    .filter((img) => img.src.includes('/artifacts/'))
    .map((img) => ({src: img.src, loaded: img.complete && img.naturalWidth > 0}))"""


def _load_example():
    path = Path(__file__).resolve().parents[1] / "examples" / "preferential_dashboard.py"
    spec = importlib.util.spec_from_file_location("preferential_dashboard_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_example()


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


def _generate(
    study, store: FileSystemArtifactStore, stop: threading.Event, errors: list[BaseException]
) -> None:
    """The generator loop of a preferential study, as the colour example runs it."""
    try:
        while not stop.is_set():
            if study.should_generate():
                example.generate(study, store)
            else:
                time.sleep(0.1)
    except BaseException as error:  # reported by the test
        errors.append(error)


def _swatch_trials(page) -> set[str]:
    """The trial ids whose swatch has loaded on the page (artifact URLs end in trial/id)."""
    return {
        image["src"].rsplit("/", 2)[-2] for image in page.evaluate(SWATCHES_JS) if image["loaded"]
    }


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """A SQLite preferential study served by ``optuna-dashboard`` on a free loopback port."""
    storage = f"sqlite:///{tmp_path / 'preferential.db'}"
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    study = create_study(
        n_generate=N_GENERATE, storage=storage, study_name="browser", sampler=PreferentialSampler()
    )
    register_preference_feedback_component(study, "artifact", example.SWATCH_KEY)
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
        "--artifact-dir",
        str(artifacts),
        "--quiet",
    ]
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ)
    )
    try:
        _wait_until_up(f"http://127.0.0.1:{port}/api/studies", server)
        yield storage, f"http://127.0.0.1:{port}", artifacts
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_clicks_in_the_dashboard_bring_the_samplers_trials(
    dashboard: tuple[str, str, Path],
) -> None:
    storage, base_url, artifacts = dashboard
    study = load_study(study_name="browser", storage=storage, sampler=PreferentialSampler(seed=0))
    store = FileSystemArtifactStore(str(artifacts))
    stop, errors = threading.Event(), []
    generator = threading.Thread(target=_generate, args=(study, store, stop, errors), daemon=True)
    generator.start()
    upstream_toasts = 0
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
            )
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 620})
                page.set_default_timeout(TIMEOUT_S * 1000)
                page.goto(f"{base_url}/dashboard/studies/{study._study._study_id}")
                page.get_by_text("Which trial is the worst?").wait_for()
                for click in range(N_CLICKS + 1):
                    # Every card on the screen shows its trial's swatch, loaded.
                    on_screen = {str(t._trial_id) for t in example.on_screen(study)}
                    assert len(on_screen) == N_GENERATE
                    page.wait_for_function(
                        f"ids => ({SWATCHES_JS})().filter(i => i.loaded)"
                        ".map(i => i.src.split('/').slice(-2)[0])"
                        ".filter(id => ids.includes(id)).length === ids.length",
                        arg=sorted(on_screen),
                    )
                    assert on_screen <= _swatch_trials(page)
                    if click == N_CLICKS:
                        if os.environ.get("PREFERENTIAL_SCREENSHOT"):
                            page.screenshot(path=os.environ["PREFERENTIAL_SCREENSHOT"])
                        break
                    before, n_duels = len(study.trials), len(study.preferences)
                    with page.expect_response(
                        lambda r: r.url.endswith("/preference") and r.request.method == "POST"
                    ) as answer:
                        page.get_by_role("button", name="Worst").first.click()
                    assert answer.value.status == 204
                    # The preference is in the storage: one duel per other card.
                    assert len(study.preferences) == n_duels + N_GENERATE - 1
                    # Error toasts: only the known upstream one (see the module notes).
                    toasts = page.locator("#notistack-snackbar")
                    try:
                        toasts.first.wait_for(timeout=2000)
                    except sync_api.TimeoutError:
                        pass
                    for text in toasts.all_inner_texts():
                        assert text == UPSTREAM_TOAST, f"error toast: {text!r}"
                        upstream_toasts += 1
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
    if upstream_toasts:
        print(f"known upstream toast {UPSTREAM_TOAST!r} after {upstream_toasts} clicks")
    trials = study.trials
    assert len(study.preferences) == N_CLICKS * (N_GENERATE - 1)
    assert sum(t.state == TrialState.COMPLETE for t in trials) >= N_CLICKS + 1
    roles = [t.system_attrs.get(ROLE_KEY) for t in trials[N_GENERATE:]]
    assert len(roles) == N_CLICKS and set(roles) <= {"champion", "challenger"}, roles
