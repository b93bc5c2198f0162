/**
 * GQT over HTTP: one server per pass, started either as a real process
 * (`branchgraph serve`, what the CLI runner uses) or in this process (fast,
 * for the test suite). Each case gets a fresh hosted graph on it
 * (`POST /graphs`), deleted when the case ends. A case's `restart` stops
 * the server and starts a new one on the same store, so nothing survives
 * but what the store holds; later cases use the new server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import pino from 'pino';
import { startServer } from '../http/server.js';
import { RestClient } from '../http/rest-client.js';
import { errorFromBody, type ErrorBody } from '../model/errors.js';
import type { BranchgraphApi } from '../service/api.js';
import { loadConfig } from '../service/config.js';
import { cliCommand } from '../service/package-root.js';
import type { ApplyCommitInput, CatchUpInput, EntityVersionDto, MergeInput, PropertyBlameDto } from '../service/api.js';
import type { CommitDto, DiffResultDto, MergeResultDto } from '../service/dtos.js';
import { ApiDriver, type ApiHost } from './api-driver.js';
import {
  allPages,
  GQT_PAGE,
  postTyped,
  refString,
  type DriverRef,
  type EntityAt,
  type GqtDriver,
  type RequestView,
  type TypedAnswer,
} from './gqt-driver.js';
import type { LogQuery, RequestAction } from './gqt-case.js';
import type { ProtectionRule } from '../model/branch-protection.js';
import type { WriteLine } from './gqt-parser.js';
import type { ObjectStore } from '../store/object-store.js';
import { newId } from '../model/new-id.js';

export interface ServerHandle {
  url: string;
  stop(): Promise<void>;
}

export type ServerLauncher = () => Promise<ServerHandle>;

/** `branchgraph serve` as a child process on a free port. */
export function processServer(
  storeUrl: string,
  opts: { args?: string[]; env?: Record<string, string>; warm?: 'rest' | 'graphql' } = {},
): ServerLauncher {
  const { args: extraArgs = [], env = {} } = opts;
  return async () => {
    const cli = cliCommand();
    // Cases check logs exactly: no background compaction adding commits of its own.
    const child: ChildProcess = spawn(
      cli.command,
      [...cli.args, 'serve', '--port', '0', '--store', storeUrl, '--log-level', 'warn', '--actor', 'gqt', ...extraArgs],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, COMPACTION_BACKGROUND: 'false', ...env },
      },
    );
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`server did not start in 30 s: ${err}`)), 30_000);
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}: ${err}`));
      });
    });
    if (opts.warm !== undefined) await warmUp(url, opts.warm === 'graphql');
    return {
      url,
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    };
  };
}

/** The same server in this process, with its own graph and caches (on `store` when given: a memory store outlives restarts). */
export function inProcessServer(storeUrl: string, store?: ObjectStore): ServerLauncher {
  return async () => {
    const s = await startServer(
      loadConfig({ COMPACTION_BACKGROUND: 'false' }, { store: storeUrl, port: '0', actor: 'gqt' }),
      pino({ level: 'silent' }),
      store ? { store } : {},
    );
    return { url: s.url, stop: () => s.close() };
  };
}

/** The one server of a GQT pass. */
/** Servers kept started ahead of the restarts that will need them (cases often restart twice in a row). */
const STANDBYS = 2;

export class PassServer {
  private handle: ServerHandle | undefined;
  /** The next servers, started ahead (and warmed) so a restart does not wait for a process to boot. */
  private readonly standbys: Promise<ServerHandle>[] = [];

  constructor(private readonly launch: ServerLauncher) {}

  get url(): string {
    if (this.handle === undefined) throw new Error('the pass server is not running');
    return this.handle.url;
  }

  /**
   * Stop the running server and switch to a new one on the same store. The new one was started
   * ahead, while cases ran, and has served nothing but a warm-up on a graph of its own: each case's
   * graph is hosted (opened on first request, its registry entry read on every request), so a
   * standby holds no state of it, as a freshly started process holds none. What is taken off the
   * case is only the process boot and the first requests' compilation, about 0.6 s and 0.3 s.
   */
  async restart(): Promise<void> {
    await this.handle?.stop();
    this.handle = undefined;
    const next = this.standbys.shift() ?? this.launch();
    while (this.standbys.length < STANDBYS) {
      const s = this.launch();
      // A standby that fails to start is reported by the restart that needs it.
      s.catch(() => undefined);
      this.standbys.push(s);
    }
    this.handle = await next;
  }

  async stop(): Promise<void> {
    const standbys = this.standbys.splice(0);
    await Promise.all([
      this.handle?.stop(),
      ...standbys.map((s) =>
        s.then(
          (h) => h.stop(),
          () => undefined,
        ),
      ),
    ]);
    this.handle = undefined;
  }
}

/**
 * A round of the common requests on a throw-away hosted graph of the server's own, so a standby's
 * code is compiled before a case's first request reaches it; the graph is deleted after.
 */
export async function warmUp(url: string, graphql: boolean): Promise<void> {
  const name = `warmup-${newId().toLowerCase()}`;
  const root = new RestClient(url);
  await root.createGraph(name);
  const api = new RestClient(`${url}/graphs/${name}`);
  try {
    await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n n: int?\n u: string? @unique }\nedge K: P -> P {}' });
    const rows = (side: string) => ({
      ops: [0, 1, 2].map((i) => ({ op: 'upsert' as const, table: 'P', values: { id: `${side}${i}`, n: i, u: `${side}${i}` } })),
    });
    await api.write({ branch: 'main', ...rows('m') });
    await api.createBranch({ name: 'w' });
    await api.write({ branch: 'w', ...rows('w') });
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'K', values: { from: 'm0', to: 'm1' } }] });
    await api.mergeBranch({ source: 'w', dryRun: true });
    await api.mergeBranch({ source: 'w' });
    await api.rows({ table: 'P', at: 'main' });
    await api.diff({ from: 'main', to: 'w' });
    await api.log({ limit: 10 });
    if (graphql)
      await fetch(`${url}/graphs/${name}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ branches { items { name } } }"}',
      }).then((r) => r.text());
  } finally {
    await root.deleteGraph(name).catch(() => undefined);
  }
}

