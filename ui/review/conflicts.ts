/**
 * A request's conflicts: every conflict its latest revision meets (a dry run at the revision's
 * heads, before the saved resolutions, so each choice can be seen and changed), with a choice per
 * conflict and a strategy for the rest, saved on the request. Once merged, how each conflict was
 * resolved stays on the page: the merged revision's resolutions, as the merge applied them.
 */
import { api, failureText, refusal, type Schemas } from '../shared/api.js';
import type { RequestAction, RequestActions } from './request-actions.js';
import { button, cell, h, labelled, replace, statusBox, tableOf, valueText } from '../shared/dom.js';
import { isShown, type MergeRequest, type Revision, resolutionsOf, type SavedConflict, type SavedResolutions } from './review-state.js';

type Conflict = Schemas['Conflict'];
/** Runs an action on the request and reloads it (main.ts). */
export type Act = <A extends RequestAction>(action: A, body: RequestActions[A], done: string) => Promise<void>;

const place = (c: { table: string; key: string; property?: string | null }): string =>
  `${c.table} ${c.key}${c.property ? `.${c.property}` : ''}`;

function savedChoice(saved: SavedResolutions | null, c: Conflict): SavedConflict | undefined {
  return saved?.conflicts?.find((x) => x.table === c.table && x.key === c.key && (x.property ?? null) === (c.property ?? null));
}

export async function showConflicts(
  box: HTMLElement,
  view: { q: MergeRequest; latest: Revision; moved: boolean; gen: number; act: Act },
): Promise<void> {
  const { q, latest, moved, gen } = view;
  if (q.state === 'merged') return replace(box, mergedResolutions(q));
  // A merge is previewed at the revision's heads, which a moved branch no longer has.
  if (q.state !== 'open' || moved) {
    const why = moved ? 'Preview again to list the conflicts at the branches as they are.' : `Not listed for a ${q.state} request.`;
    return replace(box, h('p', { class: 'muted', text: why }));
  }
  if (latest.preview.outcome !== 'conflicts' && q.resolutions === undefined)
    return replace(box, h('p', { class: 'muted', id: 'no-conflicts', text: 'None.' }));
  replace(box, h('p', { class: 'muted', text: 'Reading the conflicts…' }));
  const r = await api().POST('/branches/{id}/merge', {
    params: { path: { id: q.source } },
    body: {
      into: q.target,
      dryRun: true,
      conflictLimit: 1000,
      expectedSourceHead: latest.sourceHead,
      expectedTargetHead: latest.targetHead,
    },
  });
  if (!isShown(gen)) return;
  const body = (r.data ?? r.error) as { status?: string; report?: Schemas['MergeConflicts']['report'] } | undefined;
  if (body?.status === undefined) {
    const e = refusal(r.error, r.response.status);
    return replace(box, statusBox(e.code === 'head_moved' ? 'warn' : 'bad', e.text + (e.info.retryable ? ' — preview again.' : '')));
  }
  if (body.status !== 'conflicts' || body.report === undefined)
    return replace(box, h('p', { class: 'muted', id: 'no-conflicts', text: 'None.' }));
  replace(box, ...conflictForm(body.report, view));
}

