/**
 * `openapi.yaml` as a file: the overlay read from `openapi.overlay.yaml`,
 * the document generated from it and the operation table, and its text.
 * `npm run contracts` writes the text; a test fails when the committed file
 * differs from it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { OPERATION_LIST } from '../src/service/operation-table.js';
import { packageRoot } from '../src/service/package-root.js';
import { openApiDocument, type Overlay } from '../src/service/contract/openapi-document.js';

const HEADER =
  '# Generated from the operation table (src/service/operations/) and openapi.overlay.yaml by `npm run contracts`.\n# Edit those, not this file: a test fails when it drifts.\n';

/** The document's text as `npm run contracts` writes it, and any overlay prose the contract no longer has a place for. */
export function openApiText(root = packageRoot()): { text: string; unusedProse: string[] } {
  const overlay = parse(readFileSync(path.join(root, 'openapi.overlay.yaml'), 'utf8')) as Overlay;
  const { document, unusedProse } = openApiDocument(OPERATION_LIST, overlay);
  return { text: HEADER + stringify(document, { lineWidth: 120, aliasDuplicateObjects: false }), unusedProse };
}
