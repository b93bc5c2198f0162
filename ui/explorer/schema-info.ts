/**
 * The schema of the ref the explorer reads, and what the pages derive from it: a table's
 * columns with their types, and the typed GraphQL names its edits are spelled with (the server's
 * own naming rules, graphql/typed-names.ts, so the two never disagree).
 */
import type { PropDef, Schema, TableType } from '../../src/model/schema.js';
import { typedNames, type TableNames } from '../../src/graphql/typed-names.js';
import { EDGE_FROM, EDGE_TO, keyProps } from '../../src/model/key-props.js';
import { answer, api } from '../shared/api.js';

export type { PropDef, TableType, TableNames };

export interface SchemaInfo {
  commit: string;
  schema: Schema;
  names: Map<string, TableNames>;
}

const cache = new Map<string, Promise<SchemaInfo>>();

/** The schema at a commit (read once per commit: a commit's schema never changes). */
export async function schemaAt(at: string): Promise<SchemaInfo> {
  const read = await answer(api().GET('/schema', { params: { query: { at } } }));
  let found = cache.get(read.commit);
  if (found === undefined) {
    const schema = read.schema as unknown as Schema;
    found = Promise.resolve({ commit: read.commit, schema, names: typedNames(schema) });
    cache.set(read.commit, found);
  }
  return found;
}

export const tableOf = (info: SchemaInfo, name: string): TableType | undefined => info.schema.types.find((t) => t.name === name);

const ENDPOINT = (name: string): PropDef => ({ name, type: { kind: 'string' }, optional: false, unique: false, range: null });

/** A table's columns in stored order, an edge's ends first. */
export const columnsOf = (t: TableType): PropDef[] => (t.kind === 'node' ? t.props : [ENDPOINT(EDGE_FROM), ENDPOINT(EDGE_TO), ...t.props]);

export const isKeyProp = (t: TableType, prop: string): boolean => keyProps(t).includes(prop);

/** The property a node is labelled with on the graph: a name or title when it has one. */
export function labelProp(t: TableType | undefined): string | undefined {
  const strings = (t?.props ?? []).filter((p) => p.type.kind === 'string' && !(t?.kind === 'node' && t.key.includes(p.name)));
  return strings.find((p) => /^(name|title|label)$/i.test(p.name))?.name;
}
