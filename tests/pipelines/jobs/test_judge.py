"""`deskscore judge` against a real chat-completions server on 127.0.0.1.

The server checks each request's shape and bearer header, records it, and judges by script:
each task id has a list of replies, one per request for that (model, task), the last one
repeating. It can also answer with 429/500 statuses and malformed bodies.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import io
import json
import re
import secrets
import shutil
import threading
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from PIL import Image

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.scorers import judge_prompt

KEY = "sk-test-" + secrets.token_hex(16)
MODEL = "judge-model-a"
PASS = '{"verdict": "pass", "reason": "the final screenshot shows the change"}'
FAIL = '{"verdict": "fail", "reason": "the setting is unchanged"}'
TASK_RE = re.compile(r"^Task: ([^/\n]+)/(\S+)$", re.MULTILINE)


class Script:
    """Replies per task id: a str is the message content; ('status', code) answers with that
    HTTP status (and ('status', code, bytes) with that body); ('body', bytes) sends raw bytes
    with status 200; ('model', name, content) answers content as served by model `name`."""

    def __init__(self) -> None:
        self.by_task: dict[str, list[Any]] = {}
        self.default: list[Any] = [FAIL]


class ChatServer:
    """A chat-completions endpoint: POST /v1/chat/completions with a bearer key."""

    def __init__(self, key: str = KEY) -> None:
        self.key = key
        self.script = Script()
        self.requests: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.served: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server.handle(self)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def n_requests(self) -> int:
        return len(self.requests)

    def task_requests(self, task_id: str) -> int:
        return sum(1 for r in self.requests if r["task_id"] == task_id)

    def _send(
        self, h: Any, status: int, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _check(self, body: Any) -> str | None:
        """Why the request is not a chat-completions request as the judge must send it."""
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return "no model"
        if body.get("temperature") != 0:
            return "temperature is not 0"
        messages = body.get("messages")
        if not isinstance(messages, list) or [m.get("role") for m in messages] != [
            "system",
            "user",
        ]:
            return "messages are not [system, user]"
        parts = messages[1]["content"]
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            return "user content is not a list of parts"
        for p in parts:
            if p.get("type") == "text":
                if not isinstance(p.get("text"), str):
                    return "text part without text"
            elif p.get("type") == "image_url":
                url = p.get("image_url", {}).get("url", "")
                if not url.startswith("data:image/jpeg;base64,"):
                    return "image part is not a JPEG data URL"
                Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).verify()
            else:
                return f"unknown part type {p.get('type')!r}"
        return None

    def handle(self, h: Any) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        auth = h.headers.get("Authorization", "")
        try:
            body = json.loads(raw)
            problem = self._check(body)
        except Exception as e:
            body, problem = None, f"unreadable request: {e}"
        parts = body["messages"][1]["content"] if problem is None else []
        text = "\n".join(p["text"] for p in parts if p["type"] == "text")
        match = TASK_RE.search(text)
        task_id = match.group(2) if match else "?"
        images = sum(1 for p in parts if p["type"] == "image_url")
        with self._lock:
            self.requests.append({"task_id": task_id, "images": images, "text": text, "auth": auth})
        if h.path != "/v1/chat/completions":
            self._send(h, 404, b'{"error": "no such path"}')
            return
        if auth != f"Bearer {self.key}":
            # as some providers do: the error body echoes the key it was given
            self._send(h, 401, json.dumps({"error": f"invalid key in {auth!r}"}).encode())
            return
        if problem:
            with self._lock:
                self.violations.append(problem)
            self._send(h, 400, json.dumps({"error": problem}).encode())
            return
        with self._lock:
            replies = self.script.by_task.get(task_id, self.script.default)
            n = self.served[body["model"], task_id]
            reply = replies[min(n, len(replies) - 1)]
            self.served[body["model"], task_id] += 1
        if isinstance(reply, tuple) and reply[0] == "status":
            body = reply[2] if len(reply) > 2 else b'{"error": "try later"}'
            self._send(h, reply[1], body, {"Retry-After": "0"})
            return
        served = body["model"] + "-served"
        if isinstance(reply, tuple) and reply[0] == "model":
            _, served, reply = reply
        if isinstance(reply, tuple) and reply[0] == "body":
            self._send(h, 200, reply[1])
            return
        content = reply(auth) if callable(reply) else reply
        payload = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": served,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 1000 + images,
                "completion_tokens": 20,
                "total_tokens": 1020 + images,
            },
        }
        self._send(h, 200, json.dumps(payload).encode())


@pytest.fixture
def server() -> Iterator[ChatServer]:
    s = ChatServer()
    yield s
    s.close()
    assert not s.violations, s.violations


# --------------------------------------------------------------------------- the warehouse


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One generated run of five tasks with tiny screenshots and an instruction.txt per task
    (as Agent S archives them), the last screenshot of the first task corrupted; ingested."""
    root = tmp_path_factory.mktemp("judge")
    tasks = task_slice(per_domain=1)[:5]
    run_root = write_run(root / "archive", load_profiles()[0], tasks, seed=11, screenshots="tiny")
    for t in tasks:
        folder = run_root / t["domain"] / t["task_id"]
        (folder / "instruction.txt").write_text(f"Instruction for {t['task_id']}: make it so.\n")
    first = run_root / tasks[0]["domain"] / tasks[0]["task_id"]
    shots = sorted(first.glob("step_*.png"), key=lambda p: int(p.name.split("_")[1]))
    shots[-1].write_bytes(shots[-1].read_bytes()[:40])  # truncated PNG
    wh = root / "wh"
    assert (
        main(["ingest", str(root / "archive"), "--warehouse", str(wh), "--engine", "direct"]) == 0
    )
    return {"wh": wh, "tasks": [t["task_id"] for t in tasks], "corrupt": shots[-1].name}


