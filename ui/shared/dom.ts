/**
 * Building the pages' elements: one small helper instead of a framework, so a page is plain DOM
 * that tests and screen readers see as it is. Text always goes in as text, never as HTML.
 */

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | null>;

/** An element with attributes (`text` sets its text; false, null and undefined leave one out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, children: Child[] = []): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

/** A button that runs `onClick`. */
export function button(label: string, onClick: (b: HTMLButtonElement) => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs, text: label });
  b.addEventListener('click', () => onClick(b));
  return b;
}

/** A control with its visible label (every control has one). */
export function labelled(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', {}, [`${label} `, control]);
}

/** A table with column headers. */
export function tableOf(headers: string[], rows: HTMLTableRowElement[], attrs: Attrs = {}): HTMLTableElement {
  const head = h(
    'tr',
    {},
    headers.map((t) => h('th', { scope: 'col', text: t })),
  );
  return h('table', attrs, [h('thead', {}, [head]), h('tbody', {}, rows)]);
}

/** A cell holding a value as text. */
export function cell(v: unknown, cls?: string): HTMLTableCellElement {
  return h('td', { text: valueText(v), class: cls });
}

/** A value as a person reads it: strings as they are, everything else as JSON, nothing for null. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A status line: ok, bad or warn. */
export function statusBox(kind: 'ok' | 'bad' | 'warn', message: string, id?: string): HTMLDivElement {
  return h('div', { class: `status ${kind}`, id, role: kind === 'bad' ? 'alert' : undefined, text: message });
}

/** The first ten characters of an id, enough to tell commits apart on screen. */
export const short = (id: string | null | undefined): string => (id ? String(id).slice(0, 10) : '');

/** A time as the reader's locale writes it. */
export function when(t: string): string {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? t : d.toLocaleString();
}

/** The element with this id, which the page's own markup holds. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e as T;
}

/** Empties an element and fills it again. */
export function replace(parent: HTMLElement, ...children: Child[]): void {
  parent.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}
