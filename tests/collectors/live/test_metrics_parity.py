"""The desktop tasks' metrics against OSWorld's own, run on the same files.

When OSWORLD_EVALUATORS names a copy of OSWorld's `desktop_env/evaluators` folder, every task
of the desktop set is set up on a folder desktop as test_desktop_tasks does, and scored in two
states: untouched (what its setup leaves) and solved (its SOLUTIONS entry applied). In each
state each of the task's metrics is called on the same files through this project's
implementation and through OSWorld's, and the verdicts must be the same, except where
EXPECTED_DIFFERENCES records a deliberate difference and why. A few files the task states do
not reach (EDGE_CASES) pin the places where the two sides once read a file differently.

The arguments are made as each side's getters hand them over: both sides get the same
`rule`s, command outputs, Chromium profile data and generated gold files; OSWorld's `vm_file`
always hands a metric a local copy's path, while this project's gives the text to the metrics
that read text (evaluators.get_state), so OSWorld's side is called with paths there.

OSWorld's metric modules are imported one by one from their files, without running the
`metrics` package's __init__ (which imports every module and so every optional library);
a task whose module needs a library that is not installed is skipped with that reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live import office_metrics
from deskscore.collectors.live.desktop_solutions import SOLUTIONS
from deskscore.collectors.live.evaluators import METRICS, get_state

PEER_ENV = "OSWORLD_EVALUATORS"
STATES = ("untouched", "solved")

FORMULA_RULE = (
    "check_cell's `formula` property is deskscore's: OSWorld's check_cell reads only a cell's "
    "value and styles, so it scores a rule on `formula` 0 whatever the cell holds"
)
EXPECTED_DIFFERENCES: dict[tuple[str, str], str] = {
    ("calc_sum_formula", "solved"): FORMULA_RULE,
    ("calc_average_formula", "solved"): FORMULA_RULE,
    ("chromium_enable_flag", "solved"): (
        "OSWorld's check_enabled_experiments drops each entry's @N option before comparing, "
        "so a flag set to Disabled (name@2) passes as enabled and the rule's name@1 never "
        "matches; deskscore compares the entries whole"
    ),
    ("vlc_recordings_folder", "solved"): (
        "the rule's ~/Recordings means that folder under the desktop user's home, which is "
        "not /home/user on every provider; OSWorld compares vlcrc's text with the rule's"
    ),
}
"""(task id, state) -> why OSWorld's metric gives another verdict there on purpose."""


def _desktop_tasks_module() -> types.ModuleType:
    """test_desktop_tasks, for its folder desktop and task set (the tests are not a package)."""
    path = Path(__file__).with_name("test_desktop_tasks.py")
    spec = importlib.util.spec_from_file_location("_desktop_tasks_for_parity", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DESKTOP_TASKS = _desktop_tasks_module()
TASKS: list[dict[str, Any]] = DESKTOP_TASKS.TASKS


def _funcs(task: Mapping[str, Any]) -> list[str]:
    func = task["evaluator"]["func"]
    return func if isinstance(func, list) else [func]


@pytest.fixture(scope="module")
def osworld() -> Iterator[Path]:
    """OSWorld's evaluators folder, with `desktop_env.evaluators.metrics` importable module by
    module (OSWorld's modules import each other by that absolute name)."""
    folder = os.environ.get(PEER_ENV)
    if not folder:
        pytest.skip(
            f"{PEER_ENV} is not set: point it at a copy of OSWorld's desktop_env/evaluators "
            "folder to compare the desktop tasks' metrics with OSWorld's"
        )
    root = Path(folder)
    if not (root / "metrics").is_dir():
        pytest.fail(f"{PEER_ENV}={folder} has no metrics/ folder")
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "desktop_env"}
    for name, path in (
        ("desktop_env", root.parent),
        ("desktop_env.evaluators", root),
        ("desktop_env.evaluators.metrics", root / "metrics"),
    ):
        package = types.ModuleType(name)
        package.__path__ = [str(path)]
        sys.modules[name] = package
    yield root
    for name in [k for k in sys.modules if k.split(".")[0] == "desktop_env"]:
        del sys.modules[name]
    sys.modules.update(saved)


def _osworld_metric(root: Path, func: str) -> Callable[..., float] | None:
    """OSWorld's metric `func` from the metrics module that defines it (None: OSWorld has no
    metric of that name); skips when that module needs a library that is not installed."""
    pattern = re.compile(rf"^def {re.escape(func)}\(", re.M)
    for path in sorted((root / "metrics").glob("*.py")):
        if path.name != "__init__.py" and pattern.search(path.read_text(encoding="utf-8")):
            try:
                module = importlib.import_module(f"desktop_env.evaluators.metrics.{path.stem}")
            except Exception as e:  # a missing library, or one that cannot load here
                pytest.skip(
                    f"OSWorld's metrics/{path.name} ({func}) cannot be imported here: "
                    f"{type(e).__name__}: {e}"
                )
            return getattr(module, func)
    return None


