"""Each setting is declared once, in vocabulary.SETTINGS, and everything else is made from it:
LaunchConfig's defaults, the command line's flags, the sweep's axes and the display text."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields

import pytest

from tflaunch.core.cli.arguments import add_config_arguments, add_program_argument, config_from_args
from tflaunch.core.phases import UNTIL_POINTS
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.display import setting_text
from tflaunch.core.settings.vocabulary import BY_NAME, SETTINGS, Kind
from tflaunch.core.subject import BOTH, Subject
from tflaunch.core.sweep.axes import AXES, apply_value
from tflaunch.core.sweep.plan import PlanError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_config_arguments(parser, model_required=False)
    add_program_argument(parser)
    return parser


def _flag(parser: argparse.ArgumentParser, cli: str) -> argparse.Action:
    return next(a for a in parser._actions if cli in a.option_strings)


def test_every_field_is_a_setting_and_takes_its_default_from_the_table():
    assert {f.name for f in fields(LaunchConfig)} == set(BY_NAME)
    for f in fields(LaunchConfig):
        stated = f.default_factory() if f.default is MISSING else f.default  # type: ignore[misc]
        assert stated == BY_NAME[f.name].default, f.name
    assert LaunchConfig().inputs is not LaunchConfig().inputs  # a dict default is not shared


def test_every_setting_is_a_flag_with_its_default_and_choices():
    parser = _parser()
    defaults = vars(parser.parse_args([]))
    for setting in SETTINGS:
        if setting.name == "program":
            assert config_from_args(parser.parse_args(["--", "python", "x.py"])).program == ("python", "x.py")
            continue
        action = _flag(parser, setting.cli)
        assert action.dest == setting.name
        assert setting.help.replace("%", "%%") in (action.help or ""), setting.name
        if setting.name != "model":  # None until typed, so that a --profile's model stays
            repeatable = setting.kind in (Kind.LIST, Kind.PAIRS)
            assert defaults[setting.name] == ([] if repeatable else setting.default), setting.name
        for word in setting.words() if setting.kind in (Kind.CHOICE, Kind.TRISTATE) else ():
            value = config_from_args(parser.parse_args([setting.cli, word]))
            assert getattr(value, setting.name) == setting.parse(word), (setting.name, word)
        if setting.kind is Kind.CHOICE:
            with pytest.raises(argparse.ArgumentError, match=", ".join(setting.words())):
                parser.parse_args([setting.cli, "neither"])
    assert config_from_args(parser.parse_args([])) == LaunchConfig()


def test_a_flag_not_typed_leaves_the_tables_default_and_help_names_it():
    parser = _parser()
    assert "Default: warm." in (_flag(parser, "--page-cache").help or "")
    assert "Default: first_step." in (_flag(parser, "--until").help or "")
    assert "Default: 600 s." in (_flag(parser, "--timeout").help or "")
    assert _flag(parser, "--until").metavar == "first_step|first_inference|exit|mark:NAME"


def test_until_offers_the_points_a_run_can_be_measured_to():
    assert tuple(BY_NAME["until"].choices) == UNTIL_POINTS
    assert all(point in BY_NAME["until"].help for point in UNTIL_POINTS)


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.sweep is not None], ids=lambda s: s.name)
def test_every_sweepable_setting_is_an_axis_with_the_same_words(setting):
    assert setting.axis in AXES
    base = LaunchConfig()
    for text in setting.sweep.split(","):
        assert getattr(apply_value(base, setting.axis, text, str), setting.name) is not None or text in (
            "default", "none", "all")
    for word in setting.words() if setting.kind in (Kind.CHOICE, Kind.TRISTATE) else ():
        assert getattr(apply_value(base, setting.axis, word, str), setting.name) == setting.parse(word)
    if setting.kind is Kind.CHOICE:
        with pytest.raises(ValueError, match=", ".join(setting.words())):
            apply_value(base, setting.axis, "neither", str)


def test_the_axes_are_the_ones_a_sweep_could_always_vary():
    assert set(AXES) == {"intra", "inter", "xla_auto", "jit_compile", "onednn", "memory_growth", "memory_limit",
                         "allocator", "cuda_cache", "page_cache", "xla_cache", "cudnn_autotune", "module_loading",
                         "gpus", "instances", "batch", "format", "env.NAME", "input.NAME"}
    with pytest.raises(PlanError, match="xla_auto and jit_compile"):
        apply_value(LaunchConfig(), "xla", "on", str)


def test_choice_values_are_checked_against_the_table():
    for setting in SETTINGS:
        if setting.kind is Kind.CHOICE and setting.name != "until":
            [problem] = LaunchConfig(**{setting.name: "neither"}).validate(check_model=False)
            assert problem.field == setting.name and ", ".join(setting.words()) in problem.message


def test_display_text_comes_from_the_table():
    assert setting_text("log_level", 2) == "2 (hide INFO and WARNING)"
    assert setting_text("memory_limit_mb", 1 << 20) == "1048576 MiB"
    assert setting_text("timeout", 30.0) == "30 s" and setting_text("steady", 5) == "5 calls"
    for setting in SETTINGS:
        if setting.unset is not None:
            assert setting_text(setting.name, setting.default) == setting.unset[0], setting.name


@pytest.mark.parametrize("text", ["٣", "³", "1_000", " 2x", "-1", ""])
def test_a_count_or_mib_is_ascii_digits_only(text):
    """A Unicode digit passes str.isdigit (and some of them int()): never a count a child reads."""
    for setting in (s for s in SETTINGS if s.kind in (Kind.COUNT, Kind.MIB)):
        with pytest.raises(ValueError):
            setting.parse(text)


# -- which subject reads a setting: Setting.read_by, and the lists made from it -----------------
PROGRAM_CONFIG = LaunchConfig(program=("python", "t.py"))


def test_a_setting_read_by_one_subject_says_why_the_other_does_not():
    for setting in SETTINGS:
        assert setting.read_by and (setting.read_by == BOTH) == (not setting.unread_because), setting.name
        for subject in Subject:
            assert setting.why_unread(subject) == (None if setting.reads(subject) else setting.unread_because)


@pytest.mark.parametrize("subject", list(Subject), ids=lambda s: s.value)
def test_the_four_lists_are_made_from_the_table(subject, qtbot):
    """Which subject reads a setting was four hand lists that disagreed (report/subjects.py,
    the settings panel, the sweep's MODEL_ONLY_AXES, the doctor's _NOT_FOR_PROGRAMS): each is
    the table's answer, setting by setting."""
    from tflaunch.core.doctor.remedies import REMEDIES, not_for_programs
    from tflaunch.core.report import subjects
    from tflaunch.core.sweep.plan import MODEL_ONLY_AXES
    from tflaunch.gui.settings.settings_panel import SettingsPanel

    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.set_config(PROGRAM_CONFIG if subject.is_program else LaunchConfig())
    config = panel.config()
    assert config.subject_type is subject and panel.subject_type is subject
    for setting in SETTINGS:
        reads = setting.reads(subject)
        # Compare, labels and own_config (report/subjects.py)
        assert (setting.name in subjects.unread(subject)) is not reads, setting.name
        assert subjects.reads(config, setting.name) is reads, setting.name
        assert (setting.name in (subjects.MODEL_ONLY if subject.is_program else subjects.PROGRAM_ONLY)) is not reads
        # The form: hidden, or greyed with the reason
        widget = panel.editors[setting.name].widget
        if setting.group in ("Subject", "Inference"):  # the subject's own rows: the other's hidden
            assert panel._forms[setting.name].isRowVisible(widget) is reads, setting.name
        elif setting.read_by != BOTH:  # elsewhere greyed (a GPU setting may be greyed for want of a GPU)
            assert widget.isEnabled() is reads, setting.name
        if not reads and widget.isVisibleTo(panel):
            assert setting.unread_because in widget.toolTip(), setting.name
        if subject.is_program:
            # The sweep's axes a program cannot vary, and the doctor's remedies it cannot apply
            if setting.sweep:
                assert MODEL_ONLY_AXES.get(setting.axis) == (None if reads else setting.unread_because), setting.name
            if setting.name in REMEDIES:
                assert not_for_programs(setting.name) == (None if reads else setting.unread_because), setting.name
    assert set(MODEL_ONLY_AXES) - {s.axis for s in SETTINGS} == {"format"}, "the only axis that is no setting"


