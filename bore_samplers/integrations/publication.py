"""Proposals published in an Optuna study's storage, and duplicates between workers.

A proposal is published before its trial is evaluated, as JSON in chunked system attributes of
the trial (``<key>:0``, ``<key>:1``, ...), where the other workers read it as a pending point;
of two workers that pick the same configuration, the larger trial number proposes again
(:func:`trials_if_taken`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import optuna
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

__all__ = [
    "SYSTEM_ATTR_MAX_LENGTH",
    "holds",
    "publish",
    "read_published",
    "trials_if_taken",
]

#: Legacy RDB schemas store system attributes in String(2048); Optuna's samplers chunk likewise.
SYSTEM_ATTR_MAX_LENGTH = 2045

_READ_STATES = (
    OptunaTrialState.COMPLETE,
    OptunaTrialState.FAIL,
    OptunaTrialState.PRUNED,
    OptunaTrialState.RUNNING,
)


def publish(
    study: optuna.Study,
    trial: FrozenTrial,
    key: str,
    payload: Mapping[str, Any],
    previous_chunks: int = 0,
) -> int:
    """Store ``payload`` as JSON in the system attributes ``key:0``, ``key:1``, ... of ``trial``.

    Chunks left from a longer earlier payload (``previous_chunks``) are emptied: attributes
    cannot be deleted, and empty chunks join to the same JSON text. Returns the number of
    chunks written, emptied ones included (the ``previous_chunks`` of a republication).
    """
    text = json.dumps(dict(payload))
    chunks = [
        text[i : i + SYSTEM_ATTR_MAX_LENGTH] for i in range(0, len(text), SYSTEM_ATTR_MAX_LENGTH)
    ]
    chunks += [""] * (previous_chunks - len(chunks))
    for i, chunk in enumerate(chunks):
        study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{i}", chunk)
    return len(chunks)


def read_published(trial: FrozenTrial, key: str) -> dict[str, Any]:
    """What :func:`publish` stored under ``key``; empty if nothing (or a torn write) is there."""
    chunks, i = [], 0
    while (chunk := trial.system_attrs.get(f"{key}:{i}")) is not None:
        chunks.append(chunk)
        i += 1
    if not chunks:
        return {}
    try:
        return dict(json.loads("".join(chunks)))
    except (ValueError, TypeError):  # a torn write by a killed worker: ignore it
        return {}


def holds(trial: FrozenTrial, params: Mapping[str, Any], key: str) -> bool:
    """Whether ``trial`` has, or (running) was proposed under ``key``, the values ``params``."""
    theirs = dict(trial.params)
    if trial.state == OptunaTrialState.RUNNING:
        theirs = {**read_published(trial, key), **theirs}
    return all(name in theirs and theirs[name] == value for name, value in params.items())


def trials_if_taken(
    study: optuna.Study,
    trial: FrozenTrial,
    params: Mapping[str, Any],
    known: list[FrozenTrial],
    patience: float,
    key: str,
) -> list[FrozenTrial] | None:
    """The trials as stored now if ``trial`` must give ``params`` up, else ``None``.

    ``params`` is given up when a trial with a smaller number, or a finished one, holds it.
    When only running trials with larger numbers hold it, they give it up once they see this
    trial's proposal: wait ``patience`` seconds (about two proposals' time) for that, and give
    it up only if they do not (they compared before this trial published). Trials finished in
    ``known`` (the history of the proposal) are not compared: the proposer already avoids
    every configuration there.
    """
    # Trial ids (plain attributes): the ``number`` property costs a call per trial.
    finished = {t._trial_id for t in known if t.state != OptunaTrialState.RUNNING}
    own_id = trial._trial_id
    deadline = time.monotonic() + patience
    while True:
        # Straight from the storage: the study's thread-local snapshot may be stale.
        trials = study._storage.get_all_trials(
            study._study_id, deepcopy=False, states=_READ_STATES
        )
        holders = [
            t
            for t in trials
            if (trial_id := t._trial_id) != own_id
            and trial_id not in finished
            and holds(t, params, key)
        ]
        if not holders:
            return None
        if time.monotonic() > deadline or any(
            t.number < trial.number or t.state != OptunaTrialState.RUNNING for t in holders
        ):
            return trials
        time.sleep(0.02)
