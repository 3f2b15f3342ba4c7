"""Python client for Greenlight, a human-review service for AI agents."""
from .client import Client, __version__
from .errors import GreenlightConnectionError, GreenlightError
from .tool_calls import ToolCallOutcome, ToolCallReviewer, resume_interrupt, review_tool_call

__all__ = ["Client", "GreenlightConnectionError", "GreenlightError", "ToolCallOutcome", "ToolCallReviewer", "resume_interrupt", "review_tool_call", "__version__"]
