import email.utils
import errno
import http.client
import json
import math
import mimetypes
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from email.message import Message
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from .errors import GreenlightConnectionError, GreenlightError
from .receipts import verify_receipt

Record = Dict[str, Any]
RetryCallback = Callable[[str, int], None]
# A file to file with a review: a path, bytes, or {"data": bytes | "path": …, "name": …, "content_type": …}.
AttachmentSource = Union[str, "os.PathLike[str]", bytes, Dict[str, Any]]

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

_OPTIONAL_REVIEW_FIELDS = {"agent_reasoning", "confidence_score", "urgency", "framework", "metadata", "agent_id", "agent_name"}


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
        agent_name: Optional[str] = None,
        wait: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        on_retry: Optional[RetryCallback] = None,
        attachments: Optional[Sequence[AttachmentSource]] = None,
    ) -> Record:
        """Submits an action for review and waits for a person to decide it; returns the review.

        A decided review has ``status`` approved, rejected or modified and its ``decision``. Every
        attempt carries the same ``Idempotency-Key`` (a new UUID unless given) and the same body,
        so however often the request is re-sent (the server's wait ran out, the server restarted,
        was busy, or the connection failed) exactly one review is created and waited on.

        ``attachments`` are files for the reviewer, sent with the review in one request and
        stored with it in one transaction (nobody sees the review without them; a file refused
        files nothing). Each is a path (``str`` or ``pathlib.Path``), ``bytes``, or a dict with
        ``data`` (bytes or text) or ``path``, and optionally ``name`` and ``content_type``
        (guessed from the name when left out). The returned review lists them as stored, under
        ``attachments``.

        ``wait`` is the most seconds to wait in all; ``None`` waits until the review is decided.
        At the deadline the review is returned as it then is (``status`` pending). If Greenlight
        could not be reached until then, ``GreenlightConnectionError`` is raised, naming the URL
        and the cause; if it answered but stored no review (busy, restarting) or the review
        cannot be read then, ``TimeoutError``. Calling again with the same ``idempotency_key``
        picks the review up.

        ``on_retry(reason, attempt)`` is called each time a re-send is decided, before any pause,
        with ``reason`` "timeout" (the server's wait ran out), "unavailable" (it is restarting
        or full), "busy" (rate limited, or the first request with this key is still being
        stored) or "connection", and ``attempt`` counting re-sends from 1. An exception it raises
        ends the call.

        ``agent_name`` is the name reviewers know the agent by (say "refund-bot"), for an agent
        with no registered one; a registered agent's name takes its place.

        Other answers raise ``GreenlightError``: 400 for an invalid field, 422 for the same key
        with a different body, and so on.
        """
        body = _review_body(task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework, metadata, agent_id, agent_name)
        body["blocking"] = True
        # Encoded once: the server answers 422 to the same key with a different body.
        payload, content_type = _encoded(body, attachments)
        key = idempotency_key or str(uuid.uuid4())
        # The attachments as the first answer that named the review listed them.
        listed: Optional[List[Record]] = None
        network_error: Optional[BaseException] = None
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
                    reply = self._send("POST", "/reviews", payload, headers, timeout=seconds + _ANSWER_MARGIN_SECONDS, content_type=content_type)
                    longest_server_wait = reply.applied_wait() or longest_server_wait
            except _NETWORK_ERRORS as error:
                reason, pause, network_error = "connection", None, error
            else:
                network_error = None
                if reply.status in (200, 201):
                    answer = reply.json()
                    if not polling and listed is None:
                        listed = answer.get("attachments")
                    if polling and answer is not None:
                        return _with_attachments(self.get_review(review_id), listed)
                    if not polling and answer["status"] != "pending":
                        return answer
                    if not polling:
                        # Only a server that ignored "blocking" answers this; wait on as after a 408.
                        review_id = answer["id"]
                    reason, pause = "timeout", 0.0
                elif reply.status in _RETRIED_STATUSES:
                    reason, pause = _RETRIED_STATUSES[reply.status], reply.retry_after()
                    problem = reply.problem()
                    review_id = problem.get("review_id", review_id)
                    if listed is None and isinstance(problem.get("review"), dict):
                        listed = problem["review"].get("attachments")
                else:
                    raise GreenlightError(reply.status, reply.problem())
            if pause is None:
                pause = backoff
                backoff = min(backoff * 2, _LONGEST_BACKOFF_SECONDS)
            else:
                backoff = _FIRST_BACKOFF_SECONDS
            if deadline is not None and time.monotonic() + pause >= deadline:
                time.sleep(max(0.0, deadline - time.monotonic()))
                return _with_attachments(self._review_at_deadline(review_id, key, wait, network_error), listed)
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
        attachments: Optional[Sequence[AttachmentSource]] = None,
        **fields: Any,
    ) -> Record:
        """One plain ``POST /reviews``, not retried; ``fields`` are ``request_review``'s
        (``agent_reasoning``, ``confidence_score``, ``urgency``, ``framework``, ``metadata``,
        ``agent_id``, ``agent_name``), and ``attachments`` are stored with the review as ``request_review``
        stores them. With ``blocking`` the server holds it until a decision or its own limit,
        which answers 408 (raised as ``GreenlightError``); prefer ``request_review`` for waiting."""
        unknown = set(fields) - _OPTIONAL_REVIEW_FIELDS
        if unknown:
            raise TypeError(f"create_review() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        body = _without_none({"task_type": task_type, "proposed_action": proposed_action, **fields})
        body["blocking"] = blocking
        headers = {} if idempotency_key is None else {"Idempotency-Key": idempotency_key}
        timeout = _ROUND_SECONDS + _ANSWER_MARGIN_SECONDS if blocking else self.timeout
        return self._call("POST", "/reviews", body, headers, timeout=timeout, attachments=attachments)

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

    def list_attachments(self, review_id: int) -> Record:
        """The review's attachments: ``{review_id, attachments, count}``."""
        return self._call("GET", f"/reviews/{review_id}/attachments")

    def _review_at_deadline(self, review_id: Optional[int], key: str, wait: Optional[float], network_error: Optional[BaseException]) -> Record:
        if review_id is None:
            advice = f"no review was filed within {wait} s; call again with idempotency_key={key!r} to pick it up"
            if network_error is not None:
                raise GreenlightConnectionError(self.base_url, _network_failure(network_error), advice) from network_error
            raise TimeoutError(f"Greenlight stored no review within {wait} s; call again with idempotency_key={key!r} to pick it up")
        try:
            return self.get_review(review_id)
        except (GreenlightConnectionError, GreenlightError) as error:
            raise TimeoutError(f"Greenlight review {review_id} could not be read at the end of the {wait} s wait: {error}") from error

    def _call(
        self,
        method: str,
        path: str,
        body: Optional[Record] = None,
        headers: Optional[Dict[str, str]] = None,
        *,
        timeout: Optional[float] = None,
        attachments: Optional[Sequence[AttachmentSource]] = None,
    ) -> Any:
        payload, content_type = (None, "application/json") if body is None else _encoded(body, attachments)
        try:
            reply = self._send(method, path, payload, headers or {}, timeout=self.timeout if timeout is None else timeout, content_type=content_type)
        except _NETWORK_ERRORS as error:
            raise GreenlightConnectionError(self.base_url, _network_failure(error)) from error
        if reply.status >= 400:
            raise GreenlightError(reply.status, reply.problem())
        return reply.json()

    def _send(
        self,
        method: str,
        path: str,
        payload: Optional[bytes],
        headers: Dict[str, str],
        *,
        timeout: float,
        content_type: str = "application/json",
    ) -> _Reply:
        """One HTTP exchange, returned whatever its status; only network failures raise."""
        request = urllib.request.Request(self.base_url + path, data=payload, method=method)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", f"greenlight-client-python/{__version__}")
        if payload is not None:
            request.add_header("Content-Type", content_type)
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
    agent_name: Optional[str],
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
        "agent_name": agent_name,
    })


