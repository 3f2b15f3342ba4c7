import email.utils
import http.client
import json
import math
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from email.message import Message
from typing import Any, Callable, Dict, Optional, Union

from .errors import GreenlightError
from .receipts import verify_receipt

Record = Dict[str, Any]
RetryCallback = Callable[[str, int], None]

__version__ = "0.1.0"

# What a dropped, refused or stalled connection raises; the request may or may not have reached
# the server, which the Idempotency-Key makes harmless to find out by sending it again. (Python
# 3.9 raises socket.timeout, a TimeoutError only from 3.10.)
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError)

# A wait with no deadline is asked for in rounds of this length, so that every round has a
# known end and the socket timeout can be set past it (the server caps each round at its
# blocking_timeout_seconds anyway, 300 s by default).
_ROUND_SECONDS = 300

# How long after the server's wait ends its answer may take to arrive before the connection is
# taken for dead.
_ANSWER_MARGIN_SECONDS = 30

_FIRST_BACKOFF_SECONDS = 0.2
_LONGEST_BACKOFF_SECONDS = 5.0

# Answers after which the same request is sent again (the key re-attaches to the one review):
# 408, the server's wait ran out; 503, it is shutting down or holds too many waits, and 502 and
# 504, a proxy answering for a server that is restarting; 429, 409 while the first request with
# the key is being stored, and 507, a full disk that stored nothing.
_RETRIED_STATUSES = {408: "timeout", 502: "unavailable", 503: "unavailable", 504: "unavailable", 409: "busy", 429: "busy", 507: "busy"}

_OPTIONAL_REVIEW_FIELDS = {"agent_reasoning", "confidence_score", "urgency", "framework", "metadata", "agent_id"}


@dataclass
class _Reply:
    status: int
    headers: Message
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None

    def problem(self) -> Record:
        try:
            document = self.json()
        except ValueError:
            document = None
        if isinstance(document, dict):
            return document
        # Not Greenlight's problem+json (a proxy's error page, say): keep the text readable.
        text = self.body.decode("utf-8", errors="replace").strip()
        return {"title": http.client.responses.get(self.status, "Error"), "status": self.status, "detail": text[:1000]}

    def retry_after(self) -> Optional[float]:
        """Seconds the server asked to wait (RFC 9110: seconds or an HTTP date); None when it did not say."""
        if self.status == 408:
            return 0.0
        value = self.headers.get("Retry-After")
        if value is None:
            return None
        if value.strip().isdigit():
            return float(value.strip())
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())

    def applied_wait(self) -> Optional[int]:
        """The server's cap on a blocking wait, from ``Preference-Applied: wait=N``."""
        match = re.search(r"wait=(\d+)", self.headers.get("Preference-Applied") or "")
        return int(match.group(1)) if match else None