@pytest.fixture
def wh(built: dict[str, Any], tmp_path: Path) -> Path:
    copy = tmp_path / "wh"
    shutil.copytree(built["wh"], copy)
    return copy


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY)


def judge(wh: Path, server: ChatServer, *extra: str) -> int:
    return main(
        [
            "judge",
            "--warehouse",
            str(wh),
            "--endpoint",
            server.endpoint,
            "--model",
            MODEL,
            "--api-key-env",
            "JUDGE_TEST_KEY",
            *extra,
        ]
    )


def verdicts(wh: Path) -> dict[str, dict[str, Any]]:
    rows = Warehouse(wh).read("verdicts").to_pylist()
    assert all(r["source"] == "judged" and r["rule"] == "k_consecutive" for r in rows)
    return {r["task_id"]: r for r in rows}


def calls(wh: Path) -> list[dict[str, Any]]:
    return Warehouse(wh).read("judge_calls").to_pylist()


# --------------------------------------------------------------------------- behaviour


def test_verdicts_follow_the_k_consecutive_rule(wh, server, built, keyed) -> None:
    a, b, c, d, e = built["tasks"]
    server.script.by_task = {
        a: [PASS, PASS],
        b: [FAIL, PASS],
        c: [PASS, FAIL],
        d: ["```json\n" + PASS + "\n```", PASS],
        e: [PASS, "I think it passed."],
    }
    assert judge(wh, server) == 0
    v = verdicts(wh)
    assert {t: (v[t]["passed"], v[t]["score"]) for t in v} == {
        a: (True, 1.0),
        b: (False, 0.0),  # the first round failed: two in a row are impossible, no second
        c: (False, 0.5),
        d: (True, 1.0),  # a fenced reply is read
        e: (False, 0.5),  # an unparseable round counts as not passed
    }
    assert [server.task_requests(t) for t in (a, b, c, d, e)] == [2, 1, 2, 2, 2]
    rounds = json.loads(v[e]["details"])["rounds"]
    assert [r["status"] for r in rounds] == ["ok", "unparseable"]
    assert v[a]["judge_model"] == MODEL and len(v[a]["prompt_hash"]) == 64
    assert json.loads(v[a]["details"])["prompt_hash"] == v[a]["prompt_hash"]


