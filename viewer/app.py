"""The viewer's Starlette application: GET routes only, each page a Jinja2 template.

Every response forbids the browser to fetch anything from elsewhere (Content-Security-Policy
'self'), and requests must name the loopback host (a page of another site cannot reach the
viewer by rebinding a DNS name to 127.0.0.1). Archive text is untrusted: templates escape
everything (autoescape), and the only script is the package's own static file.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from deskscore.sql.cells import cell_text
from deskscore.viewer.marks import screen_size, step_marks
from deskscore.viewer.shots import Refused, Screenshots
from deskscore.viewer.sql_page import SHOWN_ROWS, as_csv, run_query
from deskscore.viewer.store import OUTCOMES, PAGE_SIZE, Store, TaskFilter

HERE = Path(__file__).parent
CSP = (
    "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HOSTS = ["127.0.0.1", "localhost"]

LEADERBOARD_COLUMNS = (
    ("success_rate_run_pct", "show_result %"),
    ("success_rate_human_pct", "OSWorld-Human %"),
    ("wes_plus_single_pct", "WES+ single"),
    ("wes_minus", "WES-"),
    ("mean_step_ratio_single", "steps / human"),
    ("cost_per_task_usd", "$/task"),
    ("median_task_s", "median task s"),
    ("n_tasks_run", "tasks run"),
    ("human_version", "human"),
    ("max_steps_scoring", "step budget S"),
    ("compat", "rules"),
    ("agent", "agent"),
)
"""(leaderboard column, header) as the viewer's leaderboard shows them."""


_MAX_INT = 2**31 - 1
"""Past any count a warehouse holds; a page number beyond it made an OFFSET DuckDB refuses."""


def _int(value: str | None) -> int | None:
    """A query parameter's whole number, held within +-`_MAX_INT`; None when it is none."""
    try:
        n = int(value) if value not in (None, "") else None
    except ValueError:
        return None
    return None if n is None else max(-_MAX_INT, min(_MAX_INT, n))


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def create_app(warehouse: str | Path) -> Starlette:
    """The viewer over `warehouse` (which must exist): its routes, templates and state."""
    store = Store(warehouse)
    shots = Screenshots()
    templates = Jinja2Templates(
        env=jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True
        )
    )
    templates.env.filters["fmt"] = cell_text
    templates.env.globals["qs"] = lambda **kw: urlencode({k: v for k, v in kw.items() if v})

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        return _secure(templates.TemplateResponse(request, name, context, status_code=status))

    def not_found(request: Request, what: str) -> Response:
        return page(request, "missing.html", 404, what=what)

    def leaderboard(request: Request) -> Response:
        return page(
            request,
            "leaderboard.html",
            columns=LEADERBOARD_COLUMNS,
            rows=store.leaderboard([c for c, _ in LEADERBOARD_COLUMNS]),
            runs=store.runs(),
        )

    def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        facts = store.run(run_id)
        if facts is None:
            return not_found(request, "no such run")
        q = request.query_params
        f = TaskFilter(
            domain=q.get("domain", ""),
            outcome=q.get("outcome", ""),
            looping=q.get("looping") == "1",
            min_steps=_int(q.get("min_steps")),
            max_steps=_int(q.get("max_steps")),
            disagreement=q.get("disagreement") == "1",
            text=q.get("text", "")[:200],
            page=_int(q.get("page")) or 0,
        )
        return page(
            request,
            "run.html",
            run=facts,
            per_domain=store.per_domain(run_id),
            domains=store.domains(run_id),
            outcomes=OUTCOMES,
            f=f,
            tasks=store.tasks(run_id, f),
            page_size=PAGE_SIZE,
            looping=store.looping_episode(run_id),
            others=[r for r in store.runs() if r["run_id"] != run_id],
        )

    def episode(request: Request) -> Response:
        q = request.query_params
        key = (q.get("run", ""), q.get("domain", ""), q.get("task", ""))
        ep = store.episode(*key)
        if ep is None:
            return not_found(request, "no such episode")
        return page(request, "episode.html", **_episode_context(ep, key))

    def screenshot(request: Request) -> Response:
        q = request.query_params
        step = _int(q.get("step"))
        ref = (
            None
            if step is None
            else store.screenshot_ref(
                q.get("run", ""), q.get("domain", ""), q.get("task", ""), step
            )
        )
        if ref is None:
            return _secure(PlainTextResponse("no screenshot for this step", 404))
        try:
            served = shots.read(*ref)
        except Refused as exc:
            return _secure(PlainTextResponse(str(exc), 404))
        response = Response(served.data, media_type=served.media_type)
        response.headers["Cache-Control"] = "private, max-age=3600"
        return _secure(response)

    def compare(request: Request) -> Response:
        q = request.query_params
        a, b = q.get("a", ""), q.get("b", "")
        run_a, run_b = store.run(a), store.run(b)
        if run_a is None or run_b is None:
            return page(request, "compare_pick.html", runs=store.runs(), a=a, b=b)
        domain, task = q.get("domain", ""), q.get("task", "")
        if not task:
            return page(
                request,
                "compare_tasks.html",
                run_a=run_a,
                run_b=run_b,
                tasks=store.common_tasks(a, b),
            )
        ep_a, ep_b = store.episode(a, domain, task), store.episode(b, domain, task)
        if ep_a is None or ep_b is None:
            return not_found(request, "one of the runs has no episode of this task")
        left = _episode_context(ep_a, (a, domain, task))
        right = _episode_context(ep_b, (b, domain, task))
        n = max(len(left["steps"]), len(right["steps"]))
        aligned = [
            (
                left["steps"][i] if i < len(left["steps"]) else None,
                right["steps"][i] if i < len(right["steps"]) else None,
            )
            for i in range(n)
        ]
        return page(request, "compare.html", left=left, right=right, aligned=aligned)

    def sql(request: Request) -> Response:
        query = request.query_params.get("q", "")
        result = run_query(store.warehouse, query)
        return page(request, "sql.html", query=query, result=result, shown=SHOWN_ROWS)

    def sql_csv(request: Request) -> Response:
        result = run_query(store.warehouse, request.query_params.get("q", ""), limit=None)
        if result.error:
            return _secure(PlainTextResponse(result.error, 400))
        response = Response(as_csv(result), media_type="text/csv; charset=utf-8")
        response.headers["Content-Disposition"] = 'attachment; filename="query.csv"'
        return _secure(response)

    @asynccontextmanager
    async def lifespan(app: Starlette):  # type: ignore[no-untyped-def]
        yield
        shots.close()
        store.close()

    routes = [
        Route("/", leaderboard),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/run/{run_id}", run),
        Route("/episode", episode),
        Route("/shot", screenshot),
        Route("/compare", compare),
        Route("/sql", sql),
        Route("/sql.csv", sql_csv),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=HOSTS)],
        lifespan=lifespan,
    )
    app.state.store = store
    return app


