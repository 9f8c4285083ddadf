"""Score one agent run on OSWorld-Human: a drop-in for OSWorld-Human's `score.py`.

    python score.py --result-path RUN [--max-steps-scoring 15] [--uitars]
                    [--human-path DIR | --human-version {2025-06,verified}]
                    [--compat {osworld-human,deskscore}]

Copy it anywhere (OSWorld-Human's folder, say) or run it from here: it needs only the light
install of deskscore (`pip install deskscore`, no extra), whose module deskscore.score_py
holds the script (`python -m deskscore.score_py` runs the same). See docs/rescore.md.
"""

from __future__ import annotations

import os
import sys


def _install_hint() -> str:
    """How to install deskscore from where this file is: its own checkout when it sits in one
    (OSWorld-Human's folder has a setup of its own, so `pip install .` there is wrong)."""
    here = os.path.dirname(os.path.abspath(__file__))
    project = os.path.join(here, "pyproject.toml")
    try:
        with open(project, encoding="utf-8") as f:
            ours = 'name = "deskscore"' in f.read()
    except OSError:
        ours = False
    if ours:
        return f"pip install '{here}'"
    return "pip install deskscore (or, from a deskscore checkout, pip install /path/to/deskscore)"


try:
    from deskscore.score_py import main
except ImportError as _e:  # only without the package installed
    sys.exit(f"score.py needs the deskscore package ({_e}); install it with: {_install_hint()}")

if __name__ == "__main__":
    sys.exit(main())
