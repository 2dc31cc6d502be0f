"""Every sample in every format through the real probe in a real child process."""

from __future__ import annotations

import pytest

from tflaunch.core.phases import PHASES
from tflaunch.core.probe.model.convert import FORMATS
from tflaunch.core.run.driver import run_probe
from tflaunch.core.run.record import PhaseState, RunStatus
from tflaunch.core.settings.config import LaunchConfig


def assert_complete(record, params=None):
    assert record.status is RunStatus.OK, record.headline + "\n" + "\n".join(record.stderr_tail)
    for name in PHASES:
        phase = record.phases[name]
        assert phase.state is PhaseState.DONE and phase.duration is not None, name
        assert phase.rss and phase.peak_rss >= phase.rss * 0.99, name
    # Time to ready is wall time: the phases plus whatever ran between them, never less.
    phases = sum(record.phases[p].duration for p in PHASES[:-1])
    assert record.time_to_ready >= phases - 1e-3
    # The union of the spans (fold.py): stretches under 0.1 ms between them are the clocks' rounding.
    assert record.other_time == pytest.approx(max(record.time_to_ready - phases, 0.0), abs=1e-3)
    assert record.environment.tensorflow and record.environment.cores  # a count: 1 or more
    assert record.samples, "the runner sampled the child's memory"
    if params is not None:
        assert record.model.params == params
    assert record.malformed_lines == 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", ["mlp", "multi"])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_small_samples_in_each_format(models, sample, fmt):
    record = run_probe(LaunchConfig(model=str(models[sample][fmt]), steady=2, batch=3))
    assert_complete(record)
    assert record.model.format == fmt and record.model.bytes_on_disk > 0
    shapes = [i.shape for i in record.model.inputs]
    assert len(shapes) == (2 if sample == "multi" else 1)
    assert record.phases["steady"].latency["n"] == 2


@pytest.mark.slow  # ~40 s with their build; the small samples cover each format in every tier
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", ["wide", "cnn"])
def test_large_samples_in_each_format(big_models, sample, fmt):
    record = run_probe(LaunchConfig(model=str(big_models[sample][fmt]), steady=1))
    assert_complete(record)
    if sample == "wide":
        assert record.model.params == 8 * (2048 * 2048 + 2048)
        assert record.model.bytes_on_disk > 100 * 2**20


@pytest.mark.parametrize("sample, params", [("mlp", 814_090), ("multi", None)])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_samples_built_from_code(sample, params):
    record = run_probe(LaunchConfig(model=f"sample:{sample}", steady=2))
    assert_complete(record, params)
    assert record.model.format == "sample" and record.model.bytes_on_disk is None
