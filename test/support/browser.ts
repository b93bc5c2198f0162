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
  page: Page;
  /** URLs the page asked for outside the server, refused. */
  refused: string[];
  /** Uncaught errors in the page. */
  errors: string[];
}

/** One browser per test file: pages opened on it share its HTTP cache, as a user's tabs do. */
export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
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
}

/** A new page on `browser` that may reach `serverUrl` and nothing else. */
export async function offlinePage(browser: Browser, serverUrl: string, viewport = { width: 1280, height: 800 }): Promise<OfflinePage> {
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
  return { page, refused, errors };
}
