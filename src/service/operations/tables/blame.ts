import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { BranchgraphError } from '../../../model/errors.js';
import type { Row } from '../../../model/values.js';
import { entityBlame } from '../../../graph/entity-history.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { commitDto, type CommitDto } from '../../dtos.js';
import { committed, entityWalk, HISTORY_PAGE_BUDGET } from './entity-history.js';
import { CommitZ } from '../../results/commit.js';

/** Who set one property's current value. */
export interface PropertyBlameDto {
  property: string;
  value: unknown;
  /** Null when the walk stopped before finding it (`complete: false`). */
  commit: CommitDto | null;
}

/**
 * For each property of one entity at a ref, the commit that last set its current value, following
 * each property into the side of a merge it came from (as Git's blame follows a line). One walk
 * examines at most 10,000 commits; `complete` says whether every property was found.
 */
export const blame = defineOperation({
  name: 'blame',
  summary: 'For each property of one entity, the commit that set its current value.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ table: tableName, key: entityKey, at: refOrMain }).strict(),
  async run(service, { table, key, at }, ctx): Promise<{ at: string; row: Row; properties: PropertyBlameDto[]; complete: boolean }> {
    const head = await service.snapshot(at, ctx);
    const walk = entityWalk(service, { table, key }, ctx);
    const found = await entityBlame({ walk, head: await committed(service, head, ctx), budget: HISTORY_PAGE_BUDGET });
    if (found === undefined)
      throw new BranchgraphError('not_found', `no row ${key} in ${table} at ${head.manifest.commit.id}`, { details: { table, key } });
    const properties = found.properties.map((p) => ({ ...p, commit: p.commit === null ? null : commitDto(p.commit) }));
    return { at: head.manifest.commit.id, row: found.row, properties, complete: found.complete };
  },
  output: z.object({
    at: IdZ.describe('The commit the ref resolved to.'),
    row: z.record(z.string(), z.unknown()),
    properties: z.array(
      z.object({
        property: z.string(),
        value: z.unknown(),
        commit: CommitZ.nullable(),
      }),
    ),
    complete: z.boolean(),
  }),
  http: { method: 'GET', path: '/tables/{table}/rows/{key}/blame' },
  graphql: [{ type: 'Query', field: 'blame' }],
});
