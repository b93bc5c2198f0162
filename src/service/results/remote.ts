/**
 * Remotes and syncs as clients see them: a remote with its tracking refs,
 * and what a fetch and a push did.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';

export const TrackingRefZ = z
  .object({
    branch: z.string(),
    commit: IdZ,
    fetchedAt: z.string(),
  })
  .meta({
    id: 'TrackingRef',
    description: 'A remote branch as the last fetch (or push) found it; read it as `remote:<remote>/<branch>` wherever a ref is taken.',
  });

export const RemoteZ = z
  .object({
    name: z.string(),
    url: z.string(),
    actor: z.string(),
    time: z.string(),
    branches: z.array(TrackingRefZ),
  })
  .meta({ id: 'Remote', description: 'Another copy of this graph (a directory, a bucket or a server), and its branches as last fetched.' });

export const TransferZ = z
  .object({
    objects: z.number().int().describe('Objects written at the destination.'),
    bytes: z.number().int().describe('Their bytes.'),
    present: z.number().int().describe('Objects the destination held already (a resumed sync).'),
    manifests: z.number().int().describe('Versions (commits and their layouts) sent.'),
  })
  .meta({ id: 'Transfer', description: 'What a sync sent: exactly the objects the destination lacked.' });

export const FetchResultZ = z
  .object({
    remote: z.string(),
    updated: z.array(z.object({ branch: z.string(), from: IdZ.nullable(), to: IdZ })).describe('Tracking refs that moved.'),
    pruned: z.array(z.string()).describe('Tracking refs forgotten: the remote no longer has their branch (with prune).'),
    tags: z.object({
      fetched: z.array(z.string()).describe('Tags taken from the remote.'),
      kept: z.array(z.string()).describe('Tags this graph names another commit by, kept: tags never move.'),
    }),
    transfer: TransferZ,
  })
  .meta({ id: 'FetchResult', description: 'What a fetch brought: objects first, then the tracking refs and tags.' });

export const PushResultZ = z
  .object({
    remote: z.string(),
    branch: z.string(),
    destination: z.string().describe('The branch moved on the remote.'),
    outcome: z.enum(['created', 'fast_forward', 'forced', 'up_to_date']),
    from: IdZ.nullable().describe("The remote branch's head before the push; null when the push created it."),
    to: IdZ,
    transfer: TransferZ,
  })
  .meta({ id: 'PushResult', description: "What a push did: the objects sent, then the remote branch's move." });
