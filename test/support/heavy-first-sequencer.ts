/**
 * Test files in the order that finishes soonest on two workers: longest
 * first. Vitest orders by the durations it cached from the last run, and
 * without them (a fresh clone, as CI runs) by file size. Size misleads
 * here: each GQT transport is a three-line file that runs every case, and
 * the browser and process suites are short files that run for many
 * seconds. Started last, any of them leaves one worker idle while the
 * other finishes it. Files named below start first when nothing is cached.
 */
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/** Path fragments of the files that run longest, longest first (measured on an idle two-core machine). */
const HEAVY = [
  'test/gqt/graphql.test.ts',
  'test/cli.test.ts',
  'test/review-page.test.ts',
  'test/crash-sweep.test.ts',
  'test/simulation.test.ts',
  'test/graphiql.test.ts',
  'test/gqt/rest.test.ts',
  'test/idempotency.test.ts',
];

function weight(spec: TestSpecification): number {
  const i = HEAVY.findIndex((fragment) => spec.moduleId.endsWith(fragment));
  return i < 0 ? HEAVY.length : i;
}

export default class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const cached = files.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(root, f.moduleId)}`));
    // Array.prototype.sort is stable: the base order holds within each weight.
    return cached ? sorted : sorted.sort((a, b) => weight(a) - weight(b));
  }
}