def test_three_rounds_let_a_late_pair_pass(wh, server, built, keyed) -> None:
    a, b, *_ = built["tasks"]
    server.script.by_task = {a: [FAIL, PASS, PASS], b: [PASS, FAIL, PASS]}
    assert judge(wh, server, "--rounds", "3") == 0
    v = verdicts(wh)
    assert (v[a]["passed"], v[a]["score"]) == (True, pytest.approx(2 / 3))
    # pass, fail: one round left cannot make two in a row, so round 3 is never sent
    assert (v[b]["passed"], v[b]["score"], server.task_requests(b)) == (False, 0.5, 2)


def test_a_second_run_sends_no_request(wh, server, built, keyed, capsys) -> None:
    server.script.default = [PASS]
    assert judge(wh, server) == 0
    first = capsys.readouterr().out
    sent = server.n_requests
    assert sent == 2 * len(built["tasks"])
    before = verdicts(wh)
    assert judge(wh, server) == 0
    second = capsys.readouterr().out
    assert server.n_requests == sent
    assert verdicts(wh) == before
    assert len(calls(wh)) == sent
    header = second.splitlines()[1].split()
    assert "hits" in header
    values = second.splitlines()[3].split()
    # agent, run, episodes, judged, requests sent, cache hits, passed, failed, errors, success %
    assert values[2:9] == ["5", "5", "0", "10", "5", "0", "0"], second
    assert first.splitlines()[3].split()[2:9] == ["5", "5", "10", "0", "5", "0", "0"], first


def test_a_changed_model_episode_or_template_is_judged_again(
    wh, server, built, keyed, monkeypatch
) -> None:
    server.script.default = [PASS]
    n = len(built["tasks"])
    assert judge(wh, server) == 0
    assert server.n_requests == 2 * n
    assert judge(wh, server, "--model", "judge-model-b") == 0  # the last --model counts
    assert server.n_requests == 4 * n
    # one episode changes (its instruction): only it is judged again
    store = Warehouse(wh)
    [run_id] = {r["run_id"] for r in store.read("runs").to_pylist()}
    part = {"benchmark": "osworld", "run_id": run_id}
    rows = store.read("episodes", part).to_pylist()
    changed = rows[0]["task_id"]
    rows[0]["instruction"] = "Something else entirely."
    store.write("episodes", rows, part)
    assert judge(wh, server) == 0
    assert server.n_requests == 4 * n + 2
    assert "Something else entirely." in server.requests[-1]["text"]
    # a new template version: everything is judged again
    monkeypatch.setattr(judge_prompt, "TEMPLATE_VERSION", "judge-test-v2")
    assert judge(wh, server) == 0
    assert server.n_requests == 6 * n + 2
    models = Counter(c["judge_model"] for c in calls(wh))
    assert models == {MODEL: 4 * n + 2, "judge-model-b": 2 * n}  # every model's rounds kept
    hashes = Counter(c["task_id"] for c in calls(wh) if c["judge_model"] == MODEL)
    assert hashes[changed] == 6 and all(hashes[t] == 4 for t in built["tasks"] if t != changed)


def test_the_api_key_reaches_no_parquet_file_log_or_error(
    wh, server, built, keyed, capsys, monkeypatch
) -> None:
    a, b, *_ = built["tasks"]
    server.script.by_task = {
        a: [lambda auth: json.dumps({"verdict": "pass", "reason": f"headers had {auth}"})],
        b: [("status", 500)],
    }
    assert judge(wh, server, "--max-retries", "1") == 1
    out = capsys.readouterr()
    assert all(r["auth"] == f"Bearer {KEY}" for r in server.requests)  # it was sent ...
    assert "[redacted]" in verdicts(wh)[a]["details"]
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY[::-1])  # a wrong key, echoed back by the 401 body
    server.script.by_task = {}
    assert judge(wh, server, "--model", "other") == 1
    wrong = capsys.readouterr()
    assert "HTTP 401" in wrong.err and "refused the API key" in wrong.err
    for text in (out.out, out.err, wrong.out, wrong.err):  # ... and never shown
        assert KEY not in text and KEY[::-1] not in text
    for path in wh.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data and KEY[::-1].encode() not in data, path


