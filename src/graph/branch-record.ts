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
});
export type BranchRecord = z.infer<typeof BranchRecordZ>;

/** A branch whose newest record cannot be read (corrupt or of an unknown format). */
export interface DamagedBranch {
  name: string;
  key: string;
  error: string;
}
