/**
 * One plan per request: before graphql-js walks a typed document, the root
 * field that read the first level reads every level below it, one batch per
 * level and field, and leaves the answers where the nested resolvers find
 * them synchronously.
 *
 * Without it the batching is still per level (each nested resolver asks the
 * request's DataLoader, which gathers a level's keys into one operation), but
 * every parent's field then waits on its own promise, and graphql-js settles
 * thousands of them for a two-hop traversal. With it, a traversal costs a
 * batch per level and a plain synchronous walk.
 *
 * The plan follows the document as graphql-js will: fields by response key
 * (aliases), through fragments and inline fragments, arguments coerced the
 * same way (`getArgumentValues`), so each batch has the signature its
 * resolvers will look for. A field whose answer was not planned (a selection
 * the plan does not follow, a batch that failed) falls back to the
 * DataLoader, so the plan changes the cost of a document, never its result
 * or its errors.
 *
 * The fields that read are marked in the generated schema (`READ_FIELD` in a
 * field's extensions): traversals (`<edge>Out`, `<edge>In`) and edge ends
 * (`from`, `to`).
 */
import {
  getNamedType,
  isObjectType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values.js';
import type { TypedSchema } from './typed-context.js';
import { DEFAULT_ROWS_PAGE } from '../model/page-size.js';
import { engineOrder, engineWhere, type FieldMap } from './typed-inputs.js';
import type { Entity, PageArgs, TypedReads } from './typed-reads.js';

/** Page size of a connection that names none: the engine's. */
export const DEFAULT_FIRST = DEFAULT_ROWS_PAGE;

/** The extension key that marks a field that reads, and what it reads. */
export const READ_FIELD = 'branchgraphRead';
export type ReadField =
  | { kind: 'neighbors'; edgeTable: string; direction: 'out' | 'in' }
  | { kind: 'end'; table: string; end: 'from' | 'to' };

/** A document's parts a plan reads: its fragments and variables. */
export interface DocumentParts {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

/** The fields of `sets` by response key, through fragments, as graphql-js collects them. */
function collect(sets: readonly SelectionSetNode[], doc: DocumentParts): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode): void => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const key = sel.alias?.value ?? sel.name.value;
        out.set(key, [...(out.get(key) ?? []), sel]);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
      else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const frag = doc.fragments[sel.name.value];
        if (frag !== undefined) walk(frag.selectionSet);
      }
    }
  };
  for (const s of sets) walk(s);
  return out;
}

const setsOf = (nodes: readonly FieldNode[]): SelectionSetNode[] =>
  nodes.flatMap((f) => (f.selectionSet !== undefined ? [f.selectionSet] : []));

/** Whether the selections of `nodes` ask for the field `name` (directly or through fragments). */
export function selectsField(nodes: readonly FieldNode[], doc: Pick<DocumentParts, 'fragments'>, name: string): boolean {
  for (const fields of collect(setsOf(nodes), { ...doc, variables: {} }).values())
    if (fields.some((f) => f.name.value === name)) return true;
  return false;
}

/**
 * Whether a connection field counts, remembered per field node: a traversal resolves once per
 * parent, over the same nodes of the same document.
 */
const COUNTS = new WeakMap<FieldNode, boolean>();
function counts(nodes: readonly FieldNode[], doc: Pick<DocumentParts, 'fragments'>): boolean {
  const first = nodes[0];
  if (first === undefined || nodes.length > 1) return selectsField(nodes, doc, 'totalCount');
  let known = COUNTS.get(first);
  if (known === undefined) {
    known = selectsField(nodes, doc, 'totalCount');
    COUNTS.set(first, known);
  }
  return known;
}

export type PageFieldArgs = { where?: unknown; orderBy?: unknown; first?: number | null; after?: string | null };

