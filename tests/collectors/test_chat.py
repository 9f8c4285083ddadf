"""The chat-completions client against real HTTP servers on 127.0.0.1 that play scripted
statuses and bodies."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from deskscore.collectors.chat import ChatClient, ChatError, check_endpoint, display_url

KEY = "sk-client-test-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "Hello"}]


def completion(content: Any, model: str = "served-model") -> bytes:
    return json.dumps(
        {
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
    ).encode()


class Scripted:
    """Answers POSTs with the scripted (status, body, headers) in order, the last repeating;
    records each request's path, headers and JSON body."""

    def __init__(self, *replies: tuple[int, bytes, dict[str, str]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.hold = False
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)}
                )
                if server.hold:
                    server.release.wait(10)
                n = len(server.requests) - 1
                status, body, headers = server.replies[min(n, len(server.replies) - 1)]
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[Scripted] = []

    def start(*replies: tuple[int, bytes, dict[str, str]]) -> Scripted:
        servers.append(Scripted(*replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def client(url: str, **kw: Any) -> tuple[ChatClient, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("max_retries", 3)
    return ChatClient(url, "judge-m", KEY, sleep=sleeps.append, **kw), sleeps


def test_a_reply_gives_text_usage_model_and_the_request_is_well_formed(serve) -> None:
    s = serve((200, completion("Hi there"), {}))
    c, _ = client(s.url)
    reply = c.complete(MESSAGES, temperature=0)
    assert (reply.text, reply.status, reply.attempts, reply.model) == (
        "Hi there",
        200,
        1,
        "served-model",
    )
    assert reply.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert reply.problem is None and reply.latency_s >= 0
    [req] = s.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["body"] == {"model": "judge-m", "messages": MESSAGES, "temperature": 0}


def test_429_and_5xx_are_retried_honouring_retry_after(serve) -> None:
    s = serve(
        (429, b"slow down", {"Retry-After": "0"}),
        (503, b"busy", {}),
        (200, completion("ok"), {}),
    )
    c, sleeps = client(s.url, backoff_s=0.5)
    reply = c.complete(MESSAGES)
    assert (reply.text, reply.attempts, len(s.requests)) == ("ok", 3, 3)
    assert sleeps[0] == 0.0  # the server's Retry-After
    assert 0.5 <= sleeps[1] <= 1.0  # backoff 0.5 doubled, with jitter in [50%, 100%]


def test_retries_are_bounded_and_the_error_names_the_endpoint(serve) -> None:
    s = serve((500, b'{"error": "boom"}', {}))
    c, sleeps = client(s.url, max_retries=2)
    with pytest.raises(ChatError) as err:
        c.complete(MESSAGES)
    assert (err.value.status, err.value.attempts, len(s.requests), len(sleeps)) == (500, 3, 3, 2)
    assert f"{s.url}/chat/completions: HTTP 500 after 3 attempt(s)" in str(err.value)
    assert "boom" in str(err.value) and not err.value.refused


@pytest.mark.parametrize(("status", "refused"), [(400, False), (401, True), (404, True)])
def test_other_statuses_fail_at_once(serve, status, refused) -> None:
    s = serve((status, b"{}", {}))
    c, _ = client(s.url)
    with pytest.raises(ChatError) as err:
        c.complete(MESSAGES)
    assert len(s.requests) == 1 and err.value.refused is refused


def test_redirects_are_not_followed_so_the_key_goes_nowhere_else(serve) -> None:
    other = serve((200, completion("stolen"), {}))
    s = serve((307, b"", {"Location": other.url + "/chat/completions"}))
    c, _ = client(s.url)
    with pytest.raises(ChatError, match="redirects"):
        c.complete(MESSAGES)
    assert other.requests == []


def test_the_key_is_scrubbed_from_errors_and_replies(serve) -> None:
    echo = json.dumps({"error": f"bad key Bearer {KEY}"}).encode()
    s = serve((401, echo, {}), (200, completion(f"your key is {KEY}"), {}))
    c, _ = client(s.url)
    with pytest.raises(ChatError) as err:
        c.complete(MESSAGES)
    assert KEY not in str(err.value) and "[redacted]" in str(err.value)
    assert c.complete(MESSAGES).text == "your key is [redacted]"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>502</html>", "not JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"choices": []}', "no choices"),
        (b'{"error": {"message": "overloaded"}}', "overloaded"),
    ],
)
def test_a_body_that_is_not_a_completion_is_a_reply_with_a_problem(serve, body, problem) -> None:
    s = serve((200, body, {}))
    c, _ = client(s.url)
    reply = c.complete(MESSAGES)
    assert reply.text is None and problem in reply.problem and reply.status == 200


def test_content_given_as_parts_is_joined(serve) -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]
    s = serve((200, completion(parts), {}))
    c, _ = client(s.url)
    assert c.complete(MESSAGES).text == "ab"


def test_an_endpoint_that_is_down_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    c, sleeps = client(f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(ChatError, match=r"no reply after 3 attempt\(s\)") as err:
        c.complete(MESSAGES)
    assert err.value.status is None and len(sleeps) == 2


def test_a_reply_that_never_comes_times_out(serve) -> None:
    s = serve((200, completion("late"), {}))
    s.hold = True  # the handler waits until the test releases it
    c, _ = client(s.url, timeout_s=0.3, max_retries=0)
    with pytest.raises(ChatError, match="no reply after 1 attempt"):
        c.complete(MESSAGES)
    s.release.set()


@pytest.mark.parametrize(
    "endpoint",
    [
        "file:///etc/passwd",
        "ftp://127.0.0.1/v1",
        "",
        "127.0.0.1:80/v1",
        "http:///v1",
        "http://h:x/v1",
    ],
)
def test_only_http_endpoints_with_a_host_are_accepted(endpoint) -> None:
    with pytest.raises(ValueError):
        check_endpoint(endpoint)


def test_endpoints_are_completed_and_shown_without_secrets() -> None:
    assert check_endpoint("https://api.example.com/v1/") == (
        "https://api.example.com/v1/chat/completions"
    )
    assert check_endpoint("http://127.0.0.1:8000/v1/chat/completions") == (
        "http://127.0.0.1:8000/v1/chat/completions"
    )
    assert display_url("https://user:secret@h.example:8443/v1?key=secret") == (
        "https://h.example:8443/v1"
    )
