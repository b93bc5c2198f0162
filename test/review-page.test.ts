/**
 * The review page end to end in headless Chromium, as a team uses it, with
 * every request that leaves the server refused: an admin protects main
 * (one approval, the `lint` check); the author opens a request from the
 * page, reads the pinned three-dot diffs of both sides (before the merge
 * box, as a reviewer reads), saves resolutions for its conflicts and is
 * refused an approval of their own, with its text kept; a reviewer
 * with another token comments on a row and approves; the check fails, is
 * fixed and run again; the source moves, the page says so and previews
 * again, the old approval goes stale and is given again; the merge is made
 * from the keyboard with a message and the branch deleted, and the page
 * still shows how each conflict was resolved. The header says who the
 * reader acts as throughout. A screenshot of each step goes to test-output/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { HAVE_BROWSER, launchBrowser, offlinePage } from './support/browser.js';
import { hookReceiver, type HookReceiver } from './support/hook-receiver.js';
import { testServer, type TestServer } from './support/test-server.js';

const OUT = path.resolve('test-output');
const ADMIN = 'admin-token-for-ui';
const AUTHOR = 'author-token-for-ui';
const REVIEWER = 'reviewer-token-for-ui';

const text = (p: Page, selector: string): Promise<string> => p.$eval(selector, (e) => e.textContent ?? '');
const disabled = (p: Page, selector: string): Promise<boolean> => p.$eval(selector, (e) => (e as HTMLButtonElement).disabled);

describe('review page', () => {
  let s: TestServer;
  let lint: HookReceiver;
  let browser: Browser | undefined;
  beforeAll(async () => {
    s = await testServer({
      tokens: `admin:${ADMIN}:ada,write:${AUTHOR}:wes,write:${REVIEWER}:rae`,
      env: { BRANCHGRAPH_HOOK_ALLOWLIST: '127.0.0.1', HOOK_TIMEOUT_MS: '5000', HOOK_REFRESH_MS: '0' },
    });
    lint = await hookReceiver({ status: 200, body: JSON.stringify({ status: 'fail', message: 'ann looks off' }) });
    const admin = new RestClient(s.url, ADMIN);
    const author = new RestClient(s.url, AUTHOR);
    await admin.applySchema({ branch: 'main', schema: 'node Person { id: string @key\n name: string\n age: int? }' });
    await admin.write({
      branch: 'main',
      ops: [
        { op: 'insert', table: 'Person', values: { id: 'ann', name: 'Ann', age: 30 } },
        { op: 'insert', table: 'Person', values: { id: 'bob', name: 'Bob', age: 40 } },
      ],
    });
    await author.createBranch({ name: 'feature' });
    await author.write({
      branch: 'feature',
      message: 'birthdays',
      ops: [
        { op: 'update', table: 'Person', values: { id: 'ann', age: 31 } },
        { op: 'update', table: 'Person', values: { id: 'bob', age: 41 } },
        { op: 'insert', table: 'Person', values: { id: 'cy', name: 'Cy' } },
      ],
    });
    await admin.write({
      branch: 'main',
      ops: [
        { op: 'update', table: 'Person', values: { id: 'ann', age: 32 } },
        { op: 'update', table: 'Person', values: { id: 'bob', age: 42 } },
      ],
    });
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, requiredChecks: ['lint'] });
    await admin.createHook({ url: lint.url, kind: 'check', check: 'lint' });
  });
  afterAll(async () => {
    await browser?.close();
    await s.close();
    await lint.close();
  });

  it('serves one page that names nothing outside the server', async () => {
    const res = await fetch(`${s.url}/ui`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html.match(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//gi) ?? []).toEqual([]);
  });

  it.skipIf(!HAVE_BROWSER)(
    'runs a protected merge request from open to merged in headless Chromium',
    async () => {
      browser = await launchBrowser();
      const offline = await offlinePage(browser, s.url, { width: 1280, height: 900 });
      const { page, refused, errors } = offline;
      mkdirSync(OUT, { recursive: true });
      const shots: string[] = [];
      const shot = async (name: string): Promise<void> => {
        shots.push(name);
        await page.screenshot({ path: path.join(OUT, `review-${name}.png`), fullPage: true });
      };
      const useToken = async (token: string): Promise<void> => {
        await page.$eval('#token', (e) => {
          (e as HTMLInputElement).value = '';
        });
        await page.type('#token', token);
        await page.$eval('#token', (e) => e.dispatchEvent(new Event('change')));
      };
      /** Every action marks the view busy until it has been read again whole. */
      const idle = async (): Promise<void> => {
        await page.waitForFunction(() => document.getElementById('view')?.getAttribute('aria-busy') === 'false');
      };
      const revisions = (): Promise<number> => page.$$eval('tr[data-revision]', (r) => r.length);
      /** Wait for the request view to show revision `n` after an action (every action re-reads the request). */
      const settled = async (n: number): Promise<void> => {
        await page.waitForFunction(
          (k) =>
            document.getElementById('view')?.getAttribute('aria-busy') === 'false' &&
            document.querySelector(`tr[data-revision="${k}"]`) !== null,
          {},
          n,
        );
      };

      await page.goto(`${s.url}/ui`, { waitUntil: 'load' });
      await useToken(AUTHOR);
      await page.waitForFunction(() => /No open requests/.test(document.getElementById('requests')?.textContent ?? ''));
      await page.waitForFunction(() => /acting as wes \(write\)/.test(document.getElementById('acting-as')?.textContent ?? ''));

      // The author opens the request from the page.
      await page.click('#new-request');
      await page.waitForSelector('#new-source');
      expect(await page.$eval('#new-source', (e) => (e as HTMLSelectElement).value)).toBe('feature');
      expect(await page.$eval('#new-target', (e) => (e as HTMLSelectElement).value)).toBe('main');
      await page.type('#new-title', 'Birthdays');
      await page.type('#new-description', 'Ages as of this year.');
      await page.click('#open-request');
      await page.waitForSelector('#request-title');
      await settled(1);
      expect(await text(page, '#request-state')).toBe('open');
      expect(await text(page, '#request-description')).toBe('Ages as of this year.');
      expect(await disabled(page, '#merge')).toBe(true);
      expect(await text(page, '#reasons')).toContain('2 conflicts are unresolved');
      expect(await text(page, '#reasons')).toContain('0 of 1 required approvals');
      // What feature brings, pinned to the revision, with the changed property marked.
      expect(await page.$$eval('#changes tr[data-change]', (r) => r.map((x) => x.getAttribute('data-change')))).toEqual([
        'Person ann',
        'Person bob',
        'Person cy',
      ]);
      expect(await page.$$eval('#changes tr[data-change="Person ann"] tr.chg', (r) => r.map((x) => x.getAttribute('data-prop')))).toEqual([
        'age',
      ]);
      expect(await text(page, '#changes tr[data-change="Person ann"] tr[data-prop="age"]')).toContain('3031');
      // And what main did meanwhile.
      expect(await text(page, '#target-changes tr[data-change="Person ann"] tr[data-prop="age"]')).toContain('3032');
      expect(await page.$$eval('#commits tr[data-commit] td:nth-child(4)', (r) => r.map((x) => x.textContent))).toEqual(['birthdays']);
      expect(await page.$$eval('tr[data-conflict]', (r) => r.map((x) => x.getAttribute('data-conflict')))).toEqual([
        'Person ann age',
        'Person bob age',
      ]);
      expect(await page.$$eval('tr[data-conflict="Person ann age"] td', (r) => r.slice(2, 5).map((x) => x.textContent))).toEqual([
        '30',
        '31',
        '32',
      ]);
      // The diff and the conflicts come first, the merge box last, as the decision comes after reading.
      const order = await page.evaluate(() => {
        const at = (id: string) => [...(document.getElementById('view')?.querySelectorAll('[id]') ?? [])].findIndex((e) => e.id === id);
        return ['conflicts', 'changes', 'target-changes', 'reviews', 'merge-box'].map(at);
      });
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(await page.evaluate(() => document.getElementById('view')?.lastElementChild?.id)).toBe('merge-box');
      // Every control in the view has a name a screen reader can say.
      const unnamed = await page.$$eval('input, select, textarea', (list) =>
        list.filter((c) => (c as HTMLInputElement).labels?.length === 0 && !c.getAttribute('aria-label')).map((c) => c.outerHTML),
      );
      expect(unnamed).toEqual([]);
      await shot('1-opened');

      // The author resolves: ann by a value, bob by the strategy, saved on the request.
      await page.select('select.choice[data-i="0"]', 'value');
      await page.type('input.value[data-i="0"]', '35');
      await page.select('#strategy', 'source-wins');
      await page.click('#save-resolutions');
      await settled(2);
      expect(await text(page, '#conflict-summary')).toBe('2 conflict(s); all resolved by the saved resolutions.');
      expect(await page.$eval('select.choice[data-i="0"]', (e) => (e as HTMLSelectElement).value)).toBe('value');
      expect(await page.$eval('input.value[data-i="0"]', (e) => (e as HTMLInputElement).value)).toBe('35');
      expect(await page.$eval('#strategy', (e) => (e as HTMLSelectElement).value)).toBe('source-wins');
      // An author may not approve their own request; what they wrote stays in the form.
      await page.select('#verdict', 'approve');
      await page.type('#review-body', 'Ready from my side.');
      await page.click('#submit-review');
      await idle();
      await page.waitForSelector('#action-error');
      expect(await text(page, '#action-error')).toMatch(/^forbidden: /);
      expect(await page.$eval('#review-body', (e) => (e as HTMLTextAreaElement).value)).toBe('Ready from my side.');
      expect(await page.$eval('#verdict', (e) => (e as HTMLSelectElement).value)).toBe('approve');
      await page.$eval('#review-body', (e) => {
        (e as HTMLTextAreaElement).value = '';
      });
      await shot('2-resolved');

      // A reviewer comments on one row of the diff and approves.
      await useToken(REVIEWER);
      await settled(2);
      await page.waitForFunction(() => /acting as rae \(write\)/.test(document.getElementById('acting-as')?.textContent ?? ''));
      await page.click('#changes tr[data-change="Person cy"] button');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('review-body');
      expect(await page.$eval('#on-key', (e) => (e as HTMLInputElement).value)).toBe('cy');
      await page.type('#review-body', 'Cy has no age?');
      await page.click('#submit-review');
      await idle();
      expect(await text(page, '[data-review="1"]')).toContain('rae comment on Person cy on revision 2');
      await page.select('#verdict', 'approve');
      await page.type('#review-body', 'Looks right.');
      await page.click('#submit-review');
      await idle();
      expect(await page.$('[data-review="2"]')).not.toBeNull();
      expect(await text(page, '#approvals')).toBe('1 of 1 required approval(s): rae');
      // The check failed on this revision, so the merge stays closed.
      await page.waitForFunction(() => /fail/.test(document.querySelector('tr[data-check="lint"]')?.textContent ?? ''));
      expect(await text(page, '#reasons')).toContain('check lint failed: ann looks off');
      expect(await disabled(page, '#merge')).toBe(true);
      await shot('3-approved');

      // The cause is fixed and the check asked again.
      lint.answer = { status: 200, body: JSON.stringify({ status: 'pass' }) };
      await page.click('#run-checks');
      await idle();
      await page.waitForSelector('#mergeable');
      expect(await disabled(page, '#merge')).toBe(false);
      await shot('4-checked');

      // The source moves: the page says so, Merge closes until it is previewed again.
      await new RestClient(s.url, AUTHOR).write({
        branch: 'feature',
        ops: [{ op: 'insert', table: 'Person', values: { id: 'dee', name: 'Dee' } }],
      });
      const id = await page.evaluate(() => /^#request=(.+)$/.exec(location.hash)?.[1] ?? '');
      await page.click(`nav button[data-request="${id}"]`);
      await page.waitForSelector('#stale');
      expect(await text(page, '#stale')).toContain('feature moved since revision 2');
      expect(await disabled(page, '#merge')).toBe(true);
      expect(await text(page, '#conflicts')).toBe('Preview again to list the conflicts at the branches as they are.');
      await shot('5-stale');
      await page.click('#revise');
      await settled(3);
      expect(await revisions()).toBe(3);
      expect(await page.$('#stale')).toBeNull();
      expect(await text(page, '[data-review="2"]')).toContain('(stale');
      expect(await text(page, '#approvals')).toBe('0 of 1 required approval(s)');
      await page.select('#verdict', 'approve');
      await page.click('#submit-review');
      await idle();
      expect(await page.$('[data-review="3"]')).not.toBeNull();
      await page.click('#run-checks');
      await idle();
      await page.waitForSelector('#mergeable');

      // The merge, from the keyboard: a message, the branch deleted, Enter on Merge.
      await page.focus('#merge-message');
      await page.keyboard.type('Birthdays, reviewed');
      await page.focus('#delete-branch');
      await page.keyboard.press('Space');
      await page.focus('#merge');
      await page.keyboard.press('Enter');
      await idle();
      await page.waitForSelector('#merged');
      expect(await text(page, '#request-state')).toBe('merged');
      expect(await page.$('#merge')).toBeNull();
      await page.waitForFunction(() => /No open requests/.test(document.getElementById('requests')?.textContent ?? ''));
      // How the conflicts were resolved stays readable after the merge.
      expect(await page.$$eval('#resolved tr[data-resolved] td', (r) => r.map((x) => x.textContent))).toEqual([
        'Person ann.age',
        'value',
        '35',
      ]);
      expect(await text(page, '#resolved-strategy')).toBe('The rest: source wins.');
      await shot('6-merged');
      console.log(`review page screenshots: ${OUT}/review-{${shots.join(',')}}.png`);

      const api = new RestClient(s.url, ADMIN);
      const rows = await api.rows({ table: 'Person', at: { branch: 'main' } });
      expect(rows.items.map((r) => [r.key, r.row.age])).toEqual([
        ['ann', 35],
        ['bob', 41],
        ['cy', null],
        ['dee', null],
      ]);
      const head = (await api.log({ at: { branch: 'main' }, limit: 1 })).commits[0];
      expect(head).toMatchObject({ kind: 'merge', message: 'Birthdays, reviewed', request: id, actor: 'rae' });
      await expect(api.getBranch({ name: 'feature' })).rejects.toMatchObject({ code: 'not_found' });
      expect(refused).toEqual([]);
      expect(errors).toEqual([]);
    },
    120_000,
  );
});
