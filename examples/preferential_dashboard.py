"""Pick a colour by comparison: an optuna-dashboard preferential study with PreferentialSampler.

Nobody can score a colour from 0 to 10 consistently, but anyone can say which of a few is the
worst. This script is the *generator* of an optuna-dashboard preferential study on SQLite: it
keeps ``--n-generate`` colours (red, green, blue) on the screen, each shown on its card as a
colour swatch (a PNG written with the standard library, uploaded as the trial's artifact; the
hex code and the hue, saturation and lightness are in the trial's note), and whenever the
person marks one as the worst it proposes the next with
:class:`~bore_samplers.integrations.preferential.PreferentialSampler` (the Maximally Uncertain
Challenge). Open the page with the command it prints (``optuna-dashboard ... --artifact-dir
...``: the dashboard serves the swatches from that folder), click "Worst" on the colour you
like least, and watch new ones arrive. Between clicks the script sleeps (``--poll`` seconds
between checks of ``study.should_generate()``, optuna-dashboard's generator pattern), so it
costs no CPU while the person looks. Stop with Ctrl-C; the script then prints the colour the
preferences point to, and the folder of the swatches. The swatches go to ``--artifact-dir``, by
default a fresh temporary folder: to continue the same study later, with the swatches of the
colours still on the screen, run it again with the same ``--storage`` and ``--artifact-dir``.

With ``--simulate`` the script also plays the person: it clicks the worst colour by its
distance to a hidden target (a calm sea blue), with some noise, so the loop runs unattended,
as it would with a script or an LLM as the judge (``study.report_preference``).

    python examples/preferential_dashboard.py                 # you judge, in the browser
    python examples/preferential_dashboard.py --simulate      # a simulated person judges
    python examples/preferential_dashboard.py --simulate --smoke   # a quick run (tests)

Options: ``--storage sqlite:///preferential_colours.db``, ``--artifact-dir DIR``, ``--study-name
pick-a-colour``, ``--n-generate 3``, ``--poll 0.5``; with ``--simulate``: ``--clicks 25``,
``--noise 0.05``. ``--smoke`` plays the person for 4 clicks on a new study in a temporary folder.
Needs the ``preferential`` extra: ``pip install ".[preferential]"``.
"""

from __future__ import annotations

import argparse
import colorsys
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import optuna
from optuna.artifacts import FileSystemArtifactStore, upload_artifact
from optuna.trial import TrialState

try:
    from optuna_dashboard import register_preference_feedback_component, save_note
    from optuna_dashboard.preferential import PreferentialStudy, create_study
    from optuna_dashboard.preferential._system_attrs import get_preferences, get_skipped_trial_ids
except ImportError:
    sys.exit('This example needs optuna-dashboard: pip install ".[preferential]"')

from bore_samplers.integrations.preferential import ROLE_KEY, PreferentialSampler

#: The simulated person's favourite colour (red, green, blue): a calm sea blue.
TARGET = (0.20, 0.57, 0.70)

#: The search space: the sRGB cube. Unlike hue-saturation-lightness, whose hue wraps around
#: (hue 0 and hue 1 are one red) and whose dark, light or grey corners look alike whatever the
#: hue, distances in this cube are differences a person sees, so the sampler's spacing of the
#: cards (``min_distance``) keeps them visibly apart.
CHANNELS = ("red", "green", "blue")

#: Trial user attribute holding the artifact id of the trial's swatch (the dashboard's card
#: shows that artifact: ``register_preference_feedback_component``).
SWATCH_KEY = "swatch"


def rgb(red: float, green: float, blue: float) -> tuple[int, int, int]:
    """The colour (channels in ``[0, 1]``) as 8-bit red, green and blue."""
    return round(255 * red), round(255 * green), round(255 * blue)


def hex_colour(red: float, green: float, blue: float) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb(red, green, blue))


def swatch_png(colour: tuple[int, int, int], width: int = 320, height: int = 200) -> bytes:
    """A PNG image of one plain colour: 8-bit RGB, written with zlib and struct only.

    Parameters
    ----------
    colour
        Red, green and blue, each in ``0 .. 255``.
    width, height
        The image's size in pixels.

    Returns
    -------
    bytes
        The PNG file's content.
    """

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    row = b"\x00" + bytes(colour) * width  # filter type 0 (None), then the pixels
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height, 9))
        + chunk(b"IEND", b"")
    )


def generate(study: PreferentialStudy, artifact_store: FileSystemArtifactStore) -> None:
    """The generator loop's step: fill the screen with new colours, each with its swatch."""
    while study.should_generate():
        trial = study.ask()
        channels = tuple(trial.suggest_float(name, 0.0, 1.0) for name in CHANNELS)
        colour = hex_colour(*channels)
        hue, lightness, saturation = colorsys.rgb_to_hls(*channels)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"swatch-{trial.number}.png"
            path.write_bytes(swatch_png(rgb(*channels)))
            artifact_id = upload_artifact(
                artifact_store=artifact_store, file_path=str(path), study_or_trial=trial
            )
        # The card shows the trial once this attribute names one of its artifacts.
        trial.set_user_attr(SWATCH_KEY, artifact_id)
        save_note(
            trial,
            f"## {colour}\n\nhue {360 * hue:.0f}°, saturation {saturation:.2f}, "
            f"lightness {lightness:.2f}",
        )
        role = study._study._storage.get_trial_system_attrs(trial._trial_id).get(
            ROLE_KEY, "random start"
        )
        print(f"  trial {trial.number:3d}: {colour} ({role})", flush=True)