def test_a_refused_key_stops_the_run_after_one_request(wh, server, monkeypatch) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-wrong-key-123456")
    assert judge(wh, server, "--concurrency", "1") == 1
    assert server.n_requests == 1
    assert verdicts(wh) == {}


def test_bad_replies_are_recorded_not_fatal(wh, server, built, keyed) -> None:
    a, b, c, d, _ = built["tasks"]
    server.script.by_task = {
        a: [("body", b"<html>gateway</html>")],
        b: [("body", b'{"choices": []}')],
        c: [("status", 429), ("status", 503), PASS],
        d: [PASS, ("status", 429), PASS],
    }
    assert judge(wh, server) == 0
    v = verdicts(wh)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for call in sorted(calls(wh), key=lambda r: r["round"]):
        by_task.setdefault(call["task_id"], []).append(call)
    assert [r["status"] for r in by_task[a]] == ["bad_body"] and v[a]["passed"] is False
    assert "not JSON" in by_task[a][0]["reason"]
    assert [r["status"] for r in by_task[b]] == ["bad_body"] and v[b]["passed"] is False
    # 429 and 503 were retried: round 1 took three requests
    assert [(r["attempts"], r["status"], r["passed"]) for r in by_task[c]] == [
        (3, "ok", True),
        (1, "ok", True),
    ]
    assert [r["attempts"] for r in by_task[d]] == [1, 2] and v[d]["passed"] is True
    assert by_task[c][0]["prompt_tokens"] > 1000 and by_task[c][0]["response_model"].endswith(
        "-served"
    )


def test_an_endpoint_that_keeps_failing_leaves_the_episode_undecided_until_a_rerun(
    wh, server, built, keyed, capsys
) -> None:
    a, *_ = built["tasks"]
    server.script.default = [PASS]
    server.script.by_task = {a: [PASS, ("status", 500)]}
    assert judge(wh, server, "--max-retries", "1") == 1
    err = capsys.readouterr().err
    assert f"{a}, round 2: " in err and "HTTP 500 after 2 attempt(s)" in err
    assert a not in verdicts(wh) and len(verdicts(wh)) == 4
    assert [c["round"] for c in calls(wh) if c["task_id"] == a] == [1]  # round 1 is cached
    server.script.by_task = {a: [PASS, ("status", 500), ("status", 500), PASS]}
    sent = server.n_requests
    assert judge(wh, server) == 0
    assert server.n_requests == sent + 1  # only round 2 of the undecided episode
    assert verdicts(wh)[a]["passed"] is True


def test_screenshots_are_spread_bounded_and_a_corrupt_one_is_left_out(
    wh, server, built, keyed
) -> None:
    a, b, *_ = built["tasks"]
    server.script.default = [FAIL]
    assert judge(wh, server, "--max-screenshots", "3") == 0
    v = verdicts(wh)
    details = {t: json.loads(r["details"]) for t, r in v.items()}
    missing = details[a]["screenshots_missing"]
    assert len(missing) == 1 and built["corrupt"] in missing[0]["why"]
    assert all(not d["screenshots_missing"] for t, d in details.items() if t != a)
    steps = Warehouse(wh).read("steps").to_pylist()
    for t, d in details.items():
        idx = sorted(s["step_idx"] for s in steps if s["task_id"] == t and s["screenshot_path"])
        sent = d["screenshots_sent"] + [m["step_idx"] for m in d["screenshots_missing"]]
        assert len(sent) == min(3, len(idx))
        assert max(sent) == idx[-1]  # the final state is always chosen
    images = {r["task_id"]: r["images"] for r in server.requests}
    assert images[a] == len(details[a]["screenshots_sent"])
    assert {c["n_images"] for c in calls(wh) if c["task_id"] == b} == {images[b]}
    text = next(r["text"] for r in server.requests if r["task_id"] == b)
    assert f"Instruction for {b}: make it so." in text
    assert "step 1: (" in text  # the actions, in order


