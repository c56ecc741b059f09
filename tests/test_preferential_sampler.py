"""PreferentialSampler in optuna-dashboard's preferential studies, and its proposer.

Real preferential studies (``optuna_dashboard.preferential.create_study``, in memory and on
SQLite) driven by the Python API: a generator loop asks trials while ``should_generate()``,
a simulated person reports the worst of the trials on the screen with ``report_preference``.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.distributions import BaseDistribution, FloatDistribution
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)
from optuna.trial import FrozenTrial, TrialState

from bore_samplers.proposers.preferential import PreferentialProposer, batch_uncertainty
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace

pytest.importorskip("optuna_dashboard", reason="needs the preferential extra (optuna-dashboard)")

from optuna_dashboard.preferential import (  # noqa: E402
    PreferentialStudy,
    create_study,
    load_study,
)
from optuna_dashboard.preferential._system_attrs import (  # noqa: E402
    report_skip,
)

from bore_samplers.integrations.preferential import (  # noqa: E402
    ROLE_KEY,
    PreferentialSampler,
    preference_data,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)

# A small optimiser budget keeps the tests quick; the algorithm is the same.
FAST = dict(n_candidates=128, n_restarts=2)


def utility(params: dict[str, Any]) -> float:
    """The simulated person's taste: a bump at (0.3, 0.7), higher is better."""
    return -8.0 * ((params["x"] - 0.3) ** 2 + (params["y"] - 0.7) ** 2)


def generate(study: PreferentialStudy) -> None:
    """The generator loop: fill the screen."""
    while study.should_generate():
        trial = study.ask()
        trial.suggest_float("x", 0.0, 1.0)
        trial.suggest_float("y", 0.0, 1.0)


def active_trials(study: PreferentialStudy) -> list[FrozenTrial]:
    """The trials on the screen: RUNNING or COMPLETE, never reported worse, not skipped."""
    worse = {w.number for _, w in study.get_preferences(deepcopy=False)}
    attrs = study._study._storage.get_study_system_attrs(study._study._study_id)
    skipped = {int(k.rsplit(":", 1)[1]) for k in attrs if k.startswith("preference:skip_trial:")}
    return [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING, TrialState.COMPLETE))
        if t.number not in worse and t._trial_id not in skipped
    ]


def click_worst(study: PreferentialStudy, rng: np.random.Generator, noise: float = 0.3) -> None:
    """The simulated person marks the worst trial on the screen, under noise."""
    shown = active_trials(study)
    scores = [utility(t.params) + noise * rng.standard_normal() for t in shown]
    worst = int(np.argmin(scores))
    study.report_preference([t for k, t in enumerate(shown) if k != worst], shown[worst])


def run_loop(study: PreferentialStudy, clicks: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(clicks):
        generate(study)
        click_worst(study, rng)
    generate(study)


def proposed_params(study: PreferentialStudy) -> list[tuple[float, float]]:
    return [(t.params["x"], t.params["y"]) for t in study.trials]


# ------------------------------------------------------------------------------ studies
@pytest.mark.parametrize("n_generate", [2, 4])
def test_script_judge_loop_in_memory(n_generate: int) -> None:
    study = create_study(n_generate=n_generate, sampler=PreferentialSampler(seed=0, **FAST))
    run_loop(study, clicks=6)
    assert len(active_trials(study)) == n_generate
    # A click records n_generate - 1 duels; every trial after the first preference is the
    # sampler's: the champion or a challenger.
    assert len(study.preferences) == 6 * (n_generate - 1)
    roles = [t.system_attrs.get(ROLE_KEY) for t in study.trials]
    assert roles[:n_generate] == [None] * n_generate  # random until the first preference
    assert set(roles[n_generate:]) <= {"champion", "challenger"}
    assert "challenger" in roles
    for x, y in proposed_params(study):
        assert 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0


def test_sqlite_study_is_read_back_by_a_new_sampler(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'pref.db'}"
    study = create_study(
        n_generate=2, storage=storage, study_name="s", sampler=PreferentialSampler(seed=1, **FAST)
    )
    run_loop(study, clicks=3)
    # A new process: a new sampler that knows the preferences only from the storage.
    sampler = PreferentialSampler(seed=2, **FAST)
    loaded = load_study(study_name="s", storage=storage, sampler=sampler)
    data = preference_data(loaded, {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)})
    assert len(data.duels) == 3
    assert len(data.shown) == 2
    rng = np.random.default_rng(5)
    for _ in range(3):
        click_worst(loaded, rng)
        generate(loaded)
    assert loaded.trials[-1].system_attrs[ROLE_KEY] in ("champion", "challenger")
    best = sampler.inferred_best_params(loaded)
    assert best in [t.params for t in loaded.trials]


