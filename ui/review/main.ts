/**
 * The review page (`/ui`): merge requests as a team runs them. It lists requests by state and
 * opens new ones. A request reads top to bottom as a reviewer works: what it is, the conflicts,
 * the three-dot diff of what the source brings and of what the target did meanwhile (changed
 * properties marked), the commits, the revisions, the checks, the reviews with their form, and
 * last the merge box. Merge is enabled only when the server says the request is mergeable and
 * neither head moved since its latest revision; a moved head shows "Preview again", which
 * revises the request. Every action reloads the request, so what is shown is what is stored;
 * a refused action keeps what the reviewer typed.
 */
import { answer, api, failureText } from '../shared/api.js';
import { button, byId, cell, h, labelled, replace, short, statusBox, tableOf, when } from '../shared/dom.js';
import { shell } from '../shared/shell.js';
import { checksBox, commentOn, mergeBox, reviewsBox } from './boxes.js';
import { showCommits, showDiff } from './changes.js';
import { showConflicts, type Act } from './conflicts.js';
import { keepDrafts, restoreDrafts } from './drafts.js';
import { requestAction } from './request-actions.js';
import { isShown, latestOf, nextView, state, type Branch, type MergeRequest } from './review-state.js';

const view = (): HTMLElement => byId('view');
const flash = (message: string): void => {
  byId('flash').textContent = message;
};

async function listRequests(): Promise<void> {
  const which = byId<HTMLSelectElement>('state').value as 'open' | 'merged' | 'closed' | 'all';
  const list = byId('requests');
  try {
    const page = await answer(api().GET('/merge-requests', { params: { query: { limit: 100, state: which } } }));
    const items = page.requests.map((q) => {
      const ready = q.state === 'open' ? (q.mergeability.mergeable ? ' · ready' : ' · blocked') : '';
      const b = h('button', { type: 'button', 'data-request': q.id, 'aria-current': q.id === state.current ? 'true' : 'false' }, [
        h('div', { text: q.title }),
        h('small', { text: `${q.source} → ${q.target} · ${q.author} · ${q.state}${ready}` }),
      ]);
      b.addEventListener('click', () => void show(q.id));
      return h('li', {}, [b]);
    });
    if (items.length === 0) items.push(h('li', { class: 'muted', text: `No ${which === 'all' ? '' : `${which} `}requests.` }));
    if (page.nextCursor) items.push(h('li', { class: 'muted', text: 'The newest 100 are listed.' }));
    replace(list, ...items);
  } catch (e) {
    replace(list, h('li', {}, [statusBox('bad', failureText(e))]));
  }
}

function markCurrent(): void {
  for (const b of document.querySelectorAll('nav li button'))
    b.setAttribute('aria-current', b.getAttribute('data-request') === state.current ? 'true' : 'false');
}

async function showNew(): Promise<void> {
  const gen = nextView();
  state.current = null;
  markCurrent();
  const heading = h('h2', { tabindex: -1, text: 'New merge request' });
  replace(view(), heading);
  heading.focus();
  try {
    const page = await answer(api().GET('/branches', { params: { query: { limit: 1000 } } }));
    if (!isShown(gen)) return;
    const names = page.branches.map((b) => b.name);
    const options = (selected: string | undefined) => names.map((n) => h('option', { value: n, text: n, selected: n === selected }));
    const source = h('select', { id: 'new-source' }, options(names.find((n) => n !== 'main')));
    const target = h('select', { id: 'new-target' }, options(names.includes('main') ? 'main' : names[0]));
    const title = h('input', { id: 'new-title', size: 60, maxlength: 300, required: true });
    const description = h('textarea', { id: 'new-description', maxlength: 20000 });
    const out = h('div', { id: 'new-result' });
    const open = button(
      'Open request',
      async (b) => {
        b.disabled = true;
        try {
          const q = await answer(
            api().POST('/merge-requests', {
              body: { source: source.value, target: target.value, title: title.value, description: description.value },
            }),
          );
          flash(`Opened request ${q.id}.`);
          void listRequests();
          void show(q.id);
        } catch (e) {
          replace(out, statusBox('bad', failureText(e)));
        } finally {
          b.disabled = false;
        }
      },
      { id: 'open-request', class: 'primary' },
    );
    view().append(
      h('div', { class: 'stack' }, [
        h('div', { class: 'row' }, [labelled('merge', source), labelled('into', target)]),
        labelled('title', title),
        labelled('description', description),
        h('div', {}, [open]),
        out,
      ]),
    );
  } catch (e) {
    if (isShown(gen)) view().append(statusBox('bad', failureText(e)));
  }
}

async function branch(name: string): Promise<Branch | null> {
  try {
    return await answer(api().GET('/branches/{id}', { params: { path: { id: name } } }));
  } catch {
    return null;
  }
}

/** One request: everything is rebuilt from what the server holds. */
async function show(id: string): Promise<void> {
  const gen = nextView();
  state.current = id;
  markCurrent();
  if (location.hash !== `#request=${id}`) history.replaceState(null, '', `#request=${id}`);
  const v = view();
  // Busy until every part of the view has been read, so a reader (or a test) knows when it is whole.
  v.setAttribute('aria-busy', 'true');
  try {
    const q = await answer(api().GET('/merge-requests/{id}', { params: { path: { id } } }));
    const [source, target] = await Promise.all([branch(q.source), branch(q.target)]);
    if (!isShown(gen)) return;
    replace(v);
    await render(v, { q, source, target, gen });
  } catch (e) {
    if (isShown(gen)) replace(v, statusBox('bad', failureText(e), 'request-error'));
  } finally {
    if (isShown(gen)) v.setAttribute('aria-busy', 'false');
  }
}

