"""An agent's tool calls put to a person before they run, and LangGraph's interrupt shape.

A review is made as Greenlight's TypeScript client makes it (clients/typescript), so a
reviewer sees the same thing whichever language the agent is written in.
"""
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union

from .client import AttachmentSource, Client, Record
from .receipts import ReceiptError

_ALL_DECISIONS = ("approve", "edit", "reject")


class ToolCallOutcome(TypedDict):
    outcome: Literal["approve", "reject", "edit"]
    # The arguments to call the tool with; None unless approved or edited.
    input: Optional[Dict[str, Any]]
    # For the model: why it was rejected, or the reviewer's notes on an edit.
    message: Optional[str]
    review: Record


class ToolCallReviewer:
    """Reviews an agent's tool calls, and remembers the edits it handed back as refusals.

    Where a framework cannot run a call with the reviewer's arguments (a LangGraph action whose
    ``allowedDecisions`` leave out "edit"), the edit becomes a refusal that gives the model the
    edited arguments (``edit_as_rejection``). The reviewer approved exactly those, so the
    model's call with them is let through once, without asking again. Keep one per agent run.
    """

    def __init__(
        self,
        client: Client,
        *,
        framework: str = "langgraph",
        wait: Optional[float] = None,
        metadata: Optional[Record] = None,
    ) -> None:
        self.client = client
        self.framework = framework
        self.wait = wait
        self.metadata = metadata
        self._granted_edits: Dict[str, Record] = {}
        # resume_interrupt reviews an interrupt's actions on several threads at once.
        self._lock = threading.Lock()

    def review(
        self,
        tool_name: str,
        tool_input: Dict[str, Any],
        *,
        task_type: Optional[str] = None,
        editable_field: Optional[str] = None,
        tool_call_id: Optional[str] = None,
        reasoning: Optional[str] = None,
        input_schema: Optional[Record] = None,
        attachments: Optional[Sequence[AttachmentSource]] = None,
    ) -> ToolCallOutcome:
        """Asks a person whether the agent may call ``tool_name`` with ``tool_input``.

        The reviewer edits one text argument directly (``editable_field``, or the only argument
        when there is one and it is text); otherwise the review shows the arguments as JSON and
        an edit must stay a JSON object. An edit that is not one, and a review still pending
        after ``wait`` seconds, come back as "reject": the tool does not run unless a person
        said so. ``input_schema``, the JSON Schema of the tool's input where it is known, goes
        into the metadata as ``tool_input_schema``: the dashboard's editor offers a field per
        argument from it. ``attachments`` (as ``Client.request_review`` takes them: the file a
        call would change, say) are filed with the review for the reviewer to see.
        """
        with self._lock:
            granted = self._granted_edits.pop(_grant_key(tool_name, tool_input), None)
        if granted is not None:
            # Checked again: the receipt may have expired while the model made its second call.
            return self._checked({"outcome": "approve", "input": tool_input, "message": None, "review": granted}, granted["decision"].get("modified_action") or "")
        field = _editable_field_of(tool_input, editable_field)
        proposed_action = tool_input[field] if field is not None else json.dumps(tool_input, indent=2, ensure_ascii=False)
        review = self.client.request_review(
            task_type=f"{self.framework}:{tool_name}" if task_type is None else task_type,
            proposed_action=proposed_action,
            agent_reasoning=reasoning,
            framework=self.framework,
            # The call itself last, so no extra metadata can hide what the reviewer is approving.
            metadata={
                **(self.metadata or {}),
                **({} if input_schema is None else {"tool_input_schema": input_schema}),
                "tool_name": tool_name,
                "tool_input": tool_input,
                **({} if tool_call_id is None else {"tool_call_id": tool_call_id}),
            },
            wait=self.wait,
            attachments=attachments,
        )
        outcome = _outcome_of(review, tool_input, field, self.wait)
        if outcome["outcome"] == "reject":
            return outcome
        return self._checked(outcome, proposed_action if outcome["outcome"] == "approve" else review["decision"].get("modified_action") or "")

    def _checked(self, outcome: ToolCallOutcome, action: str) -> ToolCallOutcome:
        """Lets a call run only on a receipt of this server's keys, unexpired, for exactly
        ``action``: the text this client proposed, or the reviewer's edit the arguments were read
        from. Anything else refuses the call (fail closed)."""
        review = outcome["review"]
        try:
            self.client.verify_receipt(review, action)
            return outcome
        except ReceiptError as error:
            reason = str(error)
        except Exception as error:  # the key set could not be fetched: no call runs unchecked
            reason = f"its receipt could not be checked: {error}"
        return _rejected(review, f"Not run: Greenlight review #{review['id']} was decided, but {reason}.")

    def edit_as_rejection(self, tool_name: str, outcome: ToolCallOutcome) -> str:
        """The refusal that hands the model an edit it must make itself, remembered so that
        the model's call with the edited arguments goes through."""
        with self._lock:
            self._granted_edits[_grant_key(tool_name, outcome["input"])] = outcome["review"]
        arguments = json.dumps(outcome["input"], ensure_ascii=False, separators=(",", ":"))
        return _with_notes(
            f"Not run as proposed: {_decided_by(outcome['review'])} changed the arguments. "
            f"Call {tool_name} again with exactly these arguments, which are approved: {arguments}",
            outcome["review"],
        )


