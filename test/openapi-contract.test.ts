/**
 * The contract itself, not only responses against it: Redocly's recommended
 * rules (redocly.yaml says why any is off) with no problem left, the
 * OpenAPI meta-schema through swagger-parser, the conventions a generated
 * client relies on, and the typed client's generated types equal to what
 * openapi-typescript makes of the document now.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { lint, loadConfig } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { openApiText } from '../scripts/openapi-file.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
type Operation = { operationId?: string; responses: Record<string, unknown> };
const doc = parseYaml(readFileSync('openapi.yaml', 'utf8')) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(doc.paths).flatMap(([p, item]) =>
  Object.entries(item)
    .filter(([m]) => METHODS.includes(m))
    .map(([m, op]) => ({ where: `${m.toUpperCase()} ${p}`, op })),
);

describe('openapi.yaml', () => {
  it('is what `npm run contracts` generates from the operation table and the overlay, with no prose left over', () => {
    const { text, unusedProse } = openApiText();
    expect(unusedProse).toEqual([]);
    expect(readFileSync('openapi.yaml', 'utf8') === text, 'run `npm run contracts` and commit the result').toBe(true);
  });

  it('passes Redocly lint with no errors and no warnings', async () => {
    const config = await loadConfig({ configPath: 'redocly.yaml' });
    const problems = await lint({ ref: 'openapi.yaml', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('validates against the OpenAPI meta-schema', async () => {
    await expect(SwaggerParser.validate('openapi.yaml')).resolves.toMatchObject({ openapi: '3.1.0' });
  });

  it('gives every operation a unique operationId and a documented 4XX response', () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.filter((o) => !Object.keys(o.op.responses).some((s) => s.startsWith('4'))).map((o) => o.where)).toEqual([]);
  });

  it('regression: is what a stock openapi-typescript run generates, so a third party gets the types the README compiles against', () => {
    // Default options, as anyone would run it: request fields the server defaults must not come out required.
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'bg-client-')), 'openapi.ts');
    const bin = path.resolve('clients/typescript/node_modules/openapi-typescript/bin/cli.js');
    execFileSync(process.execPath, [bin, 'openapi.yaml', '-o', out], { stdio: 'pipe' });
    expect(readFileSync(out, 'utf8')).toMatch(/into\?: string/);
    const committed = readFileSync('clients/typescript/src/openapi.ts', 'utf8');
    expect(readFileSync(out, 'utf8'), 'run `npm run generate -w clients/typescript` and commit the result').toBe(committed);
  });

  it('regression: the client package builds on its own, writing only into its output folder', () => {
    const outDir = mkdtempSync(path.join(tmpdir(), 'bg-client-build-'));
    const tsc = path.resolve('clients/typescript/node_modules/typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', 'clients/typescript/tsconfig.json', '--outDir', outDir], { stdio: 'pipe' });
    expect(readdirSync(outDir).sort()).toEqual(['index.d.ts', 'index.js', 'openapi.d.ts', 'openapi.js']);
    // Nothing beside the sources: the build never follows a test's imports into the server.
    expect(readdirSync('clients/typescript/src').filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))).toEqual([]);
  }, 120_000);
});
