"""Launch profiles: named TOML files of settings plus the evidence that chose them.

Profiles are data: only TOML is read, and only known settings are applied. Settings that
would run code are applied only once the user accepted them (trust.py). Files are written
atomically; one that cannot be read, comes from a newer schema or holds settings out of
range is listed as broken with the reason and is never overwritten.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from ..phases import AFTER_READY, NAME, OTHER, label, phase_rows
from ..probe.outside_files import UnreadableFileError, read_capped
from ..run.status import RunStatus
from ..safe_text import shown
from ..settings.config import LaunchConfig
from ..settings.vocabulary import BY_NAME, launch_statement
from ..stats import summarize
from ..subject import Subject
from ..units import format_bytes, format_duration
from . import shallow_toml
from .atomic import atomic_write
from .checked_launch import as_checked, as_written, covered_code
from .profile_diff import diff as diff
from .profile_error import ProfileError as ProfileError  # re-exported: `profiles diff` and the app's Diff use it
from .profile_shape import shape_problem
from .profile_subject import declared_subject, profile_subject, to_keep
from .replaced_profiles import keep_replaced
from .trust import TrustFile, code_it_runs, digest

if TYPE_CHECKING:
    from ..run.record import RunRecord

SCHEMA_VERSION = 1
MOST_BYTES = 1 << 20  # a profile is a few kilobytes; a larger file is not one to parse on every listing
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,63}\Z")  # \Z: `$` would take a trailing newline


@dataclass
class Profile:
    name: str
    config: LaunchConfig
    evidence: dict[str, Any] = field(default_factory=dict)
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    digest: str = field(default="", compare=False)  # SHA-256 of the file it was read from
    subject: Subject | None = None  # what it was measured on; None: as its config or evidence says

    @property
    def subject_type(self) -> Subject:
        return profile_subject(self.subject, self.config, self.evidence)

    def to_toml(self) -> str:
        return tomli_w.dumps({"schema_version": SCHEMA_VERSION, "name": self.name, "created": self.created,
                              "subject": self.subject_type.value, "settings": to_keep(self.config, self.subject_type),
                              "launch": self.launch_statement(), "evidence": _drop_none(self.evidence)})

    def launch_statement(self) -> dict[str, Any]:
        """What `tflaunch run --profile` applies of these settings, and what it cannot: the
        evidence was measured with all of them, so a reader must see the difference."""
        statement: dict[str, Any] = dict(launch_statement(self.config.changed_settings()))
        only = statement.pop("measurement_only", [])
        if only:
            statement["not_applied"] = {name: BY_NAME[name].help for name in only}
        code = code_it_runs(self.config)
        if code:
            statement["runs_code"] = code
        return statement

    @classmethod
    def from_toml(cls, text: str, source: str) -> Profile:
        try:
            data = shallow_toml.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ProfileError(f"{source} is not valid TOML: {exc}.") from None
        except shallow_toml.TooDeepError as exc:
            raise ProfileError(f"{source} is not read: {exc}; a profile is a few flat tables.") from None
        version = data.get("schema_version")
        if not isinstance(version, int):
            raise ProfileError(f"{source} has no schema_version; it is not a tflaunch profile.")
        if version > SCHEMA_VERSION:
            raise ProfileError(f"{source} was written by a newer tflaunch (schema {version}); "
                               f"this one reads schema {SCHEMA_VERSION}. Update tflaunch to use it.")
        settings = data.get("settings")
        if not isinstance(settings, dict):
            raise ProfileError(f"{source} has no [settings] table.")
        wrong_shape = shape_problem(data)
        if wrong_shape:
            raise ProfileError(f"{source} has a setting tflaunch cannot use: {shown(wrong_shape)}. Correct it in the "
                               "file or save the profile again.")
        carried = [k for k in ("program", "workdir") if k in settings]
        if carried:
            # A shared file must not choose what runs: the command is always the user's own.
            raise ProfileError(f"{source} sets {carried[0]} in [settings]; a profile never carries a command or "
                               "its folder (tflaunch run --profile NAME -- COMMAND gives them). Remove that line.")
        try:
            config = LaunchConfig.from_dict(settings)
        except (TypeError, ValueError) as exc:
            raise ProfileError(f"{source} has settings tflaunch cannot use: {shown(exc)}.") from None
        # Whether the interpreter and imported files exist is a question for this machine at
        # launch (launch_check); a value out of range is wrong on every machine.
        wrong = [p for p in config.validate(check_model=False) if p.field not in ("python", "imports")]
        if wrong:
            raise ProfileError(f"{source} has a setting tflaunch cannot use: {wrong[0].field}: "
                               f"{shown(wrong[0].message)} Correct it in the file or save the profile again.")
        return cls(str(data.get("name", "")), config, data.get("evidence", {}), str(data.get("created", "")),
                   subject=declared_subject(data.get("subject")))


def read_profile_file(path: Path, within: Path | None = None) -> tuple[bytes, str]:
    """(bytes, text) of a profile file: a regular file of at most MOST_BYTES, UTF-8, in
    `within` when given; ProfileError with the reason otherwise (a FIFO, /dev/zero, 22 MB)."""
    try:
        data = read_capped(str(path), MOST_BYTES, "The profile", timeout=10,
                           within=str(within) if within is not None else None)
        return data, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{shown(path)} is not UTF-8 text (byte {exc.start}); a profile is a TOML file. "
                           "Save it again as UTF-8.") from None
    except UnreadableFileError as exc:  # its message names the file and the cause
        raise ProfileError(shown(exc, 1000)) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ProfileError(f"{shown(path)} cannot be read: {shown(getattr(exc, 'strerror', None) or exc)}.") \
            from None


@dataclass(frozen=True)
class ProfileEntry:
    """A file in the profiles folder: a usable profile, or the reason it is not."""

    name: str
    path: Path
    profile: Profile | None
    problem: str | None


def _drop_none(value: Any) -> Any:
    """TOML has no null: leave missing values out."""
    if isinstance(value, dict):
        return {str(k): _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_drop_none(v) for v in value if v is not None]
    return value


def acceptance(profile: Profile) -> str:
    """What the user's yes is recorded as: the file's SHA-256 and those of the code it names
    (checked_launch.covered_code: a graph, a builder, imported files, the interpreter's place),
    so code changed after the yes needs it again."""
    return "+".join([profile.digest, *covered_code(profile.config)])


class UntrustedProfileError(ProfileError):
    """A profile that would run code its user has not accepted."""

    def __init__(self, name: str, path: Path, code: list[str]) -> None:
        self.name, self.path, self.code = name, path, code
        lines = "\n".join(f"  - {line}" for line in code)
        super().__init__(
            f"The profile {name} ({path}) would run code you have not accepted:\n{lines}\n"
            f"Nothing was started. Read it with `tflaunch profiles show {name}`; if you accept what it runs, "
            f"`tflaunch profiles trust {name}` (or Apply it in the app's Profiles tab).")


class ProfileStore:
    def __init__(self, folder: Path, trust: TrustFile | None = None) -> None:
        self.folder = Path(folder)
        # Beside the folder, not in it: every *.toml in the folder is a profile.
        self.trust = trust or TrustFile(self.folder.with_name("trusted-profiles.toml"))
        self.kept_copy: Path | None = None  # the dated copy of the file the last save replaced

    def path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise ProfileError(f"'{name}' cannot name a profile: use letters, digits, spaces, '.', '_' or '-' "
                               "(up to 64, starting with a letter or digit).")
        return self.folder / f"{name}.toml"

    def entries(self) -> list[ProfileEntry]:
        if not self.folder.is_dir():
            return []
        result = []
        for path in sorted(self.folder.glob("*.toml"), key=lambda p: p.name.lower()):
            if path.name.startswith("."):
                continue  # a temporary file of an interrupted save
            try:
                result.append(ProfileEntry(path.stem, path, self._read(path), None))
            except ProfileError as exc:
                result.append(ProfileEntry(path.stem, path, None, str(exc)))
        return result

    def load(self, name: str) -> Profile:
        """The profile to look at; `load_for_launch` for one that is about to run."""
        path = self.path(name)
        if not path.exists():
            known = ", ".join(e.name for e in self.entries()) or "none yet"
            raise ProfileError(f"There is no profile '{name}' in {self.folder} (profiles: {known}).")
        return self._read(path)

    def _read(self, path: Path) -> Profile:
        data, text = read_profile_file(path, within=self.folder)
        try:
            profile = Profile.from_toml(text, str(path))
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError, OverflowError) as exc:
            # A shape shape_problem does not know yet: this file is broken, the others are listed.
            raise ProfileError(f"{shown(path)} cannot be used: {type(exc).__name__}: {shown(exc, 200)}. Correct it "
                               "in the file or save the profile again.") from None
        profile.name = path.stem
        profile.digest = digest(data)
        return profile

    # -- trust ---------------------------------------------------------------------------
    def unaccepted_code(self, profile: Profile) -> list[str]:
        """What this profile would run that its user has not accepted; empty when it runs
        no code, or when exactly this file was accepted."""
        code = code_it_runs(profile.config)
        if not code or self.trust.accepted(self.path(profile.name)) == acceptance(profile):
            return []
        return code

    def load_for_launch(self, name: str) -> Profile:
        """The profile, if it may run, with the settings a launch executes: what its yes was
        compared with (checked_launch.as_checked). A file whose code was not accepted is refused."""
        profile = self.load(name)
        try:
            profile.config = as_checked(profile.config)
        except OSError as exc:  # PrivateCopyError's message says it whole
            raise ProfileError(f"The profile {name} cannot be launched: {shown(exc, 1000)}") from None
        if self.unaccepted_code(profile):  # said as judged: the interpreter where it led, the code by its names
            raise UntrustedProfileError(name, self.path(name), code_it_runs(as_written(profile.config)))
        return profile

    def accept(self, name: str, seen_digest: str | None = None) -> Profile:
        """Record that the user accepts what this file runs. `seen_digest`: the file the
        user was shown; if it changed since, nothing is accepted."""
        profile = self.load(name)
        if seen_digest is not None and seen_digest != profile.digest:
            raise ProfileError(f"The profile {name} changed on disk after it was shown; look at it again "
                               "before accepting it.")
        self._write_trust(lambda: self.trust.accept(self.path(name), acceptance(profile)))
        return profile

    def revoke(self, name: str) -> None:
        self._write_trust(lambda: self.trust.forget(self.path(name)))

    def _write_trust(self, action: Callable[[], None]) -> None:
        try:
            action()
        except OSError as exc:
            raise ProfileError(f"Trust cannot be recorded in {self.trust.path}: {exc.strerror or exc}. "
                               "Check that folder's permissions and free space.") from None

    # -- files ---------------------------------------------------------------------------
    def check_writable(self, name: str) -> Path:
        """Before minutes of runs: the name is valid and the folder takes a new file."""
        path = self.path(name)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=self.folder).close()
        except OSError as exc:
            raise ProfileError(f"Profiles cannot be saved in {self.folder}: {exc.strerror or exc}. Fix the "
                               "folder's permissions, or set TFLAUNCH_CONFIG_DIR to a folder you can write.") from None
        return path

    def save(self, profile: Profile, overwrite: bool = False, *, trusted: bool = True) -> Path:
        """Write the profile. `overwrite`: the user's yes to replace one (kept_copy); `trusted`: not an import."""
        path, self.kept_copy = self.path(profile.name), None
        if path.exists():
            try:
                self._read(path)
            except ProfileError as exc:
                raise ProfileError(f"{path} is kept as it is because it cannot be read ({exc}) "
                                   "Rename or delete it first.") from None
            if not overwrite:
                raise ProfileError(f"A profile '{profile.name}' exists already; choose another name.")
            self.kept_copy = keep_replaced(path)
        profile.config = as_written(profile.config)  # a checked profile's copies are gone when this process ends
        data = profile.to_toml().encode("utf-8")
        try:
            atomic_write(path, data)
        except OSError as exc:
            raise ProfileError(f"The profile {profile.name} could not be written to {path}: "
                               f"{exc.strerror or exc}. Free some space or fix the folder's permissions; "
                               "the runs it came from are in the run history.") from None
        profile.digest = digest(data)
        if trusted:
            self._write_trust(lambda: self.trust.accept(path, acceptance(profile)))
        else:  # an import over an accepted profile must not inherit the acceptance
            self._write_trust(lambda: self.trust.forget(path))
        return path

    def delete(self, name: str) -> None:
        path = self.path(name)
        if not path.exists():
            raise ProfileError(f"There is no profile '{name}' to delete.")
        path.unlink()
        self._write_trust(lambda: self.trust.forget(path))

    def rename(self, name: str, new_name: str) -> None:
        self.duplicate(name, new_name)
        self.delete(name)

    def duplicate(self, name: str, new_name: str) -> None:
        """A copy under another name, accepted as far as the original was."""
        profile = self.load(name)
        was_accepted = not self.unaccepted_code(profile)
        profile.name = new_name
        self.save(profile, trusted=was_accepted)

    def import_file(self, source: Path, name: str | None = None, overwrite: bool = False) -> Profile:
        """Add someone's profile; what it would run needs the user's acceptance first."""
        text = read_profile_file(Path(source))[1]
        profile = Profile.from_toml(text, str(source))
        profile.name = name or Path(source).stem
        self.save(profile, overwrite=overwrite, trusted=False)
        return profile

    def export(self, name: str, target: Path) -> None:
        try:
            atomic_write(Path(target), self.load(name).to_toml().encode("utf-8"))
        except OSError as exc:
            raise ProfileError(f"The profile {name} could not be written to {target}: {exc.strerror or exc}.") \
                from None


def _cache_folders(record: RunRecord) -> dict[str, str]:
    """The CUDA and XLA cache folders a run's child was given, as it read them back."""
    applied, out = record.settings, {}
    if record.config.cuda_cache and applied.cuda_cache is not None:
        out["cuda_cache"] = f"{record.config.cuda_cache}: {applied.cuda_cache}"
    flags = applied.xla_flags
    if record.config.xla_cache and flags is not None and "persistent_cache_directory=" in flags:
        out["xla_cache"] = flags.split("persistent_cache_directory=", 1)[1].split()[0]
    if record.cache_pack is not None and record.cache_pack.folder is not None:  # the pack's key: its folder's name
        out["cache_pack"] = record.cache_pack.folder.rstrip("/").rsplit("/", 1)[-1]
    return out


def evidence_from_runs(runs: Sequence[RunRecord], baseline: Sequence[RunRecord] = ()) -> dict[str, Any]:
    """The figures behind a profile: per-phase medians and spread, environment, baseline."""
    ok = [r for r in runs if r.status is RunStatus.OK]
    if not ok:
        raise ProfileError("A profile needs at least one successful run as evidence.")
    phases = {}
    for name in phase_rows(ok):  # steady state as a total depends on the count: per call below
        if name in AFTER_READY:
            continue
        summary = summarize(p.duration for p in (r.phase(name) for r in ok) if p is not None)
        if summary:
            phases[name] = summary.to_dict()
    other = summarize(r.other_time for r in ok)
    if other:
        phases[OTHER] = other.to_dict()
    ready = summarize(r.time_to_ready for r in ok)
    per_call = summarize(r.latency.get("median") for r in ok if r.latency.get("n"))
    env = ok[-1].environment
    subject = ok[-1].config
    evidence: dict[str, Any] = {
        "model": subject.subject,
        # What was measured: a model, or a program to its ready point. A program is evidence,
        # never a setting: a profile starts whatever command `tflaunch run` is given.
        **({"program": list(subject.program), "until": subject.until} if subject.is_program
           else {"call": subject.call}),
        "runs": len(ok),
        "date": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ok[-1].launched_at)),
        "time_to_ready": ready.to_dict() if ready else None,
        "peak_rss_bytes_median": int(statistics.median(r.peak_rss for r in ok if r.peak_rss))
        if any(r.peak_rss for r in ok) else None,
        "phases": phases,
        "steady_per_call": {"median": per_call.median, "min": per_call.low, "max": per_call.high,
                            "p90_median": statistics.median([r.latency["p90"] for r in ok if r.latency.get("p90")]
                                                            or [per_call.median]),
                            "calls": ok[-1].latency.get("n"), "batch": ok[-1].fed_batch} if per_call else None,
        "inputs": ok[-1].inputs_line or None,
        "assumed_input_shape": bool(ok[-1].assumed_inputs),
        "environment": {"tensorflow": env.tensorflow, "keras": env.keras, "python": env.python, "cpu": env.cpu,
                        "cores": env.cores, "driver": env.driver, "cuda": env.cuda},
        "gpus": [g.model or g.name for g in env.gpus or ()],
    }
    used = _cache_folders(ok[-1])
    if used:
        # The folders the winner was measured with: a launch of this profile uses the same pack
        # (named by the stack below); a launch on another stack fills its own (settings.caches).
        nvml = ok[-1].launch_gpus
        evidence["caches"] = {**used, "tensorflow": env.tensorflow,
                              "driver": (nvml.driver if nvml is not None else None) or env.driver,
                              "gpus": evidence["gpus"]}
    base_ok = [r for r in baseline if r.status is RunStatus.OK]
    base_ready = summarize(r.time_to_ready for r in base_ok)
    if base_ready and ready:
        evidence["baseline"] = {"settings": base_ok[0].config.summary(), "runs": len(base_ok),
                                "time_to_ready_median": base_ready.median,
                                "speedup": base_ready.median / ready.median}
    rounded: dict[str, Any] = _rounded(evidence)
    return rounded


