import time
import uuid

import pytest

from greenlight_client import GreenlightError


def test_an_approval_reaches_the_agent_after_two_server_timeouts_and_only_one_review_exists(
    client, task_type, retry_log, in_background, review_count
):
    waiting = in_background(lambda: client.request_review(task_type, "Refund order 1042", on_retry=retry_log))
    retry_log.wait_for("timeout", count=2)
    [pending] = client.list_reviews(task_type=task_type)["reviews"]

    client.decide(pending["id"], "approve", reviewer_name="dana@example.com")

    review = waiting.result(timeout=60)
    assert (review["id"], review["status"], review["decision"]["reviewer_name"]) == (pending["id"], "approved", "dana@example.com")
    assert review_count(client, task_type) == 1


def test_a_rejection_comes_back_with_the_reviewers_notes(client, task_type, in_background, pending_reviews):
    waiting = in_background(lambda: client.request_review(task_type, "Delete the staging database"))
    [pending] = pending_reviews(client, task_type=task_type)

    client.decide(pending["id"], "reject", notes="Not on a Friday.")

    review = waiting.result(timeout=60)
    assert review["status"] == "rejected"
    assert review["decision"]["notes"] == "Not on a Friday."


def test_a_modification_comes_back_with_the_action_to_carry_out_instead(client, task_type, in_background, pending_reviews):
    waiting = in_background(lambda: client.request_review(
        task_type, "Refund EUR 250.00", agent_reasoning="Parcel lost", confidence_score=0.8, urgency="high",
        framework="custom", metadata={"order_id": 1042},
    ))
    [pending] = pending_reviews(client, task_type=task_type)
    assert (pending["urgency"], pending["framework"], pending["metadata"]) == ("high", "custom", {"order_id": 1042})

    client.decide(pending["id"], "modify", modified_action="Refund EUR 125.00")

    review = waiting.result(timeout=60)
    assert review["status"] == "modified"
    assert review["decision"]["modified_action"] == "Refund EUR 125.00"


def test_the_agents_name_reaches_the_reviewer_and_a_blank_one_is_refused(client, task_type, in_background, pending_reviews):
    waiting = in_background(lambda: client.request_review(task_type, "Send the invoice reminder", agent_name="billing-bot"))
    [pending] = pending_reviews(client, task_type=task_type)
    assert pending["agent_name"] == "billing-bot"
    client.decide(pending["id"], "approve")
    assert waiting.result(timeout=60)["agent_name"] == "billing-bot"

    with pytest.raises(GreenlightError) as refused:
        client.create_review(task_type, "Send it again", agent_name="   ")
    assert refused.value.status == 400


def test_at_the_callers_deadline_the_review_comes_back_still_pending(client, task_type, review_count):
    started = time.monotonic()

    review = client.request_review(task_type, "Send the newsletter", wait=2)

    assert review["status"] == "pending"
    assert time.monotonic() - started >= 2
    assert review_count(client, task_type) == 1


def test_asking_again_with_the_same_idempotency_key_finds_the_same_review(client, task_type, review_count):
    key = str(uuid.uuid4())
    first = client.request_review(task_type, "Close ticket 7", wait=1, idempotency_key=key)
    client.decide(first["id"], "approve")

    again = client.request_review(task_type, "Close ticket 7", wait=1, idempotency_key=key)

    assert (again["id"], again["status"]) == (first["id"], "approved")
    assert review_count(client, task_type) == 1


def test_the_same_idempotency_key_with_another_action_is_refused(client, task_type):
    key = str(uuid.uuid4())
    first = client.request_review(task_type, "Close ticket 7", wait=1, idempotency_key=key)

    with pytest.raises(GreenlightError) as refused:
        client.request_review(task_type, "Close ticket 8", wait=1, idempotency_key=key)

    assert refused.value.status == 422
    assert refused.value.review_id == first["id"]


def test_an_invalid_field_raises_greenlight_error_with_the_problem(client, task_type, review_count):
    with pytest.raises(GreenlightError) as refused:
        client.request_review(task_type, "Refund", confidence_score=7)

    assert refused.value.status == 400
    assert refused.value.title == "Bad Request"
    assert [error["field"] for error in refused.value.errors] == ["confidence_score"]
    assert review_count(client, task_type) == 0


def test_a_review_created_without_waiting_has_its_decision_and_feedback_read_back(client, task_type):
    review = client.create_review(task_type, "Archive 12 old invoices")
    assert (review["status"], review["decision"]) == ("pending", None)
    assert client.get_decision(review["id"]) is None
    assert client.get_decision(review["id"], wait=1) is None

    decision = client.decide(review["id"], "reject", notes="Keep them until the audit.", reviewer_name="sam")
    feedback = client.feedback(review["id"], rating=4, comment="Good catch.")

    assert client.get_decision(review["id"]) == decision
    assert client.get_review(review["id"])["decision"] == decision
    assert (feedback["review_id"], feedback["rating"], feedback["comment"]) == (review["id"], 4, "Good catch.")


def test_a_second_decision_is_refused_with_the_decision_that_stands(client, task_type):
    review = client.create_review(task_type, "Archive 12 old invoices")
    client.decide(review["id"], "approve")

    with pytest.raises(GreenlightError) as refused:
        client.decide(review["id"], "reject")

    assert refused.value.status == 409


def test_a_missing_review_is_a_404(client):
    with pytest.raises(GreenlightError) as refused:
        client.get_review(2_000_000_000)

    assert refused.value.status == 404