class Client:
    """Greenlight's HTTP API. Every method returns the server's JSON records as plain dicts.

    ``api_key`` is sent as ``Authorization: Bearer <api_key>``. ``timeout`` is the socket timeout
    of requests that do not wait for a decision.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: Optional[str] = None, *, timeout: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(base_url)
        # Checked here because a malformed URL fails like a network error would, and request_review
        # retries those until a decision comes.
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    def request_review(
        self,
        task_type: str,
        proposed_action: str,
        *,
        agent_reasoning: Optional[str] = None,
        confidence_score: Optional[float] = None,
        urgency: Optional[str] = None,
        framework: Optional[str] = None,
        metadata: Optional[Record] = None,
        agent_id: Optional[int] = None,
        wait: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        on_retry: Optional[RetryCallback] = None,
    ) -> Record:
        """Submits an action for review and waits for a person to decide it; returns the review.

        A decided review has ``status`` approved, rejected or modified and its ``decision``. Every
        attempt carries the same ``Idempotency-Key`` (a new UUID unless given) and the same body,
        so however often the request is re-sent (the server's wait ran out, the server restarted,
        was busy, or the connection failed) exactly one review is created and waited on.

        ``wait`` is the most seconds to wait in all; ``None`` waits until the review is decided.
        At the deadline the review is returned as it then is (``status`` pending). If it cannot
        be read then (the server unreachable, or no review stored yet), ``TimeoutError`` is
        raised; calling again with the same ``idempotency_key`` picks the review up.

        ``on_retry(reason, attempt)`` is called each time a re-send is decided, before any pause,
        with ``reason`` "timeout" (the server's wait ran out), "unavailable" (it is restarting
        or full), "busy" (rate limited, or the first request with this key is still being
        stored) or "connection", and ``attempt`` counting re-sends from 1. An exception it raises
        ends the call.

        Other answers raise ``GreenlightError``: 400 for an invalid field, 422 for the same key
        with a different body, and so on.
        """
        body = _review_body(task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework, metadata, agent_id)
        body["blocking"] = True
        # Encoded once: the server answers 422 to the same key with a different body.
        payload = json.dumps(body).encode("utf-8")
        key = idempotency_key or str(uuid.uuid4())
        deadline = None if wait is None else time.monotonic() + wait
        review_id: Optional[int] = None
        backoff = _FIRST_BACKOFF_SECONDS
        longest_server_wait: Optional[int] = None
        resends = 0
        while True:
            seconds = _ROUND_SECONDS if deadline is None else max(1, math.ceil(deadline - time.monotonic()))
            # Keys are kept 24 hours and a review can wait longer: once the review and the
            # server's longest wait are known, the wait goes on as long-polls on the review itself.
            polling = review_id is not None and longest_server_wait is not None
            try:
                if polling:
                    seconds = min(seconds, longest_server_wait)
                    reply = self._send("GET", f"/reviews/{review_id}/decision?wait={seconds}", None, {}, timeout=seconds + _ANSWER_MARGIN_SECONDS)
                else:
                    headers = {"Idempotency-Key": key, "Prefer": f"wait={seconds}"}
                    reply = self._send("POST", "/reviews", payload, headers, timeout=seconds + _ANSWER_MARGIN_SECONDS)
                    longest_server_wait = reply.applied_wait() or longest_server_wait
            except _NETWORK_ERRORS:
                reason, pause = "connection", None
            else:
                if reply.status in (200, 201):
                    answer = reply.json()
                    if polling and answer is not None:
                        return self.get_review(review_id)
                    if not polling and answer["status"] != "pending":
                        return answer
                    if not polling:
                        # Only a server that ignored "blocking" answers this; wait on as after a 408.
                        review_id = answer["id"]
                    reason, pause = "timeout", 0.0
                elif reply.status in _RETRIED_STATUSES:
                    reason, pause = _RETRIED_STATUSES[reply.status], reply.retry_after()
                    review_id = reply.problem().get("review_id", review_id)
                else:
                    raise GreenlightError(reply.status, reply.problem())
            if pause is None:
                pause = backoff
                backoff = min(backoff * 2, _LONGEST_BACKOFF_SECONDS)
            else:
                backoff = _FIRST_BACKOFF_SECONDS
            if deadline is not None and time.monotonic() + pause >= deadline:
                time.sleep(max(0.0, deadline - time.monotonic()))
                return self._review_at_deadline(review_id, key, wait)
            resends += 1
            if on_retry is not None:
                on_retry(reason, resends)
            time.sleep(pause)

    def create_review(
        self,
        task_type: str,
        proposed_action: str,
        *,
        blocking: bool = False,
        idempotency_key: Optional[str] = None,
        **fields: Any,
    ) -> Record:
        """One plain ``POST /reviews``, not retried; ``fields`` are ``request_review``'s
        (``agent_reasoning``, ``confidence_score``, ``urgency``, ``framework``, ``metadata``,
        ``agent_id``). With ``blocking`` the server holds it until a decision or its own limit,
        which answers 408 (raised as ``GreenlightError``); prefer ``request_review`` for waiting."""
        unknown = set(fields) - _OPTIONAL_REVIEW_FIELDS
        if unknown:
            raise TypeError(f"create_review() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        body = _without_none({"task_type": task_type, "proposed_action": proposed_action, **fields})
        body["blocking"] = blocking
        headers = {} if idempotency_key is None else {"Idempotency-Key": idempotency_key}
        timeout = _ROUND_SECONDS + _ANSWER_MARGIN_SECONDS if blocking else self.timeout
        return self._call("POST", "/reviews", body, headers, timeout=timeout)

    def get_review(self, review_id: int) -> Record:
        return self._call("GET", f"/reviews/{review_id}")

    def list_reviews(self, **filters: Union[str, int, bool]) -> Record:
        """``GET /reviews`` with filters such as ``status``, ``task_type``, ``framework``, ``page``;
        returns ``{reviews, total, page, page_size}``."""
        query = {name: str(value).lower() if isinstance(value, bool) else str(value) for name, value in filters.items()}
        return self._call("GET", "/reviews" + (f"?{urllib.parse.urlencode(query)}" if query else ""))

    def get_decision(self, review_id: int, wait: Optional[int] = None) -> Optional[Record]:
        """The review's decision, or ``None`` while it is pending. ``wait`` long-polls up to that
        many whole seconds (the server refuses more than its blocking_timeout_seconds)."""
        if wait is None:
            return self._call("GET", f"/reviews/{review_id}/decision")
        return self._call("GET", f"/reviews/{review_id}/decision?wait={wait}", timeout=wait + _ANSWER_MARGIN_SECONDS)

    def decide(
        self,
        review_id: int,
        decision_type: str,
        modified_action: Optional[str] = None,
        notes: Optional[str] = None,
        reviewer_name: Optional[str] = None,
        reviewer_id: Optional[int] = None,
    ) -> Record:
        """Approves, rejects or modifies a pending review (``modify`` needs ``modified_action``);
        returns the decision. A review already decided raises ``GreenlightError`` 409."""
        body = _without_none({
            "decision_type": decision_type,
            "modified_action": modified_action,
            "notes": notes,
            "reviewer_name": reviewer_name,
            "reviewer_id": reviewer_id,
        })
        return self._call("POST", f"/reviews/{review_id}/decide", body)

    def verify_receipt(self, review: Record, action: str) -> Record:
        """Checks a decided review's receipt against this server's public keys (fetched once,
        again after a rotation) and the action about to run: the proposed action when approved,
        the modified one when modified. Raises ``ReceiptError`` when the action must not run."""
        decision = review.get("decision") or {}
        return verify_receipt(decision.get("receipt"), action, server_url=self.base_url, review_id=review.get("id"))

    def feedback(self, review_id: int, rating: Optional[int] = None, comment: Optional[str] = None) -> Record:
        """Leaves a rating (1–5), a comment, or both on a review; returns the stored feedback."""
        return self._call("POST", f"/reviews/{review_id}/feedback", _without_none({"rating": rating, "comment": comment}))

    def _review_at_deadline(self, review_id: Optional[int], key: str, wait: Optional[float]) -> Record:
        if review_id is None:
            raise TimeoutError(f"Greenlight stored no review within {wait} s; call again with idempotency_key={key!r} to pick it up")
        try:
            return self.get_review(review_id)
        except (*_NETWORK_ERRORS, GreenlightError) as error:
            raise TimeoutError(f"Greenlight review {review_id} could not be read at the end of the {wait} s wait: {error}") from error

    def _call(
        self,
        method: str,
        path: str,
        body: Optional[Record] = None,
        headers: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Any:
        payload = None if body is None else json.dumps(body).encode("utf-8")
        reply = self._send(method, path, payload, headers or {}, timeout=self.timeout if timeout is None else timeout)
        if reply.status >= 400:
            raise GreenlightError(reply.status, reply.problem())
        return reply.json()

    def _send(self, method: str, path: str, payload: Optional[bytes], headers: Dict[str, str], *, timeout: float) -> _Reply:
        """One HTTP exchange, returned whatever its status; only network failures raise."""
        request = urllib.request.Request(self.base_url + path, data=payload, method=method)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", f"greenlight-client-python/{__version__}")
        if payload is not None:
            request.add_header("Content-Type", "application/json")
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        for name, value in headers.items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _Reply(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            with error:
                return _Reply(error.code, error.headers, error.read())


def _review_body(
    task_type: str,
    proposed_action: str,
    agent_reasoning: Optional[str],
    confidence_score: Optional[float],
    urgency: Optional[str],
    framework: Optional[str],
    metadata: Optional[Record],
    agent_id: Optional[int],
) -> Record:
    return _without_none({
        "task_type": task_type,
        "proposed_action": proposed_action,
        "agent_reasoning": agent_reasoning,
        "confidence_score": confidence_score,
        "urgency": urgency,
        "framework": framework,
        "metadata": metadata,
        "agent_id": agent_id,
    })


def _without_none(fields: Record) -> Record:
    """Leaves out what the caller did not give, so the server applies its defaults."""
    return {name: value for name, value in fields.items() if value is not None}
