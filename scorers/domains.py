"""The benchmark domain names the scorers treat specially."""

from __future__ import annotations

OSWORLD_DOMAINS: tuple[str, ...] = (
    "chrome",
    "gimp",
    "libreoffice_calc",
    "libreoffice_impress",
    "libreoffice_writer",
    "multi_apps",
    "os",
    "thunderbird",
    "vlc",
    "vs_code",
)
"""The ten OSWorld domain folders; OSWorld-Human's score.py reads exactly these (and counts
only their trajectories toward S)."""

UITARS_DOMAIN = "uitars"
"""Domain of UI-TARS episodes. Human rows with this domain carry the instruction text as
task_id and match episodes on their `instruction`, as OSWorld-Human keys UI-TARS results."""