def test_jit_compile_has_one_answer_a_program_does_not_read_it():
    """The review's check: a program was offered jit_compile and compared by it, while the
    sweep greyed it and the doctor said a launch cannot apply it."""
    from tflaunch.core.report.subjects import own_settings_differ, reads
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.sweep.plan import MODEL_ONLY_AXES

    runs = [RunRecord(PROGRAM_CONFIG), RunRecord(PROGRAM_CONFIG.replace(jit_compile=True))]
    assert own_settings_differ(runs) == [] and not reads(PROGRAM_CONFIG, "jit_compile")
    assert "jit_compile" in MODEL_ONLY_AXES and reads(LaunchConfig(), "jit_compile")


def test_a_flag_a_program_does_not_read_is_refused_not_ignored() -> None:
    from tflaunch.core.cli.arguments import SettingsError
    from tflaunch.core.cli.main import build_parser

    for flag in (["--jit-compile"], ["--batch", "4"]):
        args = build_parser().parse_args(["bench", *flag, "--", "python", "train.py"])
        with pytest.raises(SettingsError, match="not read by a program"):
            config_from_args(args)
    args = build_parser().parse_args(["bench", "--intra", "2", "--", "python", "train.py"])
    assert config_from_args(args).intra == 2  # a setting a program reads is taken