def test_the_sql_view_reads_judge_calls_and_judged_verdicts(wh, server, built, keyed) -> None:
    from deskscore.sql import connect

    server.script.default = [PASS]
    assert judge(wh, server) == 0
    con = connect(wh)
    [(n, tokens)] = con.sql("SELECT count(*), sum(total_tokens) FROM judge_calls").fetchall()
    assert n == 10 and tokens > 10 * 1000
    [(passed,)] = con.sql(
        "SELECT count(*) FROM verdicts WHERE source = 'judged' AND passed"
    ).fetchall()
    assert passed == 5


@pytest.mark.parametrize(
    "endpoint", ["file:///etc/passwd", "ftp://127.0.0.1/v1", "127.0.0.1:8080/v1", "http:///v1"]
)
def test_an_endpoint_that_is_not_http_is_refused(wh, endpoint, capsys) -> None:
    assert main(["judge", "--warehouse", str(wh), "--endpoint", endpoint, "--model", "m"]) == 2
    err = capsys.readouterr().err
    assert "is not an http(s) URL" in err or "names no host" in err


def test_an_unknown_run_or_a_bad_k_is_a_user_error(wh, server, keyed, capsys) -> None:
    assert judge(wh, server, "--run", "nope") == 2
    assert "no run nope" in capsys.readouterr().err
    assert judge(wh, server, "--k", "3", "--rounds", "2") == 2
    assert "must be at least k" in capsys.readouterr().err
    assert server.n_requests == 0


def test_judge_without_a_key_variable_says_so_and_sends_no_header(
    wh, server, monkeypatch, capsys
) -> None:
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    assert judge(wh, server, "--concurrency", "1") == 1
    assert "JUDGE_TEST_KEY is not set" in capsys.readouterr().err
    assert [r["auth"] for r in server.requests] == [""]


def _part(wh: Path) -> dict[str, str]:
    [run_id] = {r["run_id"] for r in Warehouse(wh).read("runs").to_pylist()}
    return {"benchmark": "osworld", "run_id": run_id}