/** A fresh graph on the pass server for one case; `base` follows the server across restarts. */
class CaseGraph {
  private constructor(
    private readonly server: PassServer,
    private readonly name: string,
  ) {}

  static async create(server: PassServer): Promise<CaseGraph> {
    const name = `case-${newId().toLowerCase()}`;
    await new RestClient(server.url).createGraph(name);
    return new CaseGraph(server, name);
  }

  get base(): string {
    return `${this.server.url}/graphs/${this.name}`;
  }

  restart(): Promise<void> {
    return this.server.restart();
  }

  async drop(): Promise<void> {
    await new RestClient(this.server.url).deleteGraph(this.name).catch(() => undefined);
  }
}

class RestHost implements ApiHost {
  constructor(private readonly graph: CaseGraph) {}

  api(): BranchgraphApi {
    return new RestClient(this.graph.base);
  }

  typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    return postTyped(this.graph.base, branch, query);
  }

  restart(): Promise<void> {
    return this.graph.restart();
  }

  close(): Promise<void> {
    return this.graph.drop();
  }
}

export async function openRestDriver(server: PassServer): Promise<GqtDriver> {
  return new ApiDriver('rest', new RestHost(await CaseGraph.create(server)));
}

const COMMIT = 'id parents branch actor message time kind';

/** GQT over GraphQL: every step is a GraphQL document against the case's graph. */
export class GraphqlDriver implements GqtDriver {
  readonly name = 'graphql';

  private constructor(private readonly graph: CaseGraph) {}

  static async open(server: PassServer): Promise<GraphqlDriver> {
    return new GraphqlDriver(await CaseGraph.create(server));
  }

  restart(): Promise<void> {
    return this.graph.restart();
  }

  close(): Promise<void> {
    return this.graph.drop();
  }

  typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    return postTyped(this.graph.base, branch, query);
  }

  private async gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const res = await fetch(`${this.graph.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: { message: string; extensions?: Partial<ErrorBody> }[] };
    const e = body.errors?.[0];
    if (e !== undefined) throw errorFromBody({ ...e.extensions, message: e.message }, e.message);
    return body.data as T;
  }

  async applySchema(branch: string, text: string): Promise<void> {
    await this.gql('mutation($b: String!, $s: String!) { applySchema(branch: $b, input: { schema: $s }) { tables } }', {
      b: branch,
      s: text,
    });
  }

  async write(branch: string, ops: WriteLine[]): Promise<void> {
    await this.gql('mutation($b: String!, $i: WriteInput!) { write(branch: $b, input: $i) { inserted } }', { b: branch, i: { ops } });
  }

  async ingest(branch: string, ops: WriteLine[]): Promise<void> {
    await this.gql('mutation($b: String!, $o: [WriteOpInput!]!) { ingest(branch: $b, ops: $o) { operations } }', { b: branch, o: ops });
  }

  async catchUp(branch: string, input: CatchUpInput): Promise<void> {
    await this.gql('mutation($b: String!, $m: Int, $p: Boolean) { catchUp(branch: $b, maxGenerations: $m, pipeline: $p) { outcome } }', {
      b: branch,
      m: input.maxGenerations ?? null,
      p: input.pipeline ?? null,
    });
  }

  async pendingGenerations(branch: string): Promise<number> {
    return (
      await this.gql<{ walStatus: { pendingGenerations: number } }>('query($b: String!) { walStatus(branch: $b) { pendingGenerations } }', {
        b: branch,
      })
    ).walStatus.pendingGenerations;
  }

  async createTag(name: string, from: DriverRef): Promise<void> {
    await this.gql('mutation($n: String!, $f: String) { createTag(name: $n, from: $f) { name } }', { n: name, f: refString(from) });
  }

  async createBranch(name: string, from: DriverRef): Promise<void> {
    await this.gql('mutation($n: String!, $f: String) { createBranch(name: $n, from: $f) { name } }', { n: name, f: refString(from) });
  }

  async deleteBranch(name: string): Promise<void> {
    await this.gql('mutation($n: String!) { deleteBranch(name: $n) }', { n: name });
  }

  merge(source: string, input: MergeInput): Promise<MergeResultDto> {
    return this.mergeLike('mergeBranch(source: $s, input: $i)', '$s: String!, $i: MergeInput', { s: source, i: input });
  }

  applyCommit(kind: 'cherry_pick' | 'revert', branch: string, input: ApplyCommitInput): Promise<MergeResultDto> {
    return this.mergeLike(`${kind === 'revert' ? 'revert' : 'cherryPick'}(branch: $s, input: $i)`, '$s: String!, $i: ApplyCommitInput!', {
      s: branch,
      i: input,
    });
  }

  /** A mutation answering MergeResult, reshaped into the service's result so the runner checks one form. */
  private async mergeLike(call: string, params: string, variables: Record<string, unknown>): Promise<MergeResultDto> {
    type Shown = { __typename: string; summary: { maxWidth: number } } & Record<string, unknown>;
    const r = await this.gql<{ result: Shown }>(
      `mutation(${params}) { result: ${call} {
        __typename
        ... on MergeSuccess { outcome replayed dryRun commit { ${COMMIT} } sourceHead targetHead base branchDeleted branchDeleteError tables { table action sourceChanges targetChanges bothChanged rowsWritten } summary { maxWidth } }
        ... on MergeConflicts { sourceHead targetHead base total counts { DivergentInsert DivergentUpdate DeleteVsUpdate OrphanEdge UniqueViolation CardinalityViolation ValueConstraintViolation SchemaConflict } conflicts { kind table key property base source target message } nextCursor summary { maxWidth } }
      } }`,
      variables,
    );
    const m = r.result;
    if (m.__typename === 'MergeSuccess')
      return { status: 'success', ...m, metrics: { maxWidth: m.summary.maxWidth } } as unknown as MergeResultDto;
    return {
      status: 'conflicts',
      sourceHead: m.sourceHead,
      targetHead: m.targetHead,
      base: m.base,
      report: { total: m.total, counts: m.counts, items: m.conflicts, nextCursor: m.nextCursor },
      metrics: { maxWidth: m.summary.maxWidth },
    } as unknown as MergeResultDto;
  }

  log(at: DriverRef, query: LogQuery): Promise<CommitDto[]> {
    return allPages(async (cursor) => {
      const r = await this.gql<{ commits: { commits: CommitDto[]; nextCursor: string | null } }>(
        `query($a: String, $l: Int, $c: String, $t: String, $k: String, $au: String, $kd: String, $fp: Boolean) {
          commits(at: $a, limit: $l, cursor: $c, table: $t, key: $k, author: $au, kind: $kd, firstParent: $fp) { commits { ${COMMIT} } nextCursor } }`,
        {
          a: refString(at),
          l: GQT_PAGE,
          c: cursor ?? null,
          t: query.table,
          k: query.key,
          au: query.author,
          kd: query.kind,
          fp: query.firstParent,
        },
      );
      return { items: r.commits.commits, nextCursor: r.commits.nextCursor };
    });
  }

  history(e: EntityAt): Promise<EntityVersionDto[]> {
    return allPages(async (cursor) => {
      const r = await this.gql<{ history: { versions: EntityVersionDto[]; nextCursor: string | null } }>(
        `query($t: String!, $k: String!, $a: String, $l: Int, $c: String, $fp: Boolean) {
          history(table: $t, key: $k, at: $a, limit: $l, cursor: $c, firstParent: $fp) { versions { commit { ${COMMIT} } change before after changed } nextCursor } }`,
        { t: e.table, k: e.key, a: refString(e.at), l: GQT_PAGE, c: cursor ?? null, fp: e.firstParent ?? null },
      );
      return { items: r.history.versions, nextCursor: r.history.nextCursor };
    });
  }

  async blame(e: EntityAt): Promise<PropertyBlameDto[]> {
    const r = await this.gql<{ blame: { properties: PropertyBlameDto[] } }>(
      `query($t: String!, $k: String!, $a: String) { blame(table: $t, key: $k, at: $a) { properties { property value commit { ${COMMIT} } } } }`,
      { t: e.table, k: e.key, a: refString(e.at) },
    );
    return r.blame.properties;
  }

  async protect(branch: string, rule: ProtectionRule | null): Promise<void> {
    if (rule === null) await this.gql('mutation($n: String!) { unprotectBranch(name: $n) { name } }', { n: branch });
    else
      await this.gql(
        'mutation($n: String!, $a: Int, $b: Boolean, $s: String) { protectBranch(name: $n, requiredApprovals: $a, allowAdminBypass: $b, staleApprovals: $s) { name } }',
        {
          n: branch,
          a: rule.requiredApprovals,
          b: rule.allowAdminBypass,
          s: rule.staleApprovals,
        },
      );
  }

  async request(
    call: (RequestAction | { action: 'get' }) & { id?: string; title?: string },
  ): Promise<{ view: RequestView; outcome?: string }> {
    const VIEW = 'id state revisions { preview { outcome conflicts } } mergeability { mergeable reasons }';
    const id = call.id ?? '';
    const one = async (field: string, params: string, vars: Record<string, unknown>): Promise<RequestView> =>
      (await this.gql<{ r: RequestView }>(`mutation(${params}) { r: ${field} { ${VIEW} } }`, vars)).r;
    switch (call.action) {
      case 'get':
        return { view: (await this.gql<{ r: RequestView }>(`query($id: ID!) { r: mergeRequest(id: $id) { ${VIEW} } }`, { id })).r };
      case 'open':
        return {
          view: await one('openMergeRequest(source: $s, target: $t, title: $ti)', '$s: String!, $t: String, $ti: String!', {
            s: call.source,
            t: call.target,
            ti: call.title ?? 'request',
          }),
        };
      case 'revise':
        return { view: await one('reviseMergeRequest(id: $id)', '$id: ID!', { id }) };
      case 'close':
        return { view: await one('closeMergeRequest(id: $id)', '$id: ID!', { id }) };
      case 'review':
        return { view: await one('reviewMergeRequest(id: $id, verdict: $v)', '$id: ID!, $v: String!', { id, v: call.verdict }) };
      case 'resolve':
        return {
          view: await one('setMergeRequestResolutions(id: $id, resolutions: $r)', '$id: ID!, $r: MergeResolutionsInput', {
            id,
            r: call.strategy === null ? null : { strategy: call.strategy },
          }),
        };
      case 'merge': {
        const r = await this.gql<{ m: { request: RequestView; result: { __typename: string; outcome?: string } } }>(
          `mutation($id: ID!, $d: Boolean) { m: mergeMergeRequest(id: $id, deleteBranch: $d) { request { ${VIEW} } result { __typename ... on MergeSuccess { outcome } } } }`,
          { id, d: call.deleteBranch },
        );
        return { view: r.m.request, outcome: r.m.result.outcome ?? 'conflicts' };
      }
    }
  }

  async reset(branch: string, to: DriverRef): Promise<void> {
    await this.gql('mutation($n: String!, $t: String!, $h: ID!) { resetBranch(name: $n, to: $t, expectedHead: $h) { name } }', {
      n: branch,
      t: refString(to),
      h: await this.head(branch),
    });
  }

  async rows(table: string, at: DriverRef) {
    const out: { key: string; row: Record<string, unknown> }[] = [];
    let cursor: string | null = null;
    do {
      const r: { rows: { items: { key: string; row: Record<string, unknown> }[]; nextCursor: string | null } } = await this.gql(
        'query($t: String!, $a: String, $c: String) { rows(table: $t, at: $a, limit: 1000, cursor: $c) { items { key row } nextCursor } }',
        { t: table, a: refString(at), c: cursor },
      );
      out.push(...r.rows.items);
      cursor = r.rows.nextCursor;
    } while (cursor !== null);
    return out;
  }

  async diff(from: DriverRef, to: DriverRef, mode: 'two-dot' | 'three-dot'): Promise<DiffResultDto> {
    const r = await this.gql<{ changes: DiffResultDto }>(
      `query($f: String!, $t: String!, $m: String) { changes(from: $f, to: $t, mode: $m) {
        mode from to base nextCursor summary { table inserted updated deleted }
        tables { table inserted { key row } updated { key before after changed } deleted { key row } } } }`,
      { f: refString(from), t: refString(to), m: mode },
    );
    return r.changes;
  }

  async schemaText(at: DriverRef): Promise<string> {
    return (await this.gql<{ schema: { text: string } }>('query($a: String) { schema(at: $a) { text } }', { a: refString(at) })).schema
      .text;
  }

  async head(branch: string): Promise<string> {
    return (await this.gql<{ branch: { head: { id: string } } }>('query($n: String!) { branch(name: $n) { head { id } } }', { n: branch }))
      .branch.head.id;
  }
}
