#!/usr/bin/env bash
# The package as a user installs it: `npm pack` (which builds), installed into an empty
# directory without dev dependencies, and run there: no TypeScript toolchain, only the built
# JavaScript. Checks the version and how fast it answers, the demo, and a server's pages and
# API. Used by CI; runnable by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

npm pack --silent --pack-destination "$work" >/dev/null
tarball=$(ls "$work"/branchgraph-*.tgz)
echo "packed $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --omit=dev "$tarball" >/dev/null
for tool in tsx typescript esbuild vitest; do
  if [ -e "node_modules/$tool" ]; then echo "FAIL: $tool was installed with the package"; exit 1; fi
done

version=$(npx --no-install branchgraph --version)
echo "npx branchgraph --version: $version"
start=$(date +%s%N)
node_modules/.bin/branchgraph --version >/dev/null
echo "branchgraph --version took $(( ($(date +%s%N) - start) / 1000000 )) ms"

npx --no-install branchgraph demo --no-serve --store ./demo | head -1

npx --no-install branchgraph serve --port 0 --store ./data 2>serve.log >/dev/null &
pid=$!
url=
for _ in $(seq 1 600); do
  url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' serve.log | head -1)
  if [ -n "$url" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$url" ]; then echo "FAIL: the server did not start"; cat serve.log; exit 1; fi
for path in /healthz /readyz /ui /ui/explore /ui/assets/explorer.js /ui/assets/review.js /ui/assets/style.css /openapi.yaml /branches; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url$path")
  echo "GET $path $code"
  if [ "$code" != 200 ]; then echo "FAIL: GET $path answered $code"; exit 1; fi
done
echo "pack check: ok"
