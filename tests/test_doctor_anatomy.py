"""The doctor's anatomy remedy: which arms a first step's parts choose, on a machine with a GPU
and without, and what it says of the parts that choose none. No TensorFlow: the anatomy is data."""

from __future__ import annotations

from tflaunch.core.doctor.anatomy_cures import MIN_SECONDS, choose, large_parts
from tflaunch.core.doctor.remedies import examine
from tflaunch.core.run.anatomy import Anatomy, checked_anatomy
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig

BASE = LaunchConfig(program=("python", "train.py"))


def anatomy(**parts: float) -> Anatomy:
    named = [{"part": k, "seconds": v, "names": []} for k, v in parts.items()]
    window = sum(parts.values()) + 0.01
    return checked_anatomy({"phase": "first_step", "window": window, "parts": named, "not_attributed": 0.01,
                            "run_id": 3})


def test_large_parts_choose_their_cures_and_small_ones_are_named_as_too_small() -> None:
    chosen, notes = choose(BASE, anatomy(tracing=2.0, instantiation=0.6, execution=0.3, data=0.02), has_gpu=False)
    assert [(c.key, c.part) for c in chosen] == [("grappler=light", "instantiation"), ("grappler=off", "instantiation")]
    assert chosen[0].config.grappler == "light" and chosen[0].part_seconds == 0.6
    assert any(n.startswith("tracing") and "no launch setting" in n for n in notes)
    assert any("too small to matter" in n and "data" in n for n in notes)
    assert [p.key for p in large_parts(anatomy(tracing=2.0, data=MIN_SECONDS / 2))] == ["tracing"]


def test_gpu_cures_only_where_a_gpu_is_and_why_not_elsewhere() -> None:
    parts = anatomy(gpu_autotune=1.0, gpu_modules=0.5, gpu_allocator=0.4, execution=0.5)
    without, notes = choose(BASE, parts, has_gpu=False)
    assert without == [] and sum("no GPU here" in n for n in notes) == 5
    with_gpu, _ = choose(BASE, parts, has_gpu=True)
    assert [c.key for c in with_gpu] == ["cudnn_autotune=off", "cuda_cache=warm", "module_loading=lazy",
                                         "allocator=cuda_malloc_async", "memory_growth=on"]


def test_an_arm_the_baseline_has_already_is_not_measured() -> None:
    chosen, notes = choose(BASE.replace(xla_cache=True), anatomy(xla=1.0), has_gpu=False)
    assert chosen == [] and "has it already" in notes[0]


def test_a_failed_anatomy_chooses_nothing_and_says_why() -> None:
    chosen, notes = choose(BASE, checked_anatomy({"window": 1.0, "error": "the profiler wrote no trace"}), has_gpu=True)
    assert chosen == [] and notes == ["no anatomy: the profiler wrote no trace"]


def test_the_remedy_joins_an_arm_another_remedy_chose_and_names_its_part() -> None:
    record = RunRecord(BASE)
    exam = examine(BASE, record, True, only={"gpu", "anatomy"}, anatomy=anatomy(gpu_autotune=1.0, tracing=1.0))
    autotune = [a for a in exam.arms if a.key == "cudnn_autotune=off"]
    assert len(autotune) == 1 and autotune[0].part == "gpu_autotune" and autotune[0].remedy == "gpu"
    assert "anatomy" not in exam.skipped
    exam = examine(BASE, record, False, only={"anatomy"}, anatomy=anatomy(tracing=1.0))
    assert "no launch setting acts on it" in exam.skipped["anatomy"]


def test_the_report_names_each_arms_part_and_its_measured_saving() -> None:
    from tflaunch.core.doctor.experiment import ArmResult, Diagnosis
    from tflaunch.core.doctor.report import diagnosis_json, report_text
    from tflaunch.core.doctor.verdict import saving

    record = RunRecord(BASE)
    exam = examine(BASE, record, False, only={"anatomy"}, anatomy=anatomy(tracing=1.0, instantiation=0.5))
    d = Diagnosis(exam, part_baseline=[2.0, 2.1, 2.2, 2.05])
    for arm in exam.arms:
        values = [1.6, 1.7, 1.65, 1.62]
        d.results.append(ArmResult(arm, values, saving=saving(values, d.part_baseline), objective="phase:first_step"))
    text = report_text(d)
    assert "Anatomy of the first step from run #3" in text
    assert "for instantiation and graph optimisation (500 ms in the anatomy), measured on the first step" in text
    assert "measured: saves" in text and "of its first step" in text
    assert "2.10 s *" in text  # the baseline's first step, marked as the arms' are
    arms = diagnosis_json(d)["arms"]
    assert {a["part"] for a in arms} == {"instantiation"} and {a["objective"] for a in arms} == {"phase:first_step"}
