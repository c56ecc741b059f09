"""Ray Tune search spaces translated into the core's :class:`~bore_samplers.SearchSpace`.

:func:`search_space_from_tune` reads Ray's ``Domain`` objects; the translation itself (bounds,
codecs, nested configs) is framework-free, in :mod:`bore_samplers.tune_space`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.tune.search.sample import (
    Categorical,
    Domain,
    Float,
    Integer,
    LogUniform,
    Quantized,
    Uniform,
)

from bore_samplers.space import SearchSpace
from bore_samplers.tune_space import (
    DELIMITER,
    TuneParam,
    TuneSearchSpace,
    choice_param,
    float_param,
    int_param,
)

__all__ = ["TuneParam", "TuneSearchSpace", "search_space_from_tune"]


def search_space_from_tune(config: Mapping[str, Any]) -> TuneSearchSpace:
    """Translate a Tune ``param_space`` into a core :class:`SearchSpace`.

    Nested dicts are flattened to ``"a/b"`` names; everything that is not a domain is a
    constant, passed through to every suggested configuration. Each domain becomes what
    :mod:`bore_samplers.tune_space` lists; a ``ValueError`` names the key of an unsupported or
    empty domain (``grid_search``, ``sample_from``, ``randn``, ``{"eval": ...}``, a domain
    inside a list), of a name two paths flatten to, or says there is no domain at all.
    """
    params: dict[str, TuneParam] = {}
    paths: dict[str, tuple[Any, ...]] = {}
    constants: dict[tuple[Any, ...], Any] = {}
    for path, value in _walk(config, ()):
        name = DELIMITER.join(map(str, path))
        if isinstance(value, Domain):
            if name in paths:
                raise ValueError(f"Two parameters flatten to the same name {name!r}.")
            params[name] = _convert_domain(name, value)
            paths[name] = path
        else:
            constants[path] = value
    if not params:
        raise ValueError(
            "The search space has no Tune domain to search (tune.uniform, tune.choice, ...); "
            f"got {dict(config)!r}."
        )
    space = SearchSpace({name: p.param for name, p in params.items()})
    return TuneSearchSpace(space, params, paths, constants)


def _walk(node: Mapping[str, Any], prefix: tuple[Any, ...]) -> list[tuple[tuple, Any]]:
    """(path, leaf) pairs of a nested config; domains and constants are leaves."""
    leaves: list[tuple[tuple, Any]] = []
    for key, value in node.items():
        path = (*prefix, key)
        name = DELIMITER.join(map(str, path))
        if isinstance(value, Mapping) and set(value) == {"grid_search"}:
            raise ValueError(
                f"Parameter {name!r} is a grid_search, which a model-based searcher cannot "
                "follow; use tune.choice(...) instead."
            )
        if isinstance(value, Mapping) and set(value) == {"eval"}:
            raise ValueError(f"Parameter {name!r} uses the 'eval' syntax; it is not supported.")
        if isinstance(value, Mapping) and value:
            leaves.extend(_walk(value, path))
        else:
            if isinstance(value, list | tuple) and _contains_domain(value):
                raise ValueError(
                    f"Parameter {name!r} is a list with Tune domains inside; put them in a dict "
                    "instead (a model-based searcher needs named parameters)."
                )
            leaves.append((path, value))
    return leaves


def _contains_domain(value: Any) -> bool:
    if isinstance(value, Domain):
        return True
    if isinstance(value, Mapping):
        return any(_contains_domain(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_contains_domain(v) for v in value)
    return False


def _convert_domain(name: str, domain: Domain) -> TuneParam:
    sampler = domain.get_sampler()
    q: float | None = None
    if isinstance(sampler, Quantized):
        q, sampler = sampler.q, sampler.get_sampler()
    try:
        if isinstance(domain, Categorical) and isinstance(sampler, Uniform) and q is None:
            return choice_param(domain.categories)
        if isinstance(domain, Float) and isinstance(sampler, Uniform | LogUniform):
            return float_param(domain.lower, domain.upper, isinstance(sampler, LogUniform), q)
        if isinstance(domain, Integer) and isinstance(sampler, Uniform | LogUniform):
            return int_param(domain.lower, domain.upper, isinstance(sampler, LogUniform), q)
    except ValueError as error:
        raise ValueError(f"Parameter {name!r} ({_describe(domain)}): {error}") from error
    raise ValueError(
        f"Parameter {name!r} has an unsupported Tune domain {_describe(domain)}; use uniform, "
        "loguniform, quniform, qloguniform, randint, lograndint, qrandint, qlograndint or "
        "choice (sample_from, randn, qrandn and grid search cannot be modelled)."
    )


def _describe(domain: Domain) -> str:
    sampler = domain.sampler if domain.sampler is not None else "default sampler"
    return f"{type(domain).__name__} {domain.domain_str} with {sampler}"
