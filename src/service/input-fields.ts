/**
 * The fields of an operation's input contract, with the kind of value each
 * holds: what the REST edge needs to read query parameters (numbers and
 * booleans arrive as text, filters as JSON), what the REST client needs to
 * spell refs, and what the contract tests compare `openapi.yaml` and the
 * SDL against.
 */
import { globalRegistry, type z } from 'zod';

export type FieldKind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'ref' | 'enum' | 'stream';

export interface InputField {
  name: string;
  kind: FieldKind;
  required: boolean;
}

type Def = { type: string; innerType?: ZodLike; in?: ZodLike; options?: ZodLike[]; shape?: Record<string, ZodLike>; schema?: ZodLike };
type ZodLike = { _zod: { def: Def } } | { def: Def };

const defOf = (s: ZodLike): Def => ('_zod' in s ? s._zod.def : s.def);

/** A field's kind and whether it may be absent, looking through optional, default, transform and pipe wrappers. */
function describe(schema: ZodLike): { kind: FieldKind; required: boolean } {
  let s = schema;
  let required = true;
  for (;;) {
    const d = defOf(s);
    if (d.type === 'optional' || d.type === 'nullable' || d.type === 'default') {
      required = false;
      s = d.innerType as ZodLike;
    } else if (d.type === 'pipe') s = d.in as ZodLike;
    else if (d.type === 'union') return { kind: isRefUnion(d) ? 'ref' : allNumbers(d) ? 'number' : 'string', required };
    // A body that may stream but is text on every transport (inputs.ts `textBody`) is text to the documents.
    else if (d.type === 'custom' && (globalRegistry.get(s as z.ZodType) as { type?: string } | undefined)?.type === 'string')
      return { kind: 'string', required };
    else return { kind: kindOf(d.type), required };
  }
}

/** A union of number literals (a merge's width: 1, 2 or 4). */
function allNumbers(d: Def): boolean {
  return (d.options ?? []).every(
    (o) => defOf(o).type === 'literal' && ((defOf(o) as { values?: unknown[] }).values ?? []).every((v) => typeof v === 'number'),
  );
}

function isRefUnion(d: Def): boolean {
  return (d.options ?? []).some((o) => {
    const od = defOf(o);
    return od.type === 'pipe' && defOf(od.in as ZodLike).type === 'object';
  });
}

function kindOf(type: string): FieldKind {
  if (type === 'int' || type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'object' || type === 'record') return 'object';
  if (type === 'array') return 'array';
  if (type === 'enum' || type === 'literal') return 'enum';
  if (type === 'custom') return 'stream';
  return 'string';
}

/** The input fields of an operation's contract (an object schema, possibly refined). */
export function inputFields(schema: z.ZodType): InputField[] {
  const shape = (schema as unknown as { shape?: Record<string, ZodLike> }).shape ?? {};
  return Object.entries(shape).map(([name, s]) => ({ name, ...describe(s) }));
}
