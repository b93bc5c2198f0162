/**
 * Every GQT case over one transport, as one vitest file per transport
 * (test/gqt/*.test.ts) so the suite spreads over the test workers. REST and
 * GraphQL run their servers in the test process on one memory store (a
 * restart is a new server on the same objects), one per pass with a hosted
 * graph per case. CI also runs the CLI runner embedded on fs and S3 and over
 * REST and GraphQL with real server processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultFiles, loadCases, openGqtPass, type GqtPass, type GqtRunOptions } from '../../src/gqt/gqt-cli.js';

export async function describeGqtPass(mode: GqtRunOptions): Promise<void> {
  const { cases, errors } = await loadCases(await defaultFiles());
  describe(`GQT ${mode.via} on ${mode.store}`, () => {
    it('every case file parses, and there are at least 50', () => {
      expect(errors).toEqual([]);
      expect(cases.length).toBeGreaterThanOrEqual(50);
    });
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
