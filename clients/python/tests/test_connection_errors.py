"""A server that is not there is named, with what the network said, not a bare URLError."""
import socket

import pytest

from greenlight_client import Client, GreenlightConnectionError


@pytest.fixture
def closed_port() -> int:
    """A port that was bound and closed again: nothing listens there, so connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_call_to_a_server_that_refuses_names_the_url_and_the_refusal(closed_port):
    client = Client(f"http://127.0.0.1:{closed_port}/")

    with pytest.raises(GreenlightConnectionError) as refused:
        client.get_review(1)

    assert str(refused.value) == f"could not connect to http://127.0.0.1:{closed_port}: connection refused"
    assert (refused.value.url, refused.value.reason) == (f"http://127.0.0.1:{closed_port}", "connection refused")
    assert isinstance(refused.value, ConnectionError)
    assert isinstance(refused.value.__cause__, OSError)


def test_a_review_requested_until_a_deadline_from_a_server_that_refuses_says_so(closed_port, retry_log):
    client = Client(f"http://127.0.0.1:{closed_port}")

    with pytest.raises(GreenlightConnectionError) as refused:
        client.request_review("refund", "Refund order 1042", wait=1, idempotency_key="refund-1042", on_retry=retry_log)

    message = str(refused.value)
    assert message.startswith(f"could not connect to http://127.0.0.1:{closed_port}: connection refused (no review was filed within 1 s")
    assert "idempotency_key='refund-1042'" in message
    assert set(retry_log.reasons) == {"connection"}


def test_a_host_that_does_not_resolve_is_named_as_such():
    client = Client("http://greenlight.invalid:8000", timeout=10)

    with pytest.raises(GreenlightConnectionError) as unknown:
        client.list_reviews()

    assert str(unknown.value).startswith("could not connect to http://greenlight.invalid:8000: host ")
