/**
 * An explorer edit as the typed GraphQL mutation that makes it: one field (create, update or
 * delete of one entity), pinned to the head the page read with `@commit(expectedHead:)`, so a
 * branch that moved since is refused (`head_moved`) instead of overwritten. Pure: it only
 * spells documents, with the server's own naming rules.
 */
import { enumValueName, type TableNames } from '../../src/graphql/typed-names.js';
import { EDGE_FROM, EDGE_TO, keyProps } from '../../src/model/key-props.js';
import type { PropDef, TableType } from '../../src/model/schema.js';

type Row = Record<string, unknown>;

export type Edit = { kind: 'create'; row: Row } | { kind: 'update'; key: Row; set: Row } | { kind: 'delete'; key: Row };

export interface EditContext {
  table: TableType;
  names: TableNames;
  /** The commit the page read: the mutation lands only if the branch still has it. */
  expectedHead: string;
  message: string;
}

const propOf = (t: TableType, name: string): PropDef | undefined => t.props.find((p) => p.name === name);

/** A value as a GraphQL literal of its property's type. */
function literal(p: PropDef | undefined, v: unknown): string {
  if (p?.type.kind === 'enum') return enumValueName(String(v));
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(String(v));
}

/** A value as a GraphQL variable of its property's type (enums by their GraphQL names). */
const variable = (p: PropDef | undefined, v: unknown): unknown => (p?.type.kind === 'enum' && v !== null ? enumValueName(String(v)) : v);

/** The input field a row property is spelled as: an edge's ends are `fromKey` and `toKey`. */
function fieldOf(c: EditContext, prop: string): string {
  if (c.table.kind === 'edge' && prop === EDGE_FROM) return c.names.fields.fromKey ?? 'fromKey';
  if (c.table.kind === 'edge' && prop === EDGE_TO) return c.names.fields.toKey ?? 'toKey';
  return c.names.fields.props[prop] ?? prop;
}

function fieldsOf(c: EditContext, row: Row): Row {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [fieldOf(c, k), variable(propOf(c.table, k), v)]));
}

function keyArgs(c: EditContext, key: Row): string {
  return keyProps(c.table)
    .map((k) => `${c.names.keyArgs[k]}: ${literal(propOf(c.table, k), key[k])}`)
    .join(', ');
}

export function editDocument(c: EditContext, edit: Edit): { query: string; variables: Row } {
  const commit = `@commit(expectedHead: ${JSON.stringify(c.expectedHead)}, message: ${JSON.stringify(c.message)})`;
  const selection = '{ commit { id } key }';
  switch (edit.kind) {
    case 'create':
      return {
        query: `mutation Create($input: ${c.names.input}!) ${commit} { edit: ${c.names.create}(input: $input) ${selection} }`,
        variables: { input: fieldsOf(c, edit.row) },
      };
    case 'update':
      return {
        query: `mutation Update($set: ${c.names.patch}!) ${commit} { edit: ${c.names.update}(${keyArgs(c, edit.key)}, set: $set) ${selection} }`,
        variables: { set: fieldsOf(c, edit.set) },
      };
    default:
      return {
        query: `mutation Delete ${commit} { edit: ${c.names.remove}(${keyArgs(c, edit.key)}) ${selection} }`,
        variables: {},
      };
  }
}
