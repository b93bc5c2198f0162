/**
 * Headless Chromium for page tests, with the network cut off: every request
 * that does not go to the server under test (or to data: and blob: URLs)
 * is refused and recorded, and page errors are collected, so a test can
 * assert that a page needs nothing from elsewhere.
 */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** In CI the browser must be there (.ci/run installs it): a missing one fails instead of skipping. */
export const HAVE_BROWSER = existsSync(CHROMIUM) || process.env.CI !== undefined;

export interface OfflinePage {
  browser: Browser;
  page: Page;
  /** URLs the page asked for outside the server, refused. */
  refused: string[];
  /** Uncaught errors in the page. */
  errors: string[];
}

export async function offlinePage(serverUrl: string, viewport = { width: 1280, height: 800 }): Promise<OfflinePage> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const refused: string[] = [];
  const errors: string[] = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith(serverUrl) || url.startsWith('data:') || url.startsWith('blob:')) void req.continue();
    else {
      refused.push(url);
      void req.abort('internetdisconnected');
    }
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { browser, page, refused, errors };
}
