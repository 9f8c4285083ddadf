"""Progress from worker processes reaches the display of the process that started them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from deskscore.pipelines.infra import progress


def test_ticks_in_another_process_are_summed_by_the_display(tmp_path: Path) -> None:
    code = "from deskscore.pipelines.infra import progress\nfor _ in range(7): progress.tick('episodes')"
    env = {**os.environ, progress.ENV: str(tmp_path)}
    for _ in range(2):  # two worker processes
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert progress._worker_totals(str(tmp_path)) == {"episodes": 14}


def test_without_a_display_a_tick_writes_nothing(tmp_path: Path) -> None:
    code = "from deskscore.pipelines.infra import progress\nprogress.tick('episodes')"
    env = {k: v for k, v in os.environ.items() if k != progress.ENV}
    subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True)
    assert list(tmp_path.iterdir()) == []
