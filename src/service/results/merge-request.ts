/**
 * A merge request as clients see it: its revisions, reviews and mergeability.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { REQUEST_STATES, VERDICTS } from '../../model/merge-request.js';

/** A place in the request's diff a review comments on. */
export const ReviewPlaceZ = z
  .strictObject({
    table: z.string(),
    key: z.string().optional(),
    property: z.string().optional(),
  })
  .meta({ id: 'ReviewPlace', description: "A place in the request's diff a review comments on." });

/** A request to merge a source branch into a target, with its revisions, reviews and whether it may merge now. */
export const MergeRequestRecordZ = z
  .object({
    id: IdZ,
    version: z.number().int().describe('The stored version of the request.'),
    title: z.string(),
    description: z.string(),
    source: z.string(),
    target: z.string(),
    author: z.string(),
    state: z.enum(REQUEST_STATES),
    createdAt: z.string(),
    updatedAt: z.string(),
    resolutions: z.unknown().describe('The resolutions the merge will apply, as a merge takes them.').optional(),
    revisions: z.array(
      z.object({
        n: z.number().int(),
        sourceHead: IdZ,
        targetHead: IdZ,
        sourceState: z.string().describe("The source's content state: compaction and catch-up leave it as it is.").optional(),
        targetState: z.string().describe("The target's content state.").optional(),
        base: IdZ.nullable(),
        resolutions: z
          .unknown()
          .describe('The resolutions this revision merges with, as saved when it was made: a merge of it applies exactly these.')
          .optional(),
        decidedDigest: z
          .string()
          .nullable()
          .describe('The set of conflicts the resolutions decide, hashed; null when they decide none.')
          .optional(),
        fingerprint: z
          .string()
          .describe('What the merge brings (source content state, merge base, resolutions, the conflicts they decide), hashed.'),
        time: z.string(),
        checks: z
          .record(
            z.string(),
            z.object({
              status: z.enum(['pending', 'pass', 'fail', 'error']),
              message: z.string(),
              time: z.string(),
              hook: IdZ.optional(),
            }),
          )
          .describe(
            "Each check's result on this revision, by check name: pass, fail, error (no answer in time, a non-2xx status, an answer that is not a verdict) or pending.",
          )
          .optional(),
        preview: z.object({
          outcome: z.enum(['merged', 'fast_forward', 'already_up_to_date', 'conflicts']),
          conflicts: z.number().int().describe('Conflicts left after the saved resolutions.'),
          decided: z
            .number()
            .int()
            .describe('Conflicts the saved resolutions decide (by a choice or the strategy): an approval covers exactly these.')
            .optional(),
          counts: z.record(z.string(), z.number().int()),
          tables: z.array(
            z.object({
              table: z.string(),
              action: z.string(),
              sourceChanges: z.number().int(),
              targetChanges: z.number().int(),
            }),
          ),
        }),
      }),
    ),
    reviews: z.array(
      z.object({
        n: z.number().int(),
        verdict: z.enum(VERDICTS),
        body: z.string(),
        author: z.string(),
        revision: z.number().int().describe('The revision the reviewer saw.'),
        time: z.string(),
        on: ReviewPlaceZ.optional(),
      }),
    ),
    merging: z
      .number()
      .int()
      .describe(
        'The revision a merge was started for and not yet recorded: until it settles, the request takes no new resolutions and cannot be closed.',
      )
      .optional(),
    mergingSince: z.string().describe('When that merge started.').optional(),
    merged: z
      .object({
        commit: IdZ,
        by: z.string(),
        time: z.string(),
        revision: z.number().int(),
      })
      .optional(),
    closed: z
      .object({
        by: z.string(),
        time: z.string(),
      })
      .optional(),
    mergeability: z.object({
      mergeable: z.boolean(),
      reasons: z.array(z.string()),
      approvals: z.object({
        required: z.number().int(),
        current: z.array(z.string()),
      }),
      changesRequestedBy: z.array(z.string()),
      checks: z
        .object({
          required: z.array(z.string()),
          passed: z.array(z.string()),
        })
        .describe("The checks the target's rule requires, and those that passed on the latest revision."),
    }),
  })
  .meta({
    id: 'MergeRequestRecord',
    description: 'A request to merge a source branch into a target, with its revisions, reviews and whether it may merge now.',
  });
