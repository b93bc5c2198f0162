"""The Python client against a real server: branches and writes, a merge conflict resolved from
Python, a merge request reviewed by someone else, typed GraphQL, the event feed, export, hosted
graphs, and errors that carry the server's stable code."""
from __future__ import annotations

import importlib.util
import json
import uuid

import pytest

from branchgraph import BranchgraphError, Client, delete, insert, update
from conftest import ADMIN, WRITER

SCHEMA = """
node Person { id: string @key
  name: string
  age: int? }
edge Knows: Person -> Person { since: int? }
"""


@pytest.fixture(scope="module")
def admin(server: str) -> Client:
    bg = Client(server, token=ADMIN)
    bg.apply_schema("main", SCHEMA)
    bg.write(
        "main",
        [insert("Person", id="ann", name="Ann", age=30), insert("Person", id="bob", name="Bob", age=40), insert("Knows", **{"from": "ann", "to": "bob"})],
        message="people",
    )
    return bg


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_branches_and_writes(admin: Client) -> None:
    name = fresh("py")
    b = admin.create_branch(name, labels=["python"])
    assert b.name == name and b.head.id == admin.branch("main").head.id
    r = admin.write(name, [update("Person", id="ann", age=31), insert("Person", id="cy", name="Cy")], message="from python")
    assert r.commit is not None and r.commit.message == "from python" and r.commit.actor == "ada"
    assert admin.get("Person", "ann", at=name)["age"] == 31
    assert admin.get("Person", "ann")["age"] == 30
    assert [b.name for b in admin.branches(label="python")] == [name]
    rows = list(admin.rows("Person", at=name, order_by=[{"prop": "id", "direction": "desc"}]))
    assert [r["id"] for r in rows] == ["cy", "bob", "ann"]
    assert sorted(r["id"] for r in admin.rows("Person", at=name, where={"age": {"gte": 31}})) == ["ann", "bob"]
    admin.delete_branch(name)
    with pytest.raises(BranchgraphError) as e:
        admin.branch(name)
    assert e.value.code == "not_found" and e.value.status == 404


def test_a_merge_conflict_resolved_from_python(admin: Client) -> None:
    mine, theirs = fresh("mine"), fresh("theirs")
    admin.create_branch(mine)
    admin.create_branch(theirs)
    admin.write(mine, [update("Person", id="bob", age=41)])
    admin.write(theirs, [update("Person", id="bob", age=42)])
    assert admin.merge(theirs, into=mine, dry_run=True).status == "conflicts"
    head = admin.branch(mine).head.id
    result = admin.merge(theirs, into=mine)
    # Conflicts are a value, and nothing changed.
    assert not result.ok and result.total_conflicts == 1
    (c,) = result.conflicts
    assert (c.table, c.key, c.property, c.base, c.source, c.target) == ("Person", "bob", "age", 40, 42, 41)
    assert admin.branch(mine).head.id == head
    done = admin.merge(theirs, into=mine, resolutions=[c.resolve("value", 45)], idempotency_key=f"py-{theirs}")
    assert done.ok and done.outcome == "merged" and done.commit is not None
    assert admin.get("Person", "bob", at=mine)["age"] == 45
    # The same key again answers the first result instead of merging twice.
    again = admin.merge(theirs, into=mine, resolutions=[c.resolve("value", 45)], idempotency_key=f"py-{theirs}")
    assert again.commit is not None and again.commit.id == done.commit.id
    # A resolution pinned to values that moved is refused, not applied blindly.
    admin.write(theirs, [update("Person", id="bob", age=50)])
    admin.write(mine, [update("Person", id="bob", age=51)])
    with pytest.raises(BranchgraphError) as stale:
        admin.merge(theirs, into=mine, resolutions=[c.resolve("source")])
    assert stale.value.code == "resolution_stale"


def test_a_merge_request_reviewed_by_someone_else(admin: Client, server: str) -> None:
    writer = Client(server, token=WRITER)
    assert writer.whoami()["actor"] == "wes"
    name = fresh("req")
    writer.create_branch(name)
    writer.write(name, [insert("Person", id=fresh("p"), name="New")])
    admin._json("PUT", "/branches/main/protection", body={"requiredApprovals": 1})
    try:
        q = writer.open_request(name, "main", title="A new person")
        assert q.state == "open" and not q.mergeable
        with pytest.raises(BranchgraphError) as own:
            writer.review(q.id, "approve")
        assert own.value.code == "forbidden"
        assert admin.review(q.id, "approve", "fine").mergeable
        merged = admin.merge_request(q.id, delete_branch=True)
        assert merged.state == "merged"
        assert q.id in [r.id for r in admin.requests("merged")]
    finally:
        admin._request("DELETE", "/branches/main/protection")


