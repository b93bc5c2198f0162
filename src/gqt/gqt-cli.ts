/**
 * `branchgraph gqt` / `npm run gqt`: replay case files over a transport and a
 * store, one fresh graph per case, and end with `N passed, N failed`.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BranchgraphError } from '../model/errors.js';
import { FsStore } from '../store/fs-store.js';
import { MemoryStore } from '../store/memory-store.js';
import type { ObjectStore } from '../store/object-store.js';
import { parseStoreUrl } from '../store/open-store.js';
import { S3Store } from '../store/s3-store.js';
import { openEmbeddedDriver } from './embedded-driver.js';
import { GqtSyntaxError, parseGqt, type GqtCase } from './gqt-parser.js';
import { inProcessServer, openGraphqlDriver, openRestDriver, PassServer, processServer } from './http-drivers.js';
import { runCase, type CaseResult } from './gqt-runner.js';
import { newId } from '../model/new-id.js';

export type Via = 'embedded' | 'rest' | 'graphql';
export type StoreKind = 'memory' | 'fs' | 's3';

export interface GqtRunOptions {
  via: Via;
  store: StoreKind;
  /** Server processes (what users and CI run) or servers inside this process (fast tests). */
  servers?: 'process' | 'in-process';
}

/** A fresh, empty store location (one per embedded case, one per HTTP pass). */
async function freshStore(kind: StoreKind): Promise<{ url: string; reopen: () => ObjectStore; cleanup: () => Promise<void> }> {
  if (kind === 'memory') {
    const store = new MemoryStore();
    return { url: 'memory://', reopen: () => store, cleanup: async () => undefined };
  }
  if (kind === 'fs') {
    const dir = await mkdtemp(path.join(tmpdir(), 'gqt-'));
    return { url: `file://${dir}`, reopen: () => new FsStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('--store s3 needs S3_ENDPOINT (and S3_ACCESS_KEY, S3_SECRET_KEY); see scripts/s3-start.sh');
  const bucket = process.env.BRANCHGRAPH_TEST_BUCKET ?? 'branchgraph-test';
  const url = `s3://${bucket}/gqt-${newId()}?endpoint=${encodeURIComponent(endpoint)}`;
  const spec = parseStoreUrl(url);
  if (spec.kind !== 's3') throw new Error('unreachable');
  const { kind: _k, ...config } = spec;
  await new S3Store(config).ensureBucket();
  return { url, reopen: () => new S3Store(config), cleanup: async () => undefined };
}

/** One pass of cases over one transport and store: `run` each case, then `close`. */
export interface GqtPass {
  run(c: GqtCase): Promise<CaseResult>;
  close(): Promise<void>;
}

/**
 * Embedded cases each get a fresh store. Over HTTP, a pass starts one
 * server on one store and gives each case a fresh hosted graph on it; only
 * a case's `restart` restarts the server.
 */
export async function openGqtPass(opts: GqtRunOptions): Promise<GqtPass> {
  if (opts.via === 'embedded') {
    return {
      async run(c) {
        const store = await freshStore(opts.store);
        const driver = await openEmbeddedDriver(store.reopen);
        try {
          return await runCase(c, driver);
        } finally {
          await driver.close();
          await store.cleanup();
        }
      },
      close: async () => undefined,
    };
  }
  const inProcess = opts.servers === 'in-process';
  if (opts.store === 'memory' && !inProcess) {
    throw new Error('a memory store lives inside one process; use --store fs or s3 with --via rest or graphql');
  }
  const store = await freshStore(opts.store);
  // Every server of an in-process pass serves the one store object, so a memory store survives its restarts as a directory would.
  const server = new PassServer(
    inProcess
      ? inProcessServer(store.url, opts.store === 'memory' ? store.reopen() : undefined)
      : processServer(store.url, { warm: opts.via }),
  );
  await server.restart();
  return {
    async run(c) {
      const driver = opts.via === 'rest' ? await openRestDriver(server) : await openGraphqlDriver(server);
      try {
        return await runCase(c, driver);
      } finally {
        await driver.close();
      }
    },
    async close() {
      await server.stop();
      await store.cleanup();
    },
  };
}

/** One case in a pass of its own. */
export async function runGqtCase(c: GqtCase, opts: GqtRunOptions): Promise<CaseResult> {
  const pass = await openGqtPass(opts);
  try {
    return await pass.run(c);
  } finally {
    await pass.close();
  }
}

export async function loadCases(files: string[]): Promise<{ cases: GqtCase[]; errors: string[] }> {
  const cases: GqtCase[] = [];
  const errors: string[] = [];
  for (const f of files) {
    try {
      cases.push(parseGqt(await readFile(f, 'utf8'), f));
    } catch (e) {
      if (e instanceof GqtSyntaxError) errors.push(e.message);
      else throw e;
    }
  }
  return { cases, errors };
}

export async function defaultFiles(dir = 'gqt'): Promise<string[]> {
  return (await readdir(dir))
    .filter((f) => f.endsWith('.gqt'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** `branchgraph gqt`, with `via` and `store` already checked by the command line. */
export async function runGqtCli(opts: { via: Via; store: StoreKind; files: string[] }): Promise<number> {
  const { via, store } = opts;
  if (store === 'memory' && via !== 'embedded') {
    throw new BranchgraphError(
      'invalid_input',
      'gqt: a memory store lives inside one process; use --store fs or s3 with --via rest or graphql',
    );
  }
  const files = opts.files.length > 0 ? opts.files : await defaultFiles();
  const { cases, errors } = await loadCases(files);
  for (const e of errors) process.stdout.write(`✗ ${e}\n`);
  let passed = 0;
  let failed = errors.length;
  process.stdout.write(`gqt: ${cases.length} cases via ${via} on ${store}\n`);
  const pass = await openGqtPass({ via, store, servers: 'process' });
  for (const c of cases) {
    const r = await pass.run(c);
    if (r.passed) {
      passed++;
      process.stdout.write(`✓ ${c.name} (${Math.round(r.ms)} ms)\n`);
    } else {
      failed++;
      process.stdout.write(`✗ ${c.name}\n    ${(r.failure ?? '').split('\n').join('\n    ')}\n`);
    }
  }
  await pass.close();
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}