def _args(
    desktop: Any, evaluator: Mapping[str, Any], i: int, workdir: Path, osworld_side: bool
) -> list[Any]:
    """The result (and expected, when given) that metric i gets, as one side's getters hand
    them over."""
    func = _funcs({"evaluator": evaluator})[i]
    workdir.mkdir()
    args = []
    for key in ("result", "expected"):
        cfg = evaluator.get(key)
        cfg = cfg[i] if isinstance(cfg, list) else cfg
        if cfg is None:
            continue
        # OSWorld's vm_file (and cloud_file, where deskscore generates the gold file) always
        # hands over a local copy's path; deskscore's gives text to the metrics that read text.
        as_path = func in office_metrics.PATH_METRICS or (
            osworld_side and cfg.get("type") in ("vm_file", "generated_file")
        )
        args.append(get_state(desktop, cfg, workdir=str(workdir), as_path=as_path))
    return args


def _options(evaluator: Mapping[str, Any], i: int) -> dict[str, Any]:
    options = evaluator.get("options") or {}
    return dict((options[i] if isinstance(options, list) else options) or {})


CASES = [
    pytest.param(task, state, i, id=f"{task['id']}-{func}-{state}")
    for task in TASKS
    for i, func in enumerate(_funcs(task))
    for state in STATES
]


@pytest.mark.parametrize(("task", "state", "i"), CASES)
def test_metric_gives_osworlds_verdict_on_the_same_files(
    osworld: Path, task: Mapping[str, Any], state: str, i: int, tmp_path: Path
) -> None:
    func = _funcs(task)[i]
    theirs = _osworld_metric(osworld, func)
    if theirs is None:
        pytest.skip(f"OSWorld has no metric {func}")
    desktop = DESKTOP_TASKS._set_up(task, tmp_path)
    if state == "solved":
        SOLUTIONS[task["id"]](desktop.home)
    evaluator = task["evaluator"]
    options = _options(evaluator, i)
    ours = float(METRICS[func](*_args(desktop, evaluator, i, tmp_path / "ours", False), **options))
    theirs_args = _args(desktop, evaluator, i, tmp_path / "theirs", True)
    osworlds = float(theirs(*theirs_args, **options))
    why = EXPECTED_DIFFERENCES.get((task["id"], state))
    if why is None:
        assert ours == osworlds, (func, state, ours, osworlds)
    else:
        assert ours != osworlds, f"expected to differ ({why}), but both score {ours}"


# ---- files the task states do not reach: where the two sides once read a file differently


def _docx_file(path: Path, paragraphs: list[list[str]]) -> str:
    """A document whose paragraphs hold these runs' texts, set in Liberation Serif."""
    import docx

    doc = docx.Document()
    for runs in paragraphs:
        p = doc.add_paragraph()
        for text in runs:
            p.add_run(text).font.name = "Liberation Serif"
    doc.save(str(path))
    return str(path)


def _joined_paragraphs(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    a = _docx_file(tmp / "a.docx", [["Hello world"], ["Second"]])
    return [a, _docx_file(tmp / "b.docx", [["Hello worldSecond"]])], {}


def _blank_run_in_another_font(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    import docx

    path = _docx_file(tmp / "a.docx", [["Title"], ["Body", " "]])
    doc = docx.Document(path)
    doc.paragraphs[1].runs[1].font.name = "DejaVu Sans"
    doc.save(path)
    return [path, {"font_name": "Liberation Serif"}], {}


def _break_before_only(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    import docx

    path = _docx_file(tmp / "a.docx", [["One"], ["Two"]])
    doc = docx.Document(path)
    doc.paragraphs[1].paragraph_format.page_break_before = True
    doc.save(path)
    return [path, {}], {}


def _unstruck_blank_run(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    import docx

    gold = _docx_file(tmp / "gold.docx", [["Keep"], ["Strike me"]])
    path = _docx_file(tmp / "a.docx", [["Keep"], ["Strike me", " "]])
    doc = docx.Document(path)
    doc.paragraphs[1].runs[0].font.strike = True
    doc.save(path)
    return [path, gold], {}


def _same_folder_twice(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    work = {"type": "folder", "name": "Work", "children": []}
    roots = {"bookmark_bar": {"type": "folder", "children": [work, dict(work)]}}
    return [roots, {"type": "bookmark_bar_folders_names", "names": ["Work"]}], {}


def _one_instance_left_at_default(tmp: Path) -> tuple[list[Any], dict[str, Any]]:
    path = tmp / "vlcrc"
    path.write_text("[core]\n#one-instance-when-started-from-file=1\n", encoding="utf-8")
    return [str(path), {"expected_one_instance_when_started_from_file": 1}], {}


EDGE_CASES = [
    ("compare_docx_files", _joined_paragraphs),
    ("compare_font_names", _blank_run_in_another_font),
    ("contains_page_break", _break_before_only),
    ("evaluate_strike_through_last_paragraph", _unstruck_blank_run),
    ("is_expected_bookmarks", _same_folder_twice),
    ("check_one_instance_when_started_from_file", _one_instance_left_at_default),
]


@pytest.mark.parametrize(("func", "build"), EDGE_CASES, ids=[b.__name__[1:] for _, b in EDGE_CASES])
def test_metric_gives_osworlds_verdict_on_edge_files(
    osworld: Path,
    func: str,
    build: Callable[[Path], tuple[list[Any], dict[str, Any]]],
    tmp_path: Path,
) -> None:
    theirs = _osworld_metric(osworld, func)
    assert theirs is not None, f"OSWorld has no metric {func}"
    args, options = build(tmp_path)
    assert float(METRICS[func](*args, **options)) == float(theirs(*args, **options))
