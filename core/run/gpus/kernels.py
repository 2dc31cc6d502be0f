"""Will TensorFlow's GPU kernels run natively on a card, or be JIT-compiled at start?

A CUDA build of TensorFlow carries machine code (cubins) for some architectures, `sm_XY`,
and PTX, `compute_XY`, that the driver compiles for a newer card at start-up, then keeps in
the CUDA cache. What that compilation costs depends on the card, the build, the driver and
lazy module loading (0.05-0.35 s on an H200, minutes on older stacks): it is said only as
measured on that card (doctor.cuda_cache), never from the verdict alone. Which one a card
gets follows from tf.sysconfig.get_build_info()["cuda_compute_capabilities"] and the
card's compute capability, by CUDA's compatibility rules:
- a cubin for sm_XY runs on cards of major version X with minor version >= Y;
- PTX for compute_XY is JIT-compiled on any card of capability >= X.Y;
- an `a` suffix (sm_90a) means that exact capability only; `f` (sm_100f) the family,
  read as the plain rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ...units import format_bytes

CACHE_ADVICE_BYTES = 2 << 30  # a CUDA cache that holds TensorFlow's JIT-compiled kernels
_ENTRY = re.compile(r"^(sm|compute)_(\d{2,})([af]?)$")


class Verdict(str, Enum):
    NATIVE = "native"  # machine code for this card: no compilation at start
    JIT = "jit"  # only PTX fits: the driver compiles it at start, and the CUDA cache keeps it
    UNSUPPORTED = "unsupported"  # nothing in the build runs on this card
    NOT_CUDA = "not_cuda"  # the build has no CUDA: it does not use the card
    UNKNOWN = "unknown"  # the build or the card does not say enough


@dataclass(frozen=True)
class Target:
    """One entry of a build's capability list: sm_80 (a cubin) or compute_90 (PTX)."""

    ptx: bool
    major: int
    minor: int
    exact: bool = False  # the `a` suffix: this capability only

    @property
    def name(self) -> str:
        return f"{'compute' if self.ptx else 'sm'}_{self.major}{self.minor}{'a' if self.exact else ''}"

    def runs_on(self, card: tuple[int, int]) -> bool:
        if self.exact:
            return card == (self.major, self.minor)
        if self.ptx:
            return card >= (self.major, self.minor)
        return card[0] == self.major and card[1] >= self.minor


@dataclass(frozen=True)
class Prediction:
    verdict: Verdict
    message: str  # a sentence for the user: what happens on this card, and what to do
    target: str | None = None  # the build entry the card uses: sm_80, compute_90


def parse_target(entry: str) -> Target | None:
    """sm_89 -> Target(False, 8, 9); sm_100 -> 10.0; anything else None."""
    match = _ENTRY.match(entry.strip().lower())
    if match is None:
        return None
    kind, digits, suffix = match.groups()
    return Target(kind == "compute", int(digits[:-1]), int(digits[-1]), suffix == "a")


def sm_name(card: tuple[int, int]) -> str:
    return f"sm_{card[0]}{card[1]}"


def predict(capabilities: list[str] | None, card: tuple[int, int] | None, is_cuda_build: bool = True) -> Prediction:
    """What happens to a card of compute capability `card` with a build carrying `capabilities`."""
    if not is_cuda_build:
        return Prediction(Verdict.NOT_CUDA, "this TensorFlow is not built with CUDA (is_cuda_build False): it runs "
                          "on the CPU only. For the GPU, install a CUDA build: pip install 'tensorflow[and-cuda]'")
    if card is None:
        return Prediction(Verdict.UNKNOWN, "the card's compute capability is unknown (NVML did not report it)")
    targets = [t for t in (parse_target(entry) for entry in capabilities or []) if t is not None]
    if not targets:
        return Prediction(Verdict.UNKNOWN, "this TensorFlow does not say which compute capabilities it was built for "
                          "(cuda_compute_capabilities is empty), so whether it compiles kernels at start is unknown")
    cubins = [t for t in targets if not t.ptx and t.runs_on(card)]
    if cubins:
        best = max(cubins, key=lambda t: t.minor)  # the closest to the card
        on = "" if (best.major, best.minor) == card else f" (they run on this {sm_name(card)} card)"
        return Prediction(Verdict.NATIVE, f"native kernels for {best.name}{on}", best.name)
    ptx = [t for t in targets if t.ptx and t.runs_on(card)]
    if ptx:
        best = max(ptx, key=lambda t: (t.major, t.minor))  # the newest PTX the card can take
        return Prediction(Verdict.JIT, f"no native kernels for {sm_name(card)}: kernels are JIT-compiled from PTX "
                          f"({best.name}) on this card at start and kept in the CUDA cache (keep it: "
                          f"CUDA_CACHE_MAXSIZE ≥ {format_bytes(CACHE_ADVICE_BYTES)})", best.name)
    built = ", ".join(t.name for t in targets)
    return Prediction(Verdict.UNSUPPORTED, f"no kernels for {sm_name(card)}: this TensorFlow is built for {built}, "
                      f"none of which runs on compute capability {card[0]}.{card[1]}; TensorFlow will not use this "
                      "card. Install a TensorFlow built for it", None)


def cache_note(env: dict[str, str]) -> str:
    """What the CUDA cache settings in `env` mean for JIT-compiled kernels."""
    if env.get("CUDA_CACHE_DISABLE", "0").strip() not in ("", "0"):
        return (f"CUDA_CACHE_DISABLE={env['CUDA_CACHE_DISABLE']} here: every start compiles the kernels again; "
                "unset it")
    size = env.get("CUDA_CACHE_MAXSIZE")
    if size is None:
        return (f"CUDA_CACHE_MAXSIZE is not set here: the driver's default cache may not hold the kernels; set it "
                f"to {CACHE_ADVICE_BYTES} ({format_bytes(CACHE_ADVICE_BYTES)}) or more")
    try:
        value = int(size)
    except ValueError:
        return f"CUDA_CACHE_MAXSIZE={size!r} here is not a number of bytes; set it to {CACHE_ADVICE_BYTES} or more"
    fits = "enough" if value >= CACHE_ADVICE_BYTES else f"too small: set it to {CACHE_ADVICE_BYTES} or more"
    return f"CUDA_CACHE_MAXSIZE is {value} ({format_bytes(value)}) here: {fits}"


def _major_minor(version: str | None) -> tuple[int, int] | None:
    match = re.match(r"^(\d+)\.(\d+)", version or "")
    return None if match is None else (int(match[1]), int(match[2]))


def driver_note(driver_cuda: str | None, build_cuda: str | None, verdict: Verdict) -> str | None:
    """A driver too old for the build: CUDA's major version must match (or the build cannot
    start on the GPU), and PTX made by a newer toolkit than the driver is refused."""
    driver, build = _major_minor(driver_cuda), _major_minor(build_cuda)
    if driver is None or build is None or verdict in (Verdict.NOT_CUDA, Verdict.UNSUPPORTED):
        return None
    if driver[0] < build[0]:
        return (f"the driver supports CUDA {driver_cuda}, this TensorFlow needs CUDA {build[0]}: it will not use the "
                "GPU; update the NVIDIA driver")
    if verdict is Verdict.JIT and driver < build:
        return (f"the driver (CUDA {driver_cuda}) is older than the toolkit that made the PTX (CUDA {build_cuda}) "
                "and may refuse it (CUDA_ERROR_UNSUPPORTED_PTX_VERSION); update the NVIDIA driver")
    return None
