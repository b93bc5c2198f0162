/**
 * GraphiQL works with no network but the server's own: the page names no
 * external script, style or image, and in headless Chromium, with every
 * request that leaves the server refused, the editor renders and a query
 * runs, on /graphql and on a branch's typed page. Screenshots go to test-output/ (the test log prints where).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { HAVE_BROWSER, launchBrowser, offlinePage } from './support/browser.js';
import { testServer, type TestServer } from './support/test-server.js';

const OUT = path.resolve('test-output');

describe('GraphiQL offline', () => {
  let s: TestServer;
  let browser: Browser | undefined;
  beforeAll(async () => {
    s = await testServer();
    const rest = new RestClient(s.url);
    await rest.createBranch({ name: 'feature' });
    await rest.applySchema({ branch: 'feature', schema: 'node Person { id: string @key\n name: string }' });
    await rest.write({ branch: 'feature', ops: [{ op: 'insert', table: 'Person', values: { id: 'ada', name: 'Lovelace' } }] });
  });
  afterAll(async () => {
    await browser?.close();
    await s.close();
  });

  it('names no external script, stylesheet, image or font', async () => {
    const html = await (await fetch(`${s.url}/graphql`, { headers: { accept: 'text/html' } })).text();
    const external = /<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//gi;
    expect(html.match(external) ?? []).toEqual([]);
    expect(html.match(/@import\s+(?:url\()?["']?(?:https?:)?\/\//gi) ?? []).toEqual([]);
    expect(html).toContain('branchgraph GraphiQL');
  });

  it('is a small page whose bundle every page shares, cached for good, readable without a token', async () => {
    const locked = await testServer({ tokens: 'read:reader-token,admin:admin-token' });
    try {
      const admin = new RestClient(locked.url, 'admin-token');
      await admin.createBranch({ name: 'feature' });
      await admin.applySchema({ branch: 'feature', schema: 'node Person { id: string @key }' });
      const created = await fetch(`${locked.url}/graphs`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'crm' }),
      });
      expect(created.status).toBe(201);
      const assetsOf = async (pagePath: string, token?: string): Promise<string[]> => {
        const headers: Record<string, string> = { accept: 'text/html', ...(token ? { authorization: `Bearer ${token}` } : {}) };
        const r = await fetch(`${locked.url}${pagePath}`, { headers });
        const html = await r.text();
        expect([r.status, html.length < 10_000]).toEqual([200, true]);
        return [...html.matchAll(/(?:src|href)="(\.[^"]+)"/g)].map((m) => new URL(m[1] ?? '', `${locked.url}${pagePath}`).href);
      };
      const root = await assetsOf('/graphql');
      expect(root.map((u) => u.split('/').pop())).toEqual(['favicon.ico', 'graphiql.css', 'graphiql.js']);
      // A branch's page and a hosted graph's climb back to the same root copy.
      expect(await assetsOf('/branches/feature/graphql', 'reader-token')).toEqual(root);
      expect(await assetsOf('/graphs/crm/graphql')).toEqual(root);
      for (const url of [...root, root[2]?.replace('graphiql.js', 'graphql.worker.js') ?? '']) {
        const r = await fetch(url);
        expect([r.status, r.headers.get('cache-control'), (await r.arrayBuffer()).byteLength > 1000]).toEqual([
          200,
          'public, max-age=31536000, immutable',
          true,
        ]);
      }
      // Another version (a page cached from an older release) or file is not found, with the usual error body.
      const stale = await fetch(root[2]?.replace(/\/[^/]+\/graphiql\.js$/, '/0.0.0/graphiql.js') ?? '');
      expect([stale.status, (await stale.json()).error.code]).toEqual([404, 'not_found']);
      for (const name of ['constructor', '__proto__', 'toString', '..%2Fpackage.json']) {
        const odd = await fetch(root[2]?.replace(/graphiql\.js$/, name) ?? '');
        expect([name, odd.status]).toEqual([name, 404]);
      }
    } finally {
      await locked.close();
    }
  });

  it.skipIf(!HAVE_BROWSER)(
    'renders the editor and runs a query in headless Chromium with the network cut off',
    async () => {
      browser ??= await launchBrowser();
      const { page, refused, errors } = await offlinePage(browser, s.url);
      await page.goto(`${s.url}/graphql`, { waitUntil: 'load', timeout: 30_000 });
      await page.waitForSelector('.graphiql-execute-button', { timeout: 30_000 });
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: path.join(OUT, 'graphiql-1-editor.png') });
      await page.click('.graphiql-execute-button');
      // The result pane shows the branches the server has.
      await page.waitForFunction(() => document.querySelector('.result-window, .graphiql-response')?.textContent?.includes('feature'), {
        timeout: 30_000,
      });
      await page.screenshot({ path: path.join(OUT, 'graphiql-2-result.png') });
      console.log(`GraphiQL screenshots: ${path.join(OUT, 'graphiql-1-editor.png')}, ${path.join(OUT, 'graphiql-2-result.png')}`);
      expect(refused).toEqual([]);
      expect(errors).toEqual([]);
      const result = await page.evaluate(() => document.querySelector('.result-window, .graphiql-response')?.textContent ?? '');
      expect(result).toMatch(/"name":\s*"main"/);
    },
    90_000,
  );

  it.skipIf(!HAVE_BROWSER)(
    "opens a branch's typed page with a query generated from its tables, offline, and runs it",
    async () => {
      browser ??= await launchBrowser();
      const { page, refused, errors } = await offlinePage(browser, s.url);
      try {
        await page.goto(`${s.url}/branches/feature/graphql`, { waitUntil: 'load', timeout: 30_000 });
        await page.waitForSelector('.graphiql-execute-button', { timeout: 30_000 });
        await page.click('.graphiql-execute-button');
        // The result pane fills once the query has run (read as the page shows it, a fixed number of times).
        let result = '';
        for (let i = 0; i < 300 && !result.includes('Lovelace'); i++) {
          await new Promise((r) => setTimeout(r, 100));
          result = await page.evaluate(() => document.querySelector('.result-window, .graphiql-response')?.textContent ?? '');
        }
        mkdirSync(OUT, { recursive: true });
        await page.screenshot({ path: path.join(OUT, 'graphiql-3-typed.png') });
        expect(result).toContain('Lovelace');
        expect(result).toMatch(/"totalCount":\s*1/);
        // The page's editor opened with the query generated from this branch's schema.
        const editor = await page.evaluate(() => document.querySelector('.graphiql-query-editor')?.textContent ?? '');
        expect(editor).toContain('queryPerson');
        expect(refused).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    90_000,
  );
});
