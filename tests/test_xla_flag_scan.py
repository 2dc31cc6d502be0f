"""The flag names a TensorFlow library holds, read as bytes (core/probe/xla_flags.py): the
TF_XLA_FLAGS names (tf_xla_*) and the XLA_FLAGS names (xla_*), never the end of a tf_xla_
name taken for an XLA_FLAGS one, across the boundary of two chunks too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tflaunch.core.probe import xla_flags


def test_each_kind_of_name_is_found_and_no_tail_of_one_is_taken_for_the_other(tmp_path: Path) -> None:
    library = tmp_path / "libtensorflow_framework.so.2"
    library.write_bytes(b"\x00tf_xla_auto_jit\x00--xla_gpu_autotune_level\x00junk tf_xla_persistent_cache_directory\x00"
                        b"xla_dump_to=\x00")
    assert xla_flags._scan(str(library)) == {"tf_xla_auto_jit", "xla_gpu_autotune_level",
                                             "tf_xla_persistent_cache_directory", "xla_dump_to"}


def test_a_name_across_two_chunks_is_found_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xla_flags, "_CHUNK", 16)
    library = tmp_path / "libtensorflow_cc.so.2"
    library.write_bytes(b"\x00" * 10 + b"tf_xla_enable_lazy_compilation\x00" + b"\x00" * 5
                        + b"xla_cpu_use_thunk_runtime\x00")
    assert xla_flags._scan(str(library)) >= {"tf_xla_enable_lazy_compilation", "xla_cpu_use_thunk_runtime"}
    assert "xla_enable_lazy_compilation" not in xla_flags._scan(str(library))
