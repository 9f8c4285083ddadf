"""`deskscore view`: a local, read-only web app over one warehouse.

Pages (Starlette, Jinja2 templates, served by uvicorn on 127.0.0.1 only): the leaderboard,
each run with its per-domain table and a filtered, paged task list, an episode step by step
(screenshots read lazily from the run's archive, clicks and drags drawn on them, loop spans,
interactions, verdicts and the human reference beside it), two runs compared on one task,
and a read-only SQL page. Nothing is served that the warehouse does not name: a screenshot
is asked for by episode and step index, and its file is found through the warehouse's tables,
read through collectors.screenshots under hash's image rules. No endpoint writes.
"""

from __future__ import annotations
