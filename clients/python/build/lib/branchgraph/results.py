"""What calls answer, as dataclasses: the parts a program reads most, with the whole answer kept in ``raw``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class Commit:
    id: str
    kind: str
    message: str
    author: str
    actor: str
    time: str
    parents: List[str]

    @classmethod
    def of(cls, c: Dict[str, Any]) -> "Commit":
        return cls(
            c["id"],
            c.get("kind", ""),
            c.get("message", ""),
            c.get("author", ""),
            c.get("actor", ""),
            c.get("time", ""),
            list(c.get("parents", [])),
        )


@dataclass(frozen=True)
class Branch:
    name: str
    head: Commit
    protected: bool
    owner: Optional[str]
    expires_at: Optional[str]
    labels: List[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, b: Dict[str, Any]) -> "Branch":
        return cls(
            b["name"],
            Commit.of(b["head"]),
            b.get("protection") is not None,
            b.get("owner"),
            b.get("expiresAt"),
            list(b.get("labels") or []),
            b,
        )


@dataclass(frozen=True)
class WriteResult:
    """A write's commit: None when the write changed nothing."""

    commit: Optional[Commit]
    raw: Dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Conflict:
    kind: str
    table: str
    key: str
    property: Optional[str]
    base: Any
    source: Any
    target: Any
    message: str

    @classmethod
    def of(cls, c: Dict[str, Any]) -> "Conflict":
        return cls(c["kind"], c["table"], c["key"], c.get("property"), c.get("base"), c.get("source"), c.get("target"), c.get("message", ""))

    def resolve(self, take: str, value: Any = None) -> Dict[str, Any]:
        """A resolution of this conflict for ``merge(resolutions=...)``: take ``source``, ``target``,
        ``base``, or ``value`` (with the value), pinned to the values seen here, so a conflict that
        changed since is refused (``resolution_stale``) rather than decided blindly."""
        r: Dict[str, Any] = {
            "table": self.table,
            "key": self.key,
            "take": take,
            "expected": {"base": self.base, "source": self.source, "target": self.target},
        }
        if self.property is not None:
            r["property"] = self.property
        if take == "value":
            r["value"] = value
        return r


@dataclass(frozen=True)
class MergeResult:
    """A merge's outcome as a value: ``status`` is ``success`` (with ``commit``) or ``conflicts``
    (with ``conflicts``, and nothing changed). ``outcome`` says how it succeeded: merged,
    fast_forward or already_up_to_date."""

    status: str
    outcome: Optional[str]
    commit: Optional[Commit]
    conflicts: List[Conflict]
    total_conflicts: int
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @classmethod
    def of(cls, r: Dict[str, Any]) -> "MergeResult":
        if r.get("status") == "conflicts":
            report = r.get("report") or {}
            items = [Conflict.of(c) for c in report.get("items", [])]
            return cls("conflicts", None, None, items, int(report.get("total", len(items))), r)
        commit = r.get("commit")
        return cls("success", r.get("outcome"), Commit.of(commit) if isinstance(commit, dict) else None, [], 0, r)


@dataclass(frozen=True)
class MergeRequest:
    id: str
    title: str
    source: str
    target: str
    author: str
    state: str
    mergeable: bool
    reasons: List[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, q: Dict[str, Any]) -> "MergeRequest":
        m = q.get("mergeability") or {}
        return cls(
            q["id"], q["title"], q["source"], q["target"], q["author"], q["state"], bool(m.get("mergeable")), list(m.get("reasons", [])), q
        )
