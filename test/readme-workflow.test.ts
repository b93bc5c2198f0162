/**
 * The README's team workflow runs as written: the block after `<!-- team-workflow -->` is run by
 * bash, unchanged, against a store of its own on a free port. It starts the demo with a token per
 * person, protects main, resolves the demo's conflicting request, has someone other than its
 * author approve it, and merges it; the merged summary is what the block promises.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('README', () => {
  it('runs the team workflow as written: tokens for three people, the resolution, an approval by someone else, the merge', async () => {
    const block = /<!-- team-workflow -->\n```sh\n([\s\S]*?)```/.exec(readFileSync('README.md', 'utf8'))?.[1];
    expect(block).toBeDefined();
    const store = await mkdtemp(path.join(tmpdir(), 'bg-readme-'));
    const port = await freePort();
    // The block as it is, then the demo server it started stopped again.
    const script = `set -euo pipefail\n${block}\nkill $(jobs -p) 2>/dev/null || true\nwait || true\n`;
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), BRANCHGRAPH_STORE: `file://${store}`, LOG_LEVEL: 'warn' };
    for (const name of ['BRANCHGRAPH_SERVER', 'BRANCHGRAPH_TOKEN', 'BRANCHGRAPH_TOKENS']) delete env[name];
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('bash', ['-c', script], { env, maxBuffer: 1 << 24 }, (e, stdout, stderr) =>
        resolve({ code: e === null ? 0 : ((e as { code?: number }).code ?? 1), stdout, stderr }),
      );
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('triage');
    expect(out.stdout).toMatch(/merged as \w+ .*1 conflict\(s\) resolved/);
    expect(out.stdout).toMatch(/^git\s+git\s+\S+\s+the version control system most projects use/m);
  }, 180_000);
});
