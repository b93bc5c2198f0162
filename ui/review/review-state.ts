/**
 * What the review page holds between answers: the request shown and a generation that every new
 * view bumps, so a late answer for an older view is dropped instead of drawn over the new one.
 */
import type { Schemas } from '../shared/api.js';

export type MergeRequest = Schemas['MergeRequestRecord'];
export type Revision = MergeRequest['revisions'][number];
export type Branch = Schemas['Branch'];

export const state = { generation: 0, current: null as string | null };

/** Starts a new view and returns its generation. */
export const nextView = (): number => ++state.generation;
/** Whether the view of generation `gen` is still the one shown. */
export const isShown = (gen: number): boolean => gen === state.generation;

/** The latest revision: a request always has at least one. */
export const latestOf = (q: MergeRequest): Revision => q.revisions[q.revisions.length - 1] as Revision;

/** What a saved resolution holds, as the page reads it back. */
export interface SavedConflict {
  table: string;
  key: string;
  property?: string | null;
  take: string;
  value?: unknown;
}
export interface SavedResolutions {
  strategy?: string;
  conflicts?: SavedConflict[];
}
export const resolutionsOf = (r: unknown): SavedResolutions | null =>
  typeof r === 'object' && r !== null ? (r as SavedResolutions) : null;
