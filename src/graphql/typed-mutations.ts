/**
 * Typed mutations: `createT`, `updateT`, `upsertT` and `deleteT` per table.
 * Every mutation field of one document lands as one commit, or none: the
 * first field resolved collects every root field of the operation (through
 * fragments, `@skip` and `@include`), turns each into a write operation and
 * runs them as one `write` batch, with the `@commit` directive's message,
 * author and expected head. Each field then answers its part: the commit and
 * its row read at that commit.
 *
 * A refused batch changes nothing. Its error goes to the first field, with
 * each issue's path naming the field (by alias) and the input field that
 * failed, as `addAda.input.age`; the other fields report that the batch was
 * refused, with the same code.
 */
import {
  getArgumentValues,
  getDirectiveValues,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  Kind,
  type GraphQLEnumType,
  type GraphQLFieldConfigMap,
  type GraphQLResolveInfo,
  type SelectionSetNode,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type FieldNode,
} from 'graphql';
import { jsonLengthAtLeast } from '../model/json-steps.js';
import { LARGE_BYTES, nextTurn } from '../model/turns.js';
import { BranchgraphError, toBranchgraphError, type ErrorIssue } from '../model/errors.js';
import type { Schema } from '../model/schema.js';
import { entityKey, type Row } from '../model/values.js';
import { invoke } from '../service/api.js';
import { OPERATIONS } from '../service/operation-table.js';
import type { CommitDto } from '../service/dtos.js';
import type { BranchgraphService } from '../service/service.js';
import type { RequestContext } from '../service/request-context.js';
import type { TableNames } from './typed-names.js';
import { rowInputFields } from './typed-inputs.js';
import type { Entity } from './typed-reads.js';
import { COMMIT_DIRECTIVE, guarded, keyFromArgs, type TypedContext, type TypedSchema } from './typed-context.js';

type Kind4 = 'create' | 'update' | 'upsert' | 'delete' | 'createMany' | 'upsertMany';
const WRITE_OP: Record<Kind4, 'insert' | 'update' | 'upsert' | 'delete'> = {
  createMany: 'insert',
  upsertMany: 'upsert',
  create: 'insert',
  update: 'update',
  upsert: 'upsert',
  delete: 'delete',
};

/** One write a root mutation field asks for (a list mutation asks for one per input). */
interface Planned {
  responseKey: string;
  /** The input's place in a list mutation's `inputs`. */
  index?: number;
  table: string;
  key: string;
  kind: Kind4;
  /** Where the row's fields sit in the field's arguments: `input`, `inputs.<i>` or `set` (error paths name it). */
  inputPath: string;
}

/** What a mutation field answers: the commit (null when the batch changed nothing) and its entity at that commit. */
export interface MutationAnswer {
  commit: CommitDto | null;
  key: string;
  row: Entity | null;
}

const fieldOf = (ts: TypedSchema): Map<string, { table: string; kind: Kind4 }> => {
  const m = new Map<string, { table: string; kind: Kind4 }>();
  for (const n of ts.names.values()) {
    m.set(n.create, { table: n.table, kind: 'create' });
    m.set(n.update, { table: n.table, kind: 'update' });
    m.set(n.upsert, { table: n.table, kind: 'upsert' });
    m.set(n.remove, { table: n.table, kind: 'delete' });
    m.set(n.createMany, { table: n.table, kind: 'createMany' });
    m.set(n.upsertMany, { table: n.table, kind: 'upsertMany' });
  }
  return m;
};

