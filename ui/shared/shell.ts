/**
 * The header every page shares: the sections (Explore, Review), the token, and who the reader
 * acts as, so nobody approves or edits as someone they did not mean to be.
 */
import { ApiError, answer, api, base, setToken, token } from './api.js';
import { byId, h, labelled, replace } from './dom.js';

export type Section = 'explore' | 'review';

const SECTIONS: [Section, string, string][] = [
  ['explore', 'Explore', '/ui/explore'],
  ['review', 'Review', '/ui'],
];

/** Draws the header into `#shell`; `onToken` runs when the reader enters another token. */
export function shell(current: Section, onToken: () => void): void {
  const input = h('input', { id: 'token', type: 'password', placeholder: 'bearer token (if required)', size: 28, autocomplete: 'off' });
  input.value = token();
  const who = h('span', { id: 'acting-as', class: 'muted', 'aria-live': 'polite' });
  input.addEventListener('change', () => {
    setToken(input.value);
    void showIdentity(who);
    onToken();
  });
  const links = SECTIONS.map(([id, label, path]) =>
    h('a', { href: base + path, 'aria-current': id === current ? 'page' : undefined, text: label }),
  );
  replace(
    byId('shell'),
    h('h1', { text: 'branchgraph' }),
    h('nav', { 'aria-label': 'sections', class: 'sections' }, links),
    labelled('token', input),
    who,
    h('span', { id: 'where', class: 'muted', text: location.host + (base || '/') }),
  );
  void showIdentity(who);
}

async function showIdentity(who: HTMLElement): Promise<void> {
  try {
    const me = await answer(api().GET('/whoami'));
    who.textContent = me.actor !== null ? `acting as ${me.actor} (${me.role})` : `no token needed here: acting as ${me.role}`;
  } catch (e) {
    who.textContent = e instanceof ApiError && e.code === 'unauthorized' ? 'not signed in: enter a token' : 'identity unknown';
  }
}
