"""Errors as the server gives them: one exception carrying the stable code every transport uses."""
from __future__ import annotations

from typing import Any, Dict, List, Optional


class BranchgraphError(Exception):
    """A refused call. ``code`` is the stable code (``head_moved``, ``not_found``, ``forbidden``...),
    ``status`` the HTTP status (0 when no server answered), ``retryable`` whether the same call may
    succeed later, ``details`` and ``issues`` what the server said more precisely."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 0,
        retryable: bool = False,
        details: Optional[Dict[str, Any]] = None,
        issues: Optional[List[Dict[str, str]]] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.retryable = retryable
        self.details = details or {}
        self.issues = issues or []
        self.request_id = request_id

    @classmethod
    def from_body(cls, body: Any, status: int) -> "BranchgraphError":
        """The error an envelope ``{"error": {...}}`` stands for, or a plain one for any other body."""
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            return cls("unexpected", f"unexpected answer (HTTP {status})", status=status)
        return cls(
            str(error.get("code", "unexpected")),
            str(error.get("message", "")),
            status=status,
            retryable=bool(error.get("retryable", False)),
            details=error.get("details") or {},
            issues=error.get("issues") or [],
            request_id=body.get("requestId"),
        )
