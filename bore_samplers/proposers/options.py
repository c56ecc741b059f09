"""The constructor surface every named sampler and searcher shares.

A named adapter (``BORESampler``, ``CMESSearch``, ...) lists each option of its proposer as an
explicit keyword argument, so that ``inspect.signature`` and IDEs show them, but each option is
documented once, on the proposer: :func:`public_options` copies the proposer's numpydoc
*Parameters* entries into the adapter's docstring (those the adapter does not document
itself), and makes a misspelt keyword a ``TypeError`` that names the adapter and suggests the
nearest option. :func:`proposer_options` hands the adapter's arguments on to the proposer.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from bore_samplers.validation import check_int, check_seed, unexpected_option

__all__ = [
    "OUTCOME_THRESHOLD",
    "RENAMED",
    "named_init",
    "parameter_entries",
    "proposer_options",
    "public_options",
]

ClassT = TypeVar("ClassT", bound=type)

#: Proposer option -> its name on the adapters (Optuna's ``n_startup_trials``).
RENAMED = {"n_startup": "n_startup_trials"}

#: The binary-outcome adapters' own option (how to read a metric that is not 0 or 1).
OUTCOME_THRESHOLD = inspect.Parameter(
    "outcome_threshold", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="float | None"
)

_KEYWORDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _keyword_names(function: Callable[..., Any]) -> list[str]:
    parameters = inspect.signature(function).parameters.values()
    return [p.name for p in parameters if p.kind in _KEYWORDS and p.name != "self"]


def _parameters_section(lines: list[str]) -> tuple[int, int] | None:
    """First and past-the-last line of the entries of the *Parameters* section, if any."""
    for i in range(len(lines) - 1):
        if lines[i] == "Parameters" and set(lines[i + 1]) == {"-"}:
            end = i + 2
            while end < len(lines) and not (
                end + 1 < len(lines)
                and lines[end]
                and not lines[end][0].isspace()
                and set(lines[end + 1]) == {"-"}
                and len(lines[end + 1]) >= 3
            ):
                end += 1
            while end > i + 2 and not lines[end - 1].strip():  # the blank line before a header
                end -= 1
            return i + 2, end
    return None


def parameter_entries(doc: str | None) -> list[tuple[list[str], list[str]]]:
    """The entries of a numpydoc *Parameters* section: ``(names, lines)`` each.

    ``names`` are those of the entry's first line (``"a, b"`` documents two options); ``lines``
    the entry, first line included, without the docstring's indentation.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    section = _parameters_section(lines)
    if section is None:
        return []
    entries: list[tuple[list[str], list[str]]] = []
    for line in lines[section[0] : section[1]]:
        if line and not line[0].isspace():
            names = [name.split(":")[0].strip() for name in line.split(",")]
            entries.append((names, [line]))
        elif entries:
            entries[-1][1].append(line)
    return entries


def _with_options(doc: str | None, proposer: type, rename: Mapping[str, str]) -> str:
    """``doc`` with the proposer's entries it lacks appended to its *Parameters* section."""
    lines = inspect.cleandoc(doc or "").splitlines()
    section = _parameters_section(lines)
    if section is None:
        raise ValueError("The adapter's docstring has no Parameters section.")
    documented = {name for names, _ in parameter_entries(doc) for name in names}
    added: list[str] = []
    for names, entry in parameter_entries(proposer.__doc__):
        public = [rename.get(name, name) for name in names]
        if set(public) <= documented:
            continue
        head = ", ".join(public)
        added += [head, *entry[1:]]
    return "\n".join([*lines[: section[1]], *added, *lines[section[1] :]])


def named_init(
    proposer: type, base_init: Callable[..., None], own: Sequence[inspect.Parameter] = ()
) -> Callable[..., None]:
    """The ``__init__`` of a named adapter over ``proposer``, generated from the signatures.

    Its signature (what ``inspect.signature``, ``help()`` and IDEs that read it show) is the
    base adapter's (``base_init``, less its ``proposer``), then ``own`` options of the named
    adapter, then every option of ``proposer`` with its default (renamed by :data:`RENAMED`),
    all after the base's positional ones keyword-only. It builds the proposer from its
    options, hands ``own`` ones to the adapter's ``_own_options`` first, and the rest to
    ``base_init``.
    """
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    base = list(inspect.signature(inspect.unwrap(base_init)).parameters.values())
    self_param, base = base[0], [p for p in base[1:] if p.name != "proposer"]
    positional = [p for p in base if p.kind is not keyword_only]
    options = [
        p.replace(name=RENAMED.get(p.name, p.name), kind=keyword_only)
        for p in inspect.signature(proposer).parameters.values()
    ]
    keywords = [*own, *options, *(p for p in base if p.kind is keyword_only)]
    signature = inspect.Signature([self_param, *positional, *keywords], return_annotation=None)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = {name: value for name, value in bound.arguments.items() if name != "self"}
        if own:
            self._own_options(**{p.name: arguments[p.name] for p in own})
        made = proposer(**proposer_options(proposer, arguments))
        base_init(self, made, **{p.name: arguments[p.name] for p in base})

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__


def public_options(
    proposer: type | None = None,
    *,
    rename: Mapping[str, str] = RENAMED,
    own: Sequence[inspect.Parameter] = (),
) -> Callable[[ClassT], ClassT]:
    """Class decorator of a public adapter: option docs from ``proposer``, checked keywords.

    * The docstring gets every *Parameters* entry of ``proposer`` that it does not document
      itself (names translated by ``rename``), so ``help()`` shows each option once written.
    * A class that defines no ``__init__`` of its own gets :func:`named_init` over
      ``proposer`` and its base class (with the adapter's ``own`` options).
    * ``__init__`` raises ``TypeError("<Class>() got an unexpected keyword argument 'gama';
      did you mean 'gamma'?")`` for an unknown keyword (Python's own message suggests
      nothing); ``inspect.signature`` still shows the real parameters (``functools.wraps``).
    """

    def decorate(cls: ClassT) -> ClassT:
        if proposer is not None:
            cls.__doc__ = _with_options(cls.__doc__, proposer, rename)
            if "__init__" not in cls.__dict__:
                cls.__init__ = named_init(proposer, cls.__mro__[1].__init__, own)  # type: ignore[misc]
        init = cls.__init__
        names = frozenset(_keyword_names(init))

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            for name in kwargs:
                if name not in names:
                    raise unexpected_option(type(self).__name__, name, names)
            init(self, *args, **kwargs)

        cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return decorate


def proposer_options(
    proposer: type, arguments: Mapping[str, Any], rename: Mapping[str, str] = RENAMED
) -> dict[str, Any]:
    """The keyword arguments of ``proposer`` taken from an adapter's ``arguments``.

    ``arguments`` are the adapter's constructor arguments by public name (its ``locals()``);
    renamed options are checked here under their public names (``n_startup_trials``), so that
    a message never names an option the user did not type. ``seed`` is checked here too, as
    the adapter also seeds its own fallback sampler with it.
    """
    options = {}
    for name in _keyword_names(proposer.__init__):
        public = rename.get(name, name)
        if public in arguments:
            options[name] = arguments[public]
    if "n_startup_trials" in arguments:
        check_int("n_startup_trials", arguments["n_startup_trials"], minimum=0)
    if "seed" in arguments:
        check_seed("seed", arguments["seed"])
    return options
