/**
 * What graph walks answer: nodes with their rows, the edges taken, and paths as node and edge
 * lists.
 */
import { z } from 'zod';

export const NodeRefZ = z
  .object({ table: z.string().min(1).max(200), key: z.string().min(1).max(4096) })
  .strict()
  .meta({ id: 'NodeRef' });

export const WalkNodeZ = z.object({ table: z.string(), key: z.string(), row: z.record(z.string(), z.unknown()) }).meta({ id: 'WalkNode' });

export const WalkEdgeZ = z
  .object({ table: z.string(), key: z.string(), from: z.string(), to: z.string(), row: z.record(z.string(), z.unknown()) })
  .meta({ id: 'WalkEdge' });

export const WalkPathZ = z
  .object({
    nodes: z.array(WalkNodeZ).describe('From the start to the end.'),
    edges: z.array(WalkEdgeZ).describe('The edge of each hop, in order.'),
  })
  .meta({ id: 'WalkPath' });

export const DirectionZ = z.enum(['out', 'in', 'both']).meta({ id: 'Direction' });
