"""A small client for OpenAI-compatible chat-completions endpoints, on the standard library.

Messages in; the reply's text, usage and latency out. Anything that speaks the protocol works
(OpenAI, vLLM, llama.cpp's server, LiteLLM, a test server on 127.0.0.1), so one client serves
the judge and any agent that calls such a model. urllib, not an SDK: one POST needs no extra
dependency, and the few things that matter are done here explicitly:

- only http(s) endpoints are accepted (urllib would also open file:// and ftp:// URLs);
- redirects are refused, since urllib would forward the Authorization header to whatever
  host a redirect names;
- the API key is sent only as a bearer header and is scrubbed from every text this module
  returns or raises, the served model's name included (a server may echo it, escaped or
  cut: `deskscore.collectors.redact`); it is never logged;
- 429 and 5xx replies and network failures are retried a bounded number of times with
  exponential backoff (or the server's Retry-After, capped); other statuses fail at once;
- a 200 reply whose body is not a chat completion is returned as a reply with a `problem`
  and no text, not raised: the caller decides what a bad reply means.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from deskscore.collectors.redact import redact

DEFAULT_TIMEOUT_S = 120.0
"""Seconds to wait for one reply: a judge reading several screenshots can take a minute."""
DEFAULT_MAX_RETRIES = 4
"""Retries after the first attempt, for 429, 5xx and network failures."""
DEFAULT_BACKOFF_S = 1.0
"""First wait before a retry; doubled each time (with jitter), capped at `MAX_BACKOFF_S`."""
MAX_BACKOFF_S = 30.0
MAX_BODY_BYTES = 16 << 20
"""Largest reply body read: a chat completion is a few kB; anything bigger is not one."""
_EXCERPT = 300
_LOOPBACK = {"localhost"}


class ChatError(Exception):
    """A request that got no usable reply; the message names the endpoint and what to do and
    never contains the API key."""

    def __init__(self, message: str, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts

    @property
    def refused(self) -> bool:
        """True when the endpoint refuses every request alike (bad key, no such model or
        path): retrying other requests is pointless."""
        return self.status in {401, 403, 404}


class ChatReply(NamedTuple):
    """One completed request."""

    text: str | None
    """The first choice's message content; None when the body holds none (see `problem`)."""
    usage: dict[str, Any] | None
    """The reply's `usage` object, verbatim (prompt_tokens, completion_tokens, ...)."""
    latency_s: float
    """Seconds of the attempt that succeeded (earlier failed attempts not included)."""
    status: int
    """HTTP status of that attempt."""
    attempts: int
    """Requests sent, retries included."""
    model: str | None
    """The model the server says answered."""
    problem: str | None
    """Why `text` is None: the body was not JSON, had no choices, ... (key scrubbed)."""


def check_endpoint(endpoint: str) -> str:
    """The endpoint's chat-completions URL; ValueError for anything but an http(s) URL with a
    host. An endpoint that already ends in /chat/completions is used as it is."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in {"http", "https"}:
        raise ValueError(
            f"endpoint {display_url(endpoint)!r} is not an http(s) URL; give the base URL of an "
            "OpenAI-compatible API, e.g. https://api.openai.com/v1"
        )
    if not parts.hostname:
        raise ValueError(f"endpoint {display_url(endpoint)!r} names no host")
    try:
        parts.port  # noqa: B018  (urllib reads the port lazily; a bad one fails here, not mid-run)
    except ValueError:
        raise ValueError(f"endpoint {display_url(endpoint)!r} has an invalid port") from None
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def display_url(url: str) -> str:
    """The URL without user info, query or fragment: safe to print (a key may hide there)."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        return "(unparseable URL)"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in _LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx status


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