function conflictForm(report: Schemas['MergeConflicts']['report'], view: { q: MergeRequest; latest: Revision; act: Act }): Node[] {
  const { q, latest, act } = view;
  const saved = resolutionsOf(q.resolutions);
  const left = latest.preview.conflicts;
  const summary = statusBox(
    left > 0 ? 'bad' : 'ok',
    `${report.total} conflict(s); ${left > 0 ? `${left} left unresolved by the saved resolutions.` : 'all resolved by the saved resolutions.'}`,
    'conflict-summary',
  );
  const strategy = h(
    'select',
    { id: 'strategy' },
    [
      ['', 'none'],
      ['source-wins', 'source wins'],
      ['target-wins', 'target wins'],
    ].map(([value, label]) => h('option', { value, text: label, selected: (saved?.strategy ?? '') === value })),
  );
  const rows = report.items.map((c, i) => {
    const choice = savedChoice(saved, c);
    const select = h(
      'select',
      { class: 'choice', 'data-i': i, 'aria-label': `resolution of ${place(c)}` },
      ['', 'source', 'target', 'base', 'value'].map((t) =>
        h('option', { value: t, text: t || '(unresolved)', selected: (choice?.take ?? '') === t }),
      ),
    );
    const value = h('input', { class: 'value', 'data-i': i, 'aria-label': `value for ${place(c)}`, placeholder: 'JSON value', size: 16 });
    if (choice?.take === 'value') value.value = JSON.stringify(choice.value);
    return h('tr', { 'data-conflict': `${c.table} ${c.key} ${c.property ?? ''}` }, [
      cell(c.kind),
      cell(place(c)),
      cell(c.base, 'v'),
      cell(c.source, 'v'),
      cell(c.target, 'v'),
      h('td', {}, [select, ' ', value]),
    ]);
  });
  const errors = h('div', {});
  const save = button(
    'Save resolutions',
    () => {
      try {
        void act(
          '/resolutions',
          { resolutions: chosen(report.items, strategy.value) } as RequestActions['/resolutions'],
          'Resolutions saved.',
        );
      } catch (e) {
        replace(errors, statusBox('bad', failureText(e), 'resolution-error'));
      }
    },
    { id: 'save-resolutions', class: 'primary' },
  );
  const more = report.nextCursor
    ? [h('p', { class: 'muted', text: 'The first 1000 conflicts are shown; a strategy covers the rest.' })]
    : [];
  return [
    summary,
    h('div', { class: 'row' }, [labelled('strategy for the rest', strategy)]),
    tableOf(['kind', 'entity', 'base', q.source, q.target, 'resolution'], rows),
    ...more,
    save,
    errors,
  ];
}

/** The resolutions the form holds, or null when it decides nothing. */
function chosen(items: Conflict[], strategy: string): Record<string, unknown> | null {
  const conflicts = items.flatMap((c, i) => {
    const take = document.querySelector<HTMLSelectElement>(`select.choice[data-i="${i}"]`)?.value ?? '';
    if (take === '') return [];
    const r: Record<string, unknown> = {
      table: c.table,
      key: c.key,
      property: c.property,
      take,
      expected: { base: c.base, source: c.source, target: c.target },
    };
    if (take === 'value') {
      const raw = document.querySelector<HTMLInputElement>(`input.value[data-i="${i}"]`)?.value ?? '';
      try {
        r.value = JSON.parse(raw);
      } catch (e) {
        throw new Error(`${c.table} ${c.key}: the value must be JSON (${failureText(e)})`);
      }
    }
    return [r];
  });
  if (strategy === '' && conflicts.length === 0) return null;
  return { ...(strategy !== '' ? { strategy } : {}), ...(conflicts.length > 0 ? { conflicts } : {}) };
}

/** How the merged revision resolved its conflicts, as the merge applied them. */
function mergedResolutions(q: MergeRequest): HTMLElement {
  const revision = q.revisions.find((v) => v.n === q.merged?.revision);
  const saved = resolutionsOf(revision?.resolutions);
  if (saved === null || (saved.conflicts === undefined && saved.strategy === undefined))
    return h('p', { class: 'muted', id: 'no-conflicts', text: 'The merge met no conflicts.' });
  const rows = (saved.conflicts ?? []).map((c) =>
    h('tr', { 'data-resolved': `${c.table} ${c.key} ${c.property ?? ''}` }, [
      cell(place(c)),
      cell(c.take),
      cell(c.take === 'value' ? valueText(c.value) : ''),
    ]),
  );
  return h('div', { id: 'resolved' }, [
    h('p', { text: `Resolved in revision ${revision?.n ?? '?'}, as merged:` }),
    rows.length > 0 ? tableOf(['entity', 'took', 'value'], rows) : null,
    saved.strategy ? h('p', { id: 'resolved-strategy', text: `The rest: ${saved.strategy.replace('-', ' ')}.` }) : null,
  ]);
}
