"""`bench --anatomy --tensorboard LOGDIR`: the anatomy run's XPlane kept where TensorBoard's
profile plugin reads it (LOGDIR/plugins/profile/RUN/HOST.xplane.pb), with the run's id in
RUN's name, and read back with TensorFlow's own xplane_pb2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tflaunch.core.paths import history_path
from tflaunch.core.report.tensorboard_logdir import KeepError, keep_profile, run_name
from tflaunch.core.store.history import History

from .builders import tflaunch

READ_BACK = """
import json, sys
from tensorflow.tsl.profiler.protobuf import xplane_pb2
space = xplane_pb2.XSpace()
space.ParseFromString(open(sys.argv[1], "rb").read())
events = sum(len(line.events) for plane in space.planes for line in plane.lines)
names = {m.name for plane in space.planes for m in plane.event_metadata.values()}
print(json.dumps({"planes": [p.name for p in space.planes], "events": events,
                  "marker": "tflaunch.anatomy.window" in names}))
"""

CONVERT = """
import json, sys
from xprof.convert import raw_to_tool_data
data, _ = raw_to_tool_data.xspace_to_tool_data([sys.argv[1]], "trace_viewer", {})
print(json.dumps({"trace_viewer_events": len(json.loads(data)["traceEvents"])}))
"""


def test_a_profile_is_copied_into_the_plugins_layout_under_a_named_run(tmp_path):
    written = tmp_path / "written"
    (written / "plugins" / "profile" / "2026_11_28_00_00_00").mkdir(parents=True)
    (written / "plugins" / "profile" / "2026_11_28_00_00_00" / "node7.xplane.pb").write_bytes(b"x")
    kept = keep_profile(written, tmp_path / "logs", 12, 1_800_000_000.0)
    assert kept == tmp_path / "logs" / "plugins" / "profile" / run_name(12, 1_800_000_000.0) / "node7.xplane.pb"
    assert kept.read_bytes() == b"x" and run_name(12, 1_800_000_000.0).endswith("_tflaunch_run_12")
    with pytest.raises(KeepError, match="wrote no .xplane.pb under"):
        keep_profile(tmp_path / "empty", tmp_path / "logs", 12, 0.0)


def test_tensorboard_needs_the_anatomy_run():
    done = tflaunch("bench", "--model", "sample:mlp", "--tensorboard", "logs", timeout=60)
    assert done.returncode == 2 and "--tensorboard keeps the anatomy run's profile: add --anatomy." in done.stderr


@pytest.mark.slow
def test_bench_keeps_the_anatomy_runs_xplane_for_tensorboard(tmp_path):
    logdir = tmp_path / "tb"
    done = tflaunch("bench", "--model", "sample:mlp", "--anatomy", "--tensorboard", str(logdir), timeout=600)
    assert done.returncode == 0, done.stderr
    (kept,) = logdir.glob("plugins/profile/*/*.xplane.pb")
    history = History(history_path())
    anatomy_id = max(run.id for run in history.list_runs())
    assert kept.parent.name.endswith(f"_tflaunch_run_{anatomy_id}")
    assert f"profile is kept at {kept}" in done.stderr
    read = subprocess.run([sys.executable, "-c", READ_BACK, str(kept)], capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    space = json.loads(read.stdout)
    assert "/host:CPU" in space["planes"] and space["events"] > 100 and space["marker"]
    print("\n".join(str(p.relative_to(tmp_path)) for p in sorted(logdir.rglob("*"))), space)
    # The profile plugin's own converter (xprof, what tensorboard-plugin-profile runs), where
    # it is installed: too heavy a dependency (cloud storage, duckdb) to require for this.
    if subprocess.run([sys.executable, "-c", "import xprof"], capture_output=True).returncode == 0:
        converted = subprocess.run([sys.executable, "-c", CONVERT, str(kept)], capture_output=True, text=True,
                                   timeout=300)
        assert converted.returncode == 0, converted.stderr
        assert json.loads(converted.stdout)["trace_viewer_events"] > 100
