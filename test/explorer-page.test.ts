/**
 * The graph explorer end to end in headless Chromium on the sample graph (real Debian packages,
 * loaded as `branchgraph demo` loads them), with every request that leaves the server refused.
 * A reader picks a ref, filters and orders a table, opens an entity with its edges, blame and
 * history, expands its neighbourhood on the graph and exports it, compares two branches drawn on
 * the graph, edits a cell from the keyboard, adds and deletes a row, meets a head that moved
 * (nothing is written, the page offers a reload), and on a protected branch proposes the edit as
 * a merge request. What the page shows is checked against what the API stores. The time to first
 * paint and to the first table is written to test-output/explorer-timing.json, and a screenshot
 * of each step to test-output/explorer-*.png.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { loadSampleGraph, samplePackages } from '../src/service/sample-graph.js';
import { HAVE_BROWSER, launchBrowser, offlinePage } from './support/browser.js';
import { testServer, type TestServer } from './support/test-server.js';

const OUT = path.resolve('test-output');
const ADMIN = 'admin-token-for-explorer';
const WRITER = 'writer-token-for-explorer';

const text = (p: Page, selector: string): Promise<string> => p.$eval(selector, (e) => e.textContent ?? '');
const idle = (p: Page): Promise<unknown> => p.waitForFunction(() => document.getElementById('view')?.getAttribute('aria-busy') === 'false');
/**
 * Does what takes the explorer to another route and waits until that route is drawn whole. A route
 * changes with the hash, and the page draws it on the hash's change event, a turn later: the view
 * is marked busy first, so the wait cannot end on the route drawn before it.
 */
async function navigate(p: Page, act: () => Promise<unknown>): Promise<void> {
  await p.evaluate(() => document.getElementById('view')?.setAttribute('aria-busy', 'true'));
  await act();
  await idle(p);
}

/** Goes to a route of the explorer and waits until the view has been drawn whole. */
async function visit(p: Page, hash: string): Promise<void> {
  await navigate(p, () =>
    p.evaluate((h) => {
      // The same route again is read again, as a reader's reload would.
      if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = h;
    }, hash),
  );
}

