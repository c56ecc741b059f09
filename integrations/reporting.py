"""Where each trial's configuration came from: the model, the start-up design or a fallback.

For examples and reports. :func:`track_proposals` watches an Optuna sampler or a Ray Tune
searcher of this package while it runs in this process and files every trial under one source:

* ``"model"``: the proposer's model chose the configuration.
* ``"start-up"``: the proposer's initial design chose it (fewer finished trials than
  ``n_startup_trials``), or the proposer was not asked: Optuna's first trial (no finished trial
  defines the joint search space yet: the independent sampler draws it) and Ray Tune's
  ``points_to_evaluate``.
* ``"fallback"``: the model could not be used. Either it raised (the adapter issued a
  :class:`~bore_samplers.proposers.ModelFallbackWarning` and drew the trial without the model)
  or it had nothing to learn from (all labels of one class for BORE, no objective and no crash
  yet for the GP proposers), and a uniform random configuration was proposed.

The trial records in the study say none of this reliably (BORE and cMES keep no record; the
Optuna samplers publish start-up and model proposals alike), so the tally watches the proposer's
own code paths. Parameters outside Optuna's relative search space (conditional ones) are always
sampled independently; the trial's source is that of its jointly proposed parameters. Only
this process is watched (threads included): a pickled copy of the sampler or searcher, in a
process pool or a Tune checkpoint, is a plain one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

__all__ = ["SOURCES", "ProposalSources", "track_proposals"]

#: The sources a trial's configuration can come from, in the order they are printed.
SOURCES = ("model", "start-up", "fallback")


class ProposalSources:
    """The source of every trial proposed since :func:`track_proposals` (trial key -> source).

    Keys are Optuna trial numbers or Ray Tune trial ids.
    """

    def __init__(self) -> None:
        self.by_trial: dict[Hashable, str] = {}
        # Thread id -> source of the proposal in progress (Optuna's n_jobs runs threads).
        self._current: dict[int, str | None] = {}

    def counts(self) -> dict[str, int]:
        """Number of trials per source, every source included (0 if none)."""
        sources = list(self.by_trial.values())
        return {source: sources.count(source) for source in SOURCES}

    def trials(self, source: str) -> list[Hashable]:
        """The keys of the trials from ``source``, in the order they were proposed."""
        return [key for key, value in self.by_trial.items() if value == source]

    def summary(self, n_trials: int) -> str:
        """One line: ``proposals: N trials = a model-based + b start-up + c fallback``.

        ``n_trials`` is the framework's own count of trials, so that a reader (or a test) sees
        whether the parts add up.
        """
        counts = self.counts()
        return (
            f"proposals: {n_trials} trials = {counts['model']} model-based + "
            f"{counts['start-up']} start-up + {counts['fallback']} fallback"
        )

    def best_by_source(
        self, values: Mapping[Hashable, float | None], *, maximize: bool = False, fmt: str = ".4f"
    ) -> str:
        """One line: the best of ``values`` among the trials of each source, and its trial.

        ``values`` maps trial keys to their values (None or a missing key: no value, e.g. a
        crashed trial). Sources without a valued trial are left out.
        """
        parts = []
        for source in SOURCES:
            valued = [
                (values[key], key) for key in self.trials(source) if values.get(key) is not None
            ]
            if valued:
                value, key = max(valued) if maximize else min(valued)
                label = "model-based" if source == "model" else source
                parts.append(f"{label} {value:{fmt}} (trial {key})")
        return "best by source: " + (", ".join(parts) if parts else "no trial has a value")

    # ------------------------------------------------------------- used by the taps
    def _set(self, source: str | None) -> None:
        self._current[threading.get_ident()] = source

    def _get(self) -> str | None:
        return self._current.get(threading.get_ident())


class _Tap:
    """A watched method: calls the original and notes the source; pickles as the original.

    A copy made by pickling or ``deepcopy`` (Ray Tune checkpoints the searcher) gets the plain
    method back: the tally lives in this process only.
    """

    def __init__(self, original: Callable[..., Any], around: Callable[..., Any]) -> None:
        self._original = original
        self._around = around

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._around(self._original, *args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        return getattr, (self._original.__self__, self._original.__name__)


def track_proposals(adapter: Any) -> ProposalSources:
    """Watch ``adapter`` (a sampler or searcher of this package) and tally each trial's source.

    Call it before the study or tuner runs; the returned object fills in as trials are proposed.

    Parameters
    ----------
    adapter
        A :class:`~bore_samplers.integrations.optuna.ProposerSampler` (``BORESampler``, ...)
        or a :class:`~bore_samplers.integrations.ray.ProposerSearch` (``BORESearch``, ...).

    Returns
    -------
    ProposalSources
        Trial key -> source, for the trials proposed from now on.

    Raises
    ------
    TypeError
        If ``adapter`` is neither.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import BORESampler
    >>> from bore_samplers.integrations.reporting import track_proposals
    >>> sampler = BORESampler(classifier="rf", n_startup_trials=5, seed=0)
    >>> sources = track_proposals(sampler)
    >>> study = optuna.create_study(sampler=sampler)
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=8)
    >>> sources.summary(len(study.trials))
    'proposals: 8 trials = 3 model-based + 5 start-up + 0 fallback'
    """
    proposer = getattr(adapter, "proposer", None)
    if hasattr(adapter, "sample_relative"):  # Optuna: once per trial, with the trial
        entry, key_of = "sample_relative", _optuna_trial_number
    elif hasattr(adapter, "suggest"):  # Ray Tune: once per trial, with its id
        entry, key_of = "suggest", _ray_trial_id
    else:
        entry = ""
    if not entry or proposer is None:
        raise TypeError(
            f"track_proposals needs a sampler or searcher of bore_samplers, got "
            f"{type(adapter).__name__}."
        )
    sources = ProposalSources()

    def per_trial(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        sources._set(None)
        result = original(*args, **kwargs)
        # Not asked at all: nothing was known yet (Optuna) or the user gave the point (Ray).
        sources.by_trial[key_of(args, kwargs)] = sources._get() or "start-up"
        return result

    adapter_taps = [entry]
    _tap(adapter, entry, per_trial)
    if entry == "suggest":
        # ProposerSearch.save pickles its __dict__, not itself: a tap kept there would come
        # back from Tuner.restore bound to a stale copy. Save without them; re-tap the
        # proposer that restore brings.
        def untapped(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            taps = {name: adapter.__dict__.pop(name) for name in adapter_taps}
            try:
                return original(*args, **kwargs)
            finally:
                adapter.__dict__.update(taps)

        def retapping(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            _tap_proposer(adapter.proposer, sources)
            return result

        adapter_taps += ["save", "restore"]
        _tap(adapter, "save", untapped)
        _tap(adapter, "restore", retapping)
    _tap_proposer(proposer, sources)
    return sources


def _tap(owner: Any, name: str, around: Callable[..., Any]) -> None:
    setattr(owner, name, _Tap(getattr(owner, name), around))


def _tap_proposer(proposer: Any, sources: ProposalSources) -> None:
    """Note which of the proposer's code paths each proposal takes."""

    def per_proposal(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        earlier = sources._get()  # a repeated proposal (Optuna's publish race) overrides it
        sources._set(None)
        try:
            return original(*args, **kwargs)
        except Exception:
            # The adapter keeps an earlier proposal of this trial, if there is one.
            sources._set(earlier or "fallback")
            raise

    def marking(source: str) -> Callable[..., Any]:
        def mark(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            sources._set(source)
            return original(*args, **kwargs)

        return mark

    _tap(proposer, "propose_with_record", per_proposal)
    _tap(proposer, "initial_design", marking("start-up"))
    _tap(proposer, "propose_from_model_with_record", marking("model"))
    # Called from inside the model's proposal, so it overrides "model".
    _tap(proposer, "random_fallback", marking("fallback"))


def _optuna_trial_number(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable:
    trial = kwargs["trial"] if "trial" in kwargs else args[1]  # (study, trial, search_space)
    return trial.number


def _ray_trial_id(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable:
    return kwargs["trial_id"] if "trial_id" in kwargs else args[0]
