"""A server that is down, or goes down while the agent waits, costs nothing but time."""
from greenlight_client import Client

DOWNTIME = ("unavailable", "connection")


def waited_again_after_downtime(reasons):
    """A server timeout retried after the first sign of downtime, which only a server that came
    back can have answered."""
    downtime = [index for index, reason in enumerate(reasons) if reason in DOWNTIME]
    return bool(downtime) and "timeout" in reasons[downtime[0]:]


def test_a_review_requested_before_the_server_is_up_is_created_once_it_is(
    start_server, unused_port, tmp_path, task_type, retry_log, in_background, review_count
):
    client = Client(f"http://127.0.0.1:{unused_port}")
    waiting = in_background(lambda: client.request_review(task_type, "Rotate the API keys", on_retry=retry_log))
    retry_log.wait_for("connection")

    start_server(tmp_path, unused_port)
    retry_log.wait_for("timeout")
    [pending] = client.list_reviews(task_type=task_type)["reviews"]
    client.decide(pending["id"], "approve")

    assert waiting.result(timeout=60)["status"] == "approved"
    assert review_count(client, task_type) == 1


def test_an_agent_waiting_through_a_server_restart_gets_the_decision_on_its_one_review(
    start_server, unused_port, tmp_path, task_type, retry_log, in_background, review_count
):
    first_server = start_server(tmp_path, unused_port)
    client = Client(first_server.url)
    waiting = in_background(lambda: client.request_review(task_type, "Rotate the API keys", on_retry=retry_log))
    retry_log.wait_for("timeout")
    [pending] = client.list_reviews(task_type=task_type)["reviews"]

    first_server.stop()
    retry_log.wait_until(lambda reasons: any(reason in DOWNTIME for reason in reasons), "retry after the server stopped")
    start_server(tmp_path, unused_port)
    retry_log.wait_until(waited_again_after_downtime, "wait on the restarted server")
    client.decide(pending["id"], "approve")

    review = waiting.result(timeout=60)
    assert (review["id"], review["status"]) == (pending["id"], "approved")
    assert review_count(client, task_type) == 1
