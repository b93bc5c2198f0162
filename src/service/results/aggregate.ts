/** What an aggregate answers: counts, and per numeric property its count, least, greatest, sum and mean. */
import { z } from 'zod';

export const NumberStatsZ = z
  .object({
    count: z.number().int().describe('Entities holding a value.'),
    min: z.number().nullable(),
    max: z.number().nullable(),
    sum: z.number().nullable(),
    avg: z.number().nullable(),
  })
  .meta({ id: 'NumberStats' });

export const AggregateResultZ = z.object({
  count: z.number().int(),
  numbers: z.record(z.string(), NumberStatsZ).describe('Per int or float property.'),
  groups: z.array(
    z
      .object({ key: z.record(z.string(), z.unknown()), count: z.number().int(), numbers: z.record(z.string(), NumberStatsZ) })
      .meta({ id: 'AggregateGroup' }),
  ),
  groupsTruncated: z.boolean().describe('More than 10,000 groups: the first in key order are listed.'),
  source: z.enum(['statistics', 'scan']).describe('statistics: counted from run statistics, no row read; scan: the live rows were read.'),
  rowsRead: z.number().int(),
});
