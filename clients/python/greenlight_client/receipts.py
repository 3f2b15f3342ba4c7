"""Decision receipts: checking, before an action runs, that Greenlight decided exactly it.

A receipt is a compact JWS (Ed25519, ``alg: EdDSA``) whose claims name the review, the
decision and the SHA-256 of the action that may run (docs/receipts.md). Python's standard
library has no Ed25519, so the signature is checked with the ``cryptography`` package (Debian:
``apt-get install python3-cryptography``; pip: ``cryptography``).
"""
import base64
import hashlib
import hmac
import json
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, List, Optional

Record = Dict[str, Any]


class ReceiptError(Exception):
    """A receipt that does not allow the action: do not run it. ``reason`` says why, in one
    word: missing, signature, expired, malformed, nothing_to_run, action_mismatch, wrong_review."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def action_sha256(action: str) -> str:
    """SHA-256, lowercase hex, of the action's UTF-8 bytes exactly (no trimming, no normalising)."""
    return hashlib.sha256(action.encode("utf-8")).hexdigest()


def _unbase64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# Key sets fetched by URL: once per process, again when a receipt names a key they lack (a rotation).
_fetched: Dict[str, List[Record]] = {}
_fetched_lock = threading.Lock()


def fetch_jwks(server_url: str, *, timeout: float = 10.0) -> Record:
    """The server's public keys (``GET /.well-known/jwks.json``), to verify with offline later."""
    request = urllib.request.Request(server_url.rstrip("/") + "/.well-known/jwks.json", headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def _key_named(kid: str, jwks: Optional[Record], server_url: Optional[str], fetch: Callable[[str], Record]) -> Optional[Record]:
    if jwks is not None:
        return next((key for key in jwks.get("keys", []) if key.get("kid") == kid), None)
    if server_url is None:
        raise TypeError("verify_receipt needs jwks= or server_url=")
    with _fetched_lock:
        keys = _fetched.get(server_url)
    found = next((key for key in keys or [] if key.get("kid") == kid), None)
    if found is None:
        keys = list(fetch(server_url).get("keys", []))
        with _fetched_lock:
            _fetched[server_url] = keys
        found = next((key for key in keys if key.get("kid") == kid), None)
    return found


def _signature_holds(key: Record, signing_input: bytes, signature: bytes) -> bool:
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as error:  # checked, not skipped: without it no call may run
        raise ReceiptError(
            "signature", "receipts cannot be checked without the cryptography package (apt-get install python3-cryptography, or pip install cryptography)"
        ) from error
    if key.get("kty") != "OKP" or key.get("crv") != "Ed25519" or not isinstance(key.get("x"), str):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(_unbase64url(key["x"])).verify(signature, signing_input)
        return True
    except (InvalidSignature, ValueError):
        return False


def verify_receipt(
    receipt: Optional[str],
    action: str,
    *,
    jwks: Optional[Record] = None,
    server_url: Optional[str] = None,
    issuer: Optional[str] = None,
    review_id: Optional[int] = None,
    leeway: float = 0.0,
    now: Optional[float] = None,
    fetch: Callable[[str], Record] = fetch_jwks,
) -> Record:
    """Checks that ``receipt`` is a decision of this Greenlight server (its Ed25519 signature
    against ``jwks``, or the key set of ``server_url``), still valid (``exp``), and about exactly
    ``action``: the SHA-256 of its UTF-8 bytes must be the receipt's ``action_sha256``. Returns
    the claims; raises ``ReceiptError`` when the action must not run (a rejection's receipt names
    no action, so it never verifies).

    ``action`` is the text as the review holds it: ``proposed_action`` when approved,
    ``modified_action`` when modified. A tool call's arguments are checked through that text
    (the one text argument, or the JSON the client sent and the reviewer edited).
    """
    if not isinstance(receipt, str) or receipt == "":
        raise ReceiptError("missing", "the decision carries no receipt")
    parts = receipt.split(".")
    try:
        if len(parts) != 3:
            raise ValueError("not three parts")
        header = json.loads(_unbase64url(parts[0]))
        claims = json.loads(_unbase64url(parts[1]))
        signature = _unbase64url(parts[2])
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise ValueError("not JSON objects")
    except ValueError as error:
        raise ReceiptError("malformed", f"the receipt is not valid: {error}") from error
    if header.get("alg") != "EdDSA" or not isinstance(header.get("kid"), str):
        raise ReceiptError("malformed", "the receipt is not valid: it is not signed with EdDSA under a named key")
    key = _key_named(header["kid"], jwks, server_url, fetch)
    if key is None or not _signature_holds(key, f"{parts[0]}.{parts[1]}".encode("ascii"), signature):
        raise ReceiptError("signature", "the receipt was not signed by this Greenlight server's keys (or was changed after signing)")
    missing = [name for name in ("iss", "sub", "iat", "exp", "jti") if name not in claims]
    if missing or not isinstance(claims["exp"], (int, float)):
        raise ReceiptError("malformed", f"the receipt is not valid: it lacks {', '.join(missing) or 'a numeric exp'}")
    if (time.time() if now is None else now) > claims["exp"] + leeway:
        raise ReceiptError("expired", "the receipt has expired: the decision is too old to act on; file the action again")
    if issuer is not None and claims["iss"] != issuer:
        raise ReceiptError("malformed", f"the receipt was issued by {claims['iss']}, not {issuer}")
    if review_id is not None and claims["sub"] != str(review_id):
        raise ReceiptError("wrong_review", f"the receipt is about review {claims['sub']}, not {review_id}")
    expected = claims.get("action_sha256")
    if not isinstance(expected, str):
        raise ReceiptError("nothing_to_run", f"the receipt records a {claims.get('decision_type')}: it allows no action")
    if not hmac.compare_digest(action_sha256(action), expected):
        raise ReceiptError("action_mismatch", "the action about to run is not the one the decision was made on")
    return claims
