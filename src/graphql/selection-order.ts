/**
 * Results in the order of the selection, as the GraphQL specification asks
 * (§7.1: a result map's entries follow the selection set). An executor that
 * resolves fields concurrently may add a response key only once its value
 * settles, so a fast second field can come first. This plugin rebuilds each
 * result object with its keys in the order the document selects them
 * (fragments in place, in document order), recursively through objects and
 * lists; keys it does not know (none, in a valid result) keep their place
 * after the others. It changes no value.
 */
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

type Fragments = Map<string, FragmentDefinitionNode>;

/** Marks a result whose data is in selection order by construction: the plugin leaves it as it is. */
export const IN_ORDER = Symbol('in selection order');

/** Each response key of `set` with the selection sets its value is read through (several when a key repeats). */
function keysOf(set: SelectionSetNode, fragments: Fragments, seen = new Set<string>()): Map<string, SelectionSetNode[]> {
  const out = new Map<string, SelectionSetNode[]>();
  const add = (key: string, sub: SelectionSetNode | undefined) => {
    const subs = out.get(key) ?? [];
    if (sub !== undefined) subs.push(sub);
    out.set(key, subs);
  };
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) add(sel.alias?.value ?? sel.name.value, sel.selectionSet);
    else {
      const name = sel.kind === Kind.FRAGMENT_SPREAD ? sel.name.value : undefined;
      if (name !== undefined && seen.has(name)) continue;
      const inner = sel.kind === Kind.INLINE_FRAGMENT ? sel.selectionSet : fragments.get(name as string)?.selectionSet;
      if (inner === undefined) continue;
      for (const [k, subs] of keysOf(inner, fragments, name === undefined ? seen : new Set(seen).add(name)))
        for (const s of subs.length > 0 ? subs : [undefined]) add(k, s);
    }
  }
  return out;
}

/** One reordering: the document's fragments, and the keys worked out at each position so far. */
interface Walk {
  fragments: Fragments;
  keys: Map<SelectionSetNode[], Map<string, SelectionSetNode[]>>;
}

/**
 * The response keys at one position of the result, from every selection set read there. Worked out
 * once per position, not once per object: the items of a list share their selection sets.
 */
function keysAt(sets: SelectionSetNode[], walk: Walk): Map<string, SelectionSetNode[]> {
  let keys = walk.keys.get(sets);
  if (keys === undefined) {
    keys = new Map();
    for (const set of sets) for (const [k, subs] of keysOf(set, walk.fragments)) keys.set(k, [...(keys.get(k) ?? []), ...subs]);
    walk.keys.set(sets, keys);
  }
  return keys;
}

function ordered(value: unknown, sets: SelectionSetNode[], walk: Walk): unknown {
  if (Array.isArray(value)) return value.map((v) => ordered(v, sets, walk));
  if (value === null || typeof value !== 'object' || sets.length === 0) return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, subs] of keysAt(sets, walk)) if (Object.hasOwn(obj, k)) out[k] = ordered(obj[k], subs, walk);
  for (const k of Object.keys(obj)) if (!Object.hasOwn(out, k)) out[k] = obj[k];
  return out;
}

/** `data` reordered by the operation `document` runs (`operationName` picks it among several). */
export function inSelectionOrder(data: unknown, document: DocumentNode, operationName?: string | null): unknown {
  const fragments: Fragments = new Map();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const op = document.definitions.find(
    (d) =>
      d.kind === Kind.OPERATION_DEFINITION && (operationName === undefined || operationName === null || d.name?.value === operationName),
  );
  return op?.kind === Kind.OPERATION_DEFINITION ? ordered(data, [op.selectionSet], { fragments, keys: new Map() }) : data;
}

/** The plugin: every execution result's `data` in selection order. */
export function selectionOrder() {
  return {
    onExecute({ args }: { args: { document: DocumentNode; operationName?: string | null | undefined } }) {
      return {
        onExecuteDone({ result, setResult }: { result: unknown; setResult: (r: unknown) => void }) {
          const r = result as { data?: unknown } | AsyncIterable<unknown>;
          if (r === null || typeof r !== 'object' || Symbol.asyncIterator in r || r.data === undefined || r.data === null) return;
          if (IN_ORDER in r) return;
          setResult({ ...r, data: inSelectionOrder(r.data, args.document, args.operationName) });
        },
      };
    },
  };
}
