"""Trust is an allow-list: a shared profile's variable runs nothing without a yes unless it
is known only to tune, with a value it takes harmlessly.

The names found from outside (each ran code with no prompt while trust was a deny-list)
are refused; so is any name nobody listed, and a listed name with a value it does not take.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.tuning_env import TUNING_VARIABLES, is_tuning
from tflaunch.core.store.profiles import ProfileError, ProfileStore, UntrustedProfileError
from tflaunch.core.store.trust import DATA_SETTINGS, JUDGED_SETTINGS, code_it_runs

from ..builders import tflaunch

README = Path(__file__).resolve().parents[2] / "README.md"

FOUND_FROM_OUTSIDE = {
    "OPENSSL_CONF": "/tmp/evil/openssl.cnf",  # a provider library loaded by `import hashlib`
    "PYTHONPLATLIBDIR": "evil",  # a planted standard library and .pth file
    "TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/tmp/evil/plugin.so",  # loaded at `import tensorflow`
    "CUDA_INJECTION64_PATH": "/tmp/evil/inject.so",
    "NCCL_NET_PLUGIN": "/tmp/evil/net.so",
    "OMP_TOOL_LIBRARIES": "/tmp/evil/tool.so",
}


def _foreign(tmp_path: Path, env: dict[str, str], name: str = "shared") -> str:
    lines = "".join(f'{k} = "{v}"\n' for k, v in env.items())
    path = tmp_path / f"{name}.toml"
    path.write_text(f'schema_version = 1\nname = "{name}"\n[settings]\nmodel = "sample:mlp"\n'
                    f"[settings.extra_env]\n{lines}")
    ProfileStore(profiles_dir()).import_file(path, overwrite=True)
    return name


@pytest.mark.parametrize("name", sorted(FOUND_FROM_OUTSIDE))
def test_each_variable_found_from_outside_needs_a_yes(tmp_path, name):
    store = ProfileStore(profiles_dir())
    profile = _foreign(tmp_path, {name: FOUND_FROM_OUTSIDE[name]})
    with pytest.raises(UntrustedProfileError) as refused:
        store.load_for_launch(profile)
    [line] = refused.value.code
    assert line.startswith(f"sets {name}={FOUND_FROM_OUTSIDE[name]} ("), line


def test_the_cli_refuses_before_anything_starts(tmp_path):
    _foreign(tmp_path, {"OPENSSL_CONF": "/tmp/evil/openssl.cnf"})
    refused = tflaunch("run", "--profile", "shared", "--", sys.executable, "-c", "pass")
    assert refused.returncode == 2
    assert "sets OPENSSL_CONF=/tmp/evil/openssl.cnf" in refused.stderr and "import hashlib" in refused.stderr
    assert "profiles trust shared" in refused.stderr and "Traceback" not in refused.stderr


_ENV_NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,30}", fullmatch=True).filter(lambda n: n not in TUNING_VARIABLES)


@given(name=_ENV_NAMES, value=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40))
@example(name="TFLAUNCH_ANYTHING", value="1")
@example(name="SOME_VENDOR_PLUGIN", value="/opt/x.so")
@example(name="OMP_TOOL", value="enabled")
@example(name="KERAS_BACKEND", value="jax")  # chooses which installed code loads: not only tuning
def test_a_name_nobody_listed_needs_a_yes(name, value):
    config = LaunchConfig(extra_env={name: value})
    assert any(line.startswith(f"sets {name}=") for line in code_it_runs(config))


@given(name=st.sampled_from(sorted(TUNING_VARIABLES)), path=st.from_regex(r"/[a-z]{1,8}(/[a-z.]{1,8}){0,3}",
                                                                       fullmatch=True))
def test_a_listed_name_with_a_path_for_a_value_needs_a_yes(name, path):
    assert not is_tuning(name, path)
    assert code_it_runs(LaunchConfig(extra_env={name: path}))


@pytest.mark.parametrize("name, value", [
    ("OMP_NUM_THREADS", "4"), ("OMP_NUM_THREADS", "4,2"), ("TF_CPP_VMODULE", "gpu_device=2,bfc_allocator=1"),
    ("KMP_AFFINITY", "granularity=fine,compact,1,0"), ("PYTHONHASHSEED", "0"), ("MALLOC_ARENA_MAX", "2"),
    ("TF_GPU_THREAD_MODE", "gpu_private"), ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"), ("OMP_PLACES", "{0:4}"),
])
def test_tuning_values_need_nothing(tmp_path, name, value):
    assert ProfileStore(profiles_dir()).load_for_launch(_foreign(tmp_path, {name: value}))


def test_every_setting_is_either_data_or_judged():
    fields = {f.name for f in dataclasses.fields(LaunchConfig)}
    assert not DATA_SETTINGS & JUDGED_SETTINGS
    assert fields == DATA_SETTINGS | JUDGED_SETTINGS, "put a new setting in DATA_SETTINGS or judge it in code_it_runs"


@pytest.mark.parametrize("line", ['program = ["python", "/tmp/evil.py"]', 'workdir = "/tmp/evil"'])
def test_a_profile_carrying_a_command_or_its_folder_is_refused(tmp_path, line):
    path = tmp_path / "carry.toml"
    path.write_text(f'schema_version = 1\nname = "carry"\n[settings]\nmodel = "sample:mlp"\n{line}\n')
    with pytest.raises(ProfileError, match="never carries a command"):
        ProfileStore(profiles_dir()).import_file(path)


def test_the_readme_lists_the_allow_list_with_each_reason():
    text = README.read_text()
    listed = dict(re.findall(r"^\| `([A-Z0-9_]+)` \| [^|]+ \| ([^|]+) \|$", text, re.M))
    assert set(listed) == set(TUNING_VARIABLES), "README's allow-list table and tuning_env.py differ"
    for name, tuning in TUNING_VARIABLES.items():
        assert listed[name].strip() == tuning.tunes, name
