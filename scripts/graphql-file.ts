/**
 * `schema/branchgraph.graphql` as a file: the overlay read from
 * `schema/branchgraph.overlay.graphql`, and the SDL generated from it and the
 * operation table. `npm run contracts` writes the text; a test fails when the
 * committed file differs from it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OPERATION_LIST } from '../src/service/operation-table.js';
import { packageRoot } from '../src/service/package-root.js';
import { graphqlDocument } from '../src/graphql/graphql-document.js';

const HEADER =
  '# Generated from the operation table (src/service/operations/) and schema/branchgraph.overlay.graphql by `npm run contracts`.\n# Edit those, not this file: a test fails when it drifts.\n\n';

/** The SDL's text as `npm run contracts` writes it. */
export function graphqlText(root = packageRoot()): string {
  const overlay = readFileSync(path.join(root, 'schema', 'branchgraph.overlay.graphql'), 'utf8');
  return HEADER + graphqlDocument(OPERATION_LIST, overlay);
}
