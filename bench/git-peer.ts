/**
 * The peer a user would otherwise script: Git (the system's `git`), holding
 * the same graph as one file per entity in a two-level fan-out
 * (`<h0h1>/<h2h3>/<key>.json`, h the SHA-1 of the key), merging with
 * `git merge-tree --write-tree` (merge-ort) and publishing the merge with
 * `commit-tree` and `update-ref`, which is what our merge's one atomic
 * commit corresponds to. Only the merge is timed; building the history is
 * setup. Objects are written with `fast-import` in bulk and with plumbing
 * per commit, never through a work tree.
 *
 * In its best and fair shape: durable as we are (`core.fsync=all`, which Git
 * does not do for loose objects by default), and each merge reported both as
 * timed and with its three process spawns subtracted (a spawn's cost is the
 * median of nine no-op commands in the same repository), since we are timed
 * in a warm process.
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

/** Process spawns in one timed merge: merge-tree, commit-tree, update-ref. */
const MERGE_SPAWNS = 3;

export class GitPeer {
  private constructor(
    readonly dir: string,
    /** What one git process costs to start and end here, in milliseconds. */
    readonly spawnMs: number,
  ) {}

  static async create(): Promise<GitPeer> {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-git-'));
    await exec('git', ['init', '-q', '--bare', dir], { env: ENV });
    await exec('git', ['config', 'core.fsync', 'all'], { cwd: dir, env: ENV });
    await exec('git', ['config', 'core.fsyncMethod', 'fsync'], { cwd: dir, env: ENV });
    const samples: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t0 = performance.now();
      await exec('git', ['rev-parse', '--git-dir'], { cwd: dir, env: ENV });
      samples.push(performance.now() - t0);
    }
    samples.sort((x, y) => x - y);
    return new GitPeer(dir, samples[4] as number);
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

  /**
   * Merge `source` into `target` as a user's script would: the milliseconds it took, the same
   * less its process spawns, and whether it was clean.
   */
  async merge(target: string, source: string): Promise<{ ms: number; lessSpawnsMs: number; clean: boolean }> {
    const t0 = performance.now();
    const done = (clean: boolean) => {
      const ms = performance.now() - t0;
      return { ms, lessSpawnsMs: Math.max(0, ms - MERGE_SPAWNS * this.spawnMs), clean };
    };
    let tree: string;
    try {
      tree = (await this.git(['merge-tree', '--write-tree', target, source])).split('\n')[0] as string;
    } catch {
      return done(false);
    }
    const commit = await this.git(['commit-tree', tree, '-p', target, '-p', source, '-m', `merge ${source}`]);
    await this.git(['update-ref', `refs/heads/${target}`, commit]);
    return done(true);
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
