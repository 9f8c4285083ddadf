"""The sandbox image's build: its content tag, the Debian mirror it reads from apt, and the
skip when the image of the same content exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskscore.collectors.live.sandbox import build
from deskscore.pipelines.cli.main import main


def test_content_tag_follows_file_content_not_file_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("one")
    b.write_text("two")
    tag = build.content_tag([a, b])
    assert tag == build.content_tag([b, a])
    assert len(tag) == 12 and int(tag, 16) >= 0
    b.write_text("two!")
    assert build.content_tag([a, b]) != tag
    # A file moving its bytes to another name is another image too.
    c = tmp_path / "c.py"
    c.write_text("two!")
    assert build.content_tag([a, c]) != build.content_tag([a, b])


def test_the_image_tag_covers_the_controller_and_the_session(tmp_path: Path) -> None:
    assert set(build.CONTENT_FILES) >= {"build.py", "controller.py", "desktop.py", "jwmrc"}
    assert build.image_name() == f"deskscore-sandbox:{build.content_tag()}"


def test_mirrors_come_from_the_apt_sources_of_the_machine(tmp_path: Path) -> None:
    apt = tmp_path / "etc/apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list").write_text(
        "# a comment\ndeb [arch=amd64] https://packages.example.com/apt stable main\n"
    )
    (apt / "sources.list.d/debian.sources").write_text(
        "Types: deb\n"
        "URIs: http://mirror.example.org/debian/\n"
        "Suites: bookworm bookworm-updates\n"
        "Components: main\n"
        "\n"
        "Types: deb\n"
        "URIs: http://mirror.example.org/debian-security\n"
        "Suites: bookworm-security\n"
        "Components: main\n"
    )
    assert build.debian_mirrors(str(tmp_path)) == (
        "http://mirror.example.org/debian",
        "http://mirror.example.org/debian-security",
    )
    assert build.debian_mirrors(str(tmp_path / "nothing")) == (
        build.DEFAULT_MIRROR,
        build.DEFAULT_SECURITY_MIRROR,
    )


def test_an_existing_image_of_the_same_content_is_not_rebuilt(
    docker_engine: Any, sandbox_image: str
) -> None:
    result = build.ensure_image(docker_engine)
    assert (result.image, result.built) == (sandbox_image, False)
    assert result.size_bytes > 100_000_000
    labels = docker_engine.images.get(sandbox_image).labels
    assert labels[build.LABEL_IMAGE] == sandbox_image.rsplit(":", 1)[1]


def test_the_cli_names_the_image_of_this_source_tree(capsys: Any) -> None:
    assert main(["sandbox", "image"]) == 0
    assert capsys.readouterr().out.strip() == build.image_name()


def test_the_desktop_variant_is_an_image_of_its_own(capsys: Any) -> None:
    desktop = build.image_name(variant=build.DESKTOP)
    assert desktop.startswith("deskscore-desktop:")
    assert desktop.rsplit(":", 1)[1] != build.content_tag()  # same files, another image
    assert set(build.PACKAGES) < set(build.DESKTOP.packages)
    assert {"libreoffice-calc", "chromium", "gimp", "vlc", "thunderbird"} <= set(
        build.DESKTOP.packages
    )
    assert main(["sandbox", "image", "--desktop"]) == 0
    assert capsys.readouterr().out.strip() == desktop
