/** Write openapi.yaml from the operation table and openapi.overlay.yaml (`npm run contracts`). */
import { writeFileSync } from 'node:fs';
import { openApiText } from './openapi-file.js';

const { text, unusedProse } = openApiText();
if (unusedProse.length > 0) {
  process.stderr.write(`openapi.overlay.yaml has prose the contract has no place for:\n  ${unusedProse.join('\n  ')}\n`);
  process.exit(1);
}
writeFileSync('openapi.yaml', text);
process.stdout.write('wrote openapi.yaml\n');
