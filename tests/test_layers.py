"""The import layers of ARCHITECTURE.md: no module imports a layer above its own.

Every module's imports of deskscore are read with `ast` (those inside functions too, since
heavy imports are deferred there; those under `if TYPE_CHECKING:` are annotations only and
not counted) and checked against the table below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = ("schemas", "scorers", "collectors", "sql", "pipelines", "datasets", "viewer", "api")
"""The code folders; api/ is the package `deskscore` itself (its modules are deskscore.<name>)."""

MAY_IMPORT: dict[str, set[str]] = {
    "schemas": set(),
    "scorers": {"schemas"},
    "sql": {"schemas", "scorers"},
    "collectors": {"schemas", "scorers"},
    "pipelines": {"schemas", "scorers", "collectors", "sql", "datasets", "viewer"},
    "datasets": set(),
    "viewer": {"schemas", "scorers", "collectors", "sql"},
    "api": {"schemas", "scorers", "collectors", "sql", "pipelines", "datasets"},
}
"""Which packages each package may import (itself always)."""

PIPELINE_LAYERS: dict[str, set[str]] = {
    "infra": set(),
    "options": {"infra"},
    "stages": {"infra"},
    "jobs": {"infra", "options", "stages"},
    "cli": {"infra", "options", "stages", "jobs"},
}
"""Inside pipelines: which parts each part may import (itself always)."""


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every runtime import of a deskscore module in `path`."""
    tree = ast.parse(path.read_text(), str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out.extend((node.lineno, n) for n in names[:1] if n.startswith("deskscore."))
    return out


def _part(module: str) -> tuple[str, str | None]:
    """('pipelines', 'jobs') for deskscore.pipelines.jobs.score; (pkg, None) elsewhere."""
    parts = module.split(".")
    pkg = parts[1] if len(parts) > 1 and parts[1] in PACKAGES else "api"
    sub = parts[2] if pkg == "pipelines" and len(parts) > 2 else None
    return pkg, sub


def violations(path: Path) -> list[str]:
    rel = path.relative_to(ROOT)
    own = rel.parts[0]
    own_sub = (
        rel.parts[1].removesuffix(".py") if own == "pipelines" and len(rel.parts) > 1 else None
    )
    found = []
    for line, module in imports_of(path):
        pkg, sub = _part(module)
        if pkg != own and pkg not in MAY_IMPORT[own]:
            found.append(f"{rel}:{line} imports {module} ({own} may not import {pkg})")
        elif (
            pkg == own == "pipelines"
            and own_sub in PIPELINE_LAYERS
            and sub is not None
            and sub != own_sub
            and sub in PIPELINE_LAYERS
            and sub not in PIPELINE_LAYERS[own_sub]
        ):
            found.append(f"{rel}:{line} imports {module} (pipelines.{own_sub} is below {sub})")
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    found = [v for path in _modules() for v in violations(path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("package", "source", "bad"),
    [
        ("collectors", "from deskscore.pipelines.cli.common import UserError\n", True),
        ("schemas", "def f():\n    import deskscore.scorers.wes\n", True),
        ("scorers", "from deskscore.schemas import TABLES\n", False),
        (
            "collectors",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from deskscore.pipelines.options import JobOptions\n",
            False,
        ),
    ],
)
def test_the_checker_sees_an_upward_import_even_inside_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, source: str, bad: bool
) -> None:
    folder = tmp_path / package
    folder.mkdir()
    module = folder / "made_up.py"
    module.write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert bool(violations(module)) is bad


def test_the_pipeline_parts_are_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "pipelines" / "stages"
    folder.mkdir(parents=True)
    module = folder / "made_up.py"
    module.write_text("from deskscore.pipelines.jobs.score import run_score\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations(module) == [
        "pipelines/stages/made_up.py:1 imports deskscore.pipelines.jobs.score "
        "(pipelines.stages is below jobs)"
    ]
