/**
 * What every explorer view is drawn with: the ref as the reader named it, the commit it resolved
 * to (every read of one view is pinned to it, so the parts of a page agree), the branch's head
 * and protection when the ref is a branch (edits need both), the schema at that commit, and the
 * page's navigation.
 */
import type { Route } from './route.js';
import type { ReadPoint } from './edits.js';
import type { SchemaInfo } from './schema-info.js';

export interface ExplorerContext {
  /** The ref as named: `main`, `tag:v1`, `commit:01J…`. */
  at: string;
  /** `commit:<id>` of what the view reads. */
  pinned: string;
  /** Set when the ref is a branch the reader may edit through. */
  point: ReadPoint | null;
  info: SchemaInfo;
  go(route: Route): void;
  /** Draws the current route again, reading the ref afresh. */
  reload(): void;
  /** Tells a screen reader (and a test) what just happened. */
  say(message: string): void;
}

/** A branch is a bare name; tags, commits and remote branches carry a prefix. */
export const isBranchRef = (at: string): boolean => !at.includes(':');
