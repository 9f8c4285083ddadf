"""`deskscore view`: browse the warehouse in a local, read-only web app (deskscore.viewer).

It listens on 127.0.0.1 only, on a free port unless --port names one, and prints the URL;
it opens the browser there unless --no-browser. Nothing it serves writes the warehouse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse
from deskscore.pipelines.cli.output import say


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "view",
        help="browse runs, episodes, screenshots and loops in a local read-only web app",
        description="Serve a read-only web app over the warehouse on 127.0.0.1: the "
        "leaderboard, runs, per-domain tables, filtered task lists, each episode step by step "
        "with its screenshots, clicks, loops, verdicts and human reference, two runs compared "
        "side by side, and a read-only SQL page. Needs the 'viewer' extra "
        "(pip install 'deskscore[viewer]'). Stop it with Ctrl-C.",
    )
    warehouse_arg(p)
    p.add_argument(
        "--port", type=int, default=0, help="the port on 127.0.0.1 (default 0: a free one)"
    )
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    root = existing_warehouse(args.warehouse)
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port {args.port}: give a port from 1 to 65535, or 0 for a free one")
    from deskscore.viewer.serve import serve  # its extra is checked first (main.NEEDS)

    def ready(url: str) -> None:
        say(f"deskscore view: serving {root} at {url} (read-only; Ctrl-C stops it)")
        sys.stdout.flush()  # the URL, now: the server runs until stopped
        if not args.no_browser:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(root, args.port, ready)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    except KeyboardInterrupt:
        pass
    return 0
