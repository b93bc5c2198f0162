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
import { HAVE_BROWSER, offlinePage } from './support/browser.js';
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

  it.skipIf(!HAVE_BROWSER)(
    'renders the editor and runs a query in headless Chromium with the network cut off',
    async () => {
      const offline = await offlinePage(s.url);
      browser = offline.browser;
      const { page, refused, errors } = offline;
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
      const offline = await offlinePage(s.url);
      const { page, refused, errors } = offline;
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
        await offline.browser.close();
      }
    },
    90_000,
  );
});
