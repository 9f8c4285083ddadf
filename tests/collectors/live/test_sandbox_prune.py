"""`deskscore sandbox prune`: the images and VM disks of other source trees go, this tree's
and those still in use stay."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import tarfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.sandbox.build import SANDBOX, image_name, prune_images
from deskscore.collectors.live.sandbox.disk import BASE, DiskImage, prune_disks


def tiny_image(client: Any, name: str) -> str:
    """A one-file image imported under `name` (a real image, a few bytes), as the build imports."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = uuid.uuid4().hex.encode()  # a distinct layer, so a distinct image
        info = tarfile.TarInfo("marker")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    repository, tag = name.rsplit(":", 1)
    client.api.import_image_from_data(buf.getvalue(), repository=repository, tag=tag)
    return client.images.get(name).id


def test_prune_removes_other_trees_images_and_keeps_this_trees_and_those_in_use(
    docker_engine: Any,
) -> None:
    # A repository of this test's own, so the developer's real images are never touched.
    variant = dataclasses.replace(SANDBOX, repository=f"deskscore-prune-{uuid.uuid4().hex[:8]}")
    current = image_name(variant=variant)
    old = f"{variant.repository}:000000000001"
    in_use = f"{variant.repository}:000000000002"
    ids = {name: tiny_image(docker_engine, name) for name in (current, old, in_use)}
    container = docker_engine.containers.create(in_use, command="/marker")
    try:
        removed = prune_images(docker_engine, variant)
        left = {t for i in docker_engine.images.list(name=variant.repository) for t in i.tags}
        assert [name for name, _ in removed] == [old]
        assert left == {current, in_use}
        container.remove()
        assert [name for name, _ in prune_images(docker_engine, variant)] == [in_use]
        assert [i.id for i in docker_engine.images.list(name=variant.repository)] == [ids[current]]
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)
        for name in (current, old, in_use):
            with contextlib.suppress(Exception):
                docker_engine.images.remove(name, force=True)


def _disk(cache: Path, tag: str, size: int) -> Path:
    folder = cache / tag
    folder.mkdir(parents=True)
    (folder / BASE).write_bytes(b"\0" * size)
    return folder


def test_prune_disks_removes_other_trees_and_dead_builds_but_not_this_trees_build(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "vm"
    keep = DiskImage("aaaaaaaaaaaa", cache / "aaaaaaaaaaaa")
    _disk(cache, keep.tag, 10)
    _disk(cache, "bbbbbbbbbbbb", 1000)
    _disk(cache, ".cccccccccccc-x1", 300)  # a build of another tree that died half-way
    _disk(cache, f".{keep.tag}-y2", 20)  # this tree's build, under way in another process
    removed = {p.name: size for p, size in prune_disks(keep)}
    assert removed == {"bbbbbbbbbbbb": 1000, ".cccccccccccc-x1": 300}
    assert sorted(p.name for p in cache.iterdir()) == [f".{keep.tag}-y2", keep.tag]


def test_prune_disks_without_a_cache_removes_nothing(tmp_path: Path) -> None:
    assert prune_disks(DiskImage("aaaaaaaaaaaa", tmp_path / "none" / "aaaaaaaaaaaa")) == []


def test_prune_cli_reports_what_it_freed_and_why_images_were_not_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from deskscore.pipelines.cli.main import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # no engine answers
    _disk(tmp_path / "deskscore" / "vm", "bbbbbbbbbbbb", 2_000_000)
    assert main(["sandbox", "prune"]) == 0
    out, err = capsys.readouterr()
    assert "bbbbbbbbbbbb (2 MB)" in out
    assert "freed 2 MB" in out
    assert "images not pruned: no Docker engine answers" in err