def _rounded(value: Any) -> Any:
    """Seconds to the microsecond: more digits are noise in a file people read and diff."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, float):
        return round(value, 6)
    return value


# Fewer runs than this and a median is no comparison: one run is one draw of the noise.
ENOUGH_RUNS = 3
_MEASURE_MORE = ("measure with --repeat 3 or more (in the app: 3 or more runs of these settings) and save again.")


def _count(n: object, noun: str) -> str:
    """"1 run", "3 runs"; a count that was not recorded says so."""
    if not isinstance(n, int):
        return f"{noun}s (count not recorded)"
    return f"{n} {noun}" + ("" if n == 1 else "s")


def evidence_weakness(evidence: dict[str, Any]) -> str:
    """Why these figures cannot carry a comparison yet, and what to do; "" when they can."""
    runs = evidence.get("runs")
    if runs is None:  # the doctor's verified remedies carry their runs with the verification
        runs = (evidence.get("doctor") or {}).get("runs")
    if isinstance(runs, int) and runs < ENOUGH_RUNS:
        why = "a single measurement, not a comparison" if runs <= 1 else "too few to tell a difference from noise"
        return f"{_count(runs, 'run')}: {why}; {_MEASURE_MORE}"
    base = (evidence.get("baseline") or {}).get("runs")
    if isinstance(base, int) and base < ENOUGH_RUNS:
        return (f"the baseline has {_count(base, 'run')}, so the speedup against it is not a comparison yet; "
                f"{_MEASURE_MORE}")
    return ""


def weak_evidence(evidence: dict[str, Any]) -> str:
    """The line that says the evidence is weak (one of describe_evidence's), or ""."""
    weakness = evidence_weakness(evidence)
    return f"Weak evidence: {weakness}" if weakness else ""


def describe_evidence(evidence: dict[str, Any]) -> list[str]:
    """The evidence as sentences with units, for people rather than files; a weak one says so
    right after its time to ready."""
    lines = []
    ready = evidence.get("time_to_ready") or {}
    if ready:
        lines.append(f"Time to ready: median {format_duration(ready.get('median'))} "
                     f"(min {format_duration(ready.get('min'))}, max {format_duration(ready.get('max'))}, "
                     f"{_count(evidence.get('runs'), 'run')}) on {evidence.get('model')}")
    weak = weak_evidence(evidence)
    if weak:
        lines.append(weak)
    sweep = evidence.get("sweep")
    if isinstance(sweep, dict) and isinstance(sweep.get("node_type"), str):
        lines.append(f"Measured on cluster nodes of type {sweep['node_type'][:120]}: on another node type "
                     "the fastest settings may differ")
    base = evidence.get("baseline")
    if base:
        lines.append(f"{base['speedup']:.2f}× faster than {base['settings']} "
                     f"(median {format_duration(base['time_to_ready_median'])} over {_count(base.get('runs'), 'run')})")
    phases = evidence.get("phases") or {}
    if phases:
        lines.append("Phases (median): " + ", ".join(
            f"{label(name) if name != OTHER else 'Other'} {format_duration(p.get('median'))}"
            for name, p in phases.items() if isinstance(p, dict) and (name == OTHER or NAME.match(name))))
    steady = evidence.get("steady_per_call")
    if isinstance(steady, dict) and steady.get("median") is not None:
        lines.append(f"Steady latency: median {format_duration(steady['median'])} per call "
                     f"(batch {steady.get('batch')}, {_count(steady.get('calls'), 'call')} per run)")
    if evidence.get("inputs"):
        lines.append(f"Inputs: {evidence['inputs']}" + (" (assumed input shape)"
                                                        if evidence.get("assumed_input_shape") else ""))
    if evidence.get("peak_rss_bytes_median"):
        lines.append(f"Peak memory: median {format_bytes(evidence['peak_rss_bytes_median'])}")
    env = evidence.get("environment") or {}
    if env:
        gpus = ", ".join(evidence.get("gpus") or []) or "no GPU"
        cpu = env.get("cpu") or "an unnamed CPU"
        cores = f" ({env['cores']} cores)" if env.get("cores") else ""
        lines.append(f"Measured with TensorFlow {env.get('tensorflow') or '(version not recorded)'}, "
                     f"Python {env.get('python') or '(version not recorded)'}, {cpu}{cores}, {gpus}, "
                     f"on {evidence.get('date') or '(date not recorded)'}")
    return lines