def test_inferred_best_params_accepts_both_study_types() -> None:
    sampler = PreferentialSampler(seed=0, **FAST)
    study = create_study(n_generate=3, sampler=sampler)
    with pytest.raises(ValueError, match="No preference"):
        sampler.inferred_best_params(study)
    run_loop(study, clicks=8)
    best = sampler.inferred_best_params(study)
    assert best == sampler.inferred_best_params(study._study)
    # The best of the compared trials by μ_f; asking does not change the next proposal.
    compared = [t.params for t in study.trials if t.state == TrialState.COMPLETE]
    assert best in compared
    assert utility(best) >= np.median([utility(p) for p in compared])
    anywhere = sampler.inferred_best_params(study, over="space")
    assert set(anywhere) == {"x", "y"} and 0.0 <= anywhere["x"] <= 1.0


def test_inspection_does_not_change_the_proposals() -> None:
    def final_params(inspect: bool) -> list[tuple[float, float]]:
        sampler = PreferentialSampler(seed=3, **FAST)
        study = create_study(n_generate=2, sampler=sampler)
        rng = np.random.default_rng(0)
        for _ in range(4):
            generate(study)
            click_worst(study, rng)
            if inspect:
                sampler.inferred_best_params(study)
        generate(study)
        return proposed_params(study)

    assert final_params(False) == final_params(True)


def test_skipped_trials_are_dropped() -> None:
    sampler = PreferentialSampler(seed=0, **FAST)
    study = create_study(n_generate=3, sampler=sampler)
    run_loop(study, clicks=2)
    space = {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)}
    before = preference_data(study, space)
    # Skip one trial on the screen that took part in a duel (it beat the worst).
    victim = next(t for t in active_trials(study) if t.state == TrialState.COMPLETE)
    report_skip(study._study._study_id, victim._trial_id, study._study._storage)
    after = preference_data(study, space)
    assert victim.number in before.numbers and victim.number not in after.numbers
    assert len(after.duels) == len(before.duels) - sum(
        victim.number in (before.numbers[a], before.numbers[b]) for a, b in before.duels
    )
    assert victim.number not in [after.numbers[i] for i in after.shown]
    # The screen has a free place again; the sampler fills it without the skipped trial.
    generate(study)
    assert study.trials[-1].system_attrs[ROLE_KEY] in ("champion", "challenger")


def test_trial_values_are_ignored() -> None:
    """Two studies with the same trials and preferences but different values propose alike."""

    def propose(values: Sequence[float]) -> dict[str, Any]:
        sampler = PreferentialSampler(seed=0, **FAST)
        study = optuna.create_study(sampler=sampler)
        space = {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)}
        points = [(0.1, 0.2), (0.5, 0.5), (0.9, 0.4)]
        for (x, y), value in zip(points, values, strict=True):
            study.add_trial(
                optuna.trial.create_trial(
                    params={"x": x, "y": y}, distributions=space, value=value
                )
            )
        storage = study._storage
        storage.set_study_system_attr(study._study_id, "preference:values1", [(1, 0), (1, 2)])
        trial = study.ask()
        return {name: trial.suggest_float(name, 0.0, 1.0) for name in space}

    assert propose([0.0, 0.0, 0.0]) == propose([5.0, -3.0, 1e9])


