"""The observer's rules, fed notifications with a fake clock: no TensorFlow, no child.

Each test plays what the hooks tell the Observer (core/probe/observe.py) in one kind of
program and asserts the protocol lines it writes: which phases, in what order, and with the
start and end each ran at by the program's clock (never the time it was reported)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tflaunch.core.probe.observer.observe import Observer
from tflaunch.core.run.events import EventParser, PhaseEnd
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def at(self, t: float) -> float:
        self.now = 1000.0 + t
        return self.now


def observer(until: str = "first_step", steady: int = 3) -> tuple[Observer, Clock, list[dict[str, Any]]]:
    lines: list[dict[str, Any]] = []
    clock = Clock()
    obs = Observer(lambda data: lines.append(json.loads(data)), until, steady, clock=clock,
                   memory=lambda: (1 << 20, 2 << 20))
    return obs, clock, lines


def ends(lines: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Each phase_end as (start, end) in seconds from the clock's zero."""
    return {line["phase"]: (round(line["start"] - 1000.0, 6), round(line["start"] + line["duration"] - 1000.0, 6))
            for line in lines if line["event"] == "phase_end" and "start" in line}


def order(lines: list[dict[str, Any]]) -> list[str]:
    return [line["phase"] for line in lines if line["event"] == "phase_end"]


def step(obs: Observer, clock: Clock, key: int, start: float, end: float, traced: bool = False) -> None:
    """A @tf.function train step from `start` to `end`; `traced`: it traces the apply this time."""
    clock.at(start)
    outermost = obs.function_entered()
    if traced:
        obs.optimizer_applied(7, clock(), clock(), eager=False)
    obs.function_left(key, outermost, 1000.0 + start, clock.at(end))


def test_build_is_drawn_when_it_ran_and_a_sleep_after_it_is_not_build() -> None:
    obs, clock, lines = observer()
    obs.layer_made(clock.at(1.0), clock.at(1.2))
    obs.layer_made(clock.at(1.2), clock.at(1.5))
    clock.at(3.0)  # the program sleeps 1.5 s, then compiles
    counted = obs.timed_entered("compile")
    obs.timed_left("compile", counted, clock(), clock.at(3.4))
    obs.training_entered()
    step(obs, clock, key=1, start=3.5, end=4.5, traced=True)
    spans = ends(lines)
    assert spans["build"] == (1.0, 1.5), "build ends with the last construction, not at compile"
    assert spans["compile"] == (3.0, 3.4)
    assert spans["first_step"][1] == 4.5
    assert order(lines).index("compile") < order(lines).index("build"), "build is told late, drawn where it ran"


def test_compile_does_not_close_build_a_second_model_built_after_it_still_counts() -> None:
    obs, clock, lines = observer()
    obs.layer_made(clock.at(1.0), clock.at(1.2))  # the generator
    counted = obs.timed_entered("compile")
    obs.timed_left("compile", counted, clock.at(1.3), clock.at(1.4))
    obs.layer_made(clock.at(1.5), clock.at(1.9))  # the discriminator, after the first compile
    obs.training_entered()
    step(obs, clock, key=1, start=2.0, end=2.5, traced=True)
    assert ends(lines)["build"] == (1.0, 1.9)


def test_a_symbolic_call_while_a_functional_model_is_built_is_build_not_inference() -> None:
    obs, clock, lines = observer(until="first_inference")
    obs.layer_made(clock.at(1.0), clock.at(1.1))  # keras.Input, the ffn Sequential
    kind = obs.call_entered(wanted=True, symbolic=True)  # ffn(inputs) on a KerasTensor
    assert kind == "build"
    obs.layer_made(clock.at(1.2), clock.at(1.3))  # layers the call made
    obs.call_left(kind, 1001.1, clock.at(1.4))
    assert "first" not in order(lines), "a symbolic call is no inference"
    kind = obs.call_entered(wanted=True, symbolic=False)  # model(x) on real data
    assert kind == "inference"
    obs.call_left(kind, clock.at(2.0), clock.at(2.3))
    spans = ends(lines)
    assert spans["build"] == (1.0, 1.4)
    assert spans["first"] == (2.0, 2.3)


