"""Python client for Greenlight, a human-review service for AI agents."""
from .client import Client, __version__
from .errors import GreenlightConnectionError, GreenlightError
from .receipts import ReceiptError, action_sha256, fetch_jwks, verify_receipt
from .tool_calls import ToolCallOutcome, ToolCallReviewer, resume_interrupt, review_tool_call

__all__ = ["Client", "GreenlightConnectionError", "GreenlightError", "ReceiptError", "action_sha256", "fetch_jwks", "verify_receipt", "ToolCallOutcome", "ToolCallReviewer", "resume_interrupt", "review_tool_call", "__version__"]
