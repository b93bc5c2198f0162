/**
 * What the page does with an edit's outcome: a written edit reloads the view at the new head; a
 * proposal links its merge request; a moved head leaves everything as it was and offers the
 * reload that shows what is there now.
 */
import { button, byId, h } from '../shared/dom.js';
import type { EditOutcome } from './edits.js';
import type { ExplorerContext } from './explorer-context.js';

export async function editOutcome(ctx: ExplorerContext, outcome: EditOutcome): Promise<void> {
  const view = byId('view');
  if (outcome.kind === 'written') {
    ctx.say(`Saved as commit ${outcome.commit.slice(0, 10)}.`);
    ctx.reload();
    return;
  }
  const box =
    outcome.kind === 'proposed'
      ? h('div', { class: 'status ok', id: 'edit-proposed', role: 'status' }, [
          `${ctx.at} is protected, so the edit was proposed on ${outcome.branch}: `,
          h('a', { href: outcome.url, text: `merge request ${outcome.request}` }),
          '.',
        ])
      : h('div', { class: 'status warn', id: 'head-moved', role: 'alert' }, [
          `${ctx.at} moved since this page read it, so nothing was written (${outcome.message}). `,
          button('Reload', () => ctx.reload(), { id: 'reload', class: 'primary' }),
        ]);
  document.getElementById(box.id)?.remove();
  view.prepend(box);
  ctx.say(box.textContent ?? '');
  if (outcome.kind === 'moved') byId('reload').focus();
}
