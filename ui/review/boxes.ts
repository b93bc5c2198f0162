/**
 * The parts of a request a reviewer acts in: the merge box (last on the page, as the decision
 * comes after reading), the checks of the latest revision, and the reviews with their form.
 */
import { button, byId, cell, h, labelled, statusBox, tableOf, when } from '../shared/dom.js';
import type { Act } from './conflicts.js';
import { latestOf, type MergeRequest, type Revision } from './review-state.js';

export function mergeBox(q: MergeRequest, moved: boolean, act: Act): HTMLElement {
  const m = q.mergeability;
  const approvals = `${m.approvals.current.length} of ${m.approvals.required} required approval(s)${
    m.approvals.current.length > 0 ? `: ${m.approvals.current.join(', ')}` : ''
  }${m.changesRequestedBy.length > 0 ? `; changes requested by ${m.changesRequestedBy.join(', ')}` : ''}`;
  const ready =
    m.mergeable && !moved
      ? statusBox('ok', 'Ready to merge.', 'mergeable')
      : h(
          'ul',
          { id: 'reasons', class: 'status bad' },
          m.reasons.map((s) => h('li', { text: s })),
        );
  const message = h('input', { id: 'merge-message', size: 60, maxlength: 2000, placeholder: `Merge ${q.source} into ${q.target}` });
  const del = h('input', { id: 'delete-branch', type: 'checkbox' });
  const merge = button(
    'Merge',
    (b) => {
      b.disabled = true;
      void act('/merge', { deleteBranch: del.checked, ...(message.value ? { message: message.value } : {}) }, 'Merged.');
    },
    { id: 'merge', class: 'primary' },
  );
  merge.disabled = !m.mergeable || moved;
  return h('div', { id: 'merge-box' }, [
    h('h3', { text: 'Merge' }),
    h('p', { id: 'approvals', text: approvals }),
    ready,
    h('div', { class: 'row' }, [labelled('message', message), labelled(`delete ${q.source} after merging`, del)]),
    h('div', { class: 'row' }, [merge, button('Close without merging', () => void act('/close', undefined, 'Closed.'), { id: 'close' })]),
  ]);
}

export function checksBox(q: MergeRequest, latest: Revision, act: Act): HTMLElement {
  const results = latest.checks ?? {};
  const required = q.mergeability.checks.required;
  const names = [...new Set([...Object.keys(results), ...required])].sort();
  const table =
    names.length === 0
      ? h('p', { class: 'muted', text: 'No checks are registered or required.' })
      : tableOf(
          ['check', 'required', 'status', 'message'],
          names.map((n) => {
            const c = results[n];
            return h('tr', { 'data-check': n }, [
              cell(n),
              cell(required.includes(n) ? 'yes' : 'no'),
              cell(c ? c.status : 'not reported'),
              cell(c ? c.message : ''),
            ]);
          }),
        );
  return h('div', { id: 'checks' }, [
    h('h3', { text: `Checks on revision ${latest.n}` }),
    table,
    q.state === 'open' ? button('Run checks again', () => void act('/checks', undefined, 'Checks ran.'), { id: 'run-checks' }) : null,
  ]);
}

/** Whether a review still counts: it saw what the latest revision merges (or, by head_move, the latest revision itself). */
function isCurrent(q: MergeRequest, review: MergeRequest['reviews'][number], stale: string): boolean {
  const latest = latestOf(q);
  const seen = q.revisions.find((v) => v.n === review.revision);
  if (seen === undefined) return false;
  return stale === 'head_move' ? seen.n === latest.n : seen.fingerprint === latest.fingerprint;
}

export function reviewsBox(q: MergeRequest, stale: string, act: Act): HTMLElement {
  const list = q.reviews.map((v) => {
    const cur = v.verdict === 'comment' || isCurrent(q, v, stale);
    const where = v.on ? ` on ${v.on.table}${v.on.key ? ` ${v.on.key}` : ''}${v.on.property ? `.${v.on.property}` : ''}` : '';
    return h('div', { class: `review${cur ? '' : ' stale'}`, 'data-review': v.n, 'data-verdict': v.verdict }, [
      h('strong', { text: v.author }),
      ` ${v.verdict.replace('_', ' ')}${where} on revision ${v.revision}${cur ? '' : ' (stale: a later revision changed what it saw)'} · ${when(v.time)}`,
      v.body ? h('div', { class: 'desc', text: v.body }) : null,
    ]);
  });
  return h('div', { id: 'reviews' }, [
    h('h3', { text: 'Reviews' }),
    ...(list.length === 0 ? [h('p', { class: 'muted', text: 'No reviews yet.' })] : list),
    q.state === 'open' ? reviewForm(act) : null,
  ]);
}

function reviewForm(act: Act): HTMLElement {
  const verdict = h('select', { id: 'verdict' }, [
    h('option', { value: 'comment', text: 'comment' }),
    h('option', { value: 'approve', text: 'approve' }),
    h('option', { value: 'request_changes', text: 'request changes' }),
  ]);
  const body = h('textarea', { id: 'review-body', maxlength: 20000 });
  const onTable = h('input', { id: 'on-table', size: 14 });
  const onKey = h('input', { id: 'on-key', size: 14 });
  const onProperty = h('input', { id: 'on-property', size: 14 });
  const submit = button(
    'Submit review',
    (b) => {
      const on = onTable.value
        ? {
            table: onTable.value,
            ...(onKey.value ? { key: onKey.value } : {}),
            ...(onProperty.value ? { property: onProperty.value } : {}),
          }
        : undefined;
      b.disabled = true;
      void act(
        '/reviews',
        { verdict: verdict.value as 'comment', ...(body.value ? { body: body.value } : {}), ...(on ? { on } : {}) },
        'Review submitted.',
      );
    },
    { id: 'submit-review', class: 'primary' },
  );
  return h('div', { class: 'stack', id: 'review-form' }, [
    labelled('verdict', verdict),
    labelled('review', body),
    h('div', { class: 'row' }, [
      h('span', { class: 'muted', text: 'on (optional):' }),
      labelled('table', onTable),
      labelled('key', onKey),
      labelled('property', onProperty),
    ]),
    h('div', {}, [submit]),
  ]);
}

/** Prefills the review form to comment on one place of the diff. */
export function commentOn(table: string, key: string, property: string): void {
  if (document.getElementById('review-form') === null) return;
  byId<HTMLInputElement>('on-table').value = table;
  byId<HTMLInputElement>('on-key').value = key;
  byId<HTMLInputElement>('on-property').value = property;
  byId<HTMLSelectElement>('verdict').value = 'comment';
  byId('review-body').focus();
}
