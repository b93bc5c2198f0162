import { applyCommitOperation } from './apply-commit.js';

/**
 * Replay one commit's change on a branch: a three-way merge against the commit's first parent,
 * with the same conflicts, resolutions and validation as any merge, landing as a one-parent
 * cherry_pick commit.
 */
export const cherryPick = applyCommitOperation({
  name: 'cherryPick',
  kind: 'cherry_pick',
  summary: "Replay one commit's change on a branch as a new one-parent commit.",
  path: '/branches/{id}/cherry-pick',
  field: 'cherryPick',
});