def _encoded(body: Record, attachments: Optional[Sequence[AttachmentSource]]) -> Tuple[bytes, str]:
    """The body of ``POST /reviews`` and its type: JSON, or with files ``multipart/form-data``
    holding the review's JSON in the part ``review`` and each file in a part ``file``."""
    review = json.dumps(body).encode("utf-8")
    if not attachments:
        return review, "application/json"
    boundary = f"greenlight-{uuid.uuid4().hex}"
    parts = [_part(boundary, 'name="review"', "application/json", review)]
    for index, attachment in enumerate(attachments):
        name, content_type, data = _attachment(attachment, index)
        parts.append(_part(boundary, f'name="file"; filename="{_quoted(name)}"', content_type, data))
    return b"".join(parts) + f"--{boundary}--\r\n".encode("ascii"), f"multipart/form-data; boundary={boundary}"


def _part(boundary: str, disposition: str, content_type: str, data: bytes) -> bytes:
    head = f"--{boundary}\r\nContent-Disposition: form-data; {disposition}\r\nContent-Type: {content_type}\r\n\r\n"
    return head.encode("utf-8") + data + b"\r\n"


def _quoted(name: str) -> str:
    """A file name fit for a quoted header parameter: sent as UTF-8, which the server reads."""
    return "".join(character for character in name if character >= " ").replace("\\", "\\\\").replace('"', '\\"')


def _attachment(source: AttachmentSource, index: int) -> Tuple[str, str, bytes]:
    """(name, content type, bytes) of one of ``request_review``'s attachments."""
    if isinstance(source, (bytes, bytearray)):
        source = {"data": bytes(source)}
    elif isinstance(source, (str, os.PathLike)):
        source = {"path": source}
    if not isinstance(source, dict) or ("data" in source) == ("path" in source):
        raise TypeError(f"attachments[{index}] must be a path, bytes, or a dict with data or path (one of them)")
    if "path" in source:
        path = os.fspath(source["path"])
        with open(path, "rb") as file:
            data = file.read()
        default_name = os.path.basename(path)
    else:
        data = source["data"].encode("utf-8") if isinstance(source["data"], str) else bytes(source["data"])
        default_name = f"attachment-{index + 1}" + (".txt" if isinstance(source["data"], str) else "")
    name = source.get("name") or default_name
    content_type = source.get("content_type") or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return name, content_type, data


def _with_attachments(review: Record, listed: Optional[List[Record]]) -> Record:
    """The review with the attachments it was filed with, when the read that ended the wait did not list them."""
    if listed is None or "attachments" in review:
        return review
    return {**review, "attachments": listed}


# What the network said, in words (urllib wraps it in URLError.reason).
_NETWORK_FAILURES = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "connection timed out",
}


def _network_failure(error: BaseException) -> str:
    """Why a request got no answer, as a reader of an error message wants it."""
    reason: Any = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, socket.gaierror):
        return f"host not found ({reason.strerror})" if reason.errno == socket.EAI_NONAME else f"host name lookup failed ({reason.strerror})"
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "no answer in time"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(reason, OSError) and reason.errno in _NETWORK_FAILURES:
        return _NETWORK_FAILURES[reason.errno]
    return str(reason) or type(reason).__name__


def _without_none(fields: Record) -> Record:
    """Leaves out what the caller did not give, so the server applies its defaults."""
    return {name: value for name, value in fields.items() if value is not None}
