"""The code base stays ruff-clean (ruff is part of the test extras)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_ruff_check_is_clean() -> None:
    result = subprocess.run(["ruff", "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_imports_neither_optuna_nor_ray() -> None:
    code = (
        "import sys, bore_samplers, bore_samplers.proposers;"
        "from bore_samplers.space import SearchSpace;"
        "bad = [m for m in ('optuna', 'ray', 'torch') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sampler_import_does_not_import_torch_or_ray() -> None:
    code = (
        "import sys; from bore_samplers import BORESampler;"
        "bad = [m for m in ('ray', 'torch') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_integrations_install_inside_the_package(tmp_path: Path) -> None:
    # Run outside the checkout, so that only the installed distribution is importable.
    code = (
        "import importlib.util;"
        "assert importlib.util.find_spec('integrations') is None, 'top-level integrations';"
        "import bore_samplers.integrations.optuna"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


# ------------------------------------------------------------------------------ layering
#: The core's layers, in order: a module imports only from its own layer and those before it.
LAYERS = {
    "bore_samplers.space": 1,
    "bore_samplers.observations": 1,
    "bore_samplers.multi_objective": 1,
    "bore_samplers.validation": 1,
    "bore_samplers.tune_space": 1,
    "bore_samplers.models": 2,
    "bore_samplers.acquisitions": 3,
    "bore_samplers.optimizers": 4,
    "bore_samplers.proposers": 5,
    "bore_samplers.integrations": 6,
    # An alias that imports bore_samplers.integrations.visualization inside its functions.
    "bore_samplers.visualization": 6,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_modules() -> dict[str, Path]:
    files = list((ROOT / "bore_samplers").rglob("*.py"))
    return {_module_name(path): path for path in files}


def _imports(path: Path) -> set[str]:
    """Every module named in an import statement of ``path``, function-level ones included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _layer(module: str) -> int | None:
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return None


def test_the_core_imports_no_framework() -> None:
    for module, path in _package_modules().items():
        if _layer(module) == 6:
            continue
        frameworks = {name.split(".")[0] for name in _imports(path)} & {"optuna", "ray"}
        assert not frameworks, f"{module} imports {frameworks}"


def test_each_layer_imports_only_from_itself_and_the_layers_before_it() -> None:
    modules = _package_modules()
    violations = []
    for module, path in modules.items():
        layer = _layer(module)
        if layer is None:
            continue
        for name in _imports(path):
            target = _layer(name)
            if target is not None and target > layer:
                violations.append(f"{module} (layer {layer}) imports {name} (layer {target})")
    assert not violations, "\n".join(violations)


def test_the_package_has_no_import_cycles() -> None:
    modules = _package_modules()
    graph = {
        module: {name for name in _imports(path) if name in modules and name != module}
        for module, path in modules.items()
    }
    # A package's __init__ re-exports its modules: those edges are not cycles of code.
    for module in graph:
        graph[module] = {m for m in graph[module] if not module.startswith(m + ".")}
    visiting, done, cycles = set(), set(), []

    def visit(module: str, stack: list[str]) -> None:
        visiting.add(module)
        for target in graph[module]:
            if target in visiting:
                cycles.append(" -> ".join([*stack[stack.index(target) :], target]))
            elif target not in done:
                visit(target, [*stack, target])
        visiting.discard(module)
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_docstrings_cite_papers_not_paths_outside_the_package() -> None:
    # ../shared/papers exists in no user's install: cite papers by authors, title and venue.
    offenders = [
        str(path.relative_to(ROOT))
        for path in _package_modules().values()
        if "shared/papers" in path.read_text()
    ]
    assert not offenders, offenders