class ChatClient:
    """POSTs chat-completions requests to one endpoint with one model.

    `api_key` may be None for endpoints without authentication (a local server). `sleep` and
    `backoff_s` exist so callers and tests can shorten waits; they change no outcome.
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = check_endpoint(endpoint)
        self.model = model
        self._key = api_key or None
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_s = max(0.0, backoff_s)
        self._sleep = sleep
        handlers: list[Any] = [_NoRedirect()]
        if _is_loopback(urllib.parse.urlsplit(self.url).hostname):
            handlers.append(urllib.request.ProxyHandler({}))  # no proxy reaches our loopback
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def where(self) -> str:
        return display_url(self.url)

    def scrub(self, text: str) -> str:
        """`text` with the API key replaced, in any form it may be echoed in (escaped,
        encoded, cut: `redact`): for anything that leaves this client."""
        return redact(text, self._key)

    def complete(self, messages: Sequence[Mapping[str, Any]], **params: Any) -> ChatReply:
        """Send `messages` (plus `params` such as temperature) and return the reply.

        Raises ChatError when no usable HTTP reply came after the retries: a status other
        than 200, or a network failure.
        """
        body = json.dumps({"model": self.model, "messages": list(messages), **params}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        attempt = 0
        while True:
            attempt += 1
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            started = time.perf_counter()
            wait: float | None = None
            try:
                with self._opener.open(request, timeout=self.timeout_s) as response:
                    status = response.status
                    raw = response.read(MAX_BODY_BYTES + 1)
                latency = time.perf_counter() - started
            except urllib.error.HTTPError as e:
                status = e.code
                detail = self._excerpt(e)
                retryable = status == 429 or 500 <= status < 600
                if not retryable or attempt > self.max_retries:
                    message = self._status_message(status, detail, attempt)
                    raise ChatError(message, status, attempt) from None
                wait = _retry_after(e.headers)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                if attempt > self.max_retries:
                    raise ChatError(
                        self.scrub(
                            f"{self.where}: no reply after {attempt} attempt(s) "
                            f"({type(reason).__name__}: {reason}); check that the endpoint is "
                            "up and reachable, then run again"
                        ),
                        None,
                        attempt,
                    ) from None
            else:
                return self._reply(raw, status, latency, attempt)
            self._sleep(self._backoff(attempt) if wait is None else min(wait, MAX_BACKOFF_S))

    def _backoff(self, attempt: int) -> float:
        base = min(MAX_BACKOFF_S, self.backoff_s * 2 ** (attempt - 1))
        return base * (0.5 + random.random() / 2)

    def _excerpt(self, error: urllib.error.HTTPError) -> str:
        try:
            data = error.read(_EXCERPT * 4)
        except Exception:
            return ""
        text = data.decode("utf-8", "replace").strip().replace("\n", " ")
        return self.scrub(text)[:_EXCERPT]

    def _status_message(self, status: int, detail: str, attempts: int) -> str:
        hint = {
            401: "the endpoint refused the API key: check the environment variable that holds it",
            403: "the endpoint refused the API key for this model or endpoint",
            404: "no such path or model at the endpoint: check --endpoint (the API's base URL, "
            "e.g. https://api.openai.com/v1) and --model",
            400: "the endpoint rejected the request (too large? an image type it cannot read?)",
            413: "the request is too large for the endpoint: lower --max-screenshots",
            429: "rate limited after every retry: lower --concurrency or run again later",
        }.get(status)
        if hint is None and 300 <= status < 400:
            hint = (
                "the endpoint redirects; give the URL it redirects to (redirects are not followed)"
            )
        if hint is None and status >= 500:
            hint = "the endpoint failed after every retry: run again later"
        text = f"{self.where}: HTTP {status} after {attempts} attempt(s)"
        text += f": {hint}" if hint else ""
        text += f" (reply: {detail})" if detail else ""
        return self.scrub(text)

    def _reply(self, raw: bytes, status: int, latency: float, attempts: int) -> ChatReply:
        def bad(why: str) -> ChatReply:
            return ChatReply(None, None, latency, status, attempts, None, self.scrub(why))

        if len(raw) > MAX_BODY_BYTES:
            return bad(f"reply body larger than {MAX_BODY_BYTES} bytes: not a chat completion")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            excerpt = raw[:_EXCERPT].decode("utf-8", "replace")
            return bad(f"reply body is not JSON: {excerpt!r}")
        if not isinstance(data, dict):
            return bad(f"reply body is a JSON {type(data).__name__}, not an object")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        model = self.scrub(data["model"]) if isinstance(data.get("model"), str) else None
        choices = data.get("choices")
        message = (
            choices[0].get("message")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict)
            else None
        )
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts: keep the text ones, in order
            texts = [p.get("text") for p in content if isinstance(p, dict)]
            content = "".join(t for t in texts if isinstance(t, str)) or None
        if not isinstance(content, str):
            why = "no choices[0].message.content in the reply"
            if isinstance(data.get("error"), dict | str):
                why += f" (error: {str(data['error'])[:_EXCERPT]})"
            return ChatReply(None, usage, latency, status, attempts, model, self.scrub(why))
        return ChatReply(self.scrub(content), usage, latency, status, attempts, model, None)


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT_S",
    "ChatClient",
    "ChatError",
    "ChatReply",
    "check_endpoint",
    "display_url",
]
