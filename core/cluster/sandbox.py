"""A real single-node Slurm on this machine: what the tests run against, and what
`tflaunch cluster sandbox up|down` starts for a newcomer to try cluster sweeps on a
workstation. Debian's slurm-wlm (or any Slurm whose daemons are on PATH), slurmctld and
slurmd as the user, no munge (auth/none), state and logs in one folder, SLURM_CONF naming
its slurm.conf (the machine's own Slurm, if any, is left alone).

Scheduling is made quick (batch_sched_delay=0; more CPUs declared than the machine has,
accepted through SlurmdParameters=config_overrides), so a 10-task array takes seconds, not
scheduler waves. The node declares two fake GPU types (a100, h100) backed by empty files:
a GPU is a hardware boundary, the only thing faked. Where the test runs as root, slurmd
runs in a mount namespace of its own in which PRIVATE is an empty tmpfs: a folder this
machine sees and the node does not, as on a cluster whose /tmp is not shared.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import psutil

from ..paths import data_dir

DAEMONS = ("slurmctld", "slurmd")
START_TIMEOUT_S = 30.0
SOCKET_PATH_MAX = 108  # sun_path, with its terminating zero


class SandboxError(Exception):
    """The sandbox cannot start or stop: the message says why and what to do."""


def missing() -> str | None:
    """Why a cluster cannot start here; None when it can."""
    absent = [d for d in (*DAEMONS, "sbatch", "squeue", "scancel", "sinfo") if shutil.which(d) is None]
    if absent:
        return (f"{', '.join(absent)} not installed: install Slurm's daemons and commands (Debian and Ubuntu: "
                "`sudo apt-get install slurm-wlm`; `make system-deps` does it for the tests)")
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _can_unshare() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True)
    return done.returncode == 0


class Cluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.shared = root / "shared"  # seen by the tests and the node alike
        self.private = root / "private"  # an empty tmpfs for the node, where it can be
        self.private_works = _can_unshare()
        self.conf = root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._procs: list[subprocess.Popen[bytes]] = []

    def write_config(self) -> None:
        for part in ("state", "spool", "fakegpu", "shared", "private"):
            (self.root / part).mkdir(exist_ok=True)
        for i in range(4):
            (self.root / "fakegpu" / f"gpu{i}").touch()
        user, r = os.environ.get("USER") or subprocess.check_output(["id", "-un"], text=True).strip(), self.root
        self.conf.write_text(f"""ClusterName=tflaunchtest
SlurmctldHost={self.host}(127.0.0.1)
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/none
CredType=cred/none
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/slurmctld.log
SlurmdLogFile={r}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
GresTypes=gpu
NodeName={self.host} NodeAddr=127.0.0.1 CPUs=16 RealMemory=4000 Gres=gpu:a100:2,gpu:h100:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        (self.root / "gres.conf").write_text(
            f"NodeName={self.host} Name=gpu Type=a100 File={r}/fakegpu/gpu[0-1]\n"
            f"NodeName={self.host} Name=gpu Type=h100 File={r}/fakegpu/gpu[2-3]\n")

    def start(self, detached: bool = False) -> None:
        """Both daemons, waited for until the node is idle. `detached`: they outlive this
        process (the sandbox command), and stop() finds them by their pid files."""
        # slurmstepd makes a socket SPOOL/HOST_JOB.STEP for each job; a longer path than a socket
        # takes (108 bytes) ends every job at its start ("Unix socket name exceeded maximum length").
        longest = len(os.fsencode(self.root / "spool")) + len(self.host) + len("/_4294967294.4294967291")
        if longest >= SOCKET_PATH_MAX:
            raise SandboxError(f"{self.root}: too deep for Slurm's job sockets (up to {longest} of the "
                               f"{SOCKET_PATH_MAX - 1} bytes a socket path may have); give the sandbox a shorter "
                               "folder (TFLAUNCH_DATA_DIR=/tmp/tfl, say).")
        self.write_config()
        ctld = ["slurmctld", "-D", "-i", "-f", str(self.conf)]
        slurmd = ["slurmd", "-D", "-f", str(self.conf), "-N", self.host]
        if self.private_works:
            inner = f"mount -t tmpfs tflaunch-private {self.private} && exec {' '.join(slurmd)}"
            slurmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner]
        for command, log in ((ctld, "slurmctld.out"), (slurmd, "slurmd.out")):
            with open(self.root / log, "wb") as out:
                self._procs.append(subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                                    stdin=subprocess.DEVNULL, start_new_session=True))
        (self.root / "daemons.pid").write_text(" ".join(str(p.pid) for p in self._procs) + "\n")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "--noheader", "--format=%t"], env=self.env, capture_output=True,
                                   text=True).stdout.strip()
            if state == "idle":
                return
            if any(p.poll() is not None for p in self._procs):
                break
            time.sleep(0.2)
        self.stop()
        raise SandboxError(f"the single-node Slurm did not come up (node state {state!r}):\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n" + p.read_text(errors="replace")[-3000:]
                         for p in sorted(self.root.glob("slurm*.log")) + sorted(self.root.glob("*.out")))

    def run(self, *command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), env=self.env, capture_output=True, text=True, timeout=60)

    def stop(self) -> None:
        """Cancel its jobs, then end both daemons (their process groups), started here or not."""
        subprocess.run(["scancel", "--full", "--user", str(os.getuid())], env=self.env, capture_output=True,
                       timeout=30)
        if self._procs:
            for proc in self._procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, 15)
            for proc in self._procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, 9)
                    proc.wait()
        else:
            for pid in self.pids():
                _end_group(pid)
        (self.root / "daemons.pid").unlink(missing_ok=True)

    def pids(self) -> list[int]:
        """The daemons' pids from the pid file, those still running (a stale file names none)."""
        try:
            text = (self.root / "daemons.pid").read_text()
        except OSError:
            return []
        pids = [int(p) for p in text.split() if p.isascii() and p.isdigit()]
        return [p for p in pids if psutil.pid_exists(p)]


