"""A local worker process: Beam's SDK harness, started with its INFO chatter kept off stderr.

The pinned local runner starts one of these per worker in multi-processing mode. Beam's own
entry point logs a dozen INFO lines (and warnings about optional cloud clients) per worker
before it reads the pipeline's log level; a handler that passes errors only keeps the user's
terminal for progress and results (a failing element reaches the user as the run's error).
"""

from __future__ import annotations

import logging
import sys


def main() -> None:
    handler = logging.StreamHandler()
    handler.setLevel(logging.ERROR)
    logging.getLogger().addHandler(handler)  # Beam's basicConfig then adds no other handler
    from apache_beam.runners.worker import sdk_worker_main

    sdk_worker_main.main(sys.argv)


if __name__ == "__main__":
    main()