def test_typed_graphql(admin: Client) -> None:
    data = admin.query("main", "query($id: String!) { getPerson(id: $id) { name knowsOut { nodes { to { name } } } } }", {"id": "ann"})
    assert data == {"getPerson": {"name": "Ann", "knowsOut": {"nodes": [{"to": {"name": "Bob"}}]}}}
    with pytest.raises(BranchgraphError):
        admin.query("main", "{ nope }")


def test_the_event_feed_resumes_from_a_cursor(admin: Client) -> None:
    events = list(admin.events())
    assert events and events[0]["seq"] < events[-1]["seq"]
    last = str(events[-1]["seq"])
    name = fresh("ev")
    admin.create_branch(name)
    newer = list(admin.events(last))
    assert [e["kind"] for e in newer] == ["branch_created"] and newer[0]["branch"] == name


def test_export_and_frames(admin: Client) -> None:
    arrow = admin.export("Person", format="arrow")
    assert arrow[:6] == b"ARROW1"
    ids = sorted(r["id"] for r in admin.rows("Person"))
    ndjson = admin.export("Person", format="ndjson").decode()
    assert sorted(json.loads(line)["id"] for line in ndjson.strip().splitlines()) == ids
    if importlib.util.find_spec("pandas") is not None:
        frame = admin.rows_frame("Person")
        assert sorted(frame["id"]) == ids
    else:
        with pytest.raises(BranchgraphError):
            admin.rows_frame("Person")
    if importlib.util.find_spec("pyarrow") is not None:
        assert admin.export_table("Person").num_rows == len(ids)
        assert admin.rows_table("Person").num_rows == len(ids)


def test_hosted_graphs_and_loads(admin: Client) -> None:
    before = len(list(admin.rows("Person")))
    g = admin.create_graph(fresh("g"))
    assert g.base_url.startswith(admin.base_url + "/graphs/")
    g.apply_schema("main", SCHEMA)
    r = g.load("main", ({"table": "Person", "values": {"id": f"p{i}", "name": f"P{i}"}} for i in range(500)))
    assert r.commit is not None
    assert len(list(g.rows("Person", page_size=64))) == 500
    # The hosted graph is a graph of its own: the default one did not change.
    assert len(list(admin.rows("Person"))) == before


def test_a_csv_file_loads_typed_and_a_bad_line_is_named(admin: Client) -> None:
    g = admin.create_graph(fresh("csv"))
    g.apply_schema("main", SCHEMA)
    r = g.load_file("main", "id,name,age\nann,Ann,30\nbob,\"Bob, Jr.\",\n", format="csv", table="Person", op="insert")
    assert r.commit is not None
    assert g.get("Person", "bob") == {"id": "bob", "name": "Bob, Jr.", "age": None}
    assert g.get("Person", "ann")["age"] == 30
    head = g.branch("main").head.id
    with pytest.raises(BranchgraphError) as bad:
        g.load_file("main", "id,name,age\ncy,Cy,old\n", format="csv", table="Person")
    assert bad.value.code == "constraint_violation" and "line 2" in str(bad.value)
    assert g.branch("main").head.id == head


def test_errors_carry_the_stable_code(admin: Client, server: str) -> None:
    with pytest.raises(BranchgraphError) as bad:
        admin.write("main", [insert("Person", id="ann", name="again")])
    assert bad.value.code == "constraint_violation" and bad.value.status in (409, 422)
    old = admin.branch("main").head.id
    admin.write("main", [insert("Person", id=fresh("x"), name="X")])
    head = admin.branch("main").head.id
    with pytest.raises(BranchgraphError) as moved:
        admin.write("main", [delete("Person", id="ann")], expected_head=old)
    assert moved.value.code == "head_moved" and moved.value.status == 409
    assert admin.branch("main").head.id == head and admin.get("Person", "ann")["name"] == "Ann"
    with pytest.raises(BranchgraphError) as anon:
        list(Client(server).branches())
    assert anon.value.code == "unauthorized" and anon.value.status == 401
    with pytest.raises(BranchgraphError) as down:
        Client("http://127.0.0.1:1").branch("main")
    assert down.value.code == "server_unreachable"
