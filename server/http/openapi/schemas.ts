/**
 * Shared OpenAPI components. The route files annotate their paths; this file holds the
 * schemas they refer to. Requests are validated against these very schemas, so the document
 * and the behaviour cannot drift apart.
 *
 * @openapi
 * components:
 *   schemas:
 *     Urgency:
 *       type: string
 *       enum: [low, medium, high, critical]
 *       description: How soon a person should look. Defaults to `medium`.
 *     ReviewStatus:
 *       type: string
 *       enum: [pending, approved, rejected, modified]
 *       description: Anything other than `pending` means decided.
 *     DecisionType:
 *       type: string
 *       enum: [approve, reject, modify]
 *     Metadata:
 *       type: object
 *       additionalProperties: true
 *       description: Free-form object the agent attaches (ids, amounts, links).
 *       example: { customer_id: "C-1042", amount: 250 }
 *     ReviewCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [task_type, proposed_action]
 *       properties:
 *         task_type:
 *           type: string
 *           minLength: 1
 *           maxLength: 255
 *           description: Short, free-text kind of task, e.g. `refund`, `email_send`, `db_migration`.
 *         proposed_action:
 *           type: string
 *           minLength: 1
 *           maxLength: 100000
 *           description: >-
 *             The action to be reviewed, exactly as the agent would carry it out and complete enough
 *             for a person to judge it: the e-mail text, the SQL, the amount and recipient.
 *         agent_reasoning:
 *           type: string
 *           nullable: true
 *           maxLength: 100000
 *           description: Why the agent proposes this action and asks for review.
 *         confidence_score:
 *           type: number
 *           nullable: true
 *           minimum: 0
 *           maximum: 1
 *           description: The agent's confidence that the action is right, from 0.0 to 1.0.
 *         urgency:
 *           $ref: '#/components/schemas/Urgency'
 *         framework:
 *           type: string
 *           nullable: true
 *           maxLength: 255
 *           description: The agent's framework, e.g. `langchain`, `claude-code`.
 *         metadata:
 *           type: object
 *           additionalProperties: true
 *           nullable: true
 *           description: Facts that help the reviewer (ids, amounts, links), a free-form object stored as given.
 *         organization_id:
 *           type: integer
 *           nullable: true
 *           minimum: 1
 *           maximum: 2147483647
 *           description: >-
 *             The organization the review belongs to. Hosted edition: the caller's own, which is the
 *             default (another is a 404); self-hosted: stored as given.
 *         agent_id:
 *           type: integer
 *           nullable: true
 *           minimum: 1
 *           maximum: 2147483647
 *           description: >-
 *             The agent's registered id, if it has one. Hosted edition: one of the organization's
 *             agents (404 otherwise), and the only one an agent's own API key may name.
 *         agent_name:
 *           type: string
 *           nullable: true
 *           minLength: 1
 *           maxLength: 100
 *           description: >-
 *             The agent's name as reviewers see it, e.g. `refund-bot`, for an agent with no registered
 *             one (self-hosted agents register none). A registered agent's name takes its place. Never
 *             blank, and never with a control, bidirectional or other hidden character (400), whatever
 *             `refuse_hidden_characters` says.
 *         blocking:
 *           type: boolean
 *           default: false
 *           description: >-
 *             `true` holds the request open until a person decides (or the wait limit passes,
 *             answered with 408).
 *       example:
 *         task_type: refund
 *         proposed_action: Refund order 1042 in full (EUR 250.00)
 *         agent_reasoning: Customer reports the parcel never arrived; carrier confirms loss.
 *         confidence_score: 0.82
 *         urgency: high
 *         framework: langchain
 *         metadata: { order_id: 1042, amount: 250 }
 *         agent_name: refund-bot
 *         blocking: false
 *     Decision:
 *       # No `type: object` here on purpose: where a decision may be null it is written
 *       # `{type: object, nullable: true, allOf: [Decision]}`, and OpenAPI 3.0 validators apply
 *       # `allOf` to the null as well. `properties` and `required` only constrain objects.
 *       description: A reviewer's decision on a review.
 *       required: [id, review_id, decision_type, reviewer_id, reviewer_name, modified_action, notes, created_at, receipt]
 *       properties:
 *         id: { type: integer }
 *         review_id: { type: integer }
 *         decision_type: { $ref: '#/components/schemas/DecisionType' }
 *         reviewer_id: { type: integer, nullable: true }
 *         reviewer_name: { type: string, nullable: true }
 *         modified_action:
 *           type: string
 *           nullable: true
 *           description: The action to carry out instead; set only for `modify`.
 *         notes: { type: string, nullable: true }
 *         created_at: { type: string, format: date-time }
 *         receipt:
 *           type: string
 *           nullable: true
 *           pattern: '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$'
 *           # The JWT's payload: OpenAPI 3.0 cannot say a string holds a signed JSON document, so it is named here.
 *           x-jwt-claims: { $ref: '#/components/schemas/ReceiptClaims' }
 *           description: |
 *             The decision's signed receipt: a compact JWS (a JWT, header `alg: EdDSA` (Ed25519), `kid`, `typ: JWT`)
 *             an executor verifies offline against the public keys at `GET /.well-known/jwks.json` before it runs the
 *             action (docs/receipts.md). Claims: `iss` (the server's `public_url`), `sub` (the review id, as text),
 *             `organization_id` (absent outside an organization), `iat` (when the decision was made), `exp` (`iat` plus
 *             the setting `receipt_ttl_seconds`, default 600), `jti` (unique per decision), `decision_type`,
 *             `action_sha256` (the lowercase hex SHA-256 of the UTF-8 bytes of the action that may run, exactly as
 *             stored: `proposed_action` when approved, `modified_action` when modified; absent when rejected),
 *             `decided_by` (user ids of the people whose decision or workflow votes made it; otherwise the name it was
 *             recorded under: `rule:<name>` for a routing rule, `policy:expired` for the expiry, a self-hosted
 *             reviewer's name as given) and `votes` (`{user_id, stage, decision_type}` of the approval workflow's
 *             votes; empty without one).
 *
 *             Minted once, when the decision is recorded, and stored with it: the decide answer, the blocking create,
 *             `GET /reviews/{id}`, `GET /reviews/{id}/decision`, the MCP tools and the `review.decided` webhook all
 *             carry the same receipt. One decision therefore has one `jti` (an executor that keeps the `jti`s it has
 *             run can refuse a replay), and its `exp` counts from the decision, not from a read: reading again does
 *             not make an old approval fresh. An agent that long-polls for hours gets the receipt the moment the
 *             decision is made, with all of `receipt_ttl_seconds` left; one that comes back after `exp` must file
 *             the action again. Null only for decisions recorded before the server signed receipts.
 *       example:
 *         id: 7
 *         review_id: 42
 *         decision_type: modify
 *         reviewer_id: null
 *         reviewer_name: dana@example.com
 *         modified_action: Refund order 1042 partially (EUR 125.00)
 *         notes: Half now, the rest once the carrier pays out.
 *         created_at: '2026-11-22T10:03:12.345Z'
 *         receipt: eyJhbGciOiJFZERTQSIsImtpZCI6Ik5QV3ZrS0lJMFBkVEJMUjhkRm9VT0x4bUZFM2pHb3pUdlVjdl9aTW5ZRm8iLCJ0eXAiOiJKV1QifQ.eyJpc3MiOiJodHRwczovL3Jldmlldy5leGFtcGxlLmNvbSIsInN1YiI6IjQyIiwiaWF0IjoxNzk1MzQ1NzkyLCJleHAiOjE3OTUzNDYzOTIsImp0aSI6IjNmMWM5YjZlLTQ0ZDItNGU1Ny1hYjdhLTBlNjFmYjJkOGM0MCIsImRlY2lzaW9uX3R5cGUiOiJtb2RpZnkiLCJhY3Rpb25fc2hhMjU2IjoiOWIyZTdhMjFmNWYzNmM0ZGM0ZjE3OTg5ZjM2NmUyNzE1YzY2ZDk5YzRlMjFhNWE2MDJjZjNkNmY0YTM1NGI2NiIsImRlY2lkZWRfYnkiOlsiZGFuYUBleGFtcGxlLmNvbSJdLCJ2b3RlcyI6W119.c2lnbmF0dXJlLW9mLXRoZS1oZWFkZXItYW5kLXBheWxvYWQtYnktdGhlLWN1cnJlbnQta2V5
 *     DecisionCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [decision_type]
 *       properties:
 *         decision_type: { $ref: '#/components/schemas/DecisionType' }
 *         reviewer_id:
 *           type: integer
 *           nullable: true
 *           minimum: 1
 *           maximum: 2147483647
 *         reviewer_name:
 *           type: string
 *           nullable: true
 *           maxLength: 255
 *           description: Who decided, as shown to agents and in the dashboard.
 *         modified_action:
 *           type: string
 *           nullable: true
 *           maxLength: 100000
 *           description: Required (non-empty) with `modify`; not allowed otherwise.
 *         notes:
 *           type: string
 *           nullable: true
 *           maxLength: 10000
 *       example:
 *         decision_type: approve
 *         reviewer_name: dana@example.com
 *         notes: Carrier confirmed the loss.
 *     Review:
 *       type: object
 *       required: [id, task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework,
 *                  metadata, organization_id, agent_id, agent_name, status, assigned_to, assigned_team, routing_rule,
 *                  created_at, updated_at, decided_at, expires_at, waiting_until, decision]
 *       properties:
 *         id: { type: integer }
 *         task_type: { type: string }
 *         proposed_action: { type: string }
 *         agent_reasoning: { type: string, nullable: true }
 *         confidence_score: { type: number, nullable: true }
 *         urgency: { $ref: '#/components/schemas/Urgency' }
 *         framework: { type: string, nullable: true }
 *         metadata: { $ref: '#/components/schemas/Metadata' }
 *         organization_id: { type: integer, nullable: true }
 *         agent_id: { type: integer, nullable: true }
 *         agent_name:
 *           type: string
 *           nullable: true
 *           description: >-
 *             The agent's name: a registered agent's as it was when the review was filed, else the
 *             `agent_name` it was filed with; null when neither.
 *         status: { $ref: '#/components/schemas/ReviewStatus' }
 *         assigned_to:
 *           type: string
 *           nullable: true
 *           description: The reviewer the routing policy assigned the review to.
 *         assigned_team: { type: string, nullable: true, description: The team the routing policy assigned it to. }
 *         routing_rule:
 *           type: string
 *           nullable: true
 *           description: >-
 *             The routing rule that matched. A rule's automatic decision has `reviewer_name`
 *             `rule:<name>`; an expired review's has `policy:expired`.
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *         decided_at: { type: string, format: date-time, nullable: true }
 *         expires_at:
 *           type: string
 *           format: date-time
 *           nullable: true
 *           description: When a still pending review gets the policy's fail-safe decision (`on_expiry`); null without a limit.
 *         waiting_until:
 *           type: string
 *           format: date-time
 *           nullable: true
 *           description: >-
 *             The latest moment until which some agent is waiting on this review right now — a
 *             blocking create (`blocking: true`, `Prefer: wait=`), a long-poll of its decision
 *             (`GET /reviews/{id}/decision?wait=`), an MCP `request_review` — in any API process
 *             sharing the database; the agent gives up then if nobody decides. `null` when no
 *             agent is waiting, and once the review is decided. A `review.waiting` event tells
 *             when it changes.
 *         decision:
 *           type: object
 *           allOf: [{ $ref: '#/components/schemas/Decision' }]
 *           nullable: true
 *           description: '`null` until decided.'
 *         workflow: { $ref: '#/components/schemas/WorkflowProgress' }
 *         attachments:
 *           type: array
 *           items: { $ref: '#/components/schemas/Attachment' }
 *           description: >-
 *             Only in the answer to a create that carried files (`multipart/form-data`): the
 *             review's attachments, oldest first. Elsewhere, `GET /reviews/{review_id}/attachments`.
 *         links: { $ref: '#/components/schemas/ReviewLinks' }
 *         shadow_rule_id: { type: integer, description: 'Hosted edition: the shadow auto-decide rule that would have decided the review; absent when none matched.' }
 *         audit_sample: { type: boolean, enum: [true], description: 'Hosted edition: an enforcing auto-decide rule (audit_rule_id) matched, and the review was drawn for a person all the same; absent otherwise.' }
 *         audit_rule_id: { type: integer, description: 'With audit_sample: the rule that would have decided the review.' }
 *       example:
 *         id: 42
 *         task_type: refund
 *         proposed_action: Refund order 1042 in full (EUR 250.00)
 *         agent_reasoning: Customer reports the parcel never arrived; carrier confirms loss.
 *         confidence_score: 0.82
 *         urgency: high
 *         framework: langchain
 *         metadata: { order_id: 1042, amount: 250 }
 *         organization_id: null
 *         agent_id: null
 *         agent_name: refund-bot
 *         status: pending
 *         assigned_to: finance-lead@example.com
 *         assigned_team: finance
 *         routing_rule: large-refunds
 *         created_at: '2026-11-22T10:00:00.000Z'
 *         updated_at: '2026-11-22T10:00:00.000Z'
 *         decided_at: null
 *         expires_at: '2026-11-22T11:00:00.000Z'
 *         waiting_until: '2026-11-22T10:05:00.000Z'
 *         decision: null
 *         links: { dashboard: 'https://review.example.com/#/reviews/42' }
 *     ReviewLinks:
 *       type: object
 *       required: [dashboard]
 *       description: >-
 *         Where people open the review. Present where the dashboard's address is known: `public_url`
 *         when it is set; in the self-hosted edition without it, this machine's dashboard
 *         (`http://<dashboard_host>:<dashboard_port>`). Absent in the hosted edition without `public_url`.
 *       properties:
 *         dashboard:
 *           type: string
 *           format: uri
 *           description: 'The review in the dashboard, `<dashboard>/#/reviews/<id>`: pending or decided, for anyone who may see it.'
 *     ReviewList:
 *       type: object
 *       required: [reviews, total, page, page_size]
 *       properties:
 *         reviews:
 *           type: array
 *           items: { $ref: '#/components/schemas/Review' }
 *         total: { type: integer, description: 'Reviews matching the filters, across all pages.' }
 *         page: { type: integer }
 *         page_size: { type: integer }
 *     Problem:
 *       type: object
 *       description: RFC 9457 problem details. `detail` is always a readable sentence.
 *       required: [type, title, status, detail]
 *       properties:
 *         type: { type: string, example: about:blank }
 *         title: { type: string, example: Bad Request }
 *         status: { type: integer, example: 400 }
 *         detail: { type: string, example: confidence_score must be <= 1 }
 *         errors:
 *           type: array
 *           items:
 *             type: object
 *             required: [field, message]
 *             properties:
 *               field: { type: string, example: confidence_score }
 *               message: { type: string, example: must be <= 1 }
 *     WaitProblem:
 *       description: A blocking request ended without a decision. The review stays pending.
 *       allOf:
 *         - $ref: '#/components/schemas/Problem'
 *         - type: object
 *           required: [review_id, review]
 *           properties:
 *             review_id: { type: integer }
 *             review: { $ref: '#/components/schemas/Review' }
 *     ShutdownProblem:
 *       description: The server is shutting down. A blocked create carries its `review_id`.
 *       allOf:
 *         - $ref: '#/components/schemas/Problem'
 *         - type: object
 *           properties:
 *             review_id: { type: integer }
 *     WorkflowVote:
 *       type: object
 *       required: [user_id, user_name, stage, decision_type, modified_action, notes, created_at]
 *       properties:
 *         user_id: { type: integer }
 *         user_name: { type: string }
 *         stage: { type: integer, description: The stage (0-based) it was cast in. }
 *         decision_type: { $ref: '#/components/schemas/DecisionType' }
 *         modified_action: { type: string, nullable: true }
 *         notes: { type: string, nullable: true }
 *         created_at: { type: string, format: date-time }
 *     WorkflowProgress:
 *       type: object
 *       description: Hosted edition, a review an approval workflow governs (absent otherwise).
 *       required: [id, name, stage, stages, votes, modified_action, waiting_on, stuck]
 *       properties:
 *         id: { type: integer, nullable: true, description: "The workflow's id; null for the organization's require_two_approvals." }
 *         name: { type: string }
 *         stage: { type: integer, description: The stage voting now (0-based); the number of stages once all have approved. }
 *         stages:
 *           type: array
 *           items:
 *             type: object
 *             required: [name, required_approvals, approvals]
 *             properties:
 *               name: { type: string }
 *               required_approvals: { type: integer }
 *               approvals: { type: integer }
 *         votes: { type: array, items: { $ref: '#/components/schemas/WorkflowVote' } }
 *         modified_action: { type: string, nullable: true, description: The action as a vote last modified it; later votes approve it. }
 *         waiting_on: { type: array, items: { type: integer }, description: The ids of the people who may vote now and have not. }
 *         stuck: { type: boolean, description: Fewer people are left who may vote now than approvals are missing. }
 *     VoteRecorded:
 *       type: object
 *       required: [review_id, status, votes, workflow]
 *       properties:
 *         review_id: { type: integer }
 *         status: { type: string, enum: [pending] }
 *         votes: { type: array, items: { $ref: '#/components/schemas/WorkflowVote' } }
 *         workflow:
 *           type: object
 *           required: [id, name, stage, required_approvals, approvals]
 *           properties:
 *             id: { type: integer, nullable: true }
 *             name: { type: string }
 *             stage: { type: integer }
 *             required_approvals: { type: integer }
 *             approvals: { type: integer }
 *       example:
 *         review_id: 42
 *         status: pending
 *         votes: [{ user_id: 5, user_name: Dana Reviewer, stage: 0, decision_type: approve, modified_action: null, notes: null, created_at: '2026-11-24T09:05:00.000Z' }]
 *         workflow: { id: null, name: Two approvals, stage: 0, required_approvals: 2, approvals: 1 }
 *     DecisionConflict:
 *       description: The review already has a decision, which is included; or (a workflow) this person has already voted.
 *       allOf:
 *         - $ref: '#/components/schemas/Problem'
 *         - type: object
 *           properties:
 *             review_id: { type: integer }
 *             decision: { $ref: '#/components/schemas/Decision' }
 *     FeedbackCreate:
 *       type: object
 *       additionalProperties: false
 *       description: A rating, a comment, or both; at least one of them must be given (not null).
 *       properties:
 *         rating:
 *           type: integer
 *           nullable: true
 *           minimum: 1
 *           maximum: 5
 *         comment:
 *           type: string
 *           nullable: true
 *           maxLength: 10000
 *       example: { rating: 4, comment: Good catch on the refund amount. }
 *     Feedback:
 *       type: object
 *       required: [id, review_id, rating, comment, created_at]
 *       properties:
 *         id: { type: integer }
 *         review_id: { type: integer }
 *         rating: { type: integer, nullable: true, minimum: 1, maximum: 5 }
 *         comment: { type: string, nullable: true }
 *         created_at: { type: string, format: date-time }
 *       example: { id: 3, review_id: 42, rating: 4, comment: Good catch on the refund amount., created_at: '2026-11-22T10:05:00.000Z' }
 *     FeedbackList:
 *       type: object
 *       required: [review_id, feedback, count]
 *       properties:
 *         review_id: { type: integer }
 *         feedback:
 *           type: array
 *           items: { $ref: '#/components/schemas/Feedback' }
 *         count: { type: integer }
 *     ReviewCreateWithFiles:
 *       type: object
 *       description: A review filed with its files, as `multipart/form-data`.
 *       # `review` is required, but the server checks that itself while streaming the body: the
 *       # request validator runs before the body is read and would see no parts at all.
 *       properties:
 *         review:
 *           allOf: [{ $ref: '#/components/schemas/ReviewCreate' }]
 *           description: Required. The review's fields (and `blocking`), as the JSON text of a ReviewCreate.
 *         file:
 *           type: array
 *           items: { type: string, format: binary }
 *           description: >-
 *             Zero or more parts named `file`, at most `max_attachments_per_review`, each at most
 *             `max_attachment_bytes`; each part's `filename` and `Content-Type` are kept (sanitised).
 *     AttachmentUpload:
 *       type: object
 *       # `file` is required, but the server checks that itself while streaming the body: the
 *       # request validator runs before the body is read and would see no parts at all.
 *       properties:
 *         file:
 *           type: string
 *           format: binary
 *           description: >-
 *             Required. The file; its part's `filename` and `Content-Type` are kept (sanitised).
 *             Without it the upload is refused with 400.
 *         description:
 *           type: string
 *           maxLength: 1000
 *     Attachment:
 *       type: object
 *       required: [id, review_id, file_name, content_type, size_bytes, sha256, description, created_at]
 *       properties:
 *         id: { type: integer }
 *         review_id: { type: integer }
 *         file_name: { type: string, description: 'The uploaded name, sanitised.' }
 *         content_type: { type: string, description: 'The declared type, or application/octet-stream.' }
 *         size_bytes: { type: integer }
 *         sha256: { type: string, pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the content, in hex.' }
 *         description: { type: string, nullable: true }
 *         created_at: { type: string, format: date-time }
 *       example:
 *         id: 5
 *         review_id: 42
 *         file_name: receipt.png
 *         content_type: image/png
 *         size_bytes: 48213
 *         sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *         description: The customer's receipt
 *         created_at: '2026-11-22T10:01:00.000Z'
 *     AttachmentList:
 *       type: object
 *       required: [review_id, attachments, count]
 *       properties:
 *         review_id: { type: integer }
 *         attachments:
 *           type: array
 *           items: { $ref: '#/components/schemas/Attachment' }
 *         count: { type: integer }
 *     Statistics:
 *       type: object
 *       required: [total_reviews, pending_reviews, approved_reviews, rejected_reviews, modified_reviews,
 *                  avg_confidence_score, avg_seconds_to_decision, task_type_breakdown, framework_breakdown,
 *                  urgency_breakdown, decisions_over_time]
 *       properties:
 *         total_reviews: { type: integer }
 *         pending_reviews: { type: integer }
 *         approved_reviews: { type: integer }
 *         rejected_reviews: { type: integer }
 *         modified_reviews: { type: integer }
 *         avg_confidence_score: { type: number, nullable: true }
 *         avg_seconds_to_decision: { type: number, nullable: true, description: Mean time from creation to decision. }
 *         task_type_breakdown: { type: object, additionalProperties: { type: integer } }
 *         framework_breakdown: { type: object, additionalProperties: { type: integer } }
 *         urgency_breakdown:
 *           type: object
 *           required: [low, medium, high, critical]
 *           properties:
 *             low: { type: integer }
 *             medium: { type: integer }
 *             high: { type: integer }
 *             critical: { type: integer }
 *         decisions_over_time:
 *           type: array
 *           description: Decisions per UTC day over the last 14 days, oldest first; days without decisions included.
 *           items:
 *             type: object
 *             required: [date, approved, rejected, modified]
 *             properties:
 *               date: { type: string, format: date }
 *               approved: { type: integer }
 *               rejected: { type: integer }
 *               modified: { type: integer }
 *       example:
 *         total_reviews: 120
 *         pending_reviews: 8
 *         approved_reviews: 90
 *         rejected_reviews: 15
 *         modified_reviews: 7
 *         avg_confidence_score: 0.81
 *         avg_seconds_to_decision: 342.5
 *         task_type_breakdown: { refund: 70, email_send: 50 }
 *         framework_breakdown: { langchain: 100, crewai: 20 }
 *         urgency_breakdown: { low: 10, medium: 80, high: 25, critical: 5 }
 *         decisions_over_time: [{ date: '2026-11-21', approved: 12, rejected: 2, modified: 1 }, { date: '2026-11-22', approved: 9, rejected: 1, modified: 0 }]
 *     Health:
 *       type: object
 *       required: [status, service, version, edition, database]
 *       properties:
 *         status: { type: string, enum: [healthy, unhealthy] }
 *         service: { type: string, example: greenlight }
 *         version: { type: string, example: 0.1.0 }
 *         edition: { type: string, enum: [self-hosted, hosted], description: 'Which edition answers: the dashboard signs people in to the hosted one.' }
 *         database: { type: string, example: ok, description: '`ok`, or what went wrong.' }
 *         storage: { type: string, example: ok, description: '`ok`, or since when writes have failed for want of disk space (they answer 507 meanwhile).' }
 *         storage_free_bytes: { type: integer, nullable: true, example: 51234567890, description: 'Free bytes under data_dir for the server, where the system says.' }
 *   parameters:
 *     ReviewId:
 *       name: review_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1, maximum: 9007199254740991 }
 *     AttachmentId:
 *       name: attachment_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1, maximum: 9007199254740991 }
 *   securitySchemes:
 *     bearerAuth:
 *       type: http
 *       scheme: bearer
 *       description: >-
 *         The `api_key` of the configuration, when `enable_auth` is true. Self-hosted
 *         installations leave authentication off by default.
 *   responses:
 *     BadRequest:
 *       description: Invalid body, query or path value, or malformed JSON.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example:
 *             type: about:blank
 *             title: Bad Request
 *             status: 400
 *             detail: confidence_score must be <= 1
 *             errors: [{ field: confidence_score, message: must be <= 1 }]
 *     Unauthorized:
 *       description: Authentication is on and the Bearer key is missing or wrong.
 *       headers:
 *         WWW-Authenticate: { schema: { type: string }, example: 'Bearer realm="greenlight"' }
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Unauthorized, status: 401, detail: 'this API requires an API key: send Authorization: Bearer <api_key>' }
 *     AttachmentNotFound:
 *       description: No attachment with this id.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Not Found, status: 404, detail: attachment 5 does not exist }
 *     NotFound:
 *       description: No review with this id.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Not Found, status: 404, detail: review 42 does not exist }
 *     Forbidden:
 *       description: >-
 *         Refused unread: the server is bound to loopback and the request's `Host` names another
 *         machine (DNS rebinding); or the request changes data and a browser marks it as
 *         cross-site (on loopback: its `Origin` is not a local one).
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Forbidden, status: 403, detail: 'this server answers only requests addressed to localhost, 127.0.0.1 or [::1], not to "evil.example"' }
 *     PayloadTooLarge:
 *       description: The JSON body is larger than 1 MiB.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Payload Too Large, status: 413, detail: the request body is too large }
 *     UnsupportedMediaType:
 *       description: The request has a body that is not `application/json` (for an upload, not `multipart/form-data`).
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Unsupported Media Type, status: 415, detail: 'send the request body as application/json, not text/plain' }
 *     TooManyRequests:
 *       description: >-
 *         More than `rate_limit_per_minute` requests in the last minute from this API key (from
 *         this address when authentication is off), or too many wrong API keys from this address;
 *         the next is accepted after `Retry-After` seconds.
 *       headers:
 *         Retry-After: { description: Seconds to wait before the next request., schema: { type: integer, minimum: 1 } }
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Too Many Requests, status: 429, detail: 'more than 60 requests a minute from this API key (rate_limit_per_minute); retry in 2 s' }
 *     InsufficientStorage:
 *       description: >-
 *         The disk under `data_dir` is full: nothing was stored. Reads go on; retry once space has
 *         been freed (`/health` says `storage: ok` again).
 *       headers:
 *         Retry-After: { description: Seconds to wait before trying again., schema: { type: integer, minimum: 1 } }
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Insufficient Storage, status: 507, detail: "the server's disk is full, so nothing was stored; retry once space has been freed on the server (under data_dir)" }
 *     IdempotencyKeyInUse:
 *       description: The first request with this Idempotency-Key is still being stored; retry after `Retry-After` seconds.
 *       headers:
 *         Retry-After: { schema: { type: integer } }
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *     IdempotencyKeyReused:
 *       description: This Idempotency-Key was used with a different body; `review_id` is the review it made.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *     Unworkable:
 *       description: >-
 *         Well-formed, but it cannot work: a person named to decide (an assignee, an approver)
 *         who cannot — a viewer, a deactivated person — or a stage that asks for more approvals
 *         than it has people to give them. `errors[].field` names where.
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example:
 *             type: about:blank
 *             title: Unprocessable Entity
 *             status: 422
 *             detail: 'assign_to_user_id: Vic Viewer (user 7) is a viewer, who reads reviews but cannot decide them; assign the rule to an active reviewer or admin'
 *             errors: [{ field: assign_to_user_id, message: 'Vic Viewer (user 7) is a viewer, who reads reviews but cannot decide them; assign the rule to an active reviewer or admin' }]
 *     ServiceUnavailable:
 *       description: >-
 *         The server is shutting down, or already holds `max_waiting_requests` waiting
 *         requests; try again after `Retry-After` seconds.
 *       headers:
 *         Retry-After: { schema: { type: integer } }
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/ShutdownProblem' }
 */
export {};
