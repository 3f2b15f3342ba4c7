"""Files filed with a review: sent with it in one request, seen with it, listed in the answer."""
import hashlib

import pytest

from greenlight_client import GreenlightError

CHART = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])


def test_a_review_waits_with_its_files_and_comes_back_decided_with_them_listed(
    client, task_type, tmp_path, retry_log, in_background, pending_reviews
):
    report = tmp_path / "report.csv"
    report.write_text("month,revenue\nOctober,1042\n")
    waiting = in_background(lambda: client.request_review(
        task_type, "Publish the October report", on_retry=retry_log,
        attachments=[report, str(report), {"name": "chart.png", "data": CHART}, {"data": "Revenue up 4 %.", "content_type": "text/markdown"}, b"\x00\x01"],
    ))
    [pending] = pending_reviews(client, task_type=task_type)
    # Whenever a reviewer can see the review, its files are there.
    assert client.list_attachments(pending["id"])["count"] == 5
    # The server's wait (1 s) runs out first: the decision then comes through a long-poll.
    retry_log.wait_for("timeout")

    client.decide(pending["id"], "approve", reviewer_name="dana")

    review = waiting.result(timeout=60)
    assert (review["id"], review["status"]) == (pending["id"], "approved")
    assert [(a["file_name"], a["content_type"], a["size_bytes"]) for a in review["attachments"]] == [
        ("report.csv", "text/csv", 27),
        ("report.csv", "text/csv", 27),
        ("chart.png", "image/png", 6),
        ("attachment-4.txt", "text/markdown", 15),
        ("attachment-5", "application/octet-stream", 2),
    ]
    assert review["attachments"][2]["sha256"] == hashlib.sha256(CHART).hexdigest()


def test_a_review_created_without_waiting_answers_with_its_files(client, task_type):
    review = client.create_review(task_type, "Archive the invoices", attachments=[{"name": "list.csv", "data": "id\n1\n2\n"}])

    assert (review["status"], [a["file_name"] for a in review["attachments"]]) == ("pending", ["list.csv"])
    assert client.list_attachments(review["id"])["attachments"] == review["attachments"]


def test_a_refused_review_files_neither_the_review_nor_its_files(client, task_type, review_count):
    with pytest.raises(GreenlightError) as refused:
        client.request_review(task_type, "Refund", confidence_score=7, attachments=[{"name": "receipt.txt", "data": "EUR 250"}])

    assert refused.value.status == 400
    assert [error["field"] for error in refused.value.errors] == ["review.confidence_score"]
    assert review_count(client, task_type) == 0


def test_an_attachment_that_is_neither_a_path_nor_bytes_is_refused_before_anything_is_sent(client, task_type, review_count):
    with pytest.raises(TypeError):
        client.request_review(task_type, "Refund", attachments=[{"name": "empty.txt"}])
    assert review_count(client, task_type) == 0