def test_an_interrupted_run_keeps_every_answered_round(
    wh, server, built, keyed, monkeypatch
) -> None:
    from deskscore.pipelines.jobs import judge as stage

    third = built["tasks"][2]
    real = stage.judge_episode

    def breaks_on_the_third(episode: Any, **kw: Any) -> Any:
        if episode.task_id == third:
            raise KeyboardInterrupt
        return real(episode, **kw)

    server.script.default = [PASS]
    monkeypatch.setattr(stage, "judge_episode", breaks_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        judge(wh, server, "--concurrency", "1")
    answered = server.n_requests
    assert len(calls(wh)) == answered  # nothing answered is lost
    assert {c["task_id"] for c in calls(wh)} >= set(built["tasks"][:2])
    monkeypatch.setattr(stage, "judge_episode", real)
    assert judge(wh, server) == 0
    assert server.n_requests == 2 * len(built["tasks"])  # the re-run sent only what was missing
    assert len(verdicts(wh)) == len(built["tasks"])


def test_an_unreadable_source_judges_without_screenshots_and_says_why(
    wh, server, built, keyed
) -> None:
    store = Warehouse(wh)
    runs = store.read("runs").to_pylist()
    for r in runs:
        r["source"] = str(wh / "moved-away")
    store.write("runs", runs, _part(wh))
    server.script.default = [PASS]
    assert judge(wh, server) == 0
    assert {r["images"] for r in server.requests} == {0}
    for v in verdicts(wh).values():
        missing = json.loads(v["details"])["screenshots_missing"]
        assert missing and all("cannot be opened" in m["why"] for m in missing)


def test_user_messages_and_task_instructions_reach_the_prompt(wh, server, built, keyed) -> None:
    a, b, *_ = built["tasks"]
    store, part = Warehouse(wh), _part(wh)
    episodes = store.read("episodes", part).to_pylist()
    domain = {e["task_id"]: e["domain"] for e in episodes}
    for e in episodes:
        if e["task_id"] == b:
            e["instruction"] = None  # not archived: the tasks table has it
    store.write("episodes", episodes, part)
    store.write(
        "tasks",
        [{"benchmark": "osworld", "data_version": "t", "domain": domain[b], "task_id": b,
          "instruction": "From the task index.", "infeasible": False, "source": "test"}],
        {"benchmark": "osworld", "data_version": "t"},
    )  # fmt: skip
    store.write(
        "interactions",
        [{**part, "domain": domain[a], "task_id": a, "seq": 0, "step": 1,
          "type": "new_instruction", "message": "Use the dark theme instead."}],
        part,
    )  # fmt: skip
    assert judge(wh, server) == 0
    text = {r["task_id"]: r["text"] for r in server.requests}
    assert "[user, new instruction]: Use the dark theme instead." in text[a]
    assert text[a].index("step 1: ") < text[a].index("dark theme") < text[a].index("step 2: ")
    assert "Instruction:\nFrom the task index." in text[b]
    assert json.loads(verdicts(wh)[b]["details"])["instruction_source"] == "tasks"


# --------------------------------------------------------------------------- the key's echoes


def _decoded(text: str) -> list[str]:
    """`text` and what it says once JSON escapes, URL-encoding and base64 are undone."""
    unescaped = re.sub(r"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    out = [text, unescaped, urllib.parse.unquote(text), urllib.parse.unquote(unescaped)]
    for run in re.findall(r"[A-Za-z0-9+/_-]{16,}", text):
        for start in range(4):
            chunk = run[start:]
            chunk = chunk[: len(chunk) // 4 * 4]
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                with contextlib.suppress(ValueError):  # not base64 from here
                    out.append(decode(chunk).decode("latin-1"))
    return out


def _leaks(text: str) -> bool:
    """Whether `text` holds the key or its first 8 characters, in any form."""
    return any(KEY[:8] in t for t in _decoded(text))


_ESCAPED = KEY.replace("-", "\\u002d")  # how a JSON body may write it
_ECHOES = f"bad key {_ESCAPED}, url {urllib.parse.quote(KEY, safe='')}, header " + (
    base64.b64encode(f"Authorization: Bearer {KEY}".encode()).decode()
)
KEY_ECHOES = {
    "as the model that answered": ("model", KEY, PASS),
    "cut by the excerpt of a body that is not JSON": ("body", b"x" * 290 + KEY.encode()),
    "cut by the excerpt of an error": ("body", json.dumps({"error": "y" * 280 + KEY}).encode()),
    "escaped and encoded in a reply that is no verdict": f"not a verdict; {_ECHOES}",
    "escaped and encoded in an error status's body": (
        "status",
        500,
        json.dumps({"error": "x"}).replace("x", _ECHOES).encode(),
    ),
}
"""How a server may echo the key, each as the reply to every request."""


@pytest.mark.parametrize("way", list(KEY_ECHOES))
def test_the_key_echoed_escaped_encoded_or_cut_is_stored_and_shown_nowhere(
    wh, server, keyed, capsys, way
) -> None:
    server.script.default = [KEY_ECHOES[way]]
    judge(wh, server, "--max-retries", "0")
    out = capsys.readouterr()
    assert all(r["auth"] == f"Bearer {KEY}" for r in server.requests)  # it was sent ...
    stored = calls(wh)
    shown = "\n".join([out.out, out.err, *(json.dumps(r, default=str) for r in stored)])
    assert "[redacted]" in shown  # the echo was there, and replaced
    for text in (out.out, out.err):  # ... and never shown
        assert not _leaks(text), text
    parquet = list(wh.rglob("*.parquet"))
    assert parquet
    for path in parquet:
        assert not _leaks(path.read_bytes().decode("latin-1")), path
        rows = pq.read_table(path).to_pylist()
        assert not _leaks(json.dumps(rows, default=str)), path


def test_what_judge_prints_shows_archive_names_escaped(
    hostile_warehouse, tmp_path, server, keyed, capsys, shown_escaped
) -> None:
    wh = tmp_path / "wh"
    shutil.copytree(hostile_warehouse, wh)
    server.script.default = [("status", 500)]  # every episode fails: each error names it
    assert judge(wh, server, "--max-retries", "0") == 1
    out = capsys.readouterr()
    assert out.err.count("HTTP 500") >= 3
    shown_escaped(out.out + out.err)
    server.script.default = [PASS]
    assert judge(wh, server, "--format", "json") == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["agent"].startswith("agent\x1b]0;pwned\x07")