describe('graph explorer', () => {
  let s: TestServer;
  let browser: Browser | undefined;
  let admin: RestClient;
  beforeAll(async () => {
    s = await testServer({ tokens: `admin:${ADMIN}:ada,write:${WRITER}:wes` });
    admin = new RestClient(s.url, ADMIN);
    await loadSampleGraph(admin, await samplePackages());
  });
  afterAll(async () => {
    await browser?.close();
    await s.close();
  });

  it('serves a page whose script and styles come from the server only', async () => {
    const res = await fetch(`${s.url}/ui/explore`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(html.match(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//gi) ?? []).toEqual([]);
    const script = await fetch(`${s.url}/ui/assets/explorer.js`);
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await fetch(`${s.url}/ui/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it.skipIf(!HAVE_BROWSER)(
    'walks a ref, a table, an entity, its neighbourhood, a diff and edits in headless Chromium',
    async () => {
      browser = await launchBrowser();
      const { page, refused, errors } = await offlinePage(browser, s.url, { width: 1280, height: 900 });
      mkdirSync(OUT, { recursive: true });
      const shots: string[] = [];
      const shot = async (name: string): Promise<void> => {
        shots.push(name);
        await page.screenshot({ path: path.join(OUT, `explorer-${name}.png`), fullPage: true });
      };
      page.on('dialog', (d) => void d.accept());
      await page.evaluateOnNewDocument((token) => sessionStorage.setItem('branchgraph.token', token), WRITER);

      // First paint and the first table of the sample graph.
      const started = Date.now();
      await page.goto(`${s.url}/ui/explore`, { waitUntil: 'load' });
      await page.waitForSelector('#table-list');
      const shown = Date.now() - started;
      const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1);
      writeFileSync(
        path.join(OUT, 'explorer-timing.json'),
        `${JSON.stringify({ firstContentfulPaintMs: Math.round(paint), tablesShownMs: shown })}\n`,
      );
      console.log(`explorer on the sample graph: first contentful paint ${Math.round(paint)} ms, tables shown ${shown} ms`);
      expect(paint).toBeGreaterThan(0);
      await page.waitForFunction(() => /acting as wes \(write\)/.test(document.getElementById('acting-as')?.textContent ?? ''));
      expect(await page.$$eval('#table-list tr[data-table]', (r) => r.map((x) => x.getAttribute('data-table')))).toEqual([
        'DependsOn',
        'InSection',
        'MaintainedBy',
        'Maintainer',
        'Package',
        'Section',
      ]);
      await shot('1-main');

      // Pick a ref: the tag the load made reads as it was, before any branch changed git.
      await page.waitForSelector('#ref option[value="tag:bookworm"]');
      await navigate(page, () => page.select('#ref', 'tag:bookworm'));
      await page.waitForFunction(() => document.getElementById('view-title')?.textContent === 'tag:bookworm');
      await visit(page, '#at=tag%3Abookworm&table=Package&key=git');
      expect(await text(page, '#properties tr[data-prop="summary"] td:nth-child(2)')).toBe(
        'fast, scalable, distributed revision control system',
      );
      expect(await page.$('#properties button[aria-label="edit summary"]')).toBeNull();

      // A table on main, filtered and ordered from the schema's types.
      await visit(page, '#at=main');
      await navigate(page, () => page.click('#tables button[data-table="Package"]'));
      await page.type('#filter-summary', 'editor');
      await page.type('#filter-installedKib-min', '1000');
      await navigate(page, () => page.click('#apply-filters'));
      await navigate(page, () => page.click('th[aria-sort] button, th button.sort[aria-label="sort by installedKib"]'));
      await navigate(page, () => page.click('th button.sort[aria-label="sort by installedKib, descending"]'));
      expect(await page.$eval('th[aria-sort="descending"]', (e) => e.textContent)).toContain('installedKib');
      const rows = await page.$$eval('#rows tbody tr', (list) =>
        list.map((r) => ({
          // A clipped value (ending in …) is whole in the cell's tooltip.
          summary: ((c) => (c?.textContent?.endsWith('…') ? c.getAttribute('title') : c?.textContent) ?? '')(
            r.querySelector('td[data-prop="summary"]'),
          ),
          size: Number(r.querySelector('td[data-prop="installedKib"]')?.textContent),
        })),
      );
      expect(rows.length).toBeGreaterThan(3);
      for (const r of rows) {
        expect(r.summary).toContain('editor');
        expect(r.size).toBeGreaterThanOrEqual(1000);
      }
      expect(rows.map((r) => r.size)).toEqual([...rows.map((r) => r.size)].sort((a, b) => b - a));
      // The count the page gives is the API's.
      const page1 = await admin.queryRows({
        table: 'Package',
        at: { branch: 'main' },
        where: { summary: { contains: 'editor' }, installedKib: { gte: 1000 } },
        count: true,
        first: 1,
      });
      expect(await text(page, '#row-count')).toContain(`of ${page1.totalCount} row(s)`);
      const unnamed = await page.$$eval('input, select, textarea', (list) =>
        list.filter((c) => (c as HTMLInputElement).labels?.length === 0 && !c.getAttribute('aria-label')).map((c) => c.outerHTML),
      );
      expect(unnamed).toEqual([]);
      await shot('2-filtered');

      // An entity: properties with blame, edges both ways, history, and its neighbourhood.
      await visit(page, '#at=main&table=Package&key=git');
      await page.waitForSelector('#graph-nodes li');
      // Blame: the summary was last set on docs-fixes, the version by the load.
      expect(await page.$eval('#properties tr[data-prop="summary"] td:nth-child(3)', (e) => e.getAttribute('title'))).toBe(
        'Sharper summaries for git and vim',
      );
      expect(await page.$eval('#properties tr[data-prop="version"] td:nth-child(3)', (e) => e.getAttribute('title'))).toBe('bulk load');
      expect(await page.$$eval('#edges tr[data-edge]', (r) => r.some((x) => x.textContent?.includes('out →')))).toBe(true);
      expect(await page.$$eval('#edges tr[data-edge]', (r) => r.some((x) => x.textContent?.includes('← in')))).toBe(true);
      expect(await page.$$eval('#history tr[data-commit] td:nth-child(2)', (r) => r.map((x) => x.textContent))).toEqual([
        'updated',
        'inserted',
      ]);
      const before = await page.$$eval('#graph-nodes li', (l) => l.length);
      const edges = await admin.edges({ table: 'Package', key: 'git', at: { branch: 'main' }, direction: 'both' });
      const ends = new Set(edges.edges.map((e) => `${e.row.from === 'git' ? e.row.to : e.row.from}`));
      expect(before).toBe(ends.size + 1);
      expect(await page.$$eval('#legend [data-legend]', (l) => l.map((x) => x.textContent))).toEqual(
        expect.arrayContaining(['Package', 'DependsOn', 'MaintainedBy', 'InSection']),
      );
      // Expand a neighbour from the keyboard list: the graph grows.
      await page.click('details:has(#graph-nodes) summary');
      await page.focus('#graph-nodes button[aria-label="expand Package perl"]');
      await page.keyboard.press('Enter');
      await page.waitForFunction((n) => document.querySelectorAll('#graph-nodes li').length > n, {}, before);
      // The view exports as SVG holding every node drawn.
      await page.evaluate(() => {
        const original = URL.createObjectURL.bind(URL);
        (window as unknown as { exported: Blob[] }).exported = [];
        URL.createObjectURL = (b: Blob | MediaSource) => {
          (window as unknown as { exported: Blob[] }).exported.push(b as Blob);
          return original(b);
        };
      });
      await page.click('#export-svg');
      const svg = await page.evaluate(async () => (window as unknown as { exported: Blob[] }).exported[0]?.text());
      const drawn = await page.$$eval('#graph-nodes li', (l) => l.length);
      expect(svg).toMatch(/^<svg /);
      expect((svg?.match(/<circle /g) ?? []).length).toBe(drawn);
      await page.click('#export-png');
      expect(await page.evaluate(async () => (window as unknown as { exported: Blob[] }).exported[1]?.type)).toBe('image/png');
      await shot('3-entity');

      // Two branches compared on the graph: what triage changes since it left main.
      await visit(page, '#diff=main...triage');
      await page.waitForSelector('#diff-changes');
      expect(
        await page.$$eval('#diff-changes tr[data-change]', (r) =>
          r.map((x) => [x.getAttribute('data-change'), x.getAttribute('data-kind')]),
        ),
      ).toEqual([
        ['Package git', 'changed'],
        ['Package tig', 'changed'],
      ]);
      expect(await text(page, '#diff-changes tr[data-change="Package tig"] [data-prop="priority"]')).toBe('priority: optional → standard');
      // The changed packages, and grey around them what they sit among (tig depends on git).
      const diffNodes = await page.$$eval('#graph-nodes li', (l) =>
        l.map((x) => ({ node: x.getAttribute('data-node') ?? '', text: x.textContent ?? '' })),
      );
      expect(diffNodes.filter((d) => d.text.includes('(changed)')).map((d) => d.node)).toEqual(['Package/git', 'Package/tig']);
      expect(diffNodes.filter((d) => d.text.includes('(context)')).length).toBeGreaterThan(3);
      await shot('4-diff');

      // Edit a cell from the keyboard: one commit on main, pinned to the head read.
      await visit(page, '#at=main&table=Package&where=%7B%22name%22%3A%7B%22eq%22%3A%22tig%22%7D%7D');
      await page.focus('#rows tr[data-key="tig"] td[data-prop="summary"]');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#rows tr[data-key="tig"] td[data-prop="summary"] input');
      await page.$eval('#rows tr[data-key="tig"] td[data-prop="summary"] input', (e) => {
        (e as HTMLInputElement).value = '';
      });
      await page.keyboard.type('text-mode interface for git, edited in the explorer');
      const headBefore = (await admin.getBranch({ name: 'main' })).head.id;
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => /Saved as commit/.test(document.getElementById('flash')?.textContent ?? ''));
      await idle(page);
      expect(await text(page, '#rows tr[data-key="tig"] td[data-prop="summary"]')).toBe(
        'text-mode interface for git, edited in the explorer',
      );
      const edited = (await admin.log({ at: { branch: 'main' }, limit: 1 })).commits[0];
      expect(edited).toMatchObject({ parents: [headBefore], actor: 'wes', message: 'explorer: update Package tig' });
      expect((await admin.getRow({ table: 'Package', key: 'tig', at: { branch: 'main' } })).row.summary).toBe(
        'text-mode interface for git, edited in the explorer',
      );
      await shot('5-edited');

      // Add a row and delete it, on a branch of its own.
      await visit(page, '#at=docs-fixes&table=Section');
      await page.click('#add-row-form summary');
      await page.type('#new-name', 'explorer-made');
      await page.click('#add-row');
      await page.waitForSelector('#rows tr[data-key="explorer-made"]');
      expect((await admin.getRow({ table: 'Section', key: 'explorer-made', at: { branch: 'docs-fixes' } })).row.name).toBe('explorer-made');
      await page.click('button[data-delete="explorer-made"]');
      await page.waitForFunction(() => document.querySelector('#rows tr[data-key="explorer-made"]') === null);
      await expect(admin.getRow({ table: 'Section', key: 'explorer-made', at: { branch: 'docs-fixes' } })).rejects.toMatchObject({
        code: 'not_found',
      });

      // The head moves under the page: nothing is written, the page says so and reloads on request.
      await visit(page, '#at=main&table=Package&key=vim');
      await admin.write({ branch: 'main', ops: [{ op: 'update', table: 'Package', values: { name: 'vim', version: '9.9' } }] });
      const movedHead = (await admin.getBranch({ name: 'main' })).head.id;
      await page.click('#properties button[aria-label="edit summary"]');
      await page.keyboard.type(' (overwritten?)');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#head-moved');
      expect(await text(page, '#head-moved')).toContain('main moved since this page read it, so nothing was written');
      expect((await admin.getBranch({ name: 'main' })).head.id).toBe(movedHead);
      expect((await admin.getRow({ table: 'Package', key: 'vim', at: { branch: 'main' } })).row.summary).toBe(
        'Vi IMproved: the modal text editor',
      );
      await shot('6-moved');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('reload');
      await navigate(page, () => page.keyboard.press('Enter'));
      expect(await text(page, '#properties tr[data-prop="version"] td:nth-child(2)')).toBe('9.9');

      // On a protected branch an edit becomes a merge request instead.
      await admin.protectBranch({ name: 'main', requiredApprovals: 1 });
      await visit(page, '#at=main&table=Package&key=vim');
      await page.click('#properties button[aria-label="edit priority"]');
      await page.$eval('#properties tr[data-prop="priority"] input', (e) => {
        (e as HTMLInputElement).value = 'standard';
      });
      await page.keyboard.press('Enter');
      await page.waitForSelector('#edit-proposed a');
      const link = await page.$eval('#edit-proposed a', (a) => a.getAttribute('href') ?? '');
      const id = decodeURIComponent(link.replace(/^.*#request=/, ''));
      const q = await admin.getMergeRequest({ id });
      expect(q).toMatchObject({ target: 'main', author: 'wes', state: 'open' });
      expect((await admin.getRow({ table: 'Package', key: 'vim', at: { branch: q.source } })).row.priority).toBe('standard');
      expect((await admin.getRow({ table: 'Package', key: 'vim', at: { branch: 'main' } })).row.priority).toBe('optional');
      await shot('7-proposed');
      console.log(`explorer screenshots: ${OUT}/explorer-{${shots.join(',')}}.png`);

      expect(refused).toEqual([]);
      expect(errors).toEqual([]);
    },
    180_000,
  );
});