def test_a_call_nested_in_an_inference_a_load_or_a_function_is_not_counted() -> None:
    obs, clock, lines = observer(until="first_inference")
    counted = obs.timed_entered("load")
    assert obs.call_entered(wanted=True, symbolic=False) is None, "a call inside load_model is the load's"
    obs.timed_left("load", counted, clock.at(0.5), clock.at(0.9))
    outer = obs.call_entered(wanted=True, symbolic=False)
    assert obs.call_entered(wanted=True, symbolic=False) is None, "the inner model of a nested Sequential"
    obs.call_left(outer, clock.at(1.0), clock.at(1.2))
    assert ends(lines)["load"] == (0.5, 0.9)
    assert ends(lines)["first"] == (1.0, 1.2)


def test_a_compile_inside_load_model_is_the_load_s_not_a_compile_phase() -> None:
    obs, clock, lines = observer()
    counted_load = obs.timed_entered("load")
    counted_compile = obs.timed_entered("compile")  # compile_from_config, inside load_model
    assert not counted_compile
    obs.timed_left("compile", counted_compile, clock.at(0.2), clock.at(0.3))
    obs.timed_left("load", counted_load, clock.at(0.1), clock.at(0.5))
    assert order(lines) == ["load"]


def test_a_call_during_training_or_on_a_tape_is_training_not_inference() -> None:
    obs, clock, lines = observer(until="first_inference")
    obs.training_entered()
    assert obs.call_entered(wanted=True, symbolic=False) is None
    obs.training_left()
    obs.tape_entered()
    assert obs.call_entered(wanted=True, symbolic=False) is None
    obs.tape_left()
    assert obs.call_entered(wanted=True, symbolic=False) == "inference"


def test_an_eager_gradient_tape_step_runs_from_its_tape_to_the_first_optimizer_s_apply() -> None:
    obs, clock, lines = observer(steady=2)
    obs.layer_made(clock.at(0.5), clock.at(0.6))
    clock.at(1.0)
    obs.tape_entered()
    obs.tape_left()
    obs.optimizer_applied(11, clock.at(1.4), clock.at(1.5), eager=True)  # the generator's optimizer
    obs.optimizer_applied(12, clock.at(1.5), clock.at(1.6), eager=True)  # a GAN's second: same step
    spans = ends(lines)
    assert spans["first_step"] == (1.0, 1.5)
    assert spans["build"] == (0.5, 0.6)
    for t in (2.0, 2.6):
        obs.tape_entered()
        obs.tape_left()
        obs.optimizer_applied(11, clock.at(t - 0.1), clock.at(t), eager=True)
    steady = [line for line in lines if line["phase"] == "steady" and line["event"] == "phase_end"][0]
    assert steady["latency"]["n"] == 2
    assert steady["latency"]["median"] == pytest.approx(0.55)
    assert ends(lines)["steady"] == (1.5, 2.6)


def test_fit_s_first_step_starts_at_fit_and_its_data_is_the_iterator_set_up() -> None:
    obs, clock, lines = observer()
    obs.training_entered()  # at 0.0
    obs.iterator_made(clock.at(0.1), clock.at(0.3))
    step(obs, clock, key=5, start=0.4, end=1.4, traced=True)
    spans = ends(lines)
    assert spans["data"] == (0.1, 0.3)
    assert spans["first_step"] == (0.0, 1.4)


def test_a_step_of_fit_ends_where_keras_hands_the_batch_to_its_callbacks() -> None:
    """Keras 3 reads the train function's outputs in Python after the traced call returns:
    the program's own on_train_batch_end sees the step end there, and so does tflaunch."""
    obs, clock, lines = observer(steady=2)
    obs.training_entered()  # at 0.0
    for n, (start, end, edge) in enumerate(((0.1, 1.0, 1.02), (1.1, 1.2, 1.25), (1.3, 1.4, 1.47))):
        obs.batch_began()
        step(obs, clock, key=5, start=start, end=end, traced=n == 0)
        if n == 0:
            assert "first_step" not in ends(lines), "not before the batch's end"
        obs.batch_ended(clock.at(edge))
    obs.training_left()
    assert ends(lines)["first_step"] == (0.0, 1.02)
    steady = [line for line in lines if line["phase"] == "steady" and line["event"] == "phase_end"][0]
    assert steady["latency"]["median"] == pytest.approx((0.23 + 0.22) / 2)


