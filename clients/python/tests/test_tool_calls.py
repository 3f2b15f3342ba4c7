import json
import uuid

import pytest

from greenlight_client import ToolCallReviewer, resume_interrupt, review_tool_call


@pytest.fixture
def tool_name():
    """A tool name no other test uses; the review's task type is "langgraph:<tool name>"."""
    return f"send_email_{uuid.uuid4().hex}"


def test_an_approved_tool_call_runs_with_its_own_arguments(client, tool_name, in_background, pending_reviews):
    arguments = {"to": "ana@example.com", "body": "Your refund is on its way."}
    waiting = in_background(lambda: review_tool_call(
        client, tool_name, arguments, editable_field="body", tool_call_id="call_1", metadata={"thread": "t-9"},
    ))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool_name}")
    assert (pending["proposed_action"], pending["framework"]) == ("Your refund is on its way.", "langgraph")
    assert pending["metadata"] == {"tool_name": tool_name, "tool_input": arguments, "tool_call_id": "call_1", "thread": "t-9"}

    client.decide(pending["id"], "approve")

    outcome = waiting.result(timeout=60)
    assert (outcome["outcome"], outcome["input"], outcome["message"]) == ("approve", arguments, None)


def test_a_tool_call_goes_to_the_reviewer_with_its_files(client, tool_name, tmp_path, in_background, pending_reviews):
    draft = tmp_path / "draft.txt"
    draft.write_text("Dear Ana, your refund is on its way.\n")
    waiting = in_background(lambda: review_tool_call(client, tool_name, {"to": "ana@example.com"}, attachments=[draft]))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool_name}")
    assert [a["file_name"] for a in client.list_attachments(pending["id"])["attachments"]] == ["draft.txt"]

    client.decide(pending["id"], "approve")

    outcome = waiting.result(timeout=60)
    assert outcome["outcome"] == "approve"
    assert [a["file_name"] for a in outcome["review"]["attachments"]] == ["draft.txt"]


@pytest.mark.parametrize("notes", [None, "Wrong customer."])
def test_a_rejected_tool_call_tells_the_model_why(client, tool_name, in_background, pending_reviews, notes):
    waiting = in_background(lambda: review_tool_call(client, tool_name, {"to": "ana@example.com", "body": "Hi"}))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool_name}")

    client.decide(pending["id"], "reject", notes=notes, reviewer_name="dana")

    outcome = waiting.result(timeout=60)
    expected = notes or f"Rejected by dana in Greenlight review #{pending['id']}."
    assert (outcome["outcome"], outcome["input"], outcome["message"]) == ("reject", None, expected)


def test_an_edit_of_the_only_text_argument_replaces_it(client, tool_name, in_background, pending_reviews):
    waiting = in_background(lambda: review_tool_call(client, tool_name, {"query": "DELETE FROM orders"}))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool_name}")
    assert pending["proposed_action"] == "DELETE FROM orders"

    client.decide(pending["id"], "modify", modified_action="DELETE FROM orders WHERE id = 7", notes="Only this one.")

    outcome = waiting.result(timeout=60)
    assert (outcome["outcome"], outcome["input"], outcome["message"]) == (
        "edit", {"query": "DELETE FROM orders WHERE id = 7"}, "Only this one.",
    )


def test_an_edit_of_the_json_arguments_becomes_the_new_arguments(client, tool_name, in_background, pending_reviews):
    arguments = {"order": 1042, "amount": 250, "note": "café"}
    waiting = in_background(lambda: review_tool_call(client, tool_name, arguments, framework="crewai"))
    [pending] = pending_reviews(client, task_type=f"crewai:{tool_name}")
    assert pending["proposed_action"] == json.dumps(arguments, indent=2, ensure_ascii=False)

    client.decide(pending["id"], "modify", modified_action='{"order": 1042, "amount": 125}')

    outcome = waiting.result(timeout=60)
    assert (outcome["outcome"], outcome["input"], outcome["message"]) == ("edit", {"order": 1042, "amount": 125}, None)


@pytest.mark.parametrize("edit", ["refund half", "[125]"])
def test_an_edit_that_is_not_a_json_object_rejects_the_call(client, tool_name, in_background, pending_reviews, edit):
    waiting = in_background(lambda: review_tool_call(client, tool_name, {"order": 1042, "amount": 250}))
    [pending] = pending_reviews(client, task_type=f"langgraph:{tool_name}")

    client.decide(pending["id"], "modify", modified_action=edit, notes="Half.", reviewer_name="dana")

    outcome = waiting.result(timeout=60)
    assert (outcome["outcome"], outcome["input"]) == ("reject", None)
    assert outcome["message"] == (
        f"Not run: dana in Greenlight review #{pending['id']} changed the call, "
        f"but the change is not a JSON object of arguments: {edit} Notes: Half."
    )


def test_a_tool_call_still_pending_at_the_deadline_is_rejected(client, tool_name):
    outcome = review_tool_call(client, tool_name, {"order": 1042}, wait=1)

    assert (outcome["outcome"], outcome["input"]) == ("reject", None)
    assert outcome["message"] == f"No decision came within 1 s in Greenlight review #{outcome['review']['id']}, so the call was not made."
    assert outcome["review"]["status"] == "pending"


