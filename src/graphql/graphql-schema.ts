/**
 * The GraphQL API: the SDL in `schema/branchgraph.graphql` with resolvers
 * that validate arguments, check the caller's role and call the service.
 * Errors leave as GraphQL errors whose `extensions.code` is the stable code.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { createSchema } from 'graphql-yoga';
import { isMasked, publicError, toBranchgraphError } from '../model/errors.js';
import { requireRole, type Role } from '../service/auth.js';
import {
  CatchUpInputZ,
  CompactInputZ,
  BranchPageInputZ,
  CreateBranchZ,
  CreateTagZ,
  ApplyCommitZ,
  DiffInputZ,
  DirectionZ,
  GcInputZ,
  IngestInputZ,
  MergeInputZ,
  parseInput,
  parseRef,
  ScanInputZ,
  SchemaApplyZ,
  WriteInputZ,
} from '../service/inputs.js';
import type { BranchgraphService, MergeResultDto, RequestContext } from '../service/service.js';
import { packageRoot } from '../service/package-root.js';

export const SDL_PATH = path.join(packageRoot(), 'schema', 'branchgraph.graphql');

export interface GraphqlContext {
  service: BranchgraphService;
  role: Role;
  request: Request;
  requestCtx: RequestContext;
}

function toGraphqlError(e: unknown, ctx: RequestContext): GraphQLError {
  if (e instanceof GraphQLError) return e;
  const err = toBranchgraphError(e);
  // Built here, before Yoga's masking could apply: internal detail goes to the log, never to the client.
  if (isMasked(err)) ctx.log?.error({ err: e, code: err.code }, 'unexpected error');
  const shown = publicError(err, ctx.requestId);
  return new GraphQLError(shown.message, {
    extensions: { code: shown.code, retryable: shown.retryable, ...(shown.issues !== undefined ? { issues: shown.issues } : {}) },
  });
}

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot use variables inside', { extensions: { code: 'invalid_input' } });
  }
}

const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value: row properties, filters, conflict values.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
});

type Resolver = (parent: unknown, args: Record<string, unknown>, ctx: GraphqlContext) => Promise<unknown>;

/** Role check, then the call, with every failure mapped to a typed GraphQL error. */
function op(role: Role, fn: Resolver): Resolver {
  return async (parent, args, ctx) => {
    try {
      requireRole(ctx.role, role);
      return await fn(parent, args, ctx);
    } catch (e) {
      throw toGraphqlError(e, ctx.requestCtx);
    }
  };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function mergeSummary(m: MergeResultDto['metrics']) {
  return {
    phasesMs: m.phasesMs,
    totalMs: m.totalMs,
    storeCalls: m.storeCalls.total.calls,
    requestedWidth: m.requestedWidth,
    maxWidth: m.maxWidth,
    fallbacks: m.fallbacks.length,
    attempts: m.attempts,
  };
}

export function graphqlSchema() {
  return createSchema<GraphqlContext>({
    typeDefs: readFileSync(SDL_PATH, 'utf8'),
    resolvers: {
      JSON: JSONScalar,
      MergeResult: {
        __resolveType: (obj: { __typename: string }) => obj.__typename,
      },
      Query: {
        branches: op('read', async (_p, a, c) => {
          const page = await c.service.listBranches(parseInput(BranchPageInputZ, { limit: a.limit ?? undefined, cursor: str(a.cursor) }, 'branches'), c.requestCtx);
          return { items: page.branches, damaged: page.damaged, nextCursor: page.nextCursor };
        }),
        branch: op('read', (_p, a, c) => c.service.getBranch(String(a.name), c.requestCtx)),
        row: op('read', (_p, a, c) => c.service.getRow(parseRef(str(a.at)), String(a.table), String(a.key), c.requestCtx)),
        rows: op('read', async (_p, a, c) => {
          const scan = parseInput(ScanInputZ, { where: a.where ?? undefined, limit: a.limit ?? undefined, cursor: a.cursor ?? undefined }, 'args');
          return c.service.scan(parseRef(str(a.at)), String(a.table), scan as Parameters<BranchgraphService['scan']>[2], c.requestCtx);
        }),
        edges: op('read', (_p, a, c) =>
          c.service.edges(
            parseRef(str(a.at)),
            String(a.table),
            String(a.key),
            { direction: parseInput(DirectionZ.optional(), a.direction ?? undefined, 'direction'), ...(str(a.edgeTable) ? { edgeTable: String(a.edgeTable) } : {}) },
            c.requestCtx,
          ),
        ),
        log: op('read', (_p, a, c) => c.service.log(parseRef(str(a.at)), typeof a.limit === 'number' ? a.limit : undefined, c.requestCtx)),
        commit: op('read', (_p, a, c) => c.service.commit(String(a.id), c.requestCtx)),
        diff: op('read', (_p, a, c) => c.service.diff(parseRef(String(a.from)), parseRef(String(a.to)), c.requestCtx)),
        changes: op('read', (_p, a, c) =>
          c.service.diffPage(parseRef(String(a.from)), parseRef(String(a.to)), parseInput(DiffInputZ, stripNulls({ mode: a.mode, limit: a.limit, cursor: a.cursor }), 'input'), c.requestCtx),
        ),
        schema: op('read', (_p, a, c) => c.service.getSchema(parseRef(str(a.at)), c.requestCtx)),
        walStatus: op('read', (_p, a, c) => c.service.walStatus(String(a.branch), c.requestCtx)),
        tags: op('read', (_p, _a, c) => c.service.listTags(c.requestCtx)),
        tag: op('read', (_p, a, c) => c.service.getTag(String(a.name), c.requestCtx)),
        operations: op('read', async (_p, _a, c) => c.service.listOperations(c.requestCtx)),
        operation: op('read', async (_p, a, c) => c.service.getOperation(String(a.id), c.requestCtx)),
      },
      Mutation: {
        createBranch: op('write', (_p, a, c) => {
          const input = parseInput(CreateBranchZ, { name: a.name, ...(a.from ? { from: parseRef(String(a.from)) } : {}) }, 'args');
          return c.service.createBranch(input.name, input.from as never, c.requestCtx);
        }),
        deleteBranch: op('write', async (_p, a, c) => {
          await c.service.deleteBranch(String(a.name), c.requestCtx);
          return true;
        }),
        createTag: op('write', (_p, a, c) => {
          const input = parseInput(CreateTagZ, stripNulls({ name: a.name, message: a.message, ...(a.from ? { from: parseRef(String(a.from)) } : {}) }), 'args');
          return c.service.createTag(input.name, input.from as never, input.message, c.requestCtx);
        }),
        deleteTag: op('admin', async (_p, a, c) => {
          await c.service.deleteTag(String(a.name), c.requestCtx);
          return true;
        }),
        mergeBranch: op('write', async (_p, a, c) => mergeResult(await c.service.mergeBranch(String(a.source), parseInput(MergeInputZ, stripNulls(a.input ?? {}), 'input'), c.requestCtx))),
        cherryPick: op('write', async (_p, a, c) =>
          mergeResult(await c.service.applyCommit('cherry_pick', String(a.branch), parseInput(ApplyCommitZ, stripNulls(a.input ?? {}), 'input'), c.requestCtx)),
        ),
        revert: op('write', async (_p, a, c) => mergeResult(await c.service.applyCommit('revert', String(a.branch), parseInput(ApplyCommitZ, stripNulls(a.input ?? {}), 'input'), c.requestCtx))),
        write: op('write', (_p, a, c) => c.service.write(String(a.branch), parseInput(WriteInputZ, stripNulls(a.input), 'input'), c.requestCtx)),
        load: op('write', (_p, a, c) => c.service.load(String(a.branch), String(a.ndjson), c.requestCtx)),
        ingest: op('write', (_p, a, c) => c.service.ingest(String(a.branch), parseInput(IngestInputZ, { ops: stripNulls(a.ops) }, 'input').ops, c.requestCtx)),
        catchUp: op('write', (_p, a, c) =>
          c.service.catchUp(String(a.branch), parseInput(CatchUpInputZ, stripNulls({ maxGenerations: a.maxGenerations, maxBytes: a.maxBytes, pipeline: a.pipeline }), 'input'), c.requestCtx),
        ),
        compact: op('write', (_p, a, c) => c.service.compact(String(a.branch), parseInput(CompactInputZ, stripNulls({ tables: a.tables, mode: a.mode }), 'args'), c.requestCtx)),
        applySchema: op('admin', (_p, a, c) => c.service.applySchema(String(a.branch), parseInput(SchemaApplyZ, stripNulls(a.input), 'input'), c.requestCtx)),
        gc: op('admin', async (_p, a, c) => {
          const r = await c.service.gc(parseInput(GcInputZ, stripNulls({ graceSeconds: a.graceSeconds, dryRun: a.dryRun }), 'args'), c.requestCtx);
          return {
            ...r,
            deletedManifests: r.deleted.manifests,
            deletedRuns: r.deleted.runs,
            deletedCommits: r.deleted.commits,
            deletedHints: r.deleted.hints,
            deletedParts: r.deleted.parts,
            deletedWalGenerations: r.deleted.wal,
            deletedIdempotencyRecords: r.deleted.idempotency,
          };
        }),
      },
    },
  });
}

/** GraphQL inputs carry explicit nulls for omitted optionals; the contracts expect absence. */
/** Arguments whose values are data, where null means something (a resolution's value deletes a row). */
const DATA_ARGS = new Set(['values', 'migration', 'value', 'expected']);

/** A merge result as the MergeResult union shows it. */
function mergeResult(r: MergeResultDto) {
  if (r.status === 'success') return { __typename: 'MergeSuccess', ...r, replayed: r.replayed === true, summary: mergeSummary(r.metrics) };
  return {
    __typename: 'MergeConflicts',
    sourceHead: r.sourceHead,
    targetHead: r.targetHead,
    base: r.base,
    total: r.report.total,
    counts: r.report.counts,
    conflicts: r.report.items,
    nextCursor: r.report.nextCursor,
    summary: mergeSummary(r.metrics),
  };
}

function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([k, x]) => x !== undefined && (x !== null || DATA_ARGS.has(k)))
        .map(([k, x]) => [k, DATA_ARGS.has(k) ? x : stripNulls(x)]),
    );
  }
  return v;
}