def _episode_context(ep: Any, key: tuple[str, str, str]) -> dict[str, Any]:
    """The episode template's values: steps with their marks, loop membership and the
    interactions that came after each (those before the first step first; those naming a
    turn the steps lack, after the last step)."""
    run_id, domain, task_id = key
    spans = ep.spans
    after: dict[int, list[dict[str, Any]]] = {}
    before_any: list[dict[str, Any]] = []
    trailing: list[dict[str, Any]] = []
    step_nums = {s["step_num"] for s in ep.steps} - {None}
    for it in ep.interactions:
        if it["step"] is None:
            before_any.append(it)
        elif it["step"] in step_nums:
            after.setdefault(it["step"], []).append(it)
        else:
            trailing.append(it)
    steps = []
    last_num: Any = object()
    for s in ep.steps:
        span = next((p for p in spans if p["first_step"] <= s["step_idx"] <= p["last_step"]), None)
        size = screen_size(ep.facts["screen_w"], ep.facts["screen_h"], s["width"], s["height"])
        steps.append(
            {
                **s,
                "span": span,
                "marks": step_marks(s["actions"], s["action_kind"], s["x"], s["y"]),
                "size": size,
                "first_of_turn": s["step_num"] != last_num,
                "shot_qs": urlencode(
                    {"run": run_id, "domain": domain, "task": task_id, "step": s["step_idx"]}
                ),
                "interactions": [],
                "img_size": (s["width"], s["height"]) if s["width"] and s["height"] else size,
                "r": round((size[0] if size else 1920) / 55, 1),
            }
        )
        last_num = s["step_num"]
    # interactions after the last step of the turn they follow
    for i, s in enumerate(steps):
        nxt = steps[i + 1]["step_num"] if i + 1 < len(steps) else None
        if nxt != s["step_num"]:
            s["interactions"] = after.get(s["step_num"], [])
    if steps:
        steps[-1]["interactions"] = steps[-1]["interactions"] + trailing
    else:
        before_any += trailing
    return {
        "ep": ep.facts,
        "steps": steps,
        "spans": spans,
        "interactions_first": before_any,
        "verdicts": ep.verdicts,
        "human": ep.human,
        "key": {"run": run_id, "domain": domain, "task": task_id},
    }
