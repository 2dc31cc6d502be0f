"""Icons, style sheets, desktop entry and screenshots shipped with tflaunch."""

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent
