/**
 * A branch record: what a branch name means at one point, a lineage and
 * where it forked from, or a deletion (branch-records.ts stores them).
 */
import { z } from 'zod';
import { ProtectionRuleZ } from '../model/branch-protection.js';
import { ManifestRefZ } from './manifest.js';

export const BranchRecordZ = z.object({
  format: z.literal(1),
  name: z.string(),
  seq: z.number().int().min(1),
  lineage: z.string(),
  deleted: z.boolean(),
  /** Where the branch forked from; null for the root branch. */
  from: ManifestRefZ.nullable(),
  time: z.string(),
  actor: z.string(),
  /** The branch's protection rule, when it has one (model/branch-protection.ts); carried by every later record but a deletion's. */
  protection: ProtectionRuleZ.extend({ setBy: z.string(), time: z.string() }).optional(),
  /** When the maintenance sweep may delete the branch (service/branch-expiry.ts); carried like the protection. */
  expiresAt: z.string().optional(),
  /** Who the branch is for (an agent's identity, a team); a token's branch quota counts what it owns. */
  owner: z.string().optional(),
  labels: z.array(z.string()).optional(),
});

/** What a branch carries about itself from record to record: its lease on life, its owner and labels. */
export type BranchTraits = Pick<BranchRecord, 'expiresAt' | 'owner' | 'labels'>;

/** The traits of a record, without the fields it does not set. */
export function traitsOf(rec: BranchTraits): BranchTraits {
  return {
    ...(rec.expiresAt !== undefined ? { expiresAt: rec.expiresAt } : {}),
    ...(rec.owner !== undefined ? { owner: rec.owner } : {}),
    ...(rec.labels !== undefined ? { labels: rec.labels } : {}),
  };
}
export type BranchRecord = z.infer<typeof BranchRecordZ>;
/** A branch whose newest record cannot be read (corrupt or of an unknown format). */
export interface DamagedBranch {
  name: string;
  key: string;
  error: string;
}
