/**
 * The pure per-entity three-way merge.
 *
 * Each side's state of a key is a row or null (absent or deleted). A side is
 * changed when its state differs from the base's; equality is typed, by
 * canonical encoding, so null, "" and [] all differ.
 * - source unchanged → target; target unchanged → source; both equal → either;
 * - both inserted differently → DivergentInsert, naming the differing properties;
 * - one deleted, the other updated → DeleteVsUpdate;
 * - both updated differently → merged property by property: each property
 *   takes the side that changed it; a property both sides changed to
 *   different values is a DivergentUpdate naming that property.
 * Delete-then-reinsert on one side is an update (or no change when equal).
 */
import { canonicalJson } from '../model/canonical.js';
import type { Conflict } from '../model/conflict.js';
import { changedProps, type Row } from '../model/values.js';
import { sameRuns, type TableVersion } from '../table/table-version.js';

/** A merged state, or conflicts; for a row both sides updated, `merged` holds the property-wise merge with the target's value where they conflict. */
export type EntityMerge = { row: Row | null } | { conflicts: Conflict[]; merged?: Row };

/** Equal by canonical encoding, without encoding the common case (two equal or unequal scalars). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return canonicalJson(a) === canonicalJson(b);
}

/** Rows equal as their canonical encodings are: the same defined properties, each the same value. */
function same(a: Row | null, b: Row | null): boolean {
  if (a === null || b === null) return a === b;
  if (a === b) return true;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => b[k] !== undefined && sameValue(a[k], b[k]));
}

/**
 * `brief` leaves every conflict's message empty, for conflicts only counted (a report holds one
 * page of them; describing the rest is most of their cost).
 */
export function mergeEntity(table: string, key: string, base: Row | null, source: Row | null, target: Row | null, brief = false): EntityMerge {
  if (same(source, base)) return { row: target };
  if (same(target, base)) return { row: source };
  if (same(source, target)) return { row: source };
  if (base === null) {
    const props = brief ? [] : changedProps(source as Row, target as Row);
    return {
      conflicts: [
        {
          kind: 'DivergentInsert',
          table,
          key,
          property: null,
          base: null,
          source,
          target,
          message: brief ? '' : `${table} ${key} was inserted on both sides with different ${props.join(', ')}`,
        },
      ],
    };
  }
  if (source === null || target === null) {
    const deleted = source === null ? 'source' : 'target';
    const updated = source === null ? 'target' : 'source';
    return {
      conflicts: [
        {
          kind: 'DeleteVsUpdate',
          table,
          key,
          property: null,
          base,
          source,
          target,
          message: brief ? '' : `${table} ${key} was deleted on the ${deleted} and updated on the ${updated} (${changedProps(base, (source ?? target) as Row).join(', ')})`,
        },
      ],
    };
  }
  const names = [...new Set([...Object.keys(base), ...Object.keys(source), ...Object.keys(target)])].sort();
  const merged: Row = {};
  const conflicts: Conflict[] = [];
  for (const p of names) {
    if (sameValue(source[p], base[p])) merged[p] = target[p] ?? null;
    else if (sameValue(target[p], base[p]) || sameValue(source[p], target[p])) merged[p] = source[p] ?? null;
    else {
      const [b, s, t] = brief ? ['', '', ''] : [base[p], source[p], target[p]].map((v) => canonicalJson(v ?? null));
      merged[p] = target[p] ?? null;
      conflicts.push({
        kind: 'DivergentUpdate',
        table,
        key,
        property: p,
        base: base[p] ?? null,
        source: source[p] ?? null,
        target: target[p] ?? null,
        message: `${table} ${key}: ${p} changed to ${s} on the source and to ${t} on the target (base ${b})`,
      });
    }
  }
  return conflicts.length > 0 ? { conflicts, merged } : { row: merged };
}

/**
 * The table-level rule above the per-entity one: a table unchanged on the
 * source (or changed the same way on both sides) keeps the target's version,
 * a table changed only on the source is adopted from it by reference, and
 * only a table changed on both sides needs a per-key merge.
 */
export function tableMergeAction(base: TableVersion, source: TableVersion, target: TableVersion): 'keep_target' | 'adopt_source' | 'prepare' {
  if (sameRuns(source, target) || sameRuns(source, base)) return 'keep_target';
  if (sameRuns(target, base)) return 'adopt_source';
  return 'prepare';
}