def test_a_batch_whose_end_is_never_told_ends_at_its_function_at_the_next_batch_or_fit_s_return() -> None:
    """A CallbackList of the program's own that skips Keras' end: the step's own end stands."""
    obs, clock, lines = observer(until="exit", steady=2)
    obs.training_entered()
    obs.batch_began()
    step(obs, clock, key=5, start=0.1, end=1.0, traced=True)
    obs.batch_began()  # the next batch: the first one's end was never told
    assert ends(lines)["first_step"] == (0.0, 1.0)
    step(obs, clock, key=5, start=1.1, end=1.3)
    obs.training_left()  # fit returned
    obs.at_exit()
    steady = [line for line in lines if line["phase"] == "steady" and line["event"] == "phase_end"][0]
    assert steady["latency"]["n"] == 1 and steady["latency"]["median"] == pytest.approx(0.3)


def test_train_on_batch_and_custom_loops_tell_no_batch_and_end_at_their_step() -> None:
    obs, clock, lines = observer()
    obs.training_entered()
    step(obs, clock, key=5, start=0.1, end=0.9, traced=True)
    assert ends(lines)["first_step"] == (0.0, 0.9)


def test_an_eager_loop_s_data_is_its_first_element() -> None:
    obs, clock, lines = observer()
    obs.iterator_made(clock.at(0.1), clock.at(0.2))
    assert obs.element_wanted()
    obs.element_taken(clock.at(0.5))
    assert not obs.element_wanted(), "the first element only"
    assert ends(lines)["data"] == (0.1, 0.5)


def test_depth_is_per_thread_a_data_thread_s_function_is_not_nested_in_main_s() -> None:
    obs, clock, lines = observer()
    main_outer = obs.function_entered()
    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(obs.function_entered()))
    worker.start()
    worker.join()
    assert main_outer and seen == [True]


def test_retraces_count_traces_beyond_each_function_s_first() -> None:
    obs, clock, lines = observer(until="exit")
    for key, seconds in ((1, 0.5), (1, 0.2), (2, 0.4), (1, 0.1)):
        obs.traced(key, seconds)
    obs.at_exit()
    retraces = [line for line in lines if line["phase"] == "retraces"][0]
    assert retraces["count"] == 2
    assert retraces["duration"] == pytest.approx(0.3)


def test_at_the_ready_point_tflaunch_s_stop_is_prepared_but_not_when_the_program_runs_to_exit() -> None:
    stopped: list[str] = []
    for until in ("first_step", "exit"):
        obs, clock, lines = observer(until=until, steady=0)
        obs.before_stop = lambda until=until: stopped.append(until)
        step(obs, clock, key=1, start=0.0, end=1.0, traced=True)
    assert stopped == ["first_step"], "autograph's files are removed only where its atexit cannot run"


def test_a_forked_worker_reports_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    obs, clock, lines = observer()
    monkeypatch.setattr("os.getpid", lambda: obs.owner + 1)
    obs.layer_made(clock.at(0.0), clock.at(1.0))
    obs.close_build()
    assert lines == []


def test_the_record_draws_each_phase_at_its_own_start() -> None:
    obs, clock, lines = observer()
    obs.layer_made(clock.at(1.0), clock.at(1.5))
    counted = obs.timed_entered("compile")
    obs.timed_left("compile", counted, clock.at(3.0), clock.at(3.4))
    obs.training_entered()
    step(obs, clock, key=1, start=3.5, end=4.5, traced=True)
    record = RunRecord(LaunchConfig(program=("python", "train.py")))
    record.launched_at = 1000.0
    parser = EventParser()
    for line in lines:
        event = parser.parse(json.dumps(line))
        assert event is not None, line
        record.apply(event)
    assert record.phases["build"].started == pytest.approx(1001.0)
    assert [n for n in record.phases if n in ("build", "compile", "first_step")] == [
        "build", "compile", "first_step"]
    assert record.ready_at == pytest.approx(1004.5)


