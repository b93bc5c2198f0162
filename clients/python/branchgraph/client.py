"""The branchgraph REST API from Python, with the standard library only.

    from branchgraph import Client
    bg = Client("http://127.0.0.1:8080", token="...")
    bg.create_branch("feature")
    bg.write("feature", [update("Person", id="ann", age=31)])
    result = bg.merge("feature", into="main")
    if not result.ok:
        bg.merge("feature", into="main", resolutions=[c.resolve("source") for c in result.conflicts])

Refusals raise BranchgraphError with the server's stable code; expected outcomes (conflicts,
already up to date) come back as values. Pages are followed for you: the listing calls are
generators over the server's cursors.
"""
from __future__ import annotations

import importlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Union

from .errors import BranchgraphError
from .results import Branch, Commit, MergeRequest, MergeResult, WriteResult

Ref = str
Row = Dict[str, Any]


def insert(table: str, **values: Any) -> Dict[str, Any]:
    """A write operation that adds a row (refused if its key exists)."""
    return {"op": "insert", "table": table, "values": values}


def upsert(table: str, **values: Any) -> Dict[str, Any]:
    """A write operation that adds a row or replaces the one with its key."""
    return {"op": "upsert", "table": table, "values": values}


def update(table: str, **values: Any) -> Dict[str, Any]:
    """A write operation that changes the given properties of the row with the key among them."""
    return {"op": "update", "table": table, "values": values}


def delete(table: str, **key: Any) -> Dict[str, Any]:
    """A write operation that deletes the row with this key (a node's edges with it)."""
    return {"op": "delete", "table": table, "values": key}


