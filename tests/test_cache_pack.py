"""The cache pack without TensorFlow: its key, the variables it sets, the guard that keeps a
bad pack from costing more than the cache, and the lines that count its hits."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from tflaunch.core.run.anatomy import checked_anatomy
from tflaunch.core.run.pack_facts import PackContents, PackFacts
from tflaunch.core.run.pack_hits import PackHits, anatomy_sentence, pack_sentence
from tflaunch.core.settings import cache_pack, caches
from tflaunch.core.settings.child import child_environment, xla_flag_set
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.vocabulary import AUTO_JIT_FLAGS
from tflaunch.core.store.rows import _cache_pack

CPU = caches.Stack("/venv/bin/python", "2.21.0", None, (), "cpu")
GPU = caches.Stack("/venv/bin/python", "2.21.0", "570.86", ("NVIDIA H100 80GB HBM3",), "cuda 12.5.1 cudnn 9",
                   ("9.0",))
# TensorFlow 2.21's own lines (device_executable_persistor=1), as a run on this machine logged them.
LOOKUP = ("I0000 00:00:1795824335.440077    6459 device_executable_persistor.h:360] Try loading serialized cache "
          "entry:__inference_step_34[_XlaMustCompile=true],float [32,64] time: 451 us")
HIT = ("I0000 00:00:1795824335.440151    6459 device_executable_persistor.h:371] Loading cached entry for: "
       "__inference_step_34[_XlaMustCompile=true],float [32,64],float [64,64]")
SAVED = ("I0000 00:00:1795824344.405439    6727 device_executable_persistor.h:392] Serializing and saving cache "
         "entry: __inference_step_34[_XlaMustCompile=true],float [32,64] time: 1.74 ms")


def field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (payloads under 128 bytes)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


ENTRY = field(1, b"key") + field(2, b"hlo module") + field(3, b"x" * 100)


def env(stack: caches.Stack | None, base: dict[str, str] | None = None, **settings) -> dict[str, str]:
    return child_environment(LaunchConfig(**settings), base or {}, stack=stack)


def filled(stack: caches.Stack, name: str = "xla_compile_cache__1__2__XLA_CPU_JIT.pb") -> Path:
    assert caches.prepare(None, True, stack) == []
    entry = caches.warm_folder("xla", stack) / name
    entry.write_bytes(ENTRY)
    cache_pack.record_run(caches.pack_folder(stack), 0, 1)
    return entry


# -- the key: one pack per stack and flag set -----------------------------------------------
def test_the_xla_flag_set_is_part_of_the_key_and_the_cache_locations_are_not():
    plain = xla_flag_set(LaunchConfig(), {})
    auto = xla_flag_set(LaunchConfig(xla_auto=True), {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"})
    assert plain == () and auto == (*sorted(AUTO_JIT_FLAGS), "--xla_cpu_enable_fast_math=false")
    assert CPU.with_flags(auto).key != CPU.key
    located = CPU.with_flags((*auto, "--tf_xla_persistent_cache_directory=/x", caches.AUTOTUNE_DIR_FLAG + "=/y"))
    assert located.key == CPU.with_flags(auto).key
    assert "XLA flags none → --tf_xla_auto_jit=2" in CPU.with_flags(("--tf_xla_auto_jit=2",)).changes_from(
        CPU.to_dict())


def test_a_gpu_pack_is_keyed_by_compute_capability_and_build():
    other_card = caches.Stack(GPU.python, GPU.tensorflow, GPU.driver, GPU.gpus, GPU.build, ("8.0",))
    other_build = caches.Stack(GPU.python, GPU.tensorflow, GPU.driver, GPU.gpus, "cuda 12.3 cudnn 8", ("9.0",))
    assert len({GPU.key, other_card.key, other_build.key}) == 3
    assert other_card.changes_from(GPU.to_dict()) == ["compute capabilities 9.0 → 8.0"]


# -- the variables: one meaning each, joined to the user's own ---------------------------------
def test_the_pack_sets_the_xla_cache_and_its_hit_log_beside_the_users_modules():
    got = env(CPU, {"TF_CPP_VMODULE": "dump_mlir_util=1"}, xla_cache=True)
    assert got["TF_XLA_FLAGS"] == f"{caches.XLA_CACHE_FLAG}={caches.warm_folder('xla', CPU)}"
    assert got["TF_CPP_VMODULE"] == "dump_mlir_util=1,device_executable_persistor=1"
    assert "XLA_FLAGS" not in got  # the autotune cache is XLA's GPU autotuner's: none on a CPU
    assert env(CPU, {"TF_CPP_VMODULE": "device_executable_persistor=2"}, xla_cache=True)["TF_CPP_VMODULE"] \
        == "device_executable_persistor=2"


def test_on_a_gpu_the_pack_holds_the_autotune_cache_with_the_mode_tensorflow_accepts():
    flags = env(GPU, {"XLA_FLAGS": "--xla_gpu_autotune_level=4"}, xla_cache=True)["XLA_FLAGS"].split()
    assert flags == ["--xla_gpu_autotune_level=4", f"{caches.AUTOTUNE_DIR_FLAG}={caches.warm_folder('autotune', GPU)}",
                     f"{caches.AUTOTUNE_MODE_FLAG}=AUTOTUNE_CACHE_MODE_UPDATE"]  # "update" aborts TensorFlow 2.21


def test_a_disk_almost_full_reads_the_pack_without_filling_it(monkeypatch: pytest.MonkeyPatch):
    filled(GPU)
    monkeypatch.setattr(cache_pack, "MIN_FREE_BYTES", 1 << 62)  # more than any disk has free
    got = env(GPU, xla_cache=True)
    assert caches.XLA_READ_ONLY_FLAG in got["TF_XLA_FLAGS"].split()
    assert got["XLA_FLAGS"].endswith("=AUTOTUNE_CACHE_MODE_READ")
    notes = caches.prepare(None, True, GPU)
    assert len(notes) == 1 and "read-only for this run" in notes[0] and "almost full" not in notes[0]


def test_an_empty_pack_on_a_full_disk_is_read_only_so_the_run_starts_cold(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cache_pack, "MIN_FREE_BYTES", 1 << 62)
    # TensorFlow failed a program whose new entry did not fit (ResourceExhaustedError): read-only, it only looks.
    assert caches.XLA_READ_ONLY_FLAG in env(CPU, xla_cache=True)["TF_XLA_FLAGS"].split()


# -- the guard: damage costs only the cache ---------------------------------------------------
def test_a_whole_entry_parses_and_a_cut_one_does_not():
    assert cache_pack.entry_is_whole(ENTRY)
    assert not any(cache_pack.entry_is_whole(ENTRY[:n]) for n in range(1, len(ENTRY)))
    assert not cache_pack.entry_is_whole(field(1, b"key") + field(2, b"no executable"))
    assert not cache_pack.entry_is_whole(b"\x08\x01" + ENTRY)  # a varint field: not this message


def test_a_cut_entry_and_an_unfinished_write_are_removed_before_the_start():
    entry = filled(CPU)
    kept = filled(CPU, "xla_compile_cache__3__4__XLA_CPU_JIT.pb")
    entry.write_bytes(ENTRY[:-10])
    unfinished = entry.with_name(entry.name + "vm-f8fb542a-7299.tmp")
    unfinished.write_bytes(b"x" * 10)
    under_way = entry.with_name(entry.name + "vm-0123-7300.tmp")  # another node's write, seconds old
    under_way.write_bytes(b"x" * 10)
    hour_ago = time.time() - cache_pack.LEFTOVER_AGE_S - 1
    os.utime(unfinished, (hour_ago, hour_ago))
    notes = caches.prepare(None, True, CPU)
    assert not entry.exists() and not unfinished.exists() and kept.read_bytes() == ENTRY and under_way.exists()
    assert len(notes) == 2 and any(f"damaged XLA cache entry {entry.name}" in n for n in notes)
    assert entry.name not in cache_pack.read_meta(caches.pack_folder(CPU))["entries"]


def test_an_entry_as_its_run_left_it_is_not_read_again():
    entry = filled(CPU)
    meta = cache_pack.read_meta(caches.pack_folder(CPU))
    assert cache_pack.damaged(caches.pack_folder(CPU), meta) == []
    entry.write_bytes(b"\xff" * len(ENTRY))  # same size, new time: read, and found damaged
    assert cache_pack.damaged(caches.pack_folder(CPU), meta) == [entry.name]


def test_nothing_is_written_outside_the_pack(tmp_path: Path):
    outside = {p for p in caches.packs_root().parent.rglob("*")} if caches.packs_root().parent.exists() else set()
    entry = filled(CPU)
    entry.write_bytes(ENTRY[:5])
    caches.prepare(None, True, CPU)
    cache_pack.mark_unread(caches.pack_folder(CPU))
    cache_pack.record_run(caches.pack_folder(CPU), 0, 0)
    new = {p for p in caches.packs_root().parent.rglob("*")} - outside
    assert new and all(caches.pack_folder(CPU) in p.parents or p in (caches.pack_folder(CPU), caches.packs_root())
                       for p in new)


def test_a_damaged_pack_json_is_made_again_without_losing_the_entries():
    entry = filled(CPU)
    (caches.pack_folder(CPU) / cache_pack.META).write_text("{not json", encoding="utf-8")
    assert caches.prepare(None, True, CPU) == [] and entry.exists()
    assert cache_pack.read_meta(caches.pack_folder(CPU))["key"] == CPU.to_dict()


# -- hits and misses: TensorFlow's lines, else the files --------------------------------------
def test_hits_and_misses_from_tensorflow_s_lines():
    hits = PackHits("/p", before={"entries": 1}, after={"entries": 2})
    for line in (LOOKUP, HIT, LOOKUP, SAVED, "I0000 other.cc:1] Loading cached entry for: not ours"):
        hits.feed(line)
    assert (hits.found, hits.misses, len(hits.lines)) == (1, 1, 4)
    silent = PackHits("/p", before={"entries": 1}, after={"entries": 3}, read=1)
    assert (silent.found, silent.misses) == (1, 2)  # read times and entries added
    assert PackHits("/p", before={"entries": 1}, after={"entries": 1}).to_dict()["hits"] is None


def test_the_summary_sentence_says_what_the_pack_held_and_gave():
    facts = PackHits("/p", before={"entries": 1}, after={"entries": 1})
    facts.feed(LOOKUP)
    facts.feed(HIT)
    assert pack_sentence(facts.facts()) == ("Cache pack: held 1 XLA programs before the run and 1 after; 1 hit "
                                              "(compile skipped), 0 misses.")
    nothing = pack_sentence(PackHits("/p", read=0, before={"entries": 0}, after={"entries": 0}).facts())
    assert nothing is not None and "compiled nothing with XLA" in nothing
    assert pack_sentence(None) is None and pack_sentence(PackFacts({"hits": 1})) is None


def test_the_anatomy_names_the_parts_a_hit_removed():
    anatomy = checked_anatomy({"window": 1.0, "parts": [{"part": "xla", "seconds": 0.012},
                                                         {"part": "execution", "seconds": 0.5}], "not_attributed": 0})
    hit = PackFacts({"folder": "/p", "hits": 1, "misses": 0})
    assert anatomy_sentence(hit, anatomy) == ("In this run's anatomy, XLA compilation 12.0 ms: with 1 hit from the "
                                              "pack that is loading the compiled program, not compiling it.")
    miss = anatomy_sentence(PackFacts({"folder": "/p", "hits": 0, "misses": 1}), anatomy)
    assert miss is not None and "compiled in full" in miss
    execution = checked_anatomy({"window": 1.0, "parts": [{"part": "execution", "seconds": 0.5}], "not_attributed": 0})
    assert anatomy_sentence(hit, execution) is None and anatomy_sentence(hit, None) is None
    assert anatomy_sentence(None, anatomy) is None


def test_stored_pack_facts_are_checked_where_they_are_read():
    pack = {"folder": "/p", "before": {"entries": 2, "bytes": -1}, "after": "x", "hits": True, "misses": 3,
            "lines": ["a" * 900, 5]}
    read = _cache_pack(json.dumps({"cache_pack": pack}))
    assert read is not None and read.to_dict() == pack, "kept as it came"
    assert (read.folder, read.read_only, read.before, read.after, read.hits, read.misses, read.lines) == \
        ("/p", False, PackContents(2, None), PackContents(), None, 3, ("a" * 300,))
    assert _cache_pack("{damaged") is None and _cache_pack(json.dumps({"cache_pack": {"hits": 1}})) is None


@pytest.mark.slow  # scans TensorFlow's libraries for their flag names (a minute on a busy machine)
def test_the_installed_tensorflow_knows_the_pack_s_flags_and_a_flag_in_the_wrong_variable_is_refused():
    from tflaunch.core.run.launch_check import ask_known_flags, xla_flag_problems

    known = ask_known_flags(sys.executable)
    assert known is not None
    assert {"tf_xla_persistent_cache_directory", "tf_xla_persistent_cache_read_only",
            "tf_xla_persistent_cache_device_types", "tf_xla_persistent_cache_prefix",
            "xla_gpu_per_fusion_autotune_cache_dir", "xla_gpu_experimental_autotune_cache_mode",
            "xla_gpu_autotune_level"} <= set(known)
    assert xla_flag_problems(LaunchConfig(python=sys.executable, xla_cache=True), ask_known_flags) == []
    # An XLA_FLAGS name in TF_XLA_FLAGS aborts TensorFlow as an unknown one does.
    wrong = LaunchConfig(python=sys.executable, extra_env={"TF_XLA_FLAGS": "--xla_gpu_autotune_level=2"})
    (problem,) = xla_flag_problems(wrong, ask_known_flags)
    assert problem.field == "extra_env" and "--xla_gpu_autotune_level=2" in problem.message
