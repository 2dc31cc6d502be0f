"""A profile keeps what its subject reads: a program's no model (applying the Advisor's
profile for a program switched the subject to sample:mlp, which the file stored), a model's
no command line; an older file still reads, its subject told by its evidence."""

from __future__ import annotations

import tomllib

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profile_subject import applied_to, measured_on
from tflaunch.core.store.profiles import Profile, evidence_from_runs
from tflaunch.core.subject import Subject

from .builders import finished_record

PROGRAM = LaunchConfig(program=("python", "train.py", "--steps", "40"), workdir="/work", until="exit", intra=2)


def _program_run():
    record = finished_record()
    record.config = PROGRAM
    return record


def test_a_programs_profile_keeps_no_model_and_no_command_line():
    for profile in (Profile("from-runs", PROGRAM, evidence_from_runs([_program_run()])),
                    # The Advisor's warm profile: the command line taken out of its config.
                    Profile("advisor", PROGRAM.replace(program=(), workdir=""), {"runs": 0}, subject=Subject.PROGRAM)):
        data = tomllib.loads(profile.to_toml())
        assert data["subject"] == "program", profile.name
        assert not {"model", "batch", "call", "jit_compile", "program", "workdir", "until"} & set(data["settings"])
        assert data["settings"]["intra"] == 2
        read = Profile.from_toml(profile.to_toml(), "test")
        assert read.subject_type is Subject.PROGRAM
    assert measured_on(Profile.from_toml(Profile("r", PROGRAM, evidence_from_runs([_program_run()])).to_toml(),
                                         "t")) == "python train.py --steps 40"


def test_a_models_profile_keeps_its_model_and_no_command_line():
    profile = Profile("m", LaunchConfig(model="sample:cnn", batch=8, jit_compile=True, until="exit"),
                      evidence_from_runs([finished_record(model="sample:cnn")]))
    data = tomllib.loads(profile.to_toml())
    assert data["subject"] == "model" and data["settings"]["model"] == "sample:cnn" and data["settings"]["batch"] == 8
    assert not {"program", "workdir", "until"} & set(data["settings"])
    assert measured_on(profile) == "sample:cnn"


def test_an_older_programs_profile_still_reads_and_applies_without_its_model():
    """Written before `subject`: model = "sample:mlp" in its settings, the command in its evidence."""
    old = """schema_version = 1
name = "old"
created = "2025-01-01T00:00:00+0000"

[settings]
model = "sample:mlp"
intra = 4

[evidence]
program = ["python", "serve.py"]
runs = 3
"""
    profile = Profile.from_toml(old, "old.toml")
    assert profile.subject is None and profile.subject_type is Subject.PROGRAM
    assert measured_on(profile) == "python serve.py"
    form = LaunchConfig(program=("python", "mine.py"), model="my.keras", until="first_inference")
    applied = applied_to(profile.config, profile.subject_type, form)
    assert applied.program == ("python", "mine.py") and applied.until == "first_inference"
    assert applied.model == "my.keras" and applied.intra == 4, "the subject and its command line stay"


def test_a_models_profile_applied_makes_the_model_the_subject():
    profile = Profile("m", LaunchConfig(model="sample:cnn", intra=2))
    applied = applied_to(profile.config, profile.subject_type, PROGRAM)
    assert applied.model == "sample:cnn" and applied.program == () and applied.intra == 2