def test_pickled_sampler_continues_identically() -> None:
    study = create_study(n_generate=2, sampler=PreferentialSampler(seed=4, **FAST))
    run_loop(study, clicks=3)
    clone = pickle.loads(pickle.dumps(study._study.sampler))
    trial = study._study._storage.create_new_trial(study._study._study_id)
    frozen = study._study._storage.get_trial(trial)
    space = study._study.sampler.infer_relative_search_space(study._study, frozen)
    assert space  # the compared trials define the space
    original = study._study.sampler.sample_relative(study._study, frozen, space)
    copied = clone.sample_relative(study._study, frozen, space)
    assert original == copied


def test_seeds_are_reproducible() -> None:
    def params(seed: int) -> list[tuple[float, float]]:
        study = create_study(n_generate=2, sampler=PreferentialSampler(seed=seed, **FAST))
        run_loop(study, clicks=4)
        return proposed_params(study)

    assert params(7) == params(7)
    assert params(7) != params(8)


def test_invalid_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="acquisition"):
        PreferentialSampler(acquisition="ucb")
    with pytest.raises(ValueError, match="n_candidates"):
        PreferentialSampler(n_candidates=0)
    with pytest.raises(ValueError, match="champion"):
        PreferentialSampler(champion="best")
    with pytest.raises(ValueError, match="margin"):
        PreferentialSampler(margin=0.5)
    with pytest.raises(ValueError, match="min_distance"):
        PreferentialSampler(min_distance=-0.1)


def test_thompson_acquisition_runs_in_a_study() -> None:
    study = create_study(
        n_generate=2, sampler=PreferentialSampler(seed=0, acquisition="thompson", **FAST)
    )
    run_loop(study, clicks=3)
    assert study.trials[-1].system_attrs[ROLE_KEY] in ("champion", "challenger")


# ------------------------------------------------------------------------------ the proposer
SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


def test_startup_is_a_sobol_sequence_without_repeats() -> None:
    proposer = PreferentialProposer(seed=0)
    configs: list[dict[str, Any]] = []
    for _ in range(5):
        proposal = proposer.propose(SPACE, configs, duels=[])
        assert proposal.role == "startup"
        configs.append(proposal.params)
    assert len({tuple(c.values()) for c in configs}) == 5


CONFIGS = [{"x": 0.3, "y": 0.7}, {"x": 0.9, "y": 0.1}, {"x": 0.1, "y": 0.2}]
DUELS = [(0, 1), (0, 2), (0, 1), (0, 2), (2, 1), (0, 1), (0, 2)]


def test_observed_champion_is_shown_again_when_it_left_the_screen() -> None:
    proposer = PreferentialProposer(champion="observed", seed=0, **FAST)
    proposal = proposer.propose(SPACE, CONFIGS, DUELS, shown=[2])
    assert proposal.role == "champion"
    assert proposal.params == CONFIGS[0]
    # With the champion on the screen, the new trial challenges it.
    proposal = proposer.propose(SPACE, CONFIGS, DUELS, shown=[0])
    assert proposal.role == "challenger"
    assert proposal.params not in CONFIGS


def test_champion_over_the_space_joins_a_screen_without_a_good_trial() -> None:
    proposer = PreferentialProposer(seed=0, **FAST)
    model = PreferentialProposer(seed=0).fit(SPACE, CONFIGS, DUELS)
    proposal = proposer.propose(SPACE, CONFIGS, DUELS, shown=[1])
    assert proposal.role == "champion"
    features = SPACE.features(SPACE.encode([proposal.params, CONFIGS[0], CONFIGS[1]]))
    mean, _ = model.predict_latent(features)
    assert mean[0] >= mean[1] - 1e-6 and mean[0] > mean[2]
    # The best trial is on the screen: a challenger.
    assert proposer.propose(SPACE, CONFIGS, DUELS, shown=[0]).role == "challenger"


