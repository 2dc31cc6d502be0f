"""LaunchConfig validation and what it hands to the probe."""

from __future__ import annotations

import json

from tflaunch.core.probe.model.samples import SAMPLES
from tflaunch.core.settings.child import probe_command
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.vocabulary import SAMPLE_MODELS


def fields_of(config: LaunchConfig) -> dict[str, str]:
    return {p.field: p.message for p in config.validate()}


def test_defaults_are_valid():
    assert LaunchConfig().validate() == []


def test_probe_and_launcher_know_the_same_samples():
    assert SAMPLE_MODELS == SAMPLES


def test_each_bad_setting_is_named_with_what_to_do(tmp_path):
    config = LaunchConfig(
        model=str(tmp_path / "missing.keras"), python=str(tmp_path / "nope" / "python"),
        intra=-1, batch=0, memory_growth=True, memory_limit_mb=512, log_level=7,
        extra_env={"1BAD": "x"}, timeout=0,
    )
    problems = fields_of(config)
    assert "does not exist" in problems["model"] and "missing.keras" in problems["model"]
    assert "interpreter" in problems["python"]
    assert "intra" in problems and "batch" in problems
    assert "memory growth" in problems["memory_limit_mb"]
    assert set(problems) >= {"log_level", "extra_env", "timeout"}


def test_model_paths_are_checked_before_launch(tmp_path):
    folder = tmp_path / "empty_model"
    folder.mkdir()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    fake = tmp_path / "fake.keras"
    fake.write_bytes(b"PK\x03\x04 truncated")
    assert "no saved_model.pb" in fields_of(LaunchConfig(model=str(folder)))["model"]
    assert "not a model tflaunch can load" in fields_of(LaunchConfig(model=str(text)))["model"]
    assert "truncated or corrupt" in fields_of(LaunchConfig(model=str(fake)))["model"]
    assert "sample:mlp" in fields_of(LaunchConfig(model="sample:nope"))["model"]


def test_probe_config_round_trips_through_json():
    config = LaunchConfig(visible_gpus=(0, 2), extra_env={"A": "1"}, intra=2)
    sent = json.loads(probe_command(config)[-1])
    assert sent["visible_gpus"] == [0, 2] and sent["intra"] == 2 and "python" not in sent
    assert LaunchConfig.from_dict(config.to_dict()) == config
    assert LaunchConfig.from_dict({**config.to_dict(), "future_setting": 1}) == config


def test_summary_lists_only_changed_settings():
    assert LaunchConfig().summary() == "defaults"
    assert LaunchConfig(intra=2, xla_auto=True).summary() == "intra=2 xla_auto=on"
