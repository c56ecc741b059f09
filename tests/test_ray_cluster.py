"""Our Ray searchers on a local multi-process Ray cluster: `ray start --head` and a second node.

The cluster is started as the README's "Scaling out" section says: ``ray start --head``, then
``ray start --address=...`` for a worker node, here both on this machine with one CPU each,
so that two concurrent trials must run on different nodes. The Tune script
(:data:`DRIVER`) runs in its own process with ``ray.init(address="auto")`` and
``RAY_ADDRESS``, as a user's script would; nothing of Ray is started in the pytest process.

Isolation from other Ray instances on the machine: the nodes get their own ``--temp-dir``
(so ``ray.init()`` elsewhere does not find this cluster) and their own token
(``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``: Ray >= 2.5x authenticates cluster connections,
and a joining node must present the head's token). Each node runs with ``--block`` and is
stopped by signalling the ``ray start`` process this module started: what ``ray stop`` does,
without stopping every other Ray process on the machine as ``ray stop`` would.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

# A hang guard, not a speed check: generous, so that a busy machine never trips it.
HANG_GUARD_S = 600

DRIVER = '''
"""A Ray Tune script for a running cluster: our searcher proposes, the nodes evaluate."""
import json
import sys
import time
import warnings

import ray
from ray import tune

from bore_samplers.integrations import ray as searchers
from bore_samplers.proposers.base import ModelFallbackWarning

HANG_GUARD_S = 600  # a hang guard, not a speed check


def quadratic(config):
    time.sleep(0.5)  # long enough for two trials to run at once, one per node
    loss = (config["x"] - 0.25) ** 2 + (config["y"] - 0.75) ** 2
    tune.report({"loss": loss, "node": ray.get_runtime_context().get_node_id()})


ray.init(address="auto", logging_level="ERROR", log_to_driver=False)  # RAY_ADDRESS
deadline = time.monotonic() + HANG_GUARD_S
while sum(node["Alive"] for node in ray.nodes()) < 2 and time.monotonic() < deadline:
    time.sleep(0.2)  # the worker node may still be joining
searcher = getattr(searchers, sys.argv[3])(n_startup_trials=4, seed=0)
tuner = tune.Tuner(
    quadratic,
    param_space={"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0)},
    tune_config=tune.TuneConfig(
        search_alg=searcher, metric="loss", mode="min", num_samples=10, max_concurrent_trials=2
    ),
    run_config=tune.RunConfig(storage_path=sys.argv[1], name="cluster", verbose=0),
)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ModelFallbackWarning)
    results = tuner.fit()
observations = list(searcher.observations.values())  # in the order of suggestion
with open(sys.argv[2], "w") as out:
    json.dump(
        {
            "alive_nodes": sum(node["Alive"] for node in ray.nodes()),
            "errors": results.num_errors,
            "nodes": sorted({r.metrics["node"] for r in results}),
            "states": [o.state.name for o in observations],
            "params": [[o.params["x"], o.params["y"]] for o in observations],
            "values": [o.value for o in observations],
            "fallbacks": [str(w.message) for w in caught if w.category is ModelFallbackWarning],
        },
        out,
    )
'''


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_cli() -> str:
    return shutil.which("ray") or str(Path(sys.executable).with_name("ray"))


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # `ray start --block` then stops its node
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the session started for this node
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A head node and a worker node (1 CPU each) on this machine; yields the driver's env."""
    logs = tmp_path_factory.mktemp("ray-logs")
    # Short: Ray's Unix socket paths under it must fit in 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    address = f"127.0.0.1:{_free_port()}"
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_AIR_NEW_OUTPUT": "0",
        "OMP_NUM_THREADS": "1",
    }
    common = ["--num-cpus=1", "--block", f"--temp-dir={temp_dir}", "--disable-usage-stats"]
    nodes: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> None:
        with open(logs / f"{name}.log", "wb") as log:
            nodes.append(
                subprocess.Popen(
                    [_ray_cli(), "start", *args, "--node-ip-address=127.0.0.1", *common],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # its processes are told apart from all others
                )
            )

    try:
        start("head", "--head", f"--port={address.split(':')[1]}", "--include-dashboard=false")
        deadline = time.monotonic() + HANG_GUARD_S
        while not Path(temp_dir, "ray_current_cluster").exists():  # written once it is up
            if nodes[0].poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the head node did not start:\n{(logs / 'head.log').read_text()}")
            time.sleep(0.2)
        start("worker", f"--address={address}")
        yield {**env, "RAY_ADDRESS": address}
        for name, node in zip(("head", "worker"), nodes, strict=True):
            assert node.poll() is None, (
                f"the {name} node died:\n{(logs / f'{name}.log').read_text()}"
            )
    finally:
        for node in reversed(nodes):
            _stop(node)
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.parametrize("searcher", ["BORESearch", "CMESSearch", "PortfolioSearch"])
def test_searcher_tunes_on_a_two_node_cluster(
    searcher: str, ray_cluster: dict[str, str], tmp_path: Path
) -> None:
    script, out = tmp_path / "tune_on_cluster.py", tmp_path / "result.json"
    script.write_text(DRIVER)
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "results"), str(out), searcher],
        env=ray_cluster,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["alive_nodes"] == 2
    assert result["errors"] == 0 and result["fallbacks"] == []
    assert len(result["nodes"]) == 2  # both nodes ran trials
    assert result["states"] == ["COMPLETE"] * 10
    assert len({tuple(p) for p in result["params"]}) == 10  # ten different configurations
    # Suggestion order: 4 startup points, then 6 model proposals, better than the start.
    values = result["values"]
    assert min(values[4:]) < sum(values[:4]) / 4