def decide_each(client, pending_reviews, framework, decisions):
    """Decides the interrupt's reviews, found by tool name, once all of them are pending."""
    for review in pending_reviews(client, count=len(decisions), framework=framework):
        decision_type, fields = decisions[review["metadata"]["tool_name"]]
        client.decide(review["id"], decision_type, **fields)


REFUND_SCHEMA = {"type": "object", "properties": {"order": {"type": "integer"}, "amount": {"type": "number"}}, "required": ["order"]}


def test_a_camel_case_interrupt_is_answered_in_order_and_an_actions_args_schema_reaches_its_review(client, in_background, pending_reviews):
    framework = f"langgraph-{uuid.uuid4().hex}"
    request = {
        "actionRequests": [
            {"name": "send_email", "args": {"to": "ana@example.com", "body": "Hi"}, "description": "Greets Ana."},
            {"name": "search", "args": {"query": "refunds"}},
            {"name": "refund", "args": {"order": 1042}},
        ],
        "reviewConfigs": [
            {"actionName": "send_email", "allowedDecisions": ["approve", "edit", "reject"]},
            {"actionName": "search", "allowedDecisions": ["approve", "edit", "reject"]},
            {"actionName": "refund", "allowedDecisions": ["approve", "reject"], "argsSchema": REFUND_SCHEMA},
        ],
    }
    waiting = in_background(lambda: resume_interrupt(client, request, framework=framework))

    decide_each(client, pending_reviews, framework, {
        "send_email": ("approve", {}),
        "search": ("modify", {"modified_action": "refunds 2026"}),
        "refund": ("modify", {"modified_action": '{"order": 1042, "amount": 125}', "notes": "Half."}),
    })

    [approved, edited, not_editable] = waiting.result(timeout=60)["decisions"]
    assert approved == {"type": "approve"}
    assert edited == {"type": "edit", "editedAction": {"name": "search", "args": {"query": "refunds 2026"}}}
    assert not_editable["type"] == "reject"
    assert not_editable["message"].endswith('Call refund again with exactly these arguments, which are approved: {"order":1042,"amount":125} Notes: Half.')
    assert client.list_reviews(framework=framework, task_type=f"{framework}:send_email")["reviews"][0]["agent_reasoning"] == "Greets Ana."
    [refund] = client.list_reviews(framework=framework, task_type=f"{framework}:refund")["reviews"]
    assert refund["metadata"]["tool_input_schema"] == REFUND_SCHEMA


def test_a_snake_case_interrupt_is_answered_in_snake_case(client, in_background, pending_reviews):
    framework = f"langgraph-{uuid.uuid4().hex}"
    request = {
        "action_requests": [
            {"name": "write_file", "args": {"path": "notes.txt", "content": "draft"}},
            {"name": "delete_file", "args": {"path": "notes.txt"}},
        ],
        "review_configs": [
            {"action_name": "write_file", "allowed_decisions": ["approve", "edit", "reject"]},
            {"action_name": "delete_file", "allowed_decisions": ["approve", "reject"]},
        ],
    }
    waiting = in_background(lambda: resume_interrupt(client, request, framework=framework, editable_field="content"))

    decide_each(client, pending_reviews, framework, {
        "write_file": ("modify", {"modified_action": "final"}),
        "delete_file": ("reject", {"notes": "Keep it."}),
    })

    assert waiting.result(timeout=60) == {"decisions": [
        {"type": "edit", "edited_action": {"name": "write_file", "args": {"path": "notes.txt", "content": "final"}}},
        {"type": "reject", "message": "Keep it."},
    ]}


def test_a_reviewer_lets_the_model_make_an_edit_it_handed_back_without_asking_again(client, in_background, pending_reviews):
    framework = f"langgraph-{uuid.uuid4().hex}"
    reviewer = ToolCallReviewer(client, framework=framework)
    configs = [{"actionName": "refund", "allowedDecisions": ["approve", "reject"]}]
    first = {"actionRequests": [{"name": "refund", "args": {"order": 1042, "amount": 250}}], "reviewConfigs": configs}
    waiting = in_background(lambda: resume_interrupt(reviewer, first))
    [pending] = pending_reviews(client, task_type=f"{framework}:refund")
    client.decide(pending["id"], "modify", modified_action='{"order": 1042, "amount": 125}')
    [refusal] = waiting.result(timeout=60)["decisions"]
    assert refusal["type"] == "reject"

    # The model calls again with the reviewer's arguments, spelled in another key order.
    again = {"actionRequests": [{"name": "refund", "args": {"amount": 125, "order": 1042}}], "reviewConfigs": configs}
    assert resume_interrupt(reviewer, again) == {"decisions": [{"type": "approve"}]}
    assert client.list_reviews(task_type=f"{framework}:refund")["total"] == 1

    # Once: the same call a second time is a new question for a person.
    third = in_background(lambda: resume_interrupt(reviewer, again))
    [second] = pending_reviews(client, task_type=f"{framework}:refund")
    assert second["id"] != pending["id"]
    client.decide(second["id"], "reject", notes="Enough.")
    assert third.result(timeout=60) == {"decisions": [{"type": "reject", "message": "Enough."}]}
