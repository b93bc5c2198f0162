/**
 * The merge review page served at `/ui`: one self-contained HTML document
 * (no external script, style, font or image) that uses the public REST API
 * only, relative to where it is served, so `/graphs/<name>/ui` reviews that
 * graph. It lists branches, shows what a branch brings since it left its
 * target (three-dot diff), previews the merge, shows every conflict with
 * its base, source and target values side by side, takes a choice per
 * conflict or a strategy, and merges pinned to the previewed heads with
 * each choice guarded by the values it was made against.
 *
 * The script is plain ES2020 with no template literals, so it can live in
 * this TypeScript string as it is.
 */
export const REVIEW_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>branchgraph merge review</title>
<link rel="icon" href="data:,">
<style>
  :root { --fg: #1d2733; --muted: #5b6776; --line: #d9dee5; --bg: #f6f8fa; --ok: #1a7f37; --bad: #b42318; --accent: #0b5cad; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
  header { padding: 12px 20px; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: center; background: var(--bg); }
  header h1 { font-size: 16px; margin: 0; }
  main { display: grid; grid-template-columns: 260px 1fr; min-height: calc(100vh - 50px); }
  nav { border-right: 1px solid var(--line); padding: 12px; }
  nav button { display: block; width: 100%; text-align: left; border: 0; background: none; padding: 6px 8px; border-radius: 6px; cursor: pointer; font: inherit; }
  nav button.active, nav button:hover { background: #e8f0fb; }
  nav small { color: var(--muted); font-family: ui-monospace, monospace; }
  section { padding: 16px 20px; }
  h2 { font-size: 15px; margin: 18px 0 8px; }
  table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
  th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
  th { background: var(--bg); font-weight: 600; }
  td.v { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; word-break: break-all; max-width: 260px; }
  .row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
  button.primary { background: var(--accent); color: #fff; border: 0; padding: 7px 14px; border-radius: 6px; font: inherit; cursor: pointer; }
  button.primary:disabled { background: #9db7d6; cursor: default; }
  input, select { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 5px; }
  .status { padding: 8px 12px; border-radius: 6px; margin: 10px 0; }
  .status.ok { background: #e6f4ea; color: var(--ok); }
  .status.bad { background: #fdecea; color: var(--bad); }
  .muted { color: var(--muted); }
  code { font-family: ui-monospace, monospace; font-size: 12px; }
</style>
</head>
<body>
<header>
  <h1>branchgraph merge review</h1>
  <label>token <input id="token" type="password" placeholder="bearer token (if required)" size="28"></label>
  <span id="where" class="muted"></span>
</header>
<main>
  <nav><div class="muted">branches</div><div id="branches"></div></nav>
  <section id="review"><p class="muted">Pick a branch to review.</p></section>
</main>
<script>
(function () {
  'use strict';
  var base = location.pathname.replace(/\\/ui\\/?$/, '');
  var state = { branches: [], source: null, into: 'main', preview: null };
  var el = function (id) { return document.getElementById(id); };
  var tokenInput = el('token');
  tokenInput.value = sessionStorage.getItem('branchgraph.token') || '';
  tokenInput.addEventListener('change', function () { sessionStorage.setItem('branchgraph.token', tokenInput.value); load(); });
  el('where').textContent = location.host + (base || '/');

  function api(method, path, body) {
    var headers = { accept: 'application/json' };
    if (tokenInput.value) headers.authorization = 'Bearer ' + tokenInput.value;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(base + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) }).then(function (res) {
      return res.json().then(function (json) { return { status: res.status, body: json }; });
    });
  }
  function text(v) { return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 1); }
  function node(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { e.appendChild(c); });
    return e;
  }
  function tableOf(headers, rows) {
    var head = node('tr', {}, headers.map(function (h) { return node('th', { text: h }); }));
    return node('table', {}, [head].concat(rows));
  }
  function cell(v, cls) { return node('td', { text: text(v), class: cls || 'v' }); }
  function errorText(body) { return body && body.error ? body.error.code + ': ' + body.error.message : JSON.stringify(body); }

  function load() {
    // The first 1,000 branches by name; a graph with more says so (the CLI and API page through all).
    return api('GET', '/branches?limit=1000').then(function (r) {
      var list = el('branches');
      list.innerHTML = '';
      if (r.status !== 200) { list.appendChild(node('div', { class: 'status bad', text: errorText(r.body) })); return; }
      state.branches = r.body.branches;
      state.branches.forEach(function (b) {
        var btn = node('button', { 'data-branch': b.name, class: b.name === state.source ? 'active' : '' }, [node('div', { text: b.name }), node('small', { text: b.head.id.slice(0, 10) + ' ' + b.head.kind })]);
        btn.addEventListener('click', function () { review(b.name); });
        list.appendChild(btn);
      });
      if (r.body.nextCursor) list.appendChild(node('div', { class: 'muted', text: 'more branches follow; the first 1,000 are listed' }));
    });
  }

  function review(source) {
    state.source = source;
    state.preview = null;
    Array.prototype.forEach.call(document.querySelectorAll('nav button'), function (b) { b.className = b.getAttribute('data-branch') === source ? 'active' : ''; });
    var sec = el('review');
    sec.innerHTML = '';
    var into = node('select', { id: 'into' }, state.branches.filter(function (b) { return b.name !== source; }).map(function (b) {
      var o = node('option', { value: b.name, text: b.name });
      if (b.name === state.into) o.selected = true;
      return o;
    }));
    into.addEventListener('change', function () { state.into = into.value; review(source); });
    if (into.value) state.into = into.value;
    var previewBtn = node('button', { class: 'primary', id: 'preview', text: 'Preview merge' });
    previewBtn.addEventListener('click', preview);
    sec.appendChild(node('h2', { text: 'Merge ' + source + ' into' }));
    sec.appendChild(node('div', { class: 'row' }, [into, previewBtn]));
    sec.appendChild(node('div', { id: 'diff' }));
    sec.appendChild(node('div', { id: 'result' }));
    showDiff();
  }

  function showDiff() {
    var q = '/diff?mode=three-dot&limit=200&from=' + encodeURIComponent(state.into) + '&to=' + encodeURIComponent(state.source);
    api('GET', q).then(function (r) {
      var box = el('diff');
      box.innerHTML = '';
      box.appendChild(node('h2', { text: 'What ' + state.source + ' brings (since it left ' + state.into + ')' }));
      if (r.status !== 200) { box.appendChild(node('div', { class: 'status bad', text: errorText(r.body) })); return; }
      if (r.body.summary.length === 0) { box.appendChild(node('p', { class: 'muted', text: 'No changes.' })); return; }
      box.appendChild(tableOf(['table', 'inserted', 'updated', 'deleted'], r.body.summary.map(function (s) {
        return node('tr', {}, [cell(s.table, ''), cell(String(s.inserted), ''), cell(String(s.updated), ''), cell(String(s.deleted), '')]);
      })));
      var rows = [];
      r.body.tables.forEach(function (t) {
        t.inserted.forEach(function (x) { rows.push(node('tr', {}, [cell(t.table, ''), cell('+ ' + x.key, ''), cell(null), cell(x.row)])); });
        t.updated.forEach(function (x) { rows.push(node('tr', {}, [cell(t.table, ''), cell('~ ' + x.key, ''), cell(x.before), cell(x.after)])); });
        t.deleted.forEach(function (x) { rows.push(node('tr', {}, [cell(t.table, ''), cell('- ' + x.key, ''), cell(x.row), cell(null)])); });
      });
      box.appendChild(tableOf(['table', 'change', 'before', 'after'], rows));
      if (r.body.nextCursor) box.appendChild(node('p', { class: 'muted', text: 'The first 200 changes are shown.' }));
    });
  }

  function preview() {
    api('POST', '/branches/' + encodeURIComponent(state.source) + '/merge', { into: state.into, dryRun: true, conflictLimit: 1000 }).then(function (r) {
      var box = el('result');
      box.innerHTML = '';
      box.appendChild(node('h2', { text: 'Preview' }));
      if (r.body.error) { box.appendChild(node('div', { class: 'status bad', text: errorText(r.body) })); return; }
      state.preview = r.body;
      box.appendChild(node('p', { class: 'muted', text: 'source ' + r.body.sourceHead + ', target ' + r.body.targetHead + ' — the merge lands only if neither moved.' }));
      var mergeBtn = node('button', { class: 'primary', id: 'merge', text: 'Merge' });
      mergeBtn.addEventListener('click', merge);
      if (r.body.status === 'success') {
        box.appendChild(node('div', { class: 'status ok', id: 'outcome', text: 'Would be ' + r.body.outcome + '.' }));
        box.appendChild(mergeBtn);
        return;
      }
      var report = r.body.report;
      box.appendChild(node('div', { class: 'status bad', id: 'outcome', text: report.total + ' conflict(s). Choose how to resolve each, or a strategy for all.' }));
      var strategy = node('select', { id: 'strategy' }, [node('option', { value: '', text: 'no strategy' }), node('option', { value: 'source-wins', text: 'source wins' }), node('option', { value: 'target-wins', text: 'target wins' })]);
      box.appendChild(node('div', { class: 'row' }, [node('span', { text: 'strategy for the rest:' }), strategy]));
      var rows = report.items.map(function (c, i) {
        var choice = node('select', { class: 'choice', 'data-i': String(i) }, ['', 'source', 'target', 'base', 'value'].map(function (t) { return node('option', { value: t, text: t || '(unresolved)' }); }));
        var value = node('input', { class: 'value', 'data-i': String(i), placeholder: 'JSON value', size: '16' });
        return node('tr', { 'data-conflict': c.table + ' ' + c.key + ' ' + (c.property || '') }, [
          cell(c.kind, ''), cell(c.table + ' ' + c.key + (c.property ? '.' + c.property : ''), ''), cell(c.base), cell(c.source), cell(c.target),
          node('td', {}, [choice, value]),
        ]);
      });
      box.appendChild(tableOf(['kind', 'entity', 'base', 'source', 'target', 'resolution'], rows));
      if (report.nextCursor) box.appendChild(node('p', { class: 'muted', text: 'The first 1000 conflicts are shown; a strategy covers the rest.' }));
      box.appendChild(mergeBtn);
    });
  }

  function resolutions() {
    var p = state.preview;
    if (p.status === 'success') return undefined;
    var conflicts = [];
    var bad = null;
    p.report.items.forEach(function (c, i) {
      var take = document.querySelector('select.choice[data-i="' + i + '"]').value;
      if (!take) return;
      var r = { table: c.table, key: c.key, property: c.property, take: take, expected: { base: c.base, source: c.source, target: c.target } };
      if (take === 'value') {
        var raw = document.querySelector('input.value[data-i="' + i + '"]').value;
        try { r.value = JSON.parse(raw); } catch (e) { bad = c.table + ' ' + c.key + ': the value must be JSON (' + e.message + ')'; }
      }
      conflicts.push(r);
    });
    if (bad) throw new Error(bad);
    var strategy = el('strategy').value;
    var out = {};
    if (strategy) out.strategy = strategy;
    if (conflicts.length > 0) out.conflicts = conflicts;
    return out;
  }

  function merge() {
    var box = el('result');
    var body = { into: state.into, expectedSourceHead: state.preview.sourceHead, expectedTargetHead: state.preview.targetHead };
    try {
      var res = resolutions();
      if (res) body.resolutions = res;
    } catch (e) {
      box.appendChild(node('div', { class: 'status bad', text: e.message }));
      return;
    }
    api('POST', '/branches/' + encodeURIComponent(state.source) + '/merge', body).then(function (r) {
      var out = node('div', { id: 'merged' });
      if (r.body.status === 'success') {
        out.appendChild(node('div', { class: 'status ok', text: 'Merged: ' + r.body.outcome + (r.body.commit ? ' as ' + r.body.commit.id : '') + (r.body.resolved ? '; ' + r.body.resolved.total + ' conflict(s) resolved' : '') + '.' }));
      } else if (r.body.status === 'conflicts') {
        out.appendChild(node('div', { class: 'status bad', text: r.body.report.total + ' conflict(s) remain unresolved; nothing was merged.' }));
      } else {
        out.appendChild(node('div', { class: 'status bad', text: errorText(r.body) + (r.body.error && r.body.error.retryable ? ' — preview again.' : '') }));
      }
      box.appendChild(out);
      load();
    });
  }

  load();
})();
</script>
</body>
</html>
`;