def _end_group(pid: int) -> None:
    try:
        os.killpg(pid, 15)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + 10
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if psutil.pid_exists(pid):
        try:
            os.killpg(pid, 9)
        except ProcessLookupError:
            pass


def sandbox_root() -> Path:
    return data_dir() / "slurm-sandbox"


def running() -> Path | None:
    """The sandbox's slurm.conf while both its daemons run and its controller answers; None otherwise."""
    sandbox = Cluster(sandbox_root())
    return sandbox.conf if not problems(sandbox) else None


def problems(sandbox: Cluster) -> list[str]:
    """What does not answer: each daemon that is not running, a controller that does not
    reply (sinfo). Empty when the sandbox is a working Slurm."""
    alive = dict(zip(DAEMONS, _daemon_pids(sandbox), strict=False))
    out = [f"{name} is not running" for name in DAEMONS if alive.get(name) is None]
    if "slurmctld is not running" not in out:
        try:
            asked = subprocess.run(["sinfo", "--noheader", "--format=%t"], env=sandbox.env, capture_output=True,
                                   text=True, timeout=15)
            said = asked.stdout.strip() if asked.returncode == 0 else ""
            if not said:
                out.append(f"slurmctld (pid {alive['slurmctld']}) does not answer: {asked.stderr.strip()[-300:]}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            out.append(f"slurmctld does not answer ({exc})")
    return out


def _daemon_pids(sandbox: Cluster) -> list[int | None]:
    """slurmctld's and slurmd's pids from the pid file, each None when it no longer runs."""
    try:
        text = (sandbox.root / "daemons.pid").read_text()
    except OSError:
        return [None, None]
    pids = [int(p) for p in text.split() if p.isascii() and p.isdigit()][:2]
    return [p if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE else None
            for p in pids] + [None] * (2 - len(pids))


def status() -> tuple[bool, str]:
    """(whether it works, what answers) for `sandbox status`."""
    sandbox = Cluster(sandbox_root())
    if not (sandbox.root / "daemons.pid").exists():
        return False, "no sandbox runs"
    found = problems(sandbox)
    if not found:
        return True, f"the sandbox Slurm runs and answers (slurmctld, slurmd); SLURM_CONF={sandbox.conf}"
    return False, "the sandbox does not work: " + "; ".join(found) + ". `tflaunch cluster sandbox up` starts again " \
        "what is dead."


def up() -> Path:
    """Start the sandbox (or find it working): its slurm.conf, for SLURM_CONF. A sandbox whose
    daemon died or whose controller does not answer is ended whole and started again."""
    why = missing()
    if why:
        raise SandboxError(f"the sandbox cannot start: {why}.")
    conf = running()
    if conf is not None:
        return conf
    root = sandbox_root()
    root.mkdir(parents=True, exist_ok=True)
    sandbox = Cluster(root)
    if (root / "daemons.pid").exists():  # half a sandbox: what is left of it goes first
        _end_all(sandbox)
    sandbox.private_works = False  # the tests' unshared folder is of no use to a user
    sandbox.start(detached=True)
    return sandbox.conf


def down() -> str:
    """Stop the sandbox's daemons, cancel its jobs and end every process it left (job steps,
    a controller started again by hand); what was done, in a line."""
    sandbox = Cluster(sandbox_root())
    left = _sandbox_processes(sandbox)
    if not sandbox.pids() and not left:
        return f"no sandbox runs (its folder: {sandbox.root})"
    ended = _end_all(sandbox)
    return (f"stopped the sandbox Slurm and cancelled its jobs ({ended} processes ended); unset SLURM_CONF in your "
            f"shell (its state stays in {sandbox.root})")


def _end_all(sandbox: Cluster) -> int:
    """The daemons by their pid file, then every process still carrying the sandbox's
    SLURM_CONF or naming its slurm.conf (slurmstepd and its job's processes, a daemon
    started again by hand): the number ended."""
    if not problems(sandbox):
        subprocess.run(["scancel", "--full", "--user", str(os.getuid())], env=sandbox.env, capture_output=True,
                       timeout=30)
    for pid in sandbox.pids():
        _end_group(pid)
    (sandbox.root / "daemons.pid").unlink(missing_ok=True)
    found = _sandbox_processes(sandbox)
    for proc in found:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _gone, alive = psutil.wait_procs(found, timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return len(found)


def _sandbox_processes(sandbox: Cluster) -> list[psutil.Process]:
    conf = str(sandbox.conf)
    out = []
    for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
        if proc.info["pid"] == os.getpid():
            continue
        with contextlib.suppress(psutil.Error, TypeError):
            if conf in (proc.info["cmdline"] or []) or (proc.info["environ"] or {}).get("SLURM_CONF") == conf:
                out.append(proc)
    return out
