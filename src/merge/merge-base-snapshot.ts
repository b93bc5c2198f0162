import type { GraphPorts } from '../graph/ports.js';
import type { Snapshot } from '../graph/snapshot.js';
import { refOf, type Manifest } from '../graph/manifest.js';
import { BranchgraphError } from '../model/errors.js';
import { NO_PENDING } from '../pending/pending-wal.js';
import { mergeBaseView } from './virtual-base.js';

/**
 * The state two snapshots diverged from, as a snapshot to diff against: the
 * merge base a merge of them would use (virtual, for criss-cross history),
 * so a three-dot diff shows exactly what merging would bring. Its commit
 * is the newest base's. A key the bases disagree on is marked in that base
 * (virtual-base.ts), so it shows as changed on both sides.
 */
export async function mergeBaseSnapshot(
  ports: Pick<GraphPorts, 'manifests' | 'runFiles'>,
  sides: { a: Snapshot; b: Snapshot },
  signal?: AbortSignal,
): Promise<Snapshot> {
  const { a, b } = sides;
  const found = await mergeBaseView({
    ports,
    a: a.manifest.ancestry,
    b: b.manifest.ancestry,
    lineages: [a.manifest.lineage, b.manifest.lineage],
    schemas: [a.schema, b.schema],
    signal,
  });
  if (found === undefined)
    throw new BranchgraphError(
      'invalid_input',
      `${a.manifest.commit.id} and ${b.manifest.commit.id} share no history: a three-dot diff needs a merge base`,
    );
  const manifest = found.base.manifests[0] as Manifest;
  // The diff only needs the type of each base table: the sides' types cover every table either kept.
  const types = [...b.schema.types, ...a.schema.types.filter((t) => !b.schema.types.some((u) => u.name === t.name))];
  return { ref: refOf(manifest), manifest, schema: { ...b.schema, types }, tables: found.base.tables, pending: NO_PENDING };
}