def review_tool_call(
    client: Client,
    tool_name: str,
    tool_input: Dict[str, Any],
    *,
    framework: str = "langgraph",
    task_type: Optional[str] = None,
    editable_field: Optional[str] = None,
    tool_call_id: Optional[str] = None,
    reasoning: Optional[str] = None,
    input_schema: Optional[Record] = None,
    metadata: Optional[Record] = None,
    wait: Optional[float] = None,
    attachments: Optional[Sequence[AttachmentSource]] = None,
) -> ToolCallOutcome:
    """One tool call put to a person (``ToolCallReviewer.review`` with a reviewer of its own)."""
    reviewer = ToolCallReviewer(client, framework=framework, wait=wait, metadata=metadata)
    return reviewer.review(
        tool_name,
        tool_input,
        task_type=task_type,
        editable_field=editable_field,
        tool_call_id=tool_call_id,
        reasoning=reasoning,
        input_schema=input_schema,
        attachments=attachments,
    )


def resume_interrupt(
    reviewer: Union[Client, ToolCallReviewer],
    request: Mapping[str, Any],
    *,
    framework: str = "langgraph",
    wait: Optional[float] = None,
    **options: Any,
) -> Dict[str, List[Record]]:
    """Answers a LangChain/LangGraph human-in-the-loop interrupt with Greenlight reviews.

    ``request`` is the interrupt's value, ``{"actionRequests": [...], "reviewConfigs": [...]}``
    as LangChain.js writes it or ``{"action_requests": [...], "review_configs": [...]}`` as
    LangChain's Python middleware does; the answer uses the same spelling. Resume the graph with
    ``Command(resume=resume_interrupt(reviewer, interrupt.value))``. Pass the same
    ``ToolCallReviewer`` for every interrupt of a run, so an edit handed back as a refusal lets
    the model's edited call through; with a ``Client``, ``framework``, ``wait`` and
    ``options["metadata"]`` make a reviewer for this interrupt alone, and the other ``options``
    (``task_type``, ``editable_field``) go to each review.
    """
    if isinstance(reviewer, Client):
        reviewer = ToolCallReviewer(reviewer, framework=framework, wait=wait, metadata=options.pop("metadata", None))
    names = _SNAKE_CASE if "action_requests" in request else _CAMEL_CASE
    actions: Sequence[Mapping[str, Any]] = request[names["action_requests"]]
    configs = {config[names["action_name"]]: config for config in request.get(names["review_configs"]) or []}

    def decide(action: Mapping[str, Any]) -> Record:
        config = configs.get(action["name"], {})
        outcome = reviewer.review(
            action["name"], action["args"], reasoning=action.get("description"), input_schema=config.get(names["args_schema"]), **options
        )
        allowed = config.get(names["allowed_decisions"], _ALL_DECISIONS)
        return _interrupt_decision(reviewer, action["name"], outcome, allowed, names["edited_action"])

    # All reviews at once, so the reviewer sees the whole batch rather than one call at a time; a
    # review that could not be requested raises once the others have their answers.
    with ThreadPoolExecutor(max_workers=max(1, len(actions))) as pool:
        return {"decisions": list(pool.map(decide, actions))}


_CAMEL_CASE = {
    "action_requests": "actionRequests",
    "review_configs": "reviewConfigs",
    "action_name": "actionName",
    "allowed_decisions": "allowedDecisions",
    "args_schema": "argsSchema",
    "edited_action": "editedAction",
}
_SNAKE_CASE = {name: name for name in _CAMEL_CASE}


def _editable_field_of(tool_input: Mapping[str, Any], editable_field: Optional[str]) -> Optional[str]:
    if editable_field is not None and isinstance(tool_input.get(editable_field), str):
        return editable_field
    if len(tool_input) == 1:
        [(name, value)] = tool_input.items()
        if isinstance(value, str):
            return name
    return None


def _outcome_of(review: Record, tool_input: Dict[str, Any], field: Optional[str], wait: Optional[float]) -> ToolCallOutcome:
    decision = review.get("decision")
    if decision is None:
        return _rejected(review, f"No decision came within {wait} s in Greenlight review #{review['id']}, so the call was not made.")
    if decision["decision_type"] == "approve":
        return {"outcome": "approve", "input": tool_input, "message": None, "review": review}
    if decision["decision_type"] == "modify":
        edit = decision["modified_action"]
        edited = {**tool_input, field: edit} if field is not None else _json_object(edit)
        if edited is None:
            return _rejected(
                review,
                _with_notes(f"Not run: {_decided_by(review)} changed the call, but the change is not a JSON object of arguments: {edit}", review),
            )
        return {"outcome": "edit", "input": edited, "message": decision.get("notes"), "review": review}
    return _rejected(review, decision.get("notes") or f"Rejected by {_decided_by(review)}.")


def _rejected(review: Record, message: str) -> ToolCallOutcome:
    return {"outcome": "reject", "input": None, "message": message, "review": review}


def _decided_by(review: Record) -> str:
    return f"{review['decision'].get('reviewer_name') or 'a reviewer'} in Greenlight review #{review['id']}"


def _with_notes(sentence: str, review: Record) -> str:
    notes = review["decision"].get("notes")
    return f"{sentence} Notes: {notes}" if notes else sentence


def _json_object(text: str) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _interrupt_decision(reviewer: ToolCallReviewer, name: str, outcome: ToolCallOutcome, allowed: Sequence[str], edited_action: str) -> Record:
    if outcome["outcome"] == "approve":
        return {"type": "approve"}
    if outcome["outcome"] == "reject":
        return {"type": "reject", "message": outcome["message"]}
    if "edit" not in allowed:
        # The model can still carry out the reviewer's version, as a call of its own.
        return {"type": "reject", "message": reviewer.edit_as_rejection(name, outcome)}
    return {"type": "edit", edited_action: {"name": name, "args": outcome["input"]}}


def _grant_key(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    """The call as JSON with sorted keys, so two spellings of the same arguments compare equal."""
    return tool_name + "\0" + json.dumps(tool_input, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
