"""What the window does for a sweep: check the plan and start it, follow its end, save
its winner. The window's part of the Sweep tab, apart from the window itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tflaunch.core.cluster.merge import NodeTypeSweep
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.sweep.plan import Sweep

    from .window_host import WindowHost



class SweepActions:
    def __init__(self, window: WindowHost) -> None:
        self.window = window

    def start(self) -> None:
        from tflaunch.core.sweep.plan import PlanError  # with the Sweep tab's plan, not for the first frame

        w = self.window
        if w.one_at_a_time.refuse(w.sweep_view.show_message):
            return

        def refuse(why: str) -> None:
            w.sweep_view.show_message(f"Cannot start: {why}")

        base = w.checked_config(refuse)
        if base is None:
            return
        try:
            plan = w.sweep_view.plan(base)
            plan.candidates()  # check the plan before anything starts (formats are checked while preparing)
        except PlanError as exc:
            refuse(str(exc))
            return
        if w.sweep_view.form.run_on.on_cluster:  # the trials run on the cluster's nodes, not here
            w.tabs.setCurrentWidget(w.sweep_view)
            w.sweep_view.submit_to_cluster(plan)
            return
        w.sweep_view.set_running(True)
        w.tabs.setCurrentWidget(w.sweep_view)
        w.sweeper.gpu_sampler = w.gpu_sampler
        w.sweeper.start(plan)
        w.one_at_a_time.follow()
        w.say("Sweep running; the Sweep tab shows its trials. Esc cancels it.")  # not the idle "Ready."

    def start_shown(self) -> None:
        """Start sweep from the menu or Ctrl+Shift+W: the plan the Sweep tab shows, or why not."""
        w = self.window
        w.tabs.setCurrentWidget(w.sweep_view)
        button = w.sweep_view.start_button
        if button.isEnabled():
            button.click()
        else:
            w.say(button.toolTip())

    def open_cluster(self) -> None:
        """Follow a sweep submitted to Slurm, from the folder the user picks."""
        w = self.window
        w.tabs.setCurrentWidget(w.sweep_view)
        w.sweep_view.ask_cluster_folder()

    def failed_to_start(self, reason: str) -> None:
        w = self.window
        w.one_at_a_time.follow()
        w.sweep_view.set_running(False)
        w.sweep_view.show_message(f"Cannot start: {reason}")

    def finished(self, sweep: Sweep, status: str) -> None:
        w = self.window
        w.one_at_a_time.follow()
        w.sweep_view.finish(sweep, status, w.sweeper.sweep_id)
        w.refresh_history()
        note = w.sweeper.session.recorder.note() if w.sweeper.session else None
        w.say(f"Sweep {status}: {sweep.trials_run} trials" + (f" — {note[:1].upper()}{note[1:]}" if note else ""))

    def ask_and_save_winner(self) -> None:
        name = self.window.saver.ask_name("Save the winner as a profile")
        if name:
            self.save_winner(name)

    def save_winner(self, name: str) -> bool:
        w = self.window
        sweep, sweep_id, history = w.sweeper.sweep, w.sweeper.sweep_id, w.history
        if sweep is None or sweep_id is None or history is None:
            w.say("The winner cannot be saved without the run history.")
            return False
        from tflaunch.core.sweep.stored import winner_profile

        return w.saver.save(lambda: winner_profile(name, sweep, history, sweep_id))

    def ask_and_save_node_type_winner(self, part: NodeTypeSweep, history_id: int) -> None:
        """A cluster sweep's winner on one node type, as `tflaunch sweep merge --save-winner
        NAME --node-type TYPE` saves it: the profile names the node type it was measured on."""
        w = self.window
        name = w.saver.ask_name(f"Save the winner on {part.node_type} nodes as a profile")
        if not name or w.history is None:
            if name:
                w.say("The winner cannot be saved without the run history.")
            return
        from tflaunch.core.cluster.merge import node_type_winner

        part.history_id = history_id  # the History sweep the view merged it into
        history = w.history
        # The folder's settings came from files on a shared disk: an import, not the user's own
        # save (as `sweep merge --save-winner` does), so code in them waits for a yes.
        w.saver.save(lambda: node_type_winner(name, part, history), trusted=False)

    def sweep_compared(self, base: LaunchConfig, others: list[LaunchConfig]) -> None:
        """The Compare tab's "Sweep these settings": the baseline's settings in the panel,
        the settings that differ as the sweep's axes, ready to start with enough runs."""
        from tflaunch.core.report.sides import sweep_axes

        w = self.window
        axes, fixed = sweep_axes(base, others)
        w.use_config(base)
        missing = w.sweep_view.form.prefill(axes)
        w.tabs.setCurrentWidget(w.sweep_view)
        cannot = [*fixed, *missing]
        w.sweep_view.show_message(
            f"Prefilled from the comparison: {', '.join(axes) or 'no setting that a sweep varies'}; press Start sweep."
            + (f" Not swept (not a sweep axis): {', '.join(cannot)}." if cannot else ""))
