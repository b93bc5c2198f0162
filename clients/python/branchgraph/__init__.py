"""Python client for branchgraph, a typed graph store with Git-style branches and three-way entity merges."""
from .client import Client, delete, insert, update, upsert
from .errors import BranchgraphError
from .results import Branch, Commit, Conflict, MergeRequest, MergeResult, WriteResult

__all__ = [
    "Branch",
    "BranchgraphError",
    "Client",
    "Commit",
    "Conflict",
    "MergeRequest",
    "MergeResult",
    "WriteResult",
    "delete",
    "insert",
    "update",
    "upsert",
]
__version__ = "0.1.0"
