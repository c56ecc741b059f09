"""Pick a colour by comparison: an optuna-dashboard preferential study with PreferentialSampler.

Nobody can score a colour from 0 to 10 consistently, but anyone can say which of a few is the
worst. This script is the *generator* of an optuna-dashboard preferential study on SQLite: it
keeps ``--n-generate`` colours (hue, saturation, lightness) on the screen, each described in
the trial's note, and whenever the person marks one as the worst it proposes the next with
:class:`~bore_samplers.integrations.preferential.PreferentialSampler` (the Maximally Uncertain
Challenge). Open the page with the command it prints, click "Worst" on the colour you like
least, and watch new ones arrive. Stop with Ctrl-C; the script then prints the colour the
preferences point to. Run it again to continue the same study.

With ``--simulate`` the script also plays the person: it clicks the worst colour by its
distance to a hidden target (a calm sea blue), with some noise, so the loop runs unattended,
as it would with a script or an LLM as the judge (``study.report_preference``).

    python examples/preferential_dashboard.py                 # you judge, in the browser
    python examples/preferential_dashboard.py --simulate      # a simulated person judges
    python examples/preferential_dashboard.py --simulate --smoke   # a quick run (tests)

Needs the ``preferential`` extra: ``pip install "bore-samplers[preferential]"``.
"""

from __future__ import annotations

import argparse
import colorsys
import tempfile
import time
from pathlib import Path

import numpy as np
import optuna
from optuna.trial import TrialState
from optuna_dashboard import save_note
from optuna_dashboard.preferential import PreferentialStudy, create_study
from optuna_dashboard.preferential._system_attrs import get_preferences, get_skipped_trial_ids

from bore_samplers.integrations.preferential import ROLE_KEY, PreferentialSampler

#: The simulated person's favourite colour (HSL): a calm sea blue.
TARGET = (0.55, 0.55, 0.45)


def hex_colour(hue: float, saturation: float, lightness: float) -> str:
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in (red, green, blue)))


def generate(study: PreferentialStudy) -> None:
    """The generator loop's step: fill the screen with new colours."""
    while study.should_generate():
        trial = study.ask()
        hue = trial.suggest_float("hue", 0.0, 1.0)
        saturation = trial.suggest_float("saturation", 0.0, 1.0)
        lightness = trial.suggest_float("lightness", 0.1, 0.9)
        colour = hex_colour(hue, saturation, lightness)
        # The dashboard shows a trial for comparison once its note has content.
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
    """The simulated person marks the colour farthest from the target (HSL, hue on a circle)."""
    shown = on_screen(study)

    def distance(t: optuna.trial.FrozenTrial) -> float:
        hue = abs(t.params["hue"] - TARGET[0])
        hue = min(hue, 1.0 - hue)
        return float(
            np.hypot.reduce(
                [2.0 * hue, t.params["saturation"] - TARGET[1], t.params["lightness"] - TARGET[2]]
            )
        )

    scores = [-distance(t) + noise * rng.standard_normal() for t in shown]
    worst = shown[int(np.argmin(scores))]
    study.report_preference([t for t in shown if t is not worst], worst)
    print(f"person: {hex_colour(*_hsl(worst))} (trial {worst.number}) is the worst", flush=True)


def _hsl(trial: optuna.trial.FrozenTrial) -> tuple[float, float, float]:
    return trial.params["hue"], trial.params["saturation"], trial.params["lightness"]


def report_best(study: PreferentialStudy, sampler: PreferentialSampler) -> None:
    n_duels = len(study.preferences)
    if n_duels == 0:
        print("No preference yet: nothing to infer.")
        return
    best = sampler.inferred_best_params(study)
    colour = hex_colour(best["hue"], best["saturation"], best["lightness"])
    print(f"After {n_duels} duels the preferences point to {colour}: {best}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default="sqlite:///preferential_colours.db")
    parser.add_argument("--study-name", default="pick-a-colour")
    parser.add_argument("--n-generate", type=int, default=3, help="colours on the screen")
    parser.add_argument("--simulate", action="store_true", help="play the person too")
    parser.add_argument("--clicks", type=int, default=25, help="simulated clicks (--simulate)")
    parser.add_argument("--noise", type=float, default=0.05, help="simulated person's noise")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between checks")
    parser.add_argument(
        "--smoke", action="store_true", help="a temporary SQLite study, 4 simulated clicks"
    )
    args = parser.parse_args()
    if args.smoke:
        folder = tempfile.mkdtemp(prefix="preferential_")
        args.storage = f"sqlite:///{Path(folder) / 'colours.db'}"
        args.simulate, args.clicks, args.poll = True, 4, 0.0
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    sampler = PreferentialSampler(seed=0)
    study = create_study(
        n_generate=args.n_generate,
        storage=args.storage,
        study_name=args.study_name,
        sampler=sampler,
        load_if_exists=True,
    )
    print(f"Study {args.study_name!r} in {args.storage}. To compare the colours, run")
    print(f"    optuna-dashboard {args.storage}")
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
            generate(study)
            if args.simulate:
                simulated_click(study, rng, args.noise)
                clicks += 1
            else:
                time.sleep(args.poll)
            n_duels = len(study.preferences)
            if n_duels != seen:
                seen = n_duels
                report_best(study, sampler)
        generate(study)
    except KeyboardInterrupt:
        print()
    report_best(study, sampler)


if __name__ == "__main__":
    main()