def on_screen(study: PreferentialStudy) -> list[optuna.trial.FrozenTrial]:
    """The trials shown now: not reported worse, not skipped (optuna-dashboard's rule)."""
    attrs = study._study._storage.get_study_system_attrs(study._study._study_id)
    worse = {w for _, w in get_preferences(attrs)}
    skipped = set(get_skipped_trial_ids(attrs))
    states = (TrialState.RUNNING, TrialState.COMPLETE)
    return [
        t
        for t in study.get_trials(deepcopy=False, states=states)
        if t.number not in worse and t._trial_id not in skipped
    ]


def simulated_click(study: PreferentialStudy, rng: np.random.Generator, noise: float) -> None:
    """The simulated person marks the colour farthest from the target (in the RGB cube)."""
    shown = on_screen(study)

    def distance(t: optuna.trial.FrozenTrial) -> float:
        return float(np.linalg.norm(np.subtract(_rgb(t), TARGET)))

    scores = [-distance(t) + noise * rng.standard_normal() for t in shown]
    worst = shown[int(np.argmin(scores))]
    study.report_preference([t for t in shown if t is not worst], worst)
    print(f"person: {hex_colour(*_rgb(worst))} (trial {worst.number}) is the worst", flush=True)


def _rgb(trial: optuna.trial.FrozenTrial) -> tuple[float, ...]:
    return tuple(trial.params[name] for name in CHANNELS)


def report_best(study: PreferentialStudy, sampler: PreferentialSampler) -> None:
    n_duels = len(study.preferences)
    if n_duels == 0:
        print("No preference yet: nothing to infer.")
        return
    best = sampler.inferred_best_params(study)
    colour = hex_colour(*(best[name] for name in CHANNELS))
    print(f"After {n_duels} duels the preferences point to {colour}: {best}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default="sqlite:///preferential_colours.db")
    parser.add_argument(
        "--artifact-dir", help="folder of the swatches (default: a fresh temporary folder)"
    )
    parser.add_argument("--study-name", default="pick-a-colour")
    parser.add_argument("--n-generate", type=int, default=3, help="colours on the screen")
    parser.add_argument("--simulate", action="store_true", help="play the person too")
    parser.add_argument("--clicks", type=int, default=25, help="simulated clicks (--simulate)")
    parser.add_argument("--noise", type=float, default=0.05, help="simulated person's noise")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between checks")
    parser.add_argument(
        "--smoke", action="store_true", help="a temporary SQLite study, 4 simulated clicks"
    )
    args = parser.parse_args()
    if args.smoke:
        folder = tempfile.mkdtemp(prefix="preferential_")
        args.storage = f"sqlite:///{Path(folder) / 'colours.db'}"
        args.artifact_dir = str(Path(folder) / "artifacts")
        args.simulate, args.clicks, args.poll = True, 4, 0.0
    if args.artifact_dir is None:
        args.artifact_dir = tempfile.mkdtemp(prefix="preferential_artifacts_")
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    sampler = PreferentialSampler(seed=0)
    study = create_study(
        n_generate=args.n_generate,
        storage=args.storage,
        study_name=args.study_name,
        sampler=sampler,
        load_if_exists=True,
    )
    Path(args.artifact_dir).mkdir(parents=True, exist_ok=True)
    artifact_store = FileSystemArtifactStore(args.artifact_dir)
    # Each card shows the trial's swatch, the artifact named by its SWATCH_KEY attribute.
    register_preference_feedback_component(study, "artifact", SWATCH_KEY)
    print(f"Study {args.study_name!r} in {args.storage}. To compare the colours, run")
    print(f"    optuna-dashboard {args.storage} --artifact-dir {args.artifact_dir}")
    print(
        f"and open http://127.0.0.1:8080/dashboard/studies/{study._study._study_id} "
        "(click 'Worst' on the colour you like least).",
        flush=True,
    )
    rng = np.random.default_rng(0)
    clicks = 0
    seen = len(study.preferences)
    try:
        while not (args.simulate and clicks >= args.clicks):
            # optuna-dashboard's generator pattern: new trials only when a place is free on
            # the screen, and a sleep between checks (no busy-wait while the person looks).
            if study.should_generate():
                generate(study, artifact_store)
            elif args.simulate:
                simulated_click(study, rng, args.noise)
                clicks += 1
            else:
                time.sleep(args.poll)
            n_duels = len(study.preferences)
            if n_duels != seen:
                seen = n_duels
                report_best(study, sampler)
        generate(study, artifact_store)
    except KeyboardInterrupt:
        print()
    print(f"The swatches are in {args.artifact_dir}")
    report_best(study, sampler)


if __name__ == "__main__":
    main()
