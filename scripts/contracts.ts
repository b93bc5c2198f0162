/**
 * Write the generated contracts (`npm run contracts`): `openapi.yaml` from the operation table and
 * `openapi.overlay.yaml`, and `schema/branchgraph.graphql` from the table and
 * `schema/branchgraph.overlay.graphql`.
 */
import { writeFileSync } from 'node:fs';
import { graphqlText } from './graphql-file.js';
import { openApiText } from './openapi-file.js';

const { text, unusedProse } = openApiText();
if (unusedProse.length > 0) {
  process.stderr.write(`openapi.overlay.yaml has prose the contract has no place for:\n  ${unusedProse.join('\n  ')}\n`);
  process.exit(1);
}
writeFileSync('openapi.yaml', text);
writeFileSync('schema/branchgraph.graphql', graphqlText());
process.stdout.write('wrote openapi.yaml and schema/branchgraph.graphql\n');