def _optional(module: str, need: str) -> Any:
    """A package the client uses only when it is installed, or an error that says how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = module.split(".")[0]
        raise BranchgraphError("invalid_input", f"{need} needs {package}: pip install {package}") from e


class Client:
    """One graph of one server: the default graph, or a hosted one through ``graph(name)``."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # -- transport ---------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        raw: Optional[bytes] = None,
        content_type: str = "application/json",
        headers: Optional[Mapping[str, str]] = None,
    ) -> bytes:
        url = self.base_url + path
        if query:
            pairs = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        data = raw if raw is not None else (json.dumps(body).encode("utf-8") if body is not None else None)
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("accept", "application/json")
        if data is not None:
            req.add_header("content-type", content_type)
        if self.token:
            req.add_header("authorization", f"Bearer {self.token}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return res.read()
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = None
            # A merge's conflicts answer 409 with the report: an outcome, not an error.
            if isinstance(parsed, dict) and parsed.get("status") == "conflicts":
                return payload
            raise BranchgraphError.from_body(parsed, e.code) from None
        except urllib.error.URLError as e:
            raise BranchgraphError("server_unreachable", f"cannot reach the server at {self.base_url} ({method} {path}): {e.reason}") from None

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        return json.loads(self._request(method, path, **kw) or b"null")

    @staticmethod
    def _seg(s: str) -> str:
        return urllib.parse.quote(s, safe="")

    # -- graphs --------------------------------------------------------------------------------

    def graphs(self) -> List[Dict[str, Any]]:
        """The graphs this server hosts beside the default one."""
        return list(self._json("GET", "/graphs")["graphs"])

    def create_graph(self, name: str) -> "Client":
        self._json("POST", "/graphs", body={"name": name})
        return self.graph(name)

    def graph(self, name: str) -> "Client":
        """A client for a hosted graph, with the same token."""
        return Client(f"{self.base_url}/graphs/{self._seg(name)}", self.token, self.timeout)

    def whoami(self) -> Dict[str, Any]:
        return dict(self._json("GET", "/whoami"))

    # -- branches and schema -------------------------------------------------------------------

    def _pages(self, path: str, items: str, query: Mapping[str, Any]) -> Iterator[Dict[str, Any]]:
        """Every item of a listing, following its ``nextCursor`` page by page."""
        cursor: Optional[str] = None
        while True:
            page = self._json("GET", path, query={**query, "cursor": cursor})
            yield from page[items]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def branches(self, *, owner: Optional[str] = None, label: Optional[str] = None, prefix: Optional[str] = None) -> Iterator[Branch]:
        query = {"owner": owner, "label": label, "prefix": prefix, "limit": 500}
        return (Branch.of(b) for b in self._pages("/branches", "branches", query))

    def branch(self, name: str) -> Branch:
        return Branch.of(self._json("GET", f"/branches/{self._seg(name)}"))

    def create_branch(
        self,
        name: str,
        from_: Ref = "main",
        *,
        ttl_seconds: Optional[int] = None,
        owner: Optional[str] = None,
        labels: Optional[List[str]] = None,
    ) -> Branch:
        body: Dict[str, Any] = {"name": name, "from": from_}
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        if owner is not None:
            body["owner"] = owner
        if labels is not None:
            body["labels"] = labels
        return Branch.of(self._json("POST", "/branches", body=body))

    def delete_branch(self, name: str) -> None:
        self._request("DELETE", f"/branches/{self._seg(name)}")

    def apply_schema(self, branch: str, schema: str) -> Dict[str, Any]:
        return dict(self._json("POST", f"/branches/{self._seg(branch)}/schema", body={"schema": schema}))

    def schema(self, at: Ref = "main") -> Dict[str, Any]:
        """The schema at a ref: ``text`` and the IR as ``schema``."""
        return dict(self._json("GET", "/schema", query={"at": at}))

    # -- writes ----------------------------------------------------------------------------------

    def write(self, branch: str, ops: List[Dict[str, Any]], *, message: Optional[str] = None, expected_head: Optional[str] = None) -> WriteResult:
        """One all-or-nothing commit of ``ops`` (see insert, upsert, update, delete). With
        ``expected_head``, refused with ``head_moved`` if the branch moved since."""
        body: Dict[str, Any] = {"ops": ops}
        if message is not None:
            body["message"] = message
        if expected_head is not None:
            body["expectedHead"] = expected_head
        r = self._json("POST", f"/branches/{self._seg(branch)}/writes", body=body)
        return WriteResult(Commit.of(r["commit"]) if r.get("commit") else None, r)

    def load(self, branch: str, rows: Iterable[Mapping[str, Any]]) -> WriteResult:
        """Bulk load lines ``{"table", "values", "op"?}`` as one all-or-nothing commit."""
        return self.load_file(branch, "".join(json.dumps(r) + "\n" for r in rows), format="ndjson")

    def load_file(self, branch: str, data: Union[bytes, str], *, format: str, table: Optional[str] = None, op: Optional[str] = None) -> WriteResult:
        """Load a file's bytes as one all-or-nothing commit: ``format`` is ``ndjson``, or ``csv`` or
        ``parquet`` with the ``table`` its rows go to (``op``: ``upsert``, the default, or ``insert``)."""
        media = {"ndjson": "application/x-ndjson", "csv": "text/csv", "parquet": "application/vnd.apache.parquet"}
        if format not in media:
            raise ValueError(f"format must be ndjson, csv or parquet, not {format!r}")
        raw = data.encode("utf-8") if isinstance(data, str) else data
        path = f"/branches/{self._seg(branch)}/load"
        r = json.loads(self._request("POST", path, query={"table": table, "op": op}, raw=raw, content_type=media[format]))
        return WriteResult(Commit.of(r["commit"]) if r.get("commit") else None, r)

    # -- reads -----------------------------------------------------------------------------------

    def get(self, table: str, key: str, at: Ref = "main") -> Row:
        return dict(self._json("GET", f"/tables/{self._seg(table)}/rows/{self._seg(key)}", query={"at": at})["row"])

    def rows(
        self,
        table: str,
        at: Ref = "main",
        *,
        where: Optional[Mapping[str, Any]] = None,
        order_by: Optional[List[Dict[str, str]]] = None,
        page_size: int = 1000,
    ) -> Iterator[Row]:
        """Every row of a table at a ref under a typed filter, in order, read a page at a time.
        The ref is resolved once, so every page comes from the same commit."""
        pinned = at if at.startswith("commit:") else f"commit:{self._commit_of(at)}"
        after: Optional[str] = None
        while True:
            body: Dict[str, Any] = {"at": pinned, "first": page_size}
            if where is not None:
                body["where"] = where
            if order_by is not None:
                body["orderBy"] = order_by
            if after is not None:
                body["after"] = after
            page = self._json("POST", f"/tables/{self._seg(table)}/query", body=body)
            for item in page["items"]:
                yield dict(item["row"])
            if not page["hasNextPage"] or not page["items"]:
                return
            after = page["items"][-1]["cursor"]

    def _commit_of(self, at: Ref) -> str:
        return str(self._json("GET", "/tables", query={"at": at})["commit"])

    def rows_table(self, table: str, at: Ref = "main", **kw: Any) -> Any:
        """The rows as a ``pyarrow.Table`` (needs pyarrow)."""
        return _optional("pyarrow", "rows_table").Table.from_pylist(list(self.rows(table, at, **kw)))

    def rows_frame(self, table: str, at: Ref = "main", **kw: Any) -> Any:
        """The rows as a pandas ``DataFrame`` (needs pandas)."""
        return _optional("pandas", "rows_frame").DataFrame.from_records(list(self.rows(table, at, **kw)))

    def export(self, table: str, at: Ref = "main", format: str = "arrow") -> bytes:
        """A table at a ref as a file: ``arrow``, ``arrow-stream``, ``parquet`` or ``ndjson``."""
        return self._request("GET", f"/tables/{self._seg(table)}/export", query={"at": at, "format": format})

    def export_table(self, table: str, at: Ref = "main") -> Any:
        """A table at a ref as a ``pyarrow.Table``, read from its Arrow export (needs pyarrow)."""
        pyarrow = _optional("pyarrow", "export_table")
        ipc = _optional("pyarrow.ipc", "export_table")
        return ipc.open_file(pyarrow.BufferReader(self.export(table, at, "arrow"))).read_all()

    def query(self, branch: str, document: str, variables: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """A typed GraphQL document on a branch's API; its data, or the first error raised."""
        r = self._json("POST", f"/branches/{self._seg(branch)}/graphql", body={"query": document, "variables": dict(variables or {})})
        errors = r.get("errors") or []
        if errors:
            ext = errors[0].get("extensions") or {}
            raise BranchgraphError(str(ext.get("code", "graphql_error")), errors[0].get("message", ""), status=200, details=ext.get("details") or {})
        return dict(r.get("data") or {})

    def log(self, at: Ref = "main", limit: int = 50) -> List[Commit]:
        return [Commit.of(c) for c in self._json("GET", "/commits", query={"at": at, "limit": limit})["commits"]]

    def diff(self, from_: Ref, to: Ref, *, three_dot: bool = False) -> Dict[str, Any]:
        return dict(self._json("GET", "/diff", query={"from": from_, "to": to, "mode": "three-dot" if three_dot else "two-dot"}))

    # -- merges ----------------------------------------------------------------------------------

    def merge(
        self,
        source: str,
        into: str = "main",
        *,
        dry_run: bool = False,
        resolutions: Optional[Union[List[Dict[str, Any]], Dict[str, Any]]] = None,
        strategy: Optional[str] = None,
        message: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> MergeResult:
        """Merge ``source`` into ``into``: one commit, or nothing and the exact conflicts (a value,
        not an exception). ``resolutions`` decide conflicts (``Conflict.resolve``); ``strategy``
        (``source-wins``/``target-wins``) decides the rest. An ``idempotency_key`` makes a retry
        answer the first call's result instead of merging twice."""
        body: Dict[str, Any] = {"into": into, "dryRun": dry_run}
        if resolutions is not None or strategy is not None:
            res: Dict[str, Any] = dict(resolutions) if isinstance(resolutions, dict) else {"conflicts": list(resolutions or [])}
            if strategy is not None:
                res["strategy"] = strategy
            body["resolutions"] = res
        if message is not None:
            body["message"] = message
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return MergeResult.of(self._json("POST", f"/branches/{self._seg(source)}/merge", body=body, headers=headers))

    # -- merge requests --------------------------------------------------------------------------

    def open_request(self, source: str, target: str = "main", *, title: str, description: str = "") -> MergeRequest:
        return MergeRequest.of(self._json("POST", "/merge-requests", body={"source": source, "target": target, "title": title, "description": description}))

    def request(self, id: str) -> MergeRequest:
        return MergeRequest.of(self._json("GET", f"/merge-requests/{self._seg(id)}"))

    def requests(self, state: str = "open") -> Iterator[MergeRequest]:
        return (MergeRequest.of(q) for q in self._pages("/merge-requests", "requests", {"state": state, "limit": 100}))

    def review(self, id: str, verdict: str, body: Optional[str] = None) -> MergeRequest:
        """``approve``, ``request_changes`` or ``comment``."""
        review: Dict[str, Any] = {"verdict": verdict}
        if body is not None:
            review["body"] = body
        return MergeRequest.of(self._json("POST", f"/merge-requests/{self._seg(id)}/reviews", body=review))

    def set_resolutions(self, id: str, resolutions: Union[List[Dict[str, Any]], Dict[str, Any]]) -> MergeRequest:
        res = resolutions if isinstance(resolutions, dict) else {"conflicts": list(resolutions)}
        return MergeRequest.of(self._json("PUT", f"/merge-requests/{self._seg(id)}/resolutions", body={"resolutions": res}))

    def merge_request(self, id: str, *, message: Optional[str] = None, delete_branch: bool = False) -> MergeRequest:
        """Merge a request that is mergeable; refused (``request_not_mergeable``) with the reasons otherwise."""
        body: Dict[str, Any] = {"deleteBranch": delete_branch}
        if message is not None:
            body["message"] = message
        return MergeRequest.of(self._json("POST", f"/merge-requests/{self._seg(id)}/merge", body=body)["request"])

    # -- the event feed --------------------------------------------------------------------------

    def events(self, cursor: str = "0", *, follow: bool = False, poll_seconds: float = 1.0) -> Iterator[Dict[str, Any]]:
        """Every event after ``cursor``, oldest first, a page at a time. An event's ``seq`` is its
        cursor: ``str(event["seq"])`` resumes after it. With ``follow`` the generator waits for new
        events, asking every ``poll_seconds``."""
        while True:
            page = self._json("GET", "/events", query={"cursor": cursor, "limit": 1000})
            for e in page["events"]:
                yield e
            moved = page["nextCursor"] != cursor
            cursor = page["nextCursor"]
            if page["events"] or moved:
                continue
            if not follow:
                return
            time.sleep(poll_seconds)
