"""A real branchgraph server for the client's tests: the built command line on a fresh store,
with two tokens (an admin, ada, and a writer, wes), stopped after the session."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[3]
ADMIN = "admin-token-from-python"
WRITER = "writer-token-from-python"


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    cli = ROOT / "dist" / "bin" / "branchgraph.js"
    if not cli.exists():
        raise RuntimeError(f"{cli} is missing: run npm run build first")
    store = tempfile.mkdtemp(prefix="branchgraph-py-")
    env = dict(os.environ, BRANCHGRAPH_TOKENS=f"admin:{ADMIN}:ada,write:{WRITER}:wes", COMPACTION_BACKGROUND="false", LOG_LEVEL="warn")
    proc = subprocess.Popen(
        [os.environ.get("NODE", "node"), str(cli), "serve", "--port", "0", "--store", store],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    url = None
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.kill()
        raise RuntimeError("the server did not start")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(store, ignore_errors=True)
