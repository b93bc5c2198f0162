/**
 * Typed filters built from the schema: per column a control that fits its type (text contains,
 * number and date ranges, a choice for booleans and enums), turned into the `where` the API
 * takes (model/row-filter.ts). Pure but for making the controls.
 */
import { h } from '../shared/dom.js';
import type { PropDef } from './schema-info.js';

export type Where = Record<string, Record<string, unknown>>;

/** The filter controls of some columns, each reading back its part of the where. */
export interface FilterControl {
  element: HTMLElement;
  read(): [string, Record<string, unknown>] | null;
}

const RANGED = new Set(['int', 'float', 'date', 'datetime']);

/** A number or date typed in a range box, as the property's type holds it. */
function bound(p: PropDef, text: string): unknown {
  return p.type.kind === 'int' || p.type.kind === 'float' ? Number(text) : text;
}

export function filterControl(p: PropDef, current: Record<string, unknown> | undefined): FilterControl | null {
  const id = `filter-${p.name}`;
  const kind = p.type.kind;
  if (kind === 'string') {
    const input = h('input', { id, size: 12, value: String(current?.contains ?? '') });
    return {
      element: h('label', { for: id }, [`${p.name} contains`, input]),
      read: () => (input.value !== '' ? [p.name, { contains: input.value }] : null),
    };
  }
  if (RANGED.has(kind)) {
    const type = kind === 'date' ? 'date' : kind === 'datetime' ? 'text' : 'number';
    const lo = h('input', { id: `${id}-min`, type, size: 8, value: String(current?.gte ?? ''), 'aria-label': `${p.name} at least` });
    const hi = h('input', { id: `${id}-max`, type, size: 8, value: String(current?.lte ?? ''), 'aria-label': `${p.name} at most` });
    return {
      element: h('label', {}, [`${p.name} from … to`, h('span', {}, [lo, ' ', hi])]),
      read: () => {
        const c = { ...(lo.value !== '' ? { gte: bound(p, lo.value) } : {}), ...(hi.value !== '' ? { lte: bound(p, hi.value) } : {}) };
        return Object.keys(c).length > 0 ? [p.name, c] : null;
      },
    };
  }
  if (kind === 'bool' || kind === 'enum') {
    const values = kind === 'bool' ? ['true', 'false'] : p.type.kind === 'enum' ? p.type.values : [];
    const chosen = current?.eq === undefined ? '' : String(current.eq);
    const select = h('select', { id }, [
      h('option', { value: '', text: 'any' }),
      ...values.map((v) => h('option', { value: v, text: v, selected: v === chosen })),
    ]);
    return {
      element: h('label', { for: id }, [p.name, select]),
      read: () => (select.value === '' ? null : [p.name, { eq: kind === 'bool' ? select.value === 'true' : select.value }]),
    };
  }
  return null;
}

/** The where the controls hold, or undefined when none filters. */
export function whereOf(controls: FilterControl[]): Where | undefined {
  const parts = controls.map((c) => c.read()).filter((x): x is [string, Record<string, unknown>] => x !== null);
  return parts.length > 0 ? Object.fromEntries(parts) : undefined;
}

/** A value typed into a cell, as its property's type holds it; an empty box unsets an optional one. */
export function parseCell(p: PropDef, text: string): unknown {
  if (text === '' && p.optional) return null;
  switch (p.type.kind) {
    case 'int':
    case 'float': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`${p.name} must be a number, not "${text}"`);
      return n;
    }
    case 'bool':
      if (text !== 'true' && text !== 'false') throw new Error(`${p.name} must be true or false, not "${text}"`);
      return text === 'true';
    case 'json':
    case 'vector':
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`${p.name} must be JSON`);
      }
    default:
      return text;
  }
}