@pytest.mark.parametrize(("margin", "min_distance"), [(0.0, 0.0), (0.05, 0.1), (0.2, 0.3)])
def test_challenger_maximises_the_duel_uncertainty(margin: float, min_distance: float) -> None:
    configs = [{"x": 0.3, "y": 0.7}, {"x": 0.9, "y": 0.1}, {"x": 0.1, "y": 0.2}]
    duels = [(0, 1), (0, 2), (2, 1)]
    proposer = PreferentialProposer(margin=margin, min_distance=min_distance, seed=0)
    model = PreferentialProposer(seed=0).fit(SPACE, configs, duels)
    proposal = proposer.propose(SPACE, configs, duels, shown=[0])
    assert proposal.role == "challenger"
    u = SPACE.encode([proposal.params])[0]
    observed = SPACE.encode(configs)
    # In the interior box, away from every configuration compared or shown...
    assert np.all((u >= margin - 1e-12) & (u <= 1.0 - margin + 1e-12)), u
    assert np.linalg.norm(observed - u, axis=1).min() >= min_distance - 1e-12
    # ...and the best there (the paper's whole box with margin = min_distance = 0).
    champion = SPACE.features(observed[:1])
    value = batch_uncertainty(model, np.vstack([champion, SPACE.features(u[None])]), fixed=1)
    random = margin + (1.0 - 2.0 * margin) * SPACE.sample_uniform(500, np.random.default_rng(0))
    allowed = np.linalg.norm(random[:, None] - observed[None], axis=-1).min(axis=1)
    random = SPACE.features(random[allowed >= min_distance])
    others = [batch_uncertainty(model, np.vstack([champion, r[None]]), fixed=1) for r in random]
    assert value >= max(others) - 1e-9


def test_challengers_keep_off_the_bounds_and_apart() -> None:
    """The guards against corner and look-alike challengers, over a run of clicks."""
    rng = np.random.default_rng(0)
    proposer = PreferentialProposer(seed=0, **FAST)
    configs = [{"x": 0.4, "y": 0.6}, {"x": 0.7, "y": 0.3}]
    duels: list[tuple[int, int]] = [(0, 1)]
    shown = [0]
    for _ in range(6):
        new = proposer.propose(SPACE, configs, duels, shown)
        u = SPACE.encode([new.params])[0]
        if new.role == "challenger":
            assert np.all((u >= 0.05 - 1e-12) & (u <= 0.95 + 1e-12)), u
            gaps = np.linalg.norm(SPACE.encode(configs) - u, axis=1)
            assert gaps.min() >= 0.1 - 1e-12, gaps
        configs.append(new.params)
        # The person keeps the configuration nearer (0.5, 0.5), with some noise.
        a, b = shown[0], len(configs) - 1
        d = [np.hypot(configs[i]["x"] - 0.5, configs[i]["y"] - 0.5) for i in (a, b)]
        better = a if d[0] + 0.05 * rng.standard_normal() < d[1] else b
        duels.append((better, b if better == a else a))
        shown = [better]


def test_startup_points_are_interior() -> None:
    proposer = PreferentialProposer(seed=0)
    configs: list[dict[str, Any]] = []
    for _ in range(16):
        configs.append(proposer.propose(SPACE, configs, duels=[]).params)
    u = SPACE.encode(configs)
    assert np.all((u >= 0.05) & (u <= 0.95))