/** A connection field's arguments as the engine takes them; `nodes` are the field's nodes (for `totalCount`). */
export function pageArgs(
  args: PageFieldArgs,
  c: { table: string; ts: TypedSchema; nodes: readonly FieldNode[]; doc: Pick<DocumentParts, 'fragments'> },
): PageArgs {
  const m = c.ts.fieldMaps.get(c.table) as FieldMap;
  return {
    where: args.where === undefined || args.where === null ? undefined : engineWhere(args.where, c.table, c.ts.fieldMaps),
    orderBy: args.orderBy === undefined || args.orderBy === null ? undefined : engineOrder(args.orderBy, m),
    first: args.first ?? DEFAULT_FIRST,
    after: args.after ?? undefined,
    count: counts(c.nodes, c.doc),
  };
}

/** The document parts of a resolver's call. */
export function documentOf(info: GraphQLResolveInfo): DocumentParts {
  return { fragments: info.fragments, variables: info.variableValues };
}

/** The items' type and selections below a connection field (its `nodes` and `edges { node }`). */
function itemSelections(
  connection: GraphQLObjectType,
  nodes: readonly FieldNode[],
  doc: DocumentParts,
): { type: GraphQLObjectType; sets: SelectionSetNode[] } {
  const type = getNamedType(connection.getFields().nodes?.type) as GraphQLObjectType;
  const sets: SelectionSetNode[] = [];
  for (const fields of collect(setsOf(nodes), doc).values())
    for (const f of fields) {
      if (f.name.value === 'nodes') sets.push(...setsOf([f]));
      else if (f.name.value === 'edges')
        for (const inner of collect(setsOf([f]), doc).values())
          for (const g of inner) if (g.name.value === 'node') sets.push(...setsOf([g]));
    }
  return { type, sets };
}

/** What a plan step needs: the request's reads, the generated schema and the document. */
export interface PlanScope {
  reads: TypedReads;
  ts: TypedSchema;
  doc: DocumentParts;
}

/**
 * Read, a batch per field and level, everything the selections `sets` of `type` will read for
 * `entities`, and on down. Failures are left to the resolvers, which read again and report them.
 */
export async function planBelow(
  s: PlanScope & { entities: readonly Entity[]; type: GraphQLObjectType; sets: readonly SelectionSetNode[] },
): Promise<void> {
  if (s.entities.length === 0 || s.sets.length === 0) return;
  const fields = s.type.getFields();
  const steps: Promise<void>[] = [];
  for (const nodes of collect(s.sets, s.doc).values()) {
    const def = fields[(nodes[0] as FieldNode).name.value];
    const read = def?.extensions[READ_FIELD] as ReadField | undefined;
    if (def === undefined || read === undefined) continue;
    steps.push(planField({ ...s, def, read, nodes }).catch(() => undefined));
  }
  await Promise.all(steps);
}

async function planField(
  s: PlanScope & { entities: readonly Entity[]; def: GraphQLField<unknown, unknown>; read: ReadField; nodes: FieldNode[] },
): Promise<void> {
  const { def, read, nodes } = s;
  const type = getNamedType(def.type);
  if (!isObjectType(type)) return;
  if (read.kind === 'end') {
    const found = await s.reads.prefetchEnds({ table: read.table, end: read.end, of: s.entities });
    await planBelow({ ...s, entities: found, type, sets: setsOf(nodes) });
    return;
  }
  const args = getArgumentValues(def, nodes[0] as FieldNode, s.doc.variables) as PageFieldArgs;
  const page = pageArgs(args, { table: read.edgeTable, ts: s.ts, nodes, doc: s.doc });
  const items = await s.reads.prefetchNeighbors({ edgeTable: read.edgeTable, direction: read.direction, from: s.entities, page });
  await planBelow({ ...s, entities: items, ...itemSelections(type, nodes, s.doc) });
}

/** After a root connection's page: plan below its items. */
export function planBelowPage(
  s: PlanScope & { entities: readonly Entity[]; connection: GraphQLObjectType; nodes: readonly FieldNode[] },
): Promise<void> {
  return planBelow({ ...s, ...itemSelections(s.connection, s.nodes, s.doc) });
}

/** After a root lookup: plan below the entity. */
export function planBelowEntity(
  s: PlanScope & { entity: Entity | null; type: GraphQLObjectType; nodes: readonly FieldNode[] },
): Promise<void> {
  return planBelow({ ...s, entities: s.entity === null ? [] : [s.entity], sets: setsOf(s.nodes) });
}