/** Runs an action on the shown request, reloads it, and says how it went; a refusal keeps the drafts. */
const act: Act = async (action, body, done) => {
  const id = state.current;
  if (id === null) return;
  const v = view();
  const drafts = keepDrafts(v);
  v.setAttribute('aria-busy', 'true');
  const outcome = await answer(requestAction(id, action, body)).then(
    () => null,
    (e: unknown) => e,
  );
  void listRequests();
  await show(id);
  if (outcome === null) return flash(done);
  restoreDrafts(v, drafts);
  const reasons = (outcome as { info?: { details?: { reasons?: string[] } } }).info?.details?.reasons;
  const box = statusBox('bad', failureText(outcome) + (reasons ? ` (${reasons.join('; ')})` : ''), 'action-error');
  v.insertBefore(box, v.children[2] ?? null);
  flash(box.textContent ?? '');
};

function movedText(q: MergeRequest, source: Branch | null, target: Branch | null): string | null {
  const latest = latestOf(q);
  if (q.state !== 'open') return null;
  if (source === null || target === null) return 'A branch of this request no longer exists.';
  if (source.head.id === latest.sourceHead && target.head.id === latest.targetHead) return null;
  const which = source.head.id !== latest.sourceHead ? q.source : q.target;
  return `${which} moved since revision ${latest.n}: what is shown is what revision ${latest.n} would merge.`;
}

async function render(v: HTMLElement, r: { q: MergeRequest; source: Branch | null; target: Branch | null; gen: number }): Promise<void> {
  const { q, source, target, gen } = r;
  const latest = latestOf(q);
  const moved = movedText(q, source, target);
  const stale = target?.protection ? target.protection.staleApprovals : 'result_change';
  const section = (title: string, id: string) => {
    const box = h('div', { id }, [h('p', { class: 'muted', text: 'Reading…' })]);
    v.append(h('h3', { text: title }), box);
    return box;
  };
  v.append(
    h('h2', { tabindex: -1, id: 'request-title' }, [q.title, h('span', { class: `badge ${q.state}`, id: 'request-state', text: q.state })]),
    h('p', { class: 'muted', text: `${q.source} → ${q.target} · opened by ${q.author} ${when(q.createdAt)} · request ${q.id}` }),
  );
  if (q.description) v.append(h('div', { class: 'desc', id: 'request-description', text: q.description }));
  if (q.merged) v.append(statusBox('ok', `Merged by ${q.merged.by} as ${q.merged.commit} (revision ${q.merged.revision}).`, 'merged'));
  if (q.closed) v.append(statusBox('bad', `Closed by ${q.closed.by} ${when(q.closed.time)}.`, 'closed'));
  if (moved !== null)
    v.append(
      h('div', { class: 'status warn', id: 'stale' }, [
        `${moved} `,
        source && target ? button('Preview again', () => void act('/revise', undefined, 'Revised.'), { id: 'revise' }) : null,
      ]),
    );
  const conflicts = section('Conflicts', 'conflicts');
  const brings = section(`What ${q.source} changes (revision ${latest.n})`, 'changes');
  const theirs = section(`What ${q.target} changed meanwhile`, 'target-changes');
  const commits = section(`Commits ${q.source} brings`, 'commits');
  v.append(
    h('h3', { text: 'Revisions' }),
    tableOf(
      ['revision', 'source head', 'target head', 'merge base', 'would merge as', 'conflicts left', 'when'],
      [...q.revisions]
        .reverse()
        .map((x) =>
          h('tr', { 'data-revision': x.n }, [
            cell(x.n),
            cell(short(x.sourceHead), 'v'),
            cell(short(x.targetHead), 'v'),
            cell(x.base ? short(x.base) : 'none', 'v'),
            cell(x.preview.outcome),
            cell(x.preview.conflicts),
            cell(when(x.time)),
          ]),
        ),
    ),
    checksBox(q, latest, act),
    reviewsBox(q, stale, act),
  );
  if (q.state === 'open') v.append(mergeBox(q, moved !== null, act));
  byId('request-title').focus();
  await Promise.all([
    showConflicts(conflicts, { q, latest, moved: moved !== null, gen, act }),
    showDiff(brings, { from: latest.targetHead, to: latest.sourceHead, gen, ...(q.state === 'open' ? { commentOn } : {}) }),
    showDiff(theirs, { from: latest.sourceHead, to: latest.targetHead, gen }),
    showCommits(commits, latest, gen),
  ]);
}

shell('review', () => {
  void listRequests();
  if (state.current !== null) void show(state.current);
});
byId('state').addEventListener('change', () => void listRequests());
byId('new-request').addEventListener('click', () => void showNew());
void listRequests();
const linked = /^#request=(.+)$/.exec(location.hash);
if (linked?.[1] !== undefined) void show(decodeURIComponent(linked[1]));
