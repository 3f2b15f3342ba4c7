"""verify_receipt, and the tool-call reviewer that checks a receipt before a call runs, against
real Greenlight servers on loopback."""
import base64
import hashlib
import json
import subprocess
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest

from greenlight_client import Client, ReceiptError, ToolCallReviewer, fetch_jwks, verify_receipt

from conftest import EVENT_TIMEOUT_SECONDS, REPOSITORY, server_environment


def decided(client: Client, action: str, decision_type: str, **fields: Any) -> dict:
    review = client.create_review(task_type="refund", proposed_action=action)
    return client.decide(review["id"], decision_type, **fields)


def kid(receipt: str) -> str:
    header = receipt.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]


def reason_of(work: Callable[[], Any]) -> str:
    with pytest.raises(ReceiptError) as raised:
        work()
    return raised.value.reason


def test_the_approved_action_verifies_offline_and_any_other_action_does_not(client, server):
    action = "Refund order 1042 (EUR 1,250.00) — “express”"
    decision = decided(client, action, "approve")
    jwks = fetch_jwks(server.url)
    claims = verify_receipt(decision["receipt"], action, jwks=jwks, review_id=decision["review_id"])
    assert claims["action_sha256"] == hashlib.sha256(action.encode("utf-8")).hexdigest()
    assert claims["sub"] == str(decision["review_id"])
    assert verify_receipt(decision["receipt"], action, server_url=server.url) == claims
    assert reason_of(lambda: verify_receipt(decision["receipt"], action.replace("1,250", "12,500"), jwks=jwks)) == "action_mismatch"
    assert reason_of(lambda: verify_receipt(decision["receipt"], action, jwks=jwks, review_id=decision["review_id"] + 1)) == "wrong_review"
    assert reason_of(lambda: verify_receipt(decision["receipt"], action, jwks=jwks, now=claims["exp"] + 1)) == "expired"


def test_a_modification_binds_the_modified_action_and_a_rejection_none(client, server):
    jwks = fetch_jwks(server.url)
    modified = decided(client, "Refund EUR 250", "modify", modified_action="Refund EUR 125")
    assert verify_receipt(modified["receipt"], "Refund EUR 125", jwks=jwks)["decision_type"] == "modify"
    assert reason_of(lambda: verify_receipt(modified["receipt"], "Refund EUR 250", jwks=jwks)) == "action_mismatch"
    rejected = decided(client, "Refund EUR 9,999", "reject")
    assert reason_of(lambda: verify_receipt(rejected["receipt"], "Refund EUR 9,999", jwks=jwks)) == "nothing_to_run"
    assert reason_of(lambda: verify_receipt(None, "Refund EUR 1", jwks=jwks)) == "missing"


def test_a_changed_payload_and_another_servers_key_fail(client, server, start_server, tmp_path, unused_port):
    rejected = decided(client, "Refund EUR 5", "reject")
    header, payload, signature = rejected["receipt"].split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(decision_type="approve", action_sha256=hashlib.sha256(b"Refund EUR 5").hexdigest())
    forged = ".".join([header, base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("="), signature])
    assert reason_of(lambda: verify_receipt(forged, "Refund EUR 5", jwks=fetch_jwks(server.url))) == "signature"

    other = start_server(tmp_path, unused_port)
    theirs = decided(Client(other.url), "Refund EUR 5", "approve")
    assert reason_of(lambda: verify_receipt(theirs["receipt"], "Refund EUR 5", jwks=fetch_jwks(server.url))) == "signature"
    assert verify_receipt(theirs["receipt"], "Refund EUR 5", jwks=fetch_jwks(other.url))["decision_type"] == "approve"


@pytest.fixture
def tampering_proxy(server) -> Iterator[Callable[[Callable[[dict], dict]], str]]:
    """A loopback proxy in front of the test server that passes each JSON answer through a
    change: someone between the agent and Greenlight altering what it reads."""
    started = []

    def start(change: Callable[[dict], dict]) -> str:
        class Forward(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = urllib.request.Request(server.url + self.path, data=self.rfile.read(length) if length else None, method=self.command)
                for name in ("Content-Type", "Idempotency-Key", "Prefer", "Accept"):
                    if self.headers.get(name):
                        request.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        status, body = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, body = error.code, error.read()
                if body:
                    body = json.dumps(change(json.loads(body))).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _forward

            def log_message(self, *args: Any) -> None:
                pass

        proxy = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        started.append(proxy)
        return f"http://127.0.0.1:{proxy.server_address[1]}"

    yield start
    for proxy in started:
        proxy.shutdown()
        proxy.server_close()


def test_the_tool_call_reviewer_refuses_an_edit_changed_on_the_way(client, in_background, pending_reviews, tampering_proxy):
    def raise_refund(body: dict) -> dict:
        if isinstance(body, dict) and (body.get("decision") or {}).get("modified_action"):
            body["decision"]["modified_action"] = '{"order": 7, "amount": 125000}'
        return body

    tool = f"refund_{uuid.uuid4().hex}"
    honest = ToolCallReviewer(client)
    waiting = in_background(lambda: honest.review(tool, {"order": 7, "amount": 250}))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool}")
    client.decide(pending["id"], "modify", modified_action='{"order": 7, "amount": 125}')
    assert waiting.result(timeout=60)["input"] == {"order": 7, "amount": 125}

    fooled = ToolCallReviewer(Client(tampering_proxy(raise_refund)), framework="proxied")
    waiting = in_background(lambda: fooled.review(tool, {"order": 7, "amount": 250}))
    [pending] = pending_reviews(client, task_type=f"proxied:{tool}")
    client.decide(pending["id"], "modify", modified_action='{"order": 7, "amount": 125}')
    outcome = waiting.result(timeout=60)
    assert (outcome["outcome"], outcome["input"]) == ("reject", None)
    assert outcome["message"] == f"Not run: Greenlight review #{pending['id']} was decided, but the action about to run is not the one the decision was made on."


def test_rotation_keeps_earlier_receipts_verifiable_and_the_next_is_signed_by_the_new_key(start_server, tmp_path, unused_port):
    rotating = start_server(tmp_path, unused_port)
    client = Client(rotating.url)
    before = decided(client, "Refund EUR 10", "approve")
    # The key set as a verifier holds it before the rotation: verify_receipt fetches it again for a kid it lacks.
    verify_receipt(before["receipt"], "Refund EUR 10", server_url=rotating.url)

    rotated = subprocess.run(
        ["node", str(REPOSITORY / "bin" / "greenlight.js"), "keys", "rotate", "--config", str(tmp_path / "greenlight.yaml")],
        cwd=tmp_path, env=server_environment(), capture_output=True, text=True, timeout=EVENT_TIMEOUT_SECONDS,
    )
    assert rotated.returncode == 0, rotated.stderr
    after = decided(client, "Refund EUR 20", "approve")
    assert kid(after["receipt"]) != kid(before["receipt"])
    assert kid(after["receipt"]) in rotated.stdout

    assert verify_receipt(after["receipt"], "Refund EUR 20", server_url=rotating.url)["decision_type"] == "approve"
    assert verify_receipt(before["receipt"], "Refund EUR 10", jwks=fetch_jwks(rotating.url))["decision_type"] == "approve"
    assert [key["kid"] for key in fetch_jwks(rotating.url)["keys"]] == [kid(after["receipt"]), kid(before["receipt"])]
