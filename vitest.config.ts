import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import HeavyFirstSequencer from './test/support/heavy-first-sequencer.js';

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module) builds; Node loads the CJS
    // one for graphql-yoga, so tests must too, or schema objects cross realms.
    alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('./node_modules/graphql/index.js', import.meta.url)) }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'ui/**/*.test.ts', 'clients/typescript/src/**/*.test.ts'],
    globalSetup: ['test/support/build-once.ts'],
    // Every result an operation gives in a test is held to its contract (test/support/result-check.ts).
    setupFiles: ['test/support/result-check.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real S3 and multi-process tests share one machine with two cores.
    maxWorkers: 2,
    isolate: false,
    sequence: { sequencer: HeavyFirstSequencer },
  },
});
