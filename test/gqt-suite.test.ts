/**
 * Every GQT case over every transport: embedded on memory and (when
 * available) S3, and REST and GraphQL on fs with one server per pass in this
 * process. CI also runs the CLI runner over embedded on fs and S3, and over
 * REST and GraphQL with real server processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultFiles, loadCases, openGqtPass, type GqtPass, type GqtRunOptions } from '../src/gqt/gqt-cli.js';
import { s3Available } from './support/s3-env.js';

const { cases, errors } = await loadCases(await defaultFiles());

const modes: GqtRunOptions[] = [
  { via: 'embedded', store: 'memory' },
  { via: 'rest', store: 'fs', servers: 'in-process' },
  { via: 'graphql', store: 'fs', servers: 'in-process' },
  ...(s3Available() ? [{ via: 'embedded', store: 's3' } as GqtRunOptions] : []),
];

describe('GQT suite', () => {
  it('every case file parses, and there are at least 50', () => {
    expect(errors).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(50);
  });

  for (const mode of modes) {
    describe(`${mode.via} on ${mode.store}`, () => {
      // One pass per mode, as the CLI runs it: over HTTP, one server and a hosted graph per case.
      let pass: GqtPass;
      beforeAll(async () => {
        pass = await openGqtPass(mode);
      });
      afterAll(() => pass.close());
      for (const c of cases) {
        it(c.name, async () => {
          const r = await pass.run(c);
          expect(r.failure ?? 'passed').toBe('passed');
        });
      }
    });
  }
});
