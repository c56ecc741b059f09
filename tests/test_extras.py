"""What the base install holds, and what the extras add.

Install hints name the package to install (``pip install xgboost``), which works however
bore-samplers itself was installed; ``bore-samplers[...]`` would need the package on an index.

xgboost is the ``xgboost`` extra: without it, the default samplers work and asking for
``classifier="xgboost"`` fails when the sampler is built, naming the extra. Its absence is
simulated by ``sys.modules["xgboost"] = None``, which makes ``import xgboost`` raise
ImportError as it does where xgboost is not installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bore_samplers import BOREProposer, FloatParam, Observation, SearchSpace
from bore_samplers.models.classifiers import make_classifier

ROOT = Path(__file__).resolve().parents[1]
EXTRA = "pip install xgboost"


@pytest.fixture
def without_xgboost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xgboost", None)


@pytest.mark.usefixtures("without_xgboost")
def test_bore_sampler_with_xgboost_names_the_extra_when_it_is_missing() -> None:
    from bore_samplers import BORESampler

    with pytest.raises(ImportError, match="pip install xgboost") as info:
        BORESampler(classifier="xgboost")
    assert EXTRA in str(info.value)
    with pytest.raises(ImportError, match="pip install xgboost"):
        BOREProposer(classifier="xgboost").validate()
    with pytest.raises(ImportError, match="pip install xgboost"):
        make_classifier("xgboost").fit(np.zeros((4, 1)), np.array([0, 1, 0, 1]), seed=0)


@pytest.mark.usefixtures("without_xgboost")
def test_the_default_samplers_need_no_xgboost() -> None:
    from bore_samplers import BORESampler, CMESSampler, PortfolioSampler

    for sampler in (BORESampler, CMESSampler, PortfolioSampler):
        sampler(seed=0)
    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    proposer = BOREProposer(n_startup=3, seed=0)  # the default classifier: a random forest
    proposer.validate()
    observations = [
        Observation(params={"x": float(x)}, value=float((x - 0.3) ** 2))
        for x in np.linspace(0.0, 1.0, 6)
    ]
    params = proposer.propose(space, observations)
    assert 0.0 <= params["x"] <= 1.0
    assert sys.modules["xgboost"] is None  # nothing imported it behind the fixture's back


def test_quickstart_imports_no_xgboost() -> None:
    code = (
        "import sys, runpy; sys.modules['xgboost'] = None;"
        f"runpy.run_path({str(ROOT / 'examples' / 'quickstart.py')!r}, run_name='not_main')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_package_ships_its_type_hints() -> None:
    assert (ROOT / "bore_samplers" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"bore_samplers" = ["py.typed"]' in pyproject


def test_install_hints_name_installable_packages() -> None:
    # "pip install bore-samplers[...]" fails: the package is on no index.
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "bore_samplers").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "bore-samplers[" in line
    ]
    assert not offenders, offenders
