"""`deskscore sandbox ...`: build the sandbox image, print its name, remove leftover containers."""

from __future__ import annotations

import sys
from typing import Any


def add_parser(sub: Any) -> None:
    """The `sandbox` subcommand's arguments (registered by pipelines/cli.py)."""
    p = sub.add_parser(
        "sandbox",
        help="build the sandbox desktop image (offline, from Debian packages) and manage its containers",
        description=(
            "The live collector's sandbox: a Docker image built from Debian bookworm with "
            "debootstrap (Xvfb, a window manager, xterm, a text editor, pyautogui and the "
            "controller), tagged with a hash of its content so an unchanged image is never "
            "rebuilt."
        ),
    )
    actions = p.add_subparsers(dest="sandbox_action", required=True)
    b = actions.add_parser(
        "build", help="build the image unless an image of the same content exists"
    )
    b.add_argument("--force", action="store_true", help="build even if the image exists")
    b.add_argument(
        "--mirror",
        help="Debian mirror URL (default: the one apt on this machine uses, else deb.debian.org)",
    )
    b.add_argument("--workdir", help="folder for the temporary root file system (default: TMPDIR)")
    b.add_argument(
        "--vm",
        action="store_true",
        help="build the qemu provider's VM disk instead (same file system plus a Debian "
        "kernel; kept in ~/.cache/deskscore/vm)",
    )
    i = actions.add_parser("image", help="print the image name of this source tree")
    i.add_argument("--vm", action="store_true", help="print the VM disk's folder instead")
    for action in (b, i):
        action.add_argument(
            "--desktop",
            action="store_true",
            help="the desktop variant: LibreOffice, Chromium, GIMP, VLC, Thunderbird, mousepad, "
            "pcmanfm and the accessibility bus (deskscore-desktop)",
        )
    c = actions.add_parser(
        "clean", help="remove sandbox containers left by killed runs (labelled deskscore.sandbox)"
    )
    c.add_argument(
        "--all", action="store_true", help="remove every sandbox container, running ones too"
    )
    actions.add_parser(
        "prune",
        help="remove the images and VM disks built from other versions of deskscore "
        "(a rebuild leaves the old ones: 0.5-2 GB each)",
    )
    p.set_defaults(handler=run)


def run(args: Any, beam_args: list[str]) -> int:
    from deskscore.collectors.live.providers import ProviderError, cleanup_leftovers, docker_client
    from deskscore.collectors.live.sandbox.build import (
        DESKTOP,
        SANDBOX,
        BuildError,
        ensure_image,
        image_name,
    )

    if getattr(args, "vm", False):
        return _vm(args)
    variant = DESKTOP if getattr(args, "desktop", False) else SANDBOX
    if args.sandbox_action == "image":
        print(image_name(variant=variant))
        return 0
    if args.sandbox_action == "prune":
        return _prune()
    try:
        if args.sandbox_action == "clean":
            from deskscore.collectors.live.qemu import cleanup_vm_leftovers

            for name in cleanup_vm_leftovers(everything=args.all):  # no engine needed for VMs
                print(f"removed VM {name}")
            client = docker_client()
            for name in cleanup_leftovers(client, everything=args.all):
                print(f"removed {name}")
            return 0
        result = ensure_image(
            docker_client(),
            force=args.force,
            mirror=args.mirror,
            workdir=args.workdir,
            log=lambda msg: print(msg, file=sys.stderr, flush=True),
            variant=variant,
        )
    except (ProviderError, BuildError) as e:
        print(f"deskscore sandbox {args.sandbox_action}: {e}", file=sys.stderr)
        return 1
    return _built(result.image, result)


def _vm(args: Any) -> int:
    """`sandbox build --vm` and `sandbox image --vm`: the qemu provider's disk."""
    from deskscore.collectors.live.sandbox.build import BuildError
    from deskscore.collectors.live.sandbox.disk import disk_image, ensure_disk

    if args.sandbox_action == "image":
        print(disk_image().folder)
        return 0
    try:
        result = ensure_disk(
            force=args.force,
            mirror=args.mirror,
            log=lambda msg: print(msg, file=sys.stderr, flush=True),
        )
    except BuildError as e:
        print(f"deskscore sandbox build --vm: {e}", file=sys.stderr)
        return 1
    return _built(f"VM disk {result.disk.tag}", result)


def _prune() -> int:
    """`sandbox prune`: other trees' images (when an engine runs) and VM disks."""
    from deskscore.collectors.live.providers import ProviderError, docker_client
    from deskscore.collectors.live.sandbox.build import VARIANTS, image_name, prune_images
    from deskscore.collectors.live.sandbox.disk import prune_disks

    removed = [(str(folder), size) for folder, size in prune_disks()]
    try:
        client = docker_client()
    except ProviderError as e:
        print(f"images not pruned: {e}", file=sys.stderr)
    else:
        import docker.errors

        for variant in VARIANTS.values():
            try:
                removed += prune_images(client, variant)
            except docker.errors.ImageNotFound:
                print(
                    f"{image_name(variant=variant)} is not built: the older {variant.name} "
                    "images are kept until it is",
                    file=sys.stderr,
                )
    for name, size in removed:
        print(f"removed {name} ({size / 1e6:.0f} MB)")
    print(f"freed {sum(size for _, size in removed) / 1e6:.0f} MB")
    return 0


def _built(what: str, result: Any) -> int:
    """Say what a build made (its steps' seconds and its size) or that it existed."""
    size_mb = result.size_bytes / 1e6
    if not result.built:
        print(f"{what} exists ({size_mb:.0f} MB); nothing to build")
        return 0
    steps = ", ".join(f"{k} {v:.0f} s" for k, v in result.steps.items())
    print(f"built {what} in {result.seconds:.0f} s ({steps}); {size_mb:.0f} MB")
    return 0
