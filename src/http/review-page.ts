/**
 * The review page served at `/ui`: merge requests as a team runs them, in
 * one self-contained HTML document (no external script, style, font or
 * image) that uses the public REST API only, relative to where it is
 * served, so `/graphs/<name>/ui` reviews that graph.
 *
 * It lists requests by state and opens new ones. A request shows its
 * description, its revisions, the commits it brings, the three-dot diff of
 * what the source brings and of what the target did meanwhile (changed
 * properties marked), the conflicts with editable resolutions saved on the
 * request, the reviews (with a form to approve, request changes or comment,
 * on the request or on one place of the diff) and the checks. Merge is
 * enabled only when the server says the request is mergeable and neither
 * head moved since its latest revision; a moved head shows "Preview again",
 * which revises the request. Every action reloads the request, so what is
 * shown is what is stored.
 *
 * Every diff and conflict list is read pinned to the latest revision's
 * heads (`commit:<id>`), so a reviewer sees exactly what the revision
 * would merge even while the branches move.
 *
 * The script is plain ES2020 with no template literals, so it can live in
 * this TypeScript string as it is.
 */
export const REVIEW_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>branchgraph review</title>
<link rel="icon" href="data:,">
<style>
  :root { --fg: #1d2733; --muted: #5b6776; --line: #d9dee5; --bg: #f6f8fa; --ok: #1a7f37; --bad: #b42318; --warn: #8a5a00; --accent: #0b5cad; --mark: #fff3bf; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
  header { padding: 12px 20px; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: center; background: var(--bg); flex-wrap: wrap; }
  header h1 { font-size: 16px; margin: 0; }
  main { display: grid; grid-template-columns: 300px 1fr; min-height: calc(100vh - 50px); }
  nav { border-right: 1px solid var(--line); padding: 12px; }
  nav ul { list-style: none; margin: 8px 0; padding: 0; }
  nav li button { display: block; width: 100%; text-align: left; border: 0; background: none; padding: 6px 8px; border-radius: 6px; cursor: pointer; font: inherit; }
  nav li button[aria-current="true"], nav li button:hover { background: #e8f0fb; }
  nav small { color: var(--muted); display: block; }
  section#view { padding: 16px 20px; max-width: 1200px; }
  h2 { font-size: 18px; margin: 4px 0 6px; }
  h3 { font-size: 15px; margin: 22px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
  table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
  th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
  th { background: var(--bg); font-weight: 600; }
  td.v, .props td { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; word-break: break-all; }
  .props { margin: 0; }
  .props tr.chg td { background: var(--mark); font-weight: 600; }
  .row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
  .stack { display: grid; gap: 6px; max-width: 640px; }
  button { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
  button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
  button:disabled { opacity: 0.55; cursor: default; }
  button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #7aa7e0; outline-offset: 1px; }
  input, select, textarea { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 5px; }
  textarea { width: 100%; min-height: 64px; }
  .status { padding: 8px 12px; border-radius: 6px; margin: 10px 0; }
  .status.ok { background: #e6f4ea; color: var(--ok); }
  .status.bad { background: #fdecea; color: var(--bad); }
  .status.warn { background: #fff4e0; color: var(--warn); }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: var(--bg); border: 1px solid var(--line); margin-left: 6px; vertical-align: middle; }
  .badge.open { color: var(--ok); } .badge.merged { color: #6639ba; } .badge.closed { color: var(--bad); }
  .muted { color: var(--muted); }
  .desc { white-space: pre-wrap; background: var(--bg); padding: 8px 12px; border-radius: 6px; }
  code { font-family: ui-monospace, monospace; font-size: 12px; }
  .review { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
  .review.stale { opacity: 0.65; }
  .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
</style>
</head>
<body>
<header>
  <h1>branchgraph review</h1>
  <label>token <input id="token" type="password" placeholder="bearer token (if required)" size="28" autocomplete="off"></label>
  <span id="where" class="muted"></span>
</header>
<main>
  <nav aria-label="merge requests">
    <div class="row">
      <label>show <select id="state"><option value="open">open</option><option value="merged">merged</option><option value="closed">closed</option><option value="all">all</option></select></label>
      <button id="new-request" type="button">New request</button>
    </div>
    <ul id="requests"></ul>
  </nav>
  <section id="view" aria-live="polite"><p class="muted">Pick a merge request, or open a new one.</p></section>
</main>
<div id="flash" role="status" aria-live="polite" class="sr"></div>
<script>
(function () {
  'use strict';
  var base = location.pathname.replace(/\\/ui\\/?$/, '');
  // Bumped whenever the view changes, so a late answer for an older view is dropped.
  var generation = 0;
  var current = null;
  var el = function (id) { return document.getElementById(id); };
  var tokenInput = el('token');
  tokenInput.value = sessionStorage.getItem('branchgraph.token') || '';
  tokenInput.addEventListener('change', function () {
    sessionStorage.setItem('branchgraph.token', tokenInput.value);
    listRequests();
    if (current) show(current);
  });
  el('where').textContent = location.host + (base || '/');
  el('state').addEventListener('change', listRequests);
  el('new-request').addEventListener('click', showNew);

  function api(method, path, body) {
    var headers = { accept: 'application/json' };
    if (tokenInput.value) headers.authorization = 'Bearer ' + tokenInput.value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(base + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) }).then(function (res) {
      return res.json().then(function (json) { return { status: res.status, body: json }; }, function () { return { status: res.status, body: {} }; });
    });
  }
  function text(v) { return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v); }
  function node(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === undefined || attrs[k] === false) return;
      if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
    });
    (children || []).forEach(function (c) { e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function button(id, label, onClick, cls) {
    var b = node('button', { id: id, type: 'button', class: cls, text: label });
    b.addEventListener('click', onClick);
    return b;
  }
  function labelled(label, control) { return node('label', {}, [label + ' ', control]); }
  function tableOf(headers, rows) {
    var head = node('tr', {}, headers.map(function (h) { return node('th', { scope: 'col', text: h }); }));
    return node('table', {}, [node('thead', {}, [head]), node('tbody', {}, rows)]);
  }
  function cell(v, cls) { return node('td', { text: text(v), class: cls }); }
  function short(id) { return id ? String(id).slice(0, 10) : ''; }
  function when(t) { var d = new Date(t); return isNaN(d.getTime()) ? String(t) : d.toLocaleString(); }
  function errorText(body) { return body && body.error ? body.error.code + ': ' + body.error.message : 'unexpected answer: ' + JSON.stringify(body); }
  function enc(s) { return encodeURIComponent(s); }
  function status(kind, msg, id) { return node('div', { class: 'status ' + kind, id: id, text: msg }); }
  function flash(msg) { el('flash').textContent = msg; }

  // The list of requests in the side bar.
  function listRequests() {
    return api('GET', '/merge-requests?limit=100&state=' + enc(el('state').value)).then(function (r) {
      var list = el('requests');
      list.innerHTML = '';
      if (r.status !== 200) { list.appendChild(node('li', {}, [status('bad', errorText(r.body))])); return; }
      if (r.body.requests.length === 0) list.appendChild(node('li', { class: 'muted', text: 'No ' + (el('state').value === 'all' ? '' : el('state').value + ' ') + 'requests.' }));
      r.body.requests.forEach(function (q) {
        var b = node('button', { type: 'button', 'data-request': q.id, 'aria-current': q.id === current ? 'true' : 'false' }, [
          node('div', { text: q.title }),
          node('small', { text: q.source + ' \\u2192 ' + q.target + ' \\u00b7 ' + q.author + ' \\u00b7 ' + q.state + (q.state === 'open' ? (q.mergeability.mergeable ? ' \\u00b7 ready' : ' \\u00b7 blocked') : '') }),
        ]);
        b.addEventListener('click', function () { show(q.id); });
        list.appendChild(node('li', {}, [b]));
      });
      if (r.body.nextCursor) list.appendChild(node('li', { class: 'muted', text: 'The newest 100 are listed.' }));
    });
  }
  function markCurrent() {
    Array.prototype.forEach.call(document.querySelectorAll('nav li button'), function (b) { b.setAttribute('aria-current', b.getAttribute('data-request') === current ? 'true' : 'false'); });
  }

  // Opening a request.
  function showNew() {
    var gen = ++generation;
    current = null;
    markCurrent();
    var view = el('view');
    view.innerHTML = '';
    var heading = node('h2', { tabindex: '-1', text: 'New merge request' });
    view.appendChild(heading);
    heading.focus();
    api('GET', '/branches?limit=1000').then(function (r) {
      if (gen !== generation) return;
      if (r.status !== 200) { view.appendChild(status('bad', errorText(r.body))); return; }
      var names = r.body.branches.map(function (b) { return b.name; });
      var options = function (selected) { return names.map(function (n) { return node('option', { value: n, text: n, selected: n === selected }); }); };
      var source = node('select', { id: 'new-source' }, options(names.filter(function (n) { return n !== 'main'; })[0]));
      var target = node('select', { id: 'new-target' }, options(names.indexOf('main') >= 0 ? 'main' : names[0]));
      var title = node('input', { id: 'new-title', size: '60', maxlength: '300', required: true });
      var description = node('textarea', { id: 'new-description', maxlength: '20000' });
      var out = node('div', { id: 'new-result' });
      var open = button('open-request', 'Open request', function () {
        open.disabled = true;
        api('POST', '/merge-requests', { source: source.value, target: target.value, title: title.value, description: description.value }).then(function (o) {
          open.disabled = false;
          if (o.status !== 200) { out.innerHTML = ''; out.appendChild(status('bad', errorText(o.body))); return; }
          flash('Opened request ' + o.body.id + '.');
          listRequests();
          show(o.body.id);
        });
      }, 'primary');
      view.appendChild(node('div', { class: 'stack' }, [
        node('div', { class: 'row' }, [labelled('merge', source), labelled('into', target)]),
        labelled('title', title),
        labelled('description', description),
        node('div', {}, [open]),
        out,
      ]));
    });
  }

  // One request: everything is rebuilt from what the server holds.
  function show(id) {
    var gen = ++generation;
    current = id;
    markCurrent();
    if (location.hash !== '#request=' + id) history.replaceState(null, '', '#request=' + id);
    var view = el('view');
    // Busy until every part of the view has been read, so a reader (or a test) knows when it is whole.
    view.setAttribute('aria-busy', 'true');
    return api('GET', '/merge-requests/' + enc(id)).then(function (r) {
      if (gen !== generation) return;
      view.innerHTML = '';
      if (r.status !== 200) { view.appendChild(status('bad', errorText(r.body), 'request-error')); return; }
      var q = r.body;
      return Promise.all([branch(q.source), branch(q.target)]).then(function (heads) {
        if (gen !== generation) return;
        return render(view, q, heads[0], heads[1], gen);
      });
    }).then(function () { if (gen === generation) view.setAttribute('aria-busy', 'false'); });
  }
  function branch(name) {
    return api('GET', '/branches/' + enc(name)).then(function (r) { return r.status === 200 ? r.body : null; });
  }

  function render(view, q, source, target, gen) {
    var latest = q.revisions[q.revisions.length - 1];
    var open = q.state === 'open';
    var moved = open && (!source || !target || source.head.id !== latest.sourceHead || target.head.id !== latest.targetHead);
    var stale = target && target.protection ? target.protection.staleApprovals : 'result_change';
    view.appendChild(node('h2', { tabindex: '-1', id: 'request-title' }, [q.title, node('span', { class: 'badge ' + q.state, id: 'request-state', text: q.state })]));
    view.appendChild(node('p', { class: 'muted', text: q.source + ' \\u2192 ' + q.target + ' \\u00b7 opened by ' + q.author + ' ' + when(q.createdAt) + ' \\u00b7 request ' + q.id }));
    if (q.description) view.appendChild(node('div', { class: 'desc', id: 'request-description', text: q.description }));
    if (q.merged) view.appendChild(status('ok', 'Merged by ' + q.merged.by + ' as ' + q.merged.commit + ' (revision ' + q.merged.revision + ').', 'merged'));
    if (q.closed) view.appendChild(status('bad', 'Closed by ' + q.closed.by + ' ' + when(q.closed.time) + '.', 'closed'));
    if (moved) {
      var what = !source || !target ? 'A branch of this request no longer exists.' : (source.head.id !== latest.sourceHead ? q.source : q.target) + ' moved since revision ' + latest.n + ': what is shown is what revision ' + latest.n + ' would merge.';
      view.appendChild(node('div', { class: 'status warn', id: 'stale' }, [what + ' ', source && target ? button('revise', 'Preview again', function () { act('POST', '/revise', undefined, 'Revised.'); }) : '']));
    }
    if (open) view.appendChild(mergeBox(q, moved));
    view.appendChild(checksBox(q, latest, open));
    view.appendChild(reviewsBox(q, stale, open));
    view.appendChild(node('h3', { text: 'Revisions' }));
    view.appendChild(tableOf(['revision', 'source head', 'target head', 'merge base', 'would merge as', 'conflicts left', 'when'], q.revisions.slice().reverse().map(function (v) {
      return node('tr', { 'data-revision': String(v.n) }, [cell(v.n), cell(short(v.sourceHead), 'v'), cell(short(v.targetHead), 'v'), cell(v.base ? short(v.base) : 'none', 'v'), cell(v.preview.outcome), cell(v.preview.conflicts), cell(when(v.time))]);
    })));
    var commits = node('div', { id: 'commits' }, [node('p', { class: 'muted', text: 'Reading commits\\u2026' })]);
    var brings = node('div', { id: 'changes' }, [node('p', { class: 'muted', text: 'Reading the diff\\u2026' })]);
    var theirs = node('div', { id: 'target-changes' }, [node('p', { class: 'muted', text: 'Reading the diff\\u2026' })]);
    var conflicts = node('div', { id: 'conflicts' });
    view.appendChild(node('h3', { text: 'Conflicts' }));
    view.appendChild(conflicts);
    view.appendChild(node('h3', { text: 'Commits ' + q.source + ' brings' }));
    view.appendChild(commits);
    view.appendChild(node('h3', { text: 'What ' + q.source + ' changes (revision ' + latest.n + ')' }));
    view.appendChild(brings);
    view.appendChild(node('h3', { text: 'What ' + q.target + ' changed meanwhile' }));
    view.appendChild(theirs);
    el('request-title').focus();
    return Promise.all([
      showCommits(commits, latest, gen),
      showDiff(brings, latest.targetHead, latest.sourceHead, true, gen),
      showDiff(theirs, latest.sourceHead, latest.targetHead, false, gen),
      showConflicts(conflicts, q, latest, moved, gen),
    ]);
  }

  function act(method, suffix, body, done) {
    var id = current;
    el('view').setAttribute('aria-busy', 'true');
    return api(method, '/merge-requests/' + enc(id) + suffix, body).then(function (r) {
      listRequests();
      return show(id).then(function () {
        if (r.status === 200) { flash(done); return r; }
        var reasons = r.body.error && r.body.error.details && r.body.error.details.reasons;
        var box = status('bad', errorText(r.body) + (reasons ? ' (' + reasons.join('; ') + ')' : ''), 'action-error');
        var view = el('view');
        view.insertBefore(box, view.children[2] || null);
        flash(box.textContent);
        return r;
      });
    });
  }

  function mergeBox(q, moved) {
    var m = q.mergeability;
    var box = node('div', { id: 'merge-box' });
    box.appendChild(node('h3', { text: 'Merge' }));
    box.appendChild(node('p', { id: 'approvals', text: m.approvals.current.length + ' of ' + m.approvals.required + ' required approval(s)' + (m.approvals.current.length ? ': ' + m.approvals.current.join(', ') : '') + (m.changesRequestedBy.length ? '; changes requested by ' + m.changesRequestedBy.join(', ') : '') }));
    if (m.mergeable && !moved) box.appendChild(status('ok', 'Ready to merge.', 'mergeable'));
    else box.appendChild(node('ul', { id: 'reasons', class: 'status bad' }, m.reasons.map(function (s) { return node('li', { text: s }); })));
    var message = node('input', { id: 'merge-message', size: '60', maxlength: '2000', placeholder: 'Merge ' + q.source + ' into ' + q.target });
    var del = node('input', { id: 'delete-branch', type: 'checkbox' });
    var merge = button('merge', 'Merge', function () {
      var body = { deleteBranch: del.checked };
      if (message.value) body.message = message.value;
      merge.disabled = true;
      act('POST', '/merge', body, 'Merged.');
    }, 'primary');
    merge.disabled = !m.mergeable || moved;
    box.appendChild(node('div', { class: 'row' }, [labelled('message', message), labelled('delete ' + q.source + ' after merging', del)]));
    box.appendChild(node('div', { class: 'row' }, [merge, button('close', 'Close without merging', function () { act('POST', '/close', undefined, 'Closed.'); })]));
    return box;
  }

  function checksBox(q, latest, open) {
    var box = node('div', { id: 'checks' });
    box.appendChild(node('h3', { text: 'Checks on revision ' + latest.n }));
    var results = latest.checks || {};
    var names = Object.keys(results);
    q.mergeability.checks.required.forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    names.sort();
    if (names.length === 0) box.appendChild(node('p', { class: 'muted', text: 'No checks are registered or required.' }));
    else box.appendChild(tableOf(['check', 'required', 'status', 'message'], names.map(function (n) {
      var c = results[n];
      return node('tr', { 'data-check': n }, [cell(n), cell(q.mergeability.checks.required.indexOf(n) >= 0 ? 'yes' : 'no'), cell(c ? c.status : 'not reported'), cell(c ? c.message : '')]);
    })));
    if (open) box.appendChild(button('run-checks', 'Run checks again', function () { act('POST', '/checks', undefined, 'Checks ran.'); }));
    return box;
  }

  function isCurrent(q, review, stale) {
    var latest = q.revisions[q.revisions.length - 1];
    var seen = q.revisions.filter(function (v) { return v.n === review.revision; })[0];
    if (!seen) return false;
    return stale === 'head_move' ? seen.n === latest.n : seen.fingerprint === latest.fingerprint;
  }

  function reviewsBox(q, stale, open) {
    var box = node('div', { id: 'reviews' });
    box.appendChild(node('h3', { text: 'Reviews' }));
    if (q.reviews.length === 0) box.appendChild(node('p', { class: 'muted', text: 'No reviews yet.' }));
    q.reviews.forEach(function (v) {
      var cur = v.verdict === 'comment' || isCurrent(q, v, stale);
      var where = v.on ? ' on ' + v.on.table + (v.on.key ? ' ' + v.on.key : '') + (v.on.property ? '.' + v.on.property : '') : '';
      box.appendChild(node('div', { class: 'review' + (cur ? '' : ' stale'), 'data-review': String(v.n), 'data-verdict': v.verdict }, [
        node('strong', { text: v.author }),
        ' ' + v.verdict.replace('_', ' ') + where + ' on revision ' + v.revision + (cur ? '' : ' (stale: a later revision changed what it saw)') + ' \\u00b7 ' + when(v.time),
        v.body ? node('div', { class: 'desc', text: v.body }) : '',
      ]));
    });
    if (!open) return box;
    var verdict = node('select', { id: 'verdict' }, [node('option', { value: 'comment', text: 'comment' }), node('option', { value: 'approve', text: 'approve' }), node('option', { value: 'request_changes', text: 'request changes' })]);
    var body = node('textarea', { id: 'review-body', maxlength: '20000' });
    var onTable = node('input', { id: 'on-table', size: '14' });
    var onKey = node('input', { id: 'on-key', size: '14' });
    var onProperty = node('input', { id: 'on-property', size: '14' });
    var submit = button('submit-review', 'Submit review', function () {
      var review = { verdict: verdict.value };
      if (body.value) review.body = body.value;
      if (onTable.value) {
        review.on = { table: onTable.value };
        if (onKey.value) review.on.key = onKey.value;
        if (onProperty.value) review.on.property = onProperty.value;
      }
      submit.disabled = true;
      act('POST', '/reviews', review, 'Review submitted.');
    }, 'primary');
    box.appendChild(node('div', { class: 'stack', id: 'review-form' }, [
      labelled('verdict', verdict),
      labelled('review', body),
      node('div', { class: 'row' }, [node('span', { class: 'muted', text: 'on (optional):' }), labelled('table', onTable), labelled('key', onKey), labelled('property', onProperty)]),
      node('div', {}, [submit]),
    ]));
    return box;
  }

  // Prefills the review form to comment on one place of the diff.
  function commentOn(table, key, property) {
    if (!el('review-form')) return;
    el('on-table').value = table;
    el('on-key').value = key || '';
    el('on-property').value = property || '';
    el('verdict').value = 'comment';
    el('review-body').focus();
  }

  function showCommits(box, latest, gen) {
    // The commits reachable from the source head and not from the target head, newest first.
    return Promise.all([
      api('GET', '/commits?limit=1000&at=' + enc('commit:' + latest.targetHead)),
      api('GET', '/commits?limit=200&at=' + enc('commit:' + latest.sourceHead)),
    ]).then(function (rs) {
      if (gen !== generation) return;
      box.innerHTML = '';
      if (rs[0].status !== 200 || rs[1].status !== 200) { box.appendChild(status('bad', errorText(rs[0].status !== 200 ? rs[0].body : rs[1].body))); return; }
      var theirs = {};
      rs[0].body.commits.forEach(function (c) { theirs[c.id] = true; });
      var mine = [];
      rs[1].body.commits.some(function (c) { if (c.id === latest.base) return true; if (!theirs[c.id]) mine.push(c); return false; });
      if (mine.length === 0) { box.appendChild(node('p', { class: 'muted', text: 'No commits.' })); return; }
      box.appendChild(tableOf(['commit', 'kind', 'author', 'message', 'when'], mine.map(function (c) {
        return node('tr', { 'data-commit': c.id }, [cell(short(c.id), 'v'), cell(c.kind), cell(c.author), cell(c.message), cell(when(c.time))]);
      })));
    });
  }

  function propsTable(before, after, changed) {
    var names = Object.keys(after || before || {});
    Object.keys(before || {}).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    return node('table', { class: 'props' }, names.map(function (n) {
      var isChanged = changed.indexOf(n) >= 0;
      return node('tr', { 'data-prop': n, class: isChanged ? 'chg' : undefined }, [
        node('td', {}, [n, isChanged ? node('span', { class: 'sr', text: ' (changed)' }) : '']),
        cell(before ? before[n] : null), cell(after ? after[n] : null),
      ]);
    }));
  }

  function showDiff(box, from, to, commentable, gen) {
    var q = '/diff?mode=three-dot&limit=200&from=' + enc('commit:' + from) + '&to=' + enc('commit:' + to);
    return api('GET', q).then(function (r) {
      if (gen !== generation) return;
      box.innerHTML = '';
      if (r.status !== 200) { box.appendChild(status('bad', errorText(r.body))); return; }
      if (r.body.summary.length === 0) { box.appendChild(node('p', { class: 'muted', text: 'No changes.' })); return; }
      box.appendChild(tableOf(['table', 'inserted', 'updated', 'deleted'], r.body.summary.map(function (s) {
        return node('tr', {}, [cell(s.table), cell(s.inserted), cell(s.updated), cell(s.deleted)]);
      })));
      var rows = [];
      var add = function (t, sign, key, before, after, changed) {
        var cells = [cell(t.table), cell(sign + ' ' + key, 'v'), node('td', {}, [propsTable(before, after, changed)])];
        if (commentable) cells.push(node('td', {}, [button(undefined, 'Comment', function () { commentOn(t.table, key, changed.length === 1 ? changed[0] : ''); })]));
        rows.push(node('tr', { 'data-change': t.table + ' ' + key, 'data-kind': sign }, cells));
      };
      r.body.tables.forEach(function (t) {
        // One list per table in key order, whatever the kind of change.
        var changes = t.inserted.map(function (x) { return ['+', x.key, null, x.row, Object.keys(x.row)]; })
          .concat(t.updated.map(function (x) { return ['~', x.key, x.before, x.after, x.changed]; }))
          .concat(t.deleted.map(function (x) { return ['-', x.key, x.row, null, Object.keys(x.row)]; }));
        changes.sort(function (x, y) { return x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0; });
        changes.forEach(function (c) { add(t, c[0], c[1], c[2], c[3], c[4]); });
      });
      var headers = ['table', 'change', 'properties (before, after; changed ones marked)'];
      if (commentable) headers.push('');
      box.appendChild(tableOf(headers, rows));
      if (r.body.nextCursor) box.appendChild(node('p', { class: 'muted', text: 'The first 200 changes are shown.' }));
    });
  }

  function savedChoice(q, c) {
    var list = (q.resolutions && q.resolutions.conflicts) || [];
    return list.filter(function (x) { return x.table === c.table && x.key === c.key && (x.property || null) === (c.property || null); })[0];
  }

  function showConflicts(box, q, latest, moved, gen) {
    // A merge is previewed at the revision's heads, which a moved branch no longer has.
    if (q.state !== 'open' || moved) {
      box.appendChild(node('p', { class: 'muted', text: moved ? 'Preview again to list the conflicts at the branches as they are.' : 'Not listed for a ' + q.state + ' request.' }));
      return Promise.resolve();
    }
    if (latest.preview.outcome !== 'conflicts' && !q.resolutions) {
      box.appendChild(node('p', { class: 'muted', id: 'no-conflicts', text: 'None.' }));
      return Promise.resolve();
    }
    box.appendChild(node('p', { class: 'muted', text: 'Reading the conflicts\\u2026' }));
    // Every conflict the revision meets, before the saved resolutions, so each choice can be seen and changed.
    return api('POST', '/branches/' + enc(q.source) + '/merge', { into: q.target, dryRun: true, conflictLimit: 1000, expectedSourceHead: latest.sourceHead, expectedTargetHead: latest.targetHead }).then(function (r) {
      if (gen !== generation) return;
      box.innerHTML = '';
      if (r.body.error) { box.appendChild(status(r.body.error.code === 'head_moved' ? 'warn' : 'bad', errorText(r.body) + (r.body.error.retryable ? ' \\u2014 preview again.' : ''))); return; }
      if (r.body.status !== 'conflicts') { box.appendChild(node('p', { class: 'muted', id: 'no-conflicts', text: 'None.' })); return; }
      var report = r.body.report;
      var left = latest.preview.conflicts;
      box.appendChild(status(left > 0 ? 'bad' : 'ok', report.total + ' conflict(s); ' + (left > 0 ? left + ' left unresolved by the saved resolutions.' : 'all resolved by the saved resolutions.'), 'conflict-summary'));
      var strategy = node('select', { id: 'strategy' }, [['', 'none'], ['source-wins', 'source wins'], ['target-wins', 'target wins']].map(function (o) {
        return node('option', { value: o[0], text: o[1], selected: ((q.resolutions && q.resolutions.strategy) || '') === o[0] });
      }));
      box.appendChild(node('div', { class: 'row' }, [labelled('strategy for the rest', strategy)]));
      var rows = report.items.map(function (c, i) {
        var saved = savedChoice(q, c);
        var place = c.table + ' ' + c.key + (c.property ? '.' + c.property : '');
        var choice = node('select', { class: 'choice', 'data-i': String(i), 'aria-label': 'resolution of ' + place }, ['', 'source', 'target', 'base', 'value'].map(function (t) {
          return node('option', { value: t, text: t || '(unresolved)', selected: (saved ? saved.take : '') === t });
        }));
        var value = node('input', { class: 'value', 'data-i': String(i), 'aria-label': 'value for ' + place, placeholder: 'JSON value', size: '16' });
        if (saved && saved.take === 'value') value.value = JSON.stringify(saved.value);
        return node('tr', { 'data-conflict': c.table + ' ' + c.key + ' ' + (c.property || '') }, [
          cell(c.kind), cell(place), cell(c.base, 'v'), cell(c.source, 'v'), cell(c.target, 'v'), node('td', {}, [choice, ' ', value]),
        ]);
      });
      box.appendChild(tableOf(['kind', 'entity', 'base', q.source, q.target, 'resolution'], rows));
      if (report.nextCursor) box.appendChild(node('p', { class: 'muted', text: 'The first 1000 conflicts are shown; a strategy covers the rest.' }));
      box.appendChild(button('save-resolutions', 'Save resolutions', function () {
        var res;
        try { res = resolutions(report.items); } catch (e) { box.appendChild(status('bad', e.message, 'resolution-error')); return; }
        act('PUT', '/resolutions', { resolutions: res }, 'Resolutions saved.');
      }, 'primary'));
    });
  }

  function resolutions(items) {
    var conflicts = [];
    items.forEach(function (c, i) {
      var take = document.querySelector('select.choice[data-i="' + i + '"]').value;
      if (!take) return;
      var r = { table: c.table, key: c.key, property: c.property, take: take, expected: { base: c.base, source: c.source, target: c.target } };
      if (take === 'value') {
        var raw = document.querySelector('input.value[data-i="' + i + '"]').value;
        try { r.value = JSON.parse(raw); } catch (e) { throw new Error(c.table + ' ' + c.key + ': the value must be JSON (' + e.message + ')'); }
      }
      conflicts.push(r);
    });
    var strategy = el('strategy').value;
    if (!strategy && conflicts.length === 0) return null;
    var out = {};
    if (strategy) out.strategy = strategy;
    if (conflicts.length > 0) out.conflicts = conflicts;
    return out;
  }

  listRequests();
  var linked = /^#request=(.+)$/.exec(location.hash);
  if (linked) show(decodeURIComponent(linked[1]));
})();
</script>
</body>
</html>
`;
