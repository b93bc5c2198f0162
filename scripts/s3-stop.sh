#!/usr/bin/env bash
# Stop the daemons started by s3-start.sh and delete its scratch directory.
DIR=$(realpath -m "${1:-/tmp/branchgraph-s3}")
for name in client.rgw.a osd.0 mon.a; do
  f="$DIR/run/$name.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$DIR"
