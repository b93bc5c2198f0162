/** How a diff marks what it draws: added, removed, changed, or unchanged context around them. */
export type DiffMark = 'added' | 'removed' | 'changed' | 'context';

export const DIFF_COLOURS: Record<DiffMark, string> = {
  added: '#1a7f37',
  removed: '#b42318',
  changed: '#b26b00',
  context: '#9aa4b2',
};

export const diffColour = (m: DiffMark): string => DIFF_COLOURS[m];
