import { applyCommitOperation } from './apply-commit.js';

/** Undo one commit's change on a branch, keeping later changes: a three-way merge whose base is the commit and whose source is its parent. */
export const revert = applyCommitOperation({
  name: 'revert',
  kind: 'revert',
  summary: "Undo one commit's change on a branch, keeping later changes.",
  path: '/branches/{id}/revert',
  field: 'revert',
});
