from typing import Any, Dict, List, Optional


class GreenlightError(Exception):
    """An answer from Greenlight that the client does not retry (4xx, 5xx).

    ``problem`` is the RFC 9457 problem document the server sent: ``title``, ``detail`` (always a
    readable sentence), and members such as ``errors`` (one ``{field, message}`` per invalid
    field) or ``review_id``.
    """

    def __init__(self, status: int, problem: Dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        super().__init__(f"{status} {self.title}: {self.detail}")

    @property
    def title(self) -> str:
        return str(self.problem.get("title") or "Error")

    @property
    def detail(self) -> str:
        return str(self.problem.get("detail") or "")

    @property
    def errors(self) -> List[Dict[str, Any]]:
        return list(self.problem.get("errors") or [])

    @property
    def review_id(self) -> Optional[int]:
        return self.problem.get("review_id")


class GreenlightConnectionError(ConnectionError):
    """Greenlight could not be reached at all: nothing answered at ``url`` (refused, reset, the
    host not found, no answer in time). ``reason`` says which in words; the network's own
    exception is ``__cause__``.
    """

    def __init__(self, url: str, reason: str, advice: str = "") -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"could not connect to {url}: {reason}" + (f" ({advice})" if advice else ""))
