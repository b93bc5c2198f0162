/**
 * The merge review page end to end in headless Chromium, with every request
 * that leaves the server refused: create a conflict through the API, open
 * /ui, pick the branch, read the three-dot diff, preview, resolve one
 * conflict by choice and the rest by strategy, merge, and check the data
 * through the API. A screenshot of each step goes to test-output/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { HAVE_BROWSER, offlinePage } from './support/browser.js';
import { testServer, type TestServer } from './support/test-server.js';

const OUT = path.resolve('test-output');
const TOKEN = 'writer-token-for-ui';

describe('merge review page', () => {
  let s: TestServer;
  let browser: Browser | undefined;
  beforeAll(async () => {
    s = await testServer({ tokens: `admin:${TOKEN}` });
    const api = new RestClient(s.url, TOKEN);
    await api.applySchema({ branch: 'main', schema: 'node Person { id: string @key\n name: string\n age: int? }' });
    await api.write({
      branch: 'main',
      ops: [
        { op: 'insert', table: 'Person', values: { id: 'ann', name: 'Ann', age: 30 } },
        { op: 'insert', table: 'Person', values: { id: 'bob', name: 'Bob', age: 40 } },
      ],
    });
    await api.createBranch({ name: 'review' });
    await api.write({
      branch: 'review',
      ops: [
        { op: 'update', table: 'Person', values: { id: 'ann', age: 31 } },
        { op: 'update', table: 'Person', values: { id: 'bob', age: 41 } },
        { op: 'insert', table: 'Person', values: { id: 'cy', name: 'Cy' } },
      ],
    });
    await api.write({
      branch: 'main',
      ops: [
        { op: 'update', table: 'Person', values: { id: 'ann', age: 32 } },
        { op: 'update', table: 'Person', values: { id: 'bob', age: 42 } },
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await s.close();
  });

  it('serves one page that names nothing outside the server', async () => {
    const res = await fetch(`${s.url}/ui`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html.match(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//gi) ?? []).toEqual([]);
  });

  it.skipIf(!HAVE_BROWSER)(
    'reviews, resolves and merges a conflicted branch in headless Chromium',
    async () => {
      const offline = await offlinePage(s.url, { width: 1280, height: 900 });
      browser = offline.browser;
      const { page, refused, errors } = offline;
      mkdirSync(OUT, { recursive: true });
      const shot = async (p: Page, name: string): Promise<void> => {
        await p.screenshot({ path: path.join(OUT, `review-${name}.png`), fullPage: true });
      };

      await page.goto(`${s.url}/ui`, { waitUntil: 'load' });
      await page.type('#token', TOKEN);
      await page.$eval('#token', (e) => e.dispatchEvent(new Event('change')));
      await page.waitForSelector('nav button[data-branch="review"]');
      await shot(page, '1-branches');

      await page.click('nav button[data-branch="review"]');
      await page.waitForFunction(() => document.querySelector('#diff table') !== null);
      const diffText = await page.$eval('#diff', (e) => e.textContent ?? '');
      // Three-dot: what review brings, not main's own changes.
      expect(diffText).toContain('+ cy');
      expect(diffText).toContain('~ ann');
      await shot(page, '2-diff');

      await page.click('#preview');
      await page.waitForSelector('select.choice');
      const conflicts = await page.$$eval('tr[data-conflict]', (rows) => rows.map((r) => r.getAttribute('data-conflict')));
      expect(conflicts).toEqual(['Person ann age', 'Person bob age']);
      const annRow = await page.$eval('tr[data-conflict="Person ann age"]', (r) =>
        Array.from(r.querySelectorAll('td')).map((td) => td.textContent),
      );
      expect(annRow.slice(2, 5)).toEqual(['30', '31', '32']);
      await shot(page, '3-preview');

      // ann: a value of its own; bob: left to the strategy (source wins).
      await page.select('select.choice[data-i="0"]', 'value');
      await page.type('input.value[data-i="0"]', '35');
      await page.select('#strategy', 'source-wins');
      await shot(page, '4-resolved');
      await page.click('#merge');
      await page.waitForSelector('#merged');
      const outcome = await page.$eval('#merged', (e) => e.textContent ?? '');
      expect(outcome).toMatch(/^Merged: merged as [0-9A-Z]{26}; 2 conflict\(s\) resolved\.$/);
      await shot(page, '5-merged');
      console.log(`review page screenshots: ${OUT}/review-{1-branches,2-diff,3-preview,4-resolved,5-merged}.png`);

      const rows = await new RestClient(s.url, TOKEN).rows({ table: 'Person', at: { branch: 'main' } });
      expect(rows.items.map((r) => [r.key, r.row.age])).toEqual([
        ['ann', 35],
        ['bob', 41],
        ['cy', null],
      ]);
      expect(refused).toEqual([]);
      expect(errors).toEqual([]);
    },
    90_000,
  );
});
