import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { RefZ } from '../../inputs.js';
import { bestBasesOf } from '../../../merge/virtual-base.js';
import { IdZ } from '../../results/scalars.js';

/**
 * The merge bases of two refs, as `git merge-base --all` gives them: the newest commits both
 * reach. One in the usual case; several after criss-cross merges (a merge folds them into one
 * virtual base); none when the refs share no history. An agent asks it before a merge, to know
 * what its branch forked from, and it costs the ancestry walk alone: no table is read.
 */
export const mergeBase = defineOperation({
  name: 'mergeBase',
  summary: 'The merge bases of two refs: the newest commits both reach (none when they share no history).',
  role: 'read',
  access: ({ from, to }) => ({ reads: [from, to] }),
  input: z.object({ from: RefZ, to: RefZ }).strict(),
  async run(service, { from, to }, ctx) {
    const [a, b] = await Promise.all([service.snapshot(from, ctx), service.snapshot(to, ctx)]);
    const bases = await bestBasesOf({
      ports: service.graph.ports,
      a: a.manifest.ancestry,
      b: b.manifest.ancestry,
      lineages: [a.manifest.lineage, b.manifest.lineage],
      schemas: [],
      signal: ctx.signal,
    });
    return { from: a.manifest.commit.id, to: b.manifest.commit.id, bases: bases.map((m) => m.commit.id) };
  },
  output: z
    .object({
      from: IdZ.describe('The commit `from` resolved to.'),
      to: IdZ.describe('The commit `to` resolved to.'),
      bases: z.array(IdZ).describe('The best common ancestors, newest first in fold order; empty when the refs share no history.'),
    })
    .meta({ id: 'MergeBase' }),
  http: { method: 'GET', path: '/merge-base' },
  graphql: [{ type: 'Query', field: 'mergeBase' }],
});