def test_a_start_that_does_not_fit_its_own_report_is_malformed() -> None:
    parser = EventParser()
    line = {"v": 1, "ts": 1000.0, "phase": "build", "event": "phase_end", "duration": 1.0, "rss": None,
            "peak_rss": None, "start": 999.5}
    assert parser.parse(json.dumps(line)) is None, "ends half a second after it was reported"
    line["start"] = 998.0
    event = parser.parse(json.dumps(line))
    assert isinstance(event, PhaseEnd) and event.start == 998.0


def own_call(obs: Observer, clock: Clock, key: int, start: float, end: float, *, tape: bool = False,
             traced_tape: bool = False) -> None:
    """The program's own tf.function called from `start` to `end`; `tape`: inside a GradientTape
    (a step's forward pass); `traced_tape`: the function takes gradients itself (traced now)."""
    clock.at(start)
    if tape:
        obs.tape_entered()
    outermost = obs.function_entered()
    if traced_tape:
        obs.tape_entered()
        obs.tape_left()
    obs.function_left(key, outermost, 1000.0 + start, clock.at(end), own=True)
    if tape:
        obs.tape_left()


def test_the_programs_own_function_outside_a_tape_is_its_first_inference() -> None:
    obs, clock, lines = observer("first_inference")
    own_call(obs, clock, key=5, start=1.0, end=1.25)
    assert ends(lines)["first"] == (1.0, 1.25)


def test_a_function_called_under_a_tape_or_taking_gradients_is_never_an_inference() -> None:
    obs, clock, lines = observer("first_inference")
    own_call(obs, clock, key=5, start=1.0, end=1.2, tape=True)  # a forward pass inside an eager step
    own_call(obs, clock, key=6, start=2.0, end=2.2, traced_tape=True)  # a raw TF step: tape, no optimizer
    own_call(obs, clock, key=6, start=3.0, end=3.2)  # the same step again: known to take gradients
    assert "first" not in ends(lines)
    own_call(obs, clock, key=7, start=4.0, end=4.1)  # a serving function
    assert ends(lines)["first"] == (4.0, 4.1)


def test_a_librarys_function_is_not_an_inference_of_the_program() -> None:
    obs, clock, lines = observer("first_inference")
    clock.at(1.0)
    outermost = obs.function_entered()
    obs.function_left(9, outermost, 1001.0, clock.at(1.5), own=False)
    assert "first" not in ends(lines)


def test_what_cannot_be_observed_refuses_a_run_to_a_step_at_the_import() -> None:
    obs, clock, lines = observer("first_step")
    refused: list[bool] = []
    obs.refuse = lambda: refused.append(True)
    obs.cannot_observe("Keras 3.15.1 runs on its jax backend here")
    obs.cannot_observe("Keras 3.15.1 runs on its jax backend here")  # said once
    errors = [line for line in lines if line["event"] == "error"]
    assert refused == [True] and len(errors) == 1
    assert errors[0]["kind"] == "not_observable"
    message = errors[0]["message"]
    assert "jax backend" in message and "--until exit" in message and "mark:NAME" in message


def test_what_cannot_be_observed_is_noted_when_the_run_goes_to_its_exit() -> None:
    obs, clock, lines = observer("exit")
    obs.refuse = lambda: pytest.fail("a run to its exit is not refused")
    obs.cannot_observe("tf_keras 9.0 is a Keras tflaunch does not know")
    notices = [line for line in lines if line["event"] == "notice"]
    assert len(notices) == 1 and "tf_keras 9.0" in notices[0]["message"]
    record = RunRecord(LaunchConfig(program=("python", "train.py"), until="exit"))
    event = EventParser().parse(json.dumps(notices[0]))
    assert event is not None
    record.apply(event)
    assert any("tf_keras 9.0" in note for note in record.notes)