/** The mutation fields of every table, as steps: it yields after each table (see buildTypedSchemaYielding). */
export function* mutationFields(c: {
  schema: Schema;
  ts: TypedSchema;
  enums: Map<string, GraphQLEnumType>;
  objects: Map<string, GraphQLObjectType>;
  commit: GraphQLObjectType;
}): Generator<undefined, GraphQLFieldConfigMap<unknown, TypedContext>> {
  const out: GraphQLFieldConfigMap<unknown, TypedContext> = {};
  const resolve = guarded('write', ({ ctx, info }) => ctx.mutations.answer(info));
  for (const t of c.schema.types) {
    const n = c.ts.names.get(t.name) as TableNames;
    const result = new GraphQLObjectType({
      name: n.result,
      fields: {
        commit: { type: c.commit, description: 'The commit the batch landed as; null when it changed nothing.' },
        key: { type: new GraphQLNonNull(GraphQLString) },
        row: { type: c.objects.get(t.name) as GraphQLObjectType, description: 'The entity at that commit; null once deleted.' },
      },
    });
    const input = new GraphQLInputObjectType({ name: n.input, fields: rowInputFields({ t, n, enums: c.enums }, 'full') });
    const patchFields = rowInputFields({ t, n, enums: c.enums }, 'patch');
    const keyArgs = rowInputFields({ t, n, enums: c.enums }, 'key');
    const type = new GraphQLNonNull(result);
    out[n.create] = {
      type,
      description: `Insert one ${t.name}; refused when the key exists.`,
      args: { input: { type: new GraphQLNonNull(input) } },
      resolve,
    };
    out[n.upsert] = {
      type,
      description: `Insert or replace one ${t.name} whole.`,
      args: { input: { type: new GraphQLNonNull(input) } },
      resolve,
    };
    if (Object.keys(patchFields).length > 0) {
      const patch = new GraphQLInputObjectType({ name: n.patch, fields: patchFields });
      out[n.update] = {
        type,
        description: `Change the given properties of one ${t.name}.`,
        args: { ...keyArgs, set: { type: new GraphQLNonNull(patch) } },
        resolve,
      };
    }
    out[n.remove] = { type, description: `Delete one ${t.name} (a node's edges go with it).`, args: keyArgs, resolve };
    const inputs = { inputs: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(input))) } };
    const list = new GraphQLNonNull(new GraphQLList(type));
    out[n.createMany] = {
      type: list,
      description: `Insert many ${t.name} rows, in the same commit as the document's other mutations.`,
      args: inputs,
      resolve,
    };
    out[n.upsertMany] = { type: list, description: `Insert or replace many ${t.name} rows, in the same commit.`, args: inputs, resolve };
    yield;
  }
  return out;
}

/** Root fields of the operation in document order, through fragments, honouring @skip and @include. */
function rootFields(info: GraphQLResolveInfo): FieldNode[] {
  const out: FieldNode[] = [];
  const vars = info.variableValues;
  const included = (node: FieldNode | { directives?: readonly unknown[] }): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node as FieldNode, vars)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node as FieldNode, vars)?.if !== false;
  const walk = (set: SelectionSetNode, seen: Set<string>): void => {
    for (const sel of set.selections) {
      if (!included(sel)) continue;
      if (sel.kind === Kind.FIELD) out.push(sel);
      else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, seen);
      else if (!seen.has(sel.name.value)) {
        const frag = info.fragments[sel.name.value];
        if (frag !== undefined) walk(frag.selectionSet, new Set(seen).add(sel.name.value));
      }
    }
  };
  walk(info.operation.selectionSet, new Set());
  return out;
}

/** One document's mutations, planned and written once, then answered field by field. */
export class TypedMutations {
  private outcome: Promise<Map<string, MutationAnswer | MutationAnswer[]>> | undefined;

  constructor(
    private readonly service: BranchgraphService,
    private readonly ctx: RequestContext,
    private readonly c: { ts: TypedSchema; branch: string },
  ) {}

  async answer(info: GraphQLResolveInfo): Promise<MutationAnswer | MutationAnswer[]> {
    const first = this.outcome === undefined;
    this.outcome ??= this.run(info);
    try {
      return (await this.outcome).get(info.path.key as string) as MutationAnswer | MutationAnswer[];
    } catch (e) {
      if (first) throw e;
      const err = toBranchgraphError(e);
      throw new BranchgraphError(err.code, `not applied: this document's mutations were refused together (${err.message})`);
    }
  }

  private plan(info: GraphQLResolveInfo): { planned: Planned[]; ops: { op: string; table: string; values: Row }[] } {
    const byField = fieldOf(this.c.ts);
    const mutationType = info.schema.getMutationType() as GraphQLObjectType;
    const planned: Planned[] = [];
    const ops: { op: string; table: string; values: Row }[] = [];
    for (const node of rootFields(info)) {
      const name = node.name.value;
      const what = byField.get(name);
      const t = what === undefined ? undefined : this.c.ts.types.get(what.table);
      if (what === undefined || t === undefined) continue;
      const args = getArgumentValues(mutationType.getFields()[name] as never, node, info.variableValues) as Record<string, unknown>;
      const n = this.c.ts.names.get(what.table) as TableNames;
      const rowFields = this.c.ts.rowFields.get(what.table) as Map<string, string>;
      const many = what.kind === 'createMany' || what.kind === 'upsertMany';
      const rows = many
        ? (args.inputs as Record<string, unknown>[])
        : [what.kind === 'update' ? (args.set as Record<string, unknown>) : args.input];
      rows.forEach((source, i) => {
        const values: Row = {};
        for (const [field, prop] of rowFields)
          if (source !== undefined && Object.hasOwn(source as object, field)) values[prop] = (source as Row)[field] as Row[string];
        const byKey = what.kind === 'update' || what.kind === 'delete';
        if (byKey) for (const [prop, arg] of Object.entries(n.keyArgs)) values[prop] = args[arg] as Row[string];
        const key = byKey ? keyFromArgs(args, { t, n }) : entityKey(t, values);
        const inputPath = many ? `inputs.${i}` : what.kind === 'update' ? 'set' : 'input';
        planned.push({
          responseKey: node.alias?.value ?? name,
          ...(many ? { index: i } : {}),
          table: what.table,
          key,
          kind: what.kind,
          inputPath,
        });
        ops.push({ op: WRITE_OP[what.kind], table: what.table, values });
      });
      // An empty list writes nothing but still answers (an empty list).
      if (many && rows.length === 0)
        planned.push({
          responseKey: node.alias?.value ?? name,
          index: -1,
          table: what.table,
          key: '',
          kind: what.kind,
          inputPath: 'inputs',
        });
    }
    return { planned, ops: ops };
  }

