/**
 * Which properties make up a row's key. Alone in its module, importing nothing, so
 * the browser pages (ui/) can name a table's typed GraphQL fields (graphql/typed-names.ts) without
 * bundling the schema's validators or Node's crypto.
 */

/** Edge tables carry their endpoints as two string properties. */
export const EDGE_FROM = 'from';
export const EDGE_TO = 'to';

/** Property names that make up a row's key, in key order. */
export function keyProps(t: { kind: 'node' | 'edge'; key: string[] }): string[] {
  return t.kind === 'node' ? t.key : [EDGE_FROM, EDGE_TO, ...t.key];
}