def test_joint_batch_is_at_least_as_good_as_greedy() -> None:
    rng = np.random.default_rng(0)
    configs = [{"x": float(a), "y": float(b)} for a, b in rng.random((8, 2))]
    scores = [utility(c) + 0.2 * rng.standard_normal() for c in configs]
    duels = [(i, j) if scores[i] > scores[j] else (j, i) for i in range(8) for j in range(i)]
    values = {}
    for mode in ("greedy", "joint"):
        model = PreferentialProposer(seed=1).fit(SPACE, configs, duels)
        batch = PreferentialProposer(batch=mode, seed=1, **FAST).propose_batch(
            SPACE, configs, duels, shown=[], n_new=4
        )
        assert [p.role for p in batch] == ["champion"] + ["challenger"] * 3
        values[mode] = batch_uncertainty(
            model, SPACE.features(SPACE.encode([p.params for p in batch])), fixed=1
        )
    assert values["joint"] >= values["greedy"] - 1e-12


def test_mixed_space_proposals_are_valid() -> None:
    space = SearchSpace(
        {
            "lr": FloatParam(1e-4, 1e-1, log=True),
            "layers": IntParam(1, 6),
            "act": CategoricalParam(("relu", "tanh", "gelu")),
        }
    )
    proposer = PreferentialProposer(seed=0, **FAST)
    configs = [proposer.propose(space, [], []).params]
    configs.append(proposer.propose(space, configs, []).params)
    duels: list[tuple[int, int]] = [(0, 1)]
    for _ in range(4):
        proposal = proposer.propose(space, configs, duels, shown=[0])
        configs.append(proposal.params)
        duels.append((0, len(configs) - 1))
        assert 1e-4 <= proposal.params["lr"] <= 1e-1
        assert proposal.params["layers"] in range(1, 7)
        assert proposal.params["act"] in ("relu", "tanh", "gelu")
    best = proposer.inferred_best(space, configs, duels)
    assert best == configs[0]


def test_bad_duel_indices_are_rejected() -> None:
    with pytest.raises(ValueError, match="Duel indices"):
        PreferentialProposer().fit(SPACE, [{"x": 0.1, "y": 0.1}], [(0, 1)])
    with pytest.raises(ValueError, match="shown"):
        PreferentialProposer().propose(SPACE, [{"x": 0.1, "y": 0.1}], [], shown=[3])


# ------------------------------------------------------------------------------ conformance
class _ValuesAsPreferences(PreferentialSampler):
    """Optuna's suites report values, not preferences: turn the values into duels.

    Before each proposal the complete single-objective trials, sorted by value, are written
    as duels between neighbours (the better one wins) in a study system attribute of
    optuna-dashboard's format, so that the suites reach the model-based proposals.
    """

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        if not study._is_multi_objective():
            complete = [
                t
                for t in study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                if t.value is not None and np.isfinite(t.value)
            ]
            sign = 1.0 if study.direction == optuna.study.StudyDirection.MINIMIZE else -1.0
            ranked = sorted(complete, key=lambda t: sign * t.value)
            pairs = [(a.number, b.number) for a, b in zip(ranked[:-1], ranked[1:], strict=True)]
            study._storage.set_study_system_attr(
                study._study_id, "preference:valuesconformance", pairs
            )
        return super().infer_relative_search_space(study, trial)


_CONFORMANCE = [
    pytest.param(lambda: PreferentialSampler(seed=0, **FAST), id="no-preferences"),
    pytest.param(lambda: _ValuesAsPreferences(seed=0, **FAST), id="values-as-preferences"),
]


class _Fixture:
    @pytest.fixture(params=_CONFORMANCE)
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return request.param


class TestBasic(_Fixture, BasicSamplerTestCase):
    pass


class TestRelative(_Fixture, RelativeSamplerTestCase):
    pass


# Trial values are ignored, so the number of objectives does not matter to the sampler.
class TestMultiObjective(_Fixture, MultiObjectiveSamplerTestCase):
    pass


# ------------------------------------------------------------------------------ the example
def test_dashboard_example_runs_with_a_simulated_person() -> None:
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, str(root / "examples" / "preferential_dashboard.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert "optuna-dashboard sqlite:///" in result.stdout
    assert "(challenger)" in result.stdout or "(champion)" in result.stdout
    assert "preferences point to #" in result.stdout.splitlines()[-1]