  private async run(info: GraphQLResolveInfo): Promise<Map<string, MutationAnswer | MutationAnswer[]>> {
    // Large inputs (megabytes of variables) were coerced in this turn already: planning them gets a
    // turn of its own, and so does the write's own checking after it.
    const large = jsonLengthAtLeast(info.variableValues, LARGE_BYTES);
    if (large) await nextTurn();
    const { planned, ops } = this.plan(info);
    if (large) await nextTurn();
    const opts = (getDirectiveValues(COMMIT_DIRECTIVE, info.operation, info.variableValues) ?? {}) as Record<string, string>;
    // Only empty list mutations: nothing to write, nothing to commit.
    let r: { commit: CommitDto | null } = { commit: null };
    try {
      const input = { branch: this.c.branch, ops, ...opts };
      if (ops.length > 0) r = await invoke(OPERATIONS.write, this.service, { input, ctx: this.ctx });
    } catch (e) {
      throw renamed(toBranchgraphError(e), { planned, ts: this.c.ts });
    }
    const at = r.commit === null ? this.c.branch : `commit:${r.commit.id}`;
    const rows = await this.rowsAt(at, planned);
    const out = new Map<string, MutationAnswer | MutationAnswer[]>();
    for (const p of planned) {
      if (p.index === -1) {
        out.set(p.responseKey, []);
        continue;
      }
      const row = p.kind === 'delete' ? undefined : rows.get(`${p.table}\u0000${p.key}`);
      const answer = { commit: r.commit, key: p.key, row: row === undefined ? null : { table: p.table, key: p.key, row, at, level: 1 } };
      if (p.index === undefined) out.set(p.responseKey, answer);
      else out.set(p.responseKey, [...((out.get(p.responseKey) as MutationAnswer[] | undefined) ?? []), answer]);
    }
    return out;
  }

  /** The rows the batch left, one lookup per table. */
  private async rowsAt(at: string, planned: Planned[]): Promise<Map<string, Row>> {
    const out = new Map<string, Row>();
    for (const table of new Set(planned.map((p) => p.table))) {
      const keys = planned.filter((p) => p.table === table && p.index !== -1).map((p) => p.key);
      const r = await invoke(OPERATIONS.lookupRows, this.service, { input: { table, at, keys }, ctx: this.ctx });
      for (const item of r.items) if (item !== null) out.set(`${table}\u0000${item.key}`, item.row as Row);
    }
    return out;
  }
}

/** A write error with its `ops[i].values.p` paths renamed to the mutation field and its argument. */
function renamed(err: BranchgraphError, c: { planned: Planned[]; ts: TypedSchema }): BranchgraphError {
  if (err.issues === undefined || err.issues.length === 0) return err;
  // Write ops line up with the planned entries that write (an empty list mutation plans none).
  const writing = c.planned.filter((p) => p.index !== -1);
  const rename = (path: string): string =>
    path.replace(/^ops\[(\d+)\](?:\.values)?(?:\.(\w+))?/, (whole, i: string, prop: string | undefined) => {
      const p = writing[Number(i)];
      if (p === undefined) return whole;
      const at = p.index === undefined ? p.responseKey : `${p.responseKey}.${p.index}`;
      if (prop === undefined) return at;
      const n = c.ts.names.get(p.table) as TableNames;
      // Key properties of update and delete are the field's own arguments; the rest sit in its input.
      if ((p.kind === 'update' || p.kind === 'delete') && n.keyArgs[prop] !== undefined) return `${p.responseKey}.${n.keyArgs[prop]}`;
      const field = (prop === 'from' ? n.fields.fromKey : prop === 'to' ? n.fields.toKey : n.fields.props[prop]) ?? prop;
      return `${p.responseKey}.${p.inputPath}.${field}`;
    });
  const issues: ErrorIssue[] = err.issues.map((i) => ({ ...i, path: rename(i.path) }));
  const first = issues[0] as ErrorIssue;
  return new BranchgraphError(err.code, `${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, {
    issues,
    cause: err,
  });
}
