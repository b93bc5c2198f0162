/**
 * The peer a user would otherwise script: Git (the system's `git`), holding
 * the same graph as one file per entity in a two-level fan-out
 * (`<h0h1>/<h2h3>/<key>.json`, h the SHA-1 of the key), merging with
 * `git merge-tree --write-tree` (merge-ort) and publishing the merge with
 * `commit-tree` and `update-ref`, which is what our merge's one atomic
 * commit corresponds to. Only the merge is timed; building the history is
 * setup. Objects are written with `fast-import` in bulk and with plumbing
 * per commit, never through a work tree.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.org',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.org',
};

export function entityPath(key: string): string {
  const h = createHash('sha1').update(key).digest('hex');
  return `${h.slice(0, 2)}/${h.slice(2, 4)}/${key}.json`;
}

export class GitPeer {
  private constructor(readonly dir: string) {}

  static async create(): Promise<GitPeer> {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-git-'));
    await exec('git', ['init', '-q', '--bare', dir], { env: ENV });
    return new GitPeer(dir);
  }

  async git(args: string[], input?: string): Promise<string> {
    if (input === undefined) return (await exec('git', args, { cwd: this.dir, env: ENV, maxBuffer: 1 << 26 })).stdout.trim();
    return new Promise((resolve, reject) => {
      const p = spawn('git', args, { cwd: this.dir, env: ENV });
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      p.stderr.on('data', (d: Buffer) => {
        err += d.toString();
      });
      p.on('error', reject);
      p.on('close', (code) =>
        code === 0 ? resolve(out.trim()) : reject(new Error(`git ${args[0]} exited ${code}: ${err.slice(0, 500)}`)),
      );
      p.stdin.end(input);
    });
  }

  /** One commit on `branch` (created from `from` when given) writing `files`, through fast-import: for bulk loads. */
  async importCommit(branch: string, files: Iterable<[string, string]>, from?: string): Promise<void> {
    const chunks: string[] = [`commit refs/heads/${branch}\ncommitter bench <bench@example.org> 1700000000 +0000\ndata 4\nload\n`];
    if (from !== undefined) chunks.push(`from ${from}\n`);
    for (const [p, content] of files) chunks.push(`M 100644 inline ${p}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    await this.git(['fast-import', '--quiet'], chunks.join(''));
  }

  /** Merge `source` into `target` as a user's script would; returns the milliseconds it took and whether it was clean. */
  async merge(target: string, source: string): Promise<{ ms: number; clean: boolean }> {
    const t0 = performance.now();
    let tree: string;
    try {
      tree = (await this.git(['merge-tree', '--write-tree', target, source])).split('\n')[0] as string;
    } catch {
      return { ms: performance.now() - t0, clean: false };
    }
    const commit = await this.git(['commit-tree', tree, '-p', target, '-p', source, '-m', `merge ${source}`]);
    await this.git(['update-ref', `refs/heads/${target}`, commit]);
    return { ms: performance.now() - t0, clean: true };
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
