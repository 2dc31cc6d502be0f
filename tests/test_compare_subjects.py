"""Sides are made of runs of one subject measured one way: a model and a program are never
pooled, a warm script never joins a model's side, a hidden field of the other subject
tells nothing apart; and a side measured in one block, apart from the baseline's, is not
crowned (issue 36: "peak 299.3–556.6 MiB, n=3", and a block crowned "1.23× as fast")."""

from __future__ import annotations

from tflaunch.core.report.compare import run_labels
from tflaunch.core.report.review import comparison_review
from tflaunch.core.report.sides import block_note, headline, side_labels, sides_of
from tflaunch.core.report.subjects import own_config, subject_words, subjects_title
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.words import WARM_MARK
from tflaunch.core.settings.config import LaunchConfig

from .builders import finished_record
from .compare_builders import side


def warm_script(at: float, history_id: int) -> RunRecord:
    """A Launch script (warm) run with the form's model settings left in its config, as the
    app stores it: a program run to its exit."""
    record = RunRecord(LaunchConfig(program=("python", "train.py", "--epochs", "1"), until="exit"), launched_at=at)
    record.marks.append((WARM_MARK, 0.01))
    record.add_sample(at + 0.5, 550 << 20)
    record.finish(0)
    record.history_id = history_id
    return record


def program_run(at: float, history_id: int, model: str = "sample:mlp", workdir: str = "") -> RunRecord:
    record = finished_record(at=at)
    record.config = LaunchConfig(program=("python", "train.py", "--name", "two words"), model=model,
                                 workdir=workdir)
    record.history_id = history_id
    return record


def test_a_warm_script_never_joins_a_model_side_nor_a_cold_launch_of_itself():
    cold = warm_script(1005.0, 4)
    cold.marks = []
    runs = [warm_script(1000.0, 1), *side([1.0, 1.01], first_id=2, at=1010.0), cold]
    sides = sides_of(runs)
    assert [s.ident for s in sides] == ["#1", "#2, #3", "#4"]


def test_a_model_and_a_program_are_never_pooled_and_hidden_fields_tell_nothing_apart():
    model = side([1.0, 1.01], first_id=1)
    model[1].config = model[1].config.replace(workdir="/somewhere/hidden", until="exit")  # the form's hidden fields
    programs = [program_run(1005.0, 3, model="other.keras"), program_run(1006.0, 4, model="sample:cnn")]
    sides = sides_of(model + programs)
    assert [s.ident for s in sides] == ["#1, #2", "#3, #4"]
    labels = side_labels(sides)
    # Each subject in its own words (the command line with its quotes), no setting of the other.
    assert labels == ["#1, #2 sample:mlp", "#3, #4 python train.py --name 'two words'"], labels
    for word in ("model=", "program=", "workdir=", "until="):
        assert not any(word in label for label in labels), labels


def test_labels_of_model_runs_name_only_what_differs_among_them():
    runs = side([1.0], first_id=1) + side([1.0], intra=2, first_id=2)
    runs[1].config = runs[1].config.replace(workdir="/hidden")
    assert run_labels(runs) == ["#1 intra=default", "#2 intra=2"]


def test_subject_words_keep_quotes_and_titles_count_subjects():
    program = program_run(1000.0, 1)
    assert subject_words(program) == "python train.py --name 'two words'"
    assert own_config(program.config).model == LaunchConfig().model
    runs = side([1.0, 1.0, 1.0], first_id=1) + [program_run(1000.0 + k, 4 + k) for k in range(3)]
    runs[-1].config = runs[-1].config.replace(program=("python", "serve.py"))
    assert subjects_title(runs) == "1 model and 2 programs"
    review = comparison_review(runs)
    assert review.title.startswith("1 model and 2 programs: "), review.title
    assert not review.title.startswith("sample:mlp")


def test_a_side_measured_in_one_block_apart_from_the_baseline_is_not_crowned():
    base = side([2.0, 2.01, 2.02], first_id=1, at=1000.0)
    block = side([1.0, 1.01, 1.02], intra=2, first_id=4, at=2000.0)  # minutes later, one after the other
    sides = sides_of(base + block)
    labels = side_labels(sides)
    said = headline(sides, labels)
    assert said.startswith("No winner yet:") and "separate blocks" in said and "interleaved" in said, said
    assert "as fast" not in said
    note = block_note(sides)
    assert note is not None and note.startswith("B was measured in one block") and "drift" in note
    # The same runs interleaved (as a sweep measures them) are crowned.
    interleaved = side([2.0, 2.01, 2.02], first_id=1, at=1000.0) + side([1.0, 1.01, 1.02], intra=2, first_id=4,
                                                                          at=1000.5)
    sides = sides_of(interleaved)
    assert headline(sides, side_labels(sides)).startswith("Fastest to ready:")
    assert block_note(sides) is None


def test_a_programs_title_keeps_its_quotes():
    config = LaunchConfig(program=("python", "train.py", "--name", "two words"))
    assert config.subject == "python train.py --name 'two words'"
