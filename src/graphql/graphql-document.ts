/**
 * The admin GraphQL SDL, generated from the operation table, as `openapi.yaml` is.
 *
 * Each GraphQL binding of an operation becomes one field of `Query` or `Mutation`:
 * - its arguments are the operation's input fields (JSON Schema of the input contract), less the
 *   binding's `omit`; a binding that names an input type (`input: 'MergeInput'`) takes the route's
 *   path parameters as arguments and the rest inside that input object;
 * - its type is the operation's result contract, or the field of it the binding picks, or the
 *   binding's own `output` schema when it reshapes the result.
 *
 * Types come from the zod schemas by these rules, so one rule decides every field:
 * - an object schema is a type named by its `title`, else its id, else by where it was met
 *   (`Branch` + `protection` → `BranchProtection`); an input object adds `Input` to that name;
 * - a union of objects is a GraphQL union, resolved by each value's `__typename`;
 * - an enum with a title or an id whose values are GraphQL names is an enum; other enums are strings;
 * - a string whose format is `id` is `ID`;
 * - an integer is `Int`, but one whose format is `int64` (a byte count) is `Float`: GraphQL's `Int`
 *   stops at 2^31, and a `Float` carries every integer up to 2^53 exactly; other numbers are `Float`;
 * - a ref (text or object) is a `String`, as GraphQL arguments spell it;
 * - a record, or anything else without a fixed shape, is `JSON`.
 * A name met twice with two shapes is an error, never a silent merge.
 *
 * The overlay (`schema/branchgraph.overlay.graphql`) holds what the table has no place for: the
 * `JSON` scalar, the `Subscription` type, and the descriptions of `Query` and `Mutation`.
 *
 * Pure: the caller reads the overlay and writes the document.
 */
import { Kind, parse, print, type DefinitionNode, type ObjectTypeDefinitionNode } from 'graphql';
import { z } from 'zod';
import type { GraphqlBinding, Operation } from '../service/operation.js';

type Js = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  anyOf?: Js[];
  oneOf?: Js[];
  properties?: Record<string, Js>;
  required?: string[];
  items?: Js;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  title?: string;
  description?: string;
};
type Io = 'input' | 'output';
/** Where a schema is met: its document's definitions, which side of the API, and a name for it if it has none. */
interface Place {
  defs: Record<string, Js>;
  io: Io;
  hint: string;
}

const INT32 = 2 ** 31 - 1;
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** The SDL: the overlay's definitions around one field per binding and every type those fields reach. */
export function graphqlDocument(ops: readonly Operation[], overlay: string): string {
  const types = new TypeSet();
  const fields: Record<'Query' | 'Mutation', string[]> = { Query: [], Mutation: [] };
  for (const op of ops) for (const g of op.graphql ?? []) fields[g.type].push(fieldOf(op, g, types));
  const extra = parse(overlay).definitions;
  const roots = (['Query', 'Mutation'] as const)
    .filter((name) => fields[name].length > 0)
    .map((name) => {
      const given = extra.find((d): d is ObjectTypeDefinitionNode => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === name);
      return `${describe(given?.description?.value)}type ${name} {\n${fields[name].join('\n')}\n}`;
    });
  const rest = extra.filter(
    (d: DefinitionNode) => !(d.kind === Kind.OBJECT_TYPE_DEFINITION && ['Query', 'Mutation'].includes(d.name.value)),
  );
  const text = [...roots, ...rest.map((d) => print(d)), ...types.printed()].join('\n\n');
  return `${print(parse(text))}\n`;
}

/** One field of Query or Mutation, with the types it reaches added to `types`. */
function fieldOf(op: Operation, g: GraphqlBinding<unknown>, types: TypeSet): string {
  const input = jsonSchema(op.input, 'input');
  const omit = new Set(g.omit ?? []);
  const all = Object.entries(input.root.properties ?? {}).filter(([name]) => !omit.has(name));
  const required = new Set(input.root.required ?? []);
  const pathFields = new Set([...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => op.http.params?.[m[1] ?? ''] ?? m[1] ?? ''));
  const args: string[] = [];
  const wrapped = g.input === undefined ? [] : all.filter(([name]) => !pathFields.has(name));
  for (const [name, s] of all) {
    if (wrapped.some(([w]) => w === name)) continue;
    args.push(`${name}: ${types.ref(s, { defs: input.defs, io: 'input', hint: pascal(name) }, required.has(name))}`);
  }
  if (g.input !== undefined && wrapped.length > 0) {
    const wrapper: Js = {
      type: 'object',
      properties: Object.fromEntries(wrapped),
      required: wrapped.map(([n]) => n).filter((n) => required.has(n)),
    };
    const at = { defs: input.defs, io: 'input' as const, hint: g.input };
    args.push(`input: ${types.ref({ ...wrapper, title: g.input }, at, wrapper.required?.length !== 0)}`);
  }
  const output = jsonSchema(g.output ?? (g.pick !== undefined ? fieldSchema(op.output, g.pick) : op.output), 'output');
  const type = types.ref(output.root, { defs: output.defs, io: 'output', hint: pascal(g.field) }, true);
  return `${describe(g.description ?? op.summary)}${g.field}${args.length > 0 ? `(${args.join(', ')})` : ''}: ${type}`;
}

/** The schema of one field of an object result (a binding's `pick`). */
function fieldSchema(output: z.ZodType, field: string): z.ZodType {
  const shape = (output as Partial<z.ZodObject>).shape;
  const s = shape?.[field];
  if (s === undefined) throw new Error(`the result has no field ${field} to pick`);
  return s as z.ZodType;
}

function jsonSchema(schema: z.ZodType, io: Io): { root: Js; defs: Record<string, Js> } {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Js & { $defs?: Record<string, Js> };
  const { $defs = {}, $schema: _, ...root } = raw;
  return { root: root as Js, defs: { ...$defs, '#': root as Js } };
}

/** Every named type the fields reach, in the order first met, each printed once. */
class TypeSet {
  private readonly bodies = new Map<string, string>();

  /** The GraphQL type of schema `s`, declaring the named types it needs. */
  ref(s: Js, at: Place, required: boolean): string {
    const { inner, nullable } = unwrapNull(s);
    const type = this.base(inner, at);
    // A value of any shape may be null, whatever the contract requires.
    return `${type}${required && !nullable && !(at.io === 'output' && type === 'JSON' && isAny(inner)) ? '!' : ''}`;
  }

  printed(): string[] {
    return [...this.bodies.values()];
  }

  private base(s: Js, at: Place): string {
    if (s.$ref !== undefined) {
      // `#` is the whole schema: a shape that holds itself, met from its root.
      if (s.$ref === '#') return this.base(at.defs['#'] ?? {}, at);
      const id = s.$ref.replace(/^#\/\$defs\//, '');
      return this.base({ title: id, ...at.defs[id] }, { ...at, hint: id });
    }
    if (s.format === 'id') return 'ID';
    const alternatives = s.anyOf ?? s.oneOf;
    if (alternatives !== undefined) return this.union(s, alternatives, at);
    if (s.const !== undefined) return scalarOf(typeof s.const, s);
    if (s.enum !== undefined) return this.enumOf(s);
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    if (type === 'array') {
      const item = unwrapNull(s.items ?? {});
      return `[${this.base(item.inner, { ...at, hint: singular(at.hint) })}${item.nullable ? '' : '!'}]`;
    }
    if (type === 'object' && s.properties !== undefined && Object.keys(s.properties).length > 0) return this.object(s, at);
    if (type === 'string' || type === 'boolean' || type === 'integer' || type === 'number') return scalarOf(type, s);
    return 'JSON';
  }

  private union(s: Js, alternatives: Js[], at: Place): string {
    const real = alternatives.filter((a) => a.type !== 'null');
    const isObject = (a: Js) => a.$ref !== undefined || a.type === 'object';
    if (real.length === 1 && real[0] !== undefined) return this.base({ ...real[0], description: s.description }, at);
    if (real.every((a) => typeof a.const === 'number'))
      return real.every((a) => Number.isInteger(a.const) && Math.abs(a.const as number) <= INT32) ? 'Int' : 'Float';
    if (at.io === 'output' && real.every(isObject)) {
      const name = s.title ?? at.hint;
      const members = real.map((a, i) => this.base(a, { ...at, hint: `${name}${i + 1}` }));
      return this.declare(name, `${describe(s.description)}union ${name} = ${members.join(' | ')}`);
    }
    // A ref as text or as an object, a value of one of several scalar kinds: GraphQL spells it as text when it can.
    if (real.some((a) => a.type === 'string')) return 'String';
    return 'JSON';
  }

  private enumOf(s: Js): string {
    const values = s.enum ?? [];
    if (values.every((v) => typeof v === 'number'))
      return values.every((v) => Number.isInteger(v) && Math.abs(v as number) <= INT32) ? 'Int' : 'Float';
    const name = s.title;
    if (name === undefined || !values.every((v) => typeof v === 'string' && GRAPHQL_NAME.test(v) && !['true', 'false', 'null'].includes(v)))
      return 'String';
    return this.declare(name, `${describe(s.description)}enum ${name} {\n${values.join('\n')}\n}`);
  }

  private object(s: Js, at: Place): string {
    const base = s.title ?? at.hint;
    const name = at.io === 'input' && !base.endsWith('Input') ? `${base}Input` : base;
    if (this.bodies.get(name) === '') return name; // met again while its fields are being walked: a recursive shape
    if (!this.bodies.has(name)) this.bodies.set(name, '');
    const required = new Set(s.required ?? []);
    const lines = Object.entries(s.properties ?? {}).map(([field, p]) => {
      const type = this.ref(p, { ...at, hint: `${base}${pascal(field)}` }, required.has(field));
      return `${describe(p.description ?? unwrapNull(p).inner.description)}${field}: ${type}`;
    });
    const body = `${describe(s.description)}${at.io === 'input' ? 'input' : 'type'} ${name} {\n${lines.join('\n')}\n}`;
    if (this.bodies.get(name) === '') this.bodies.delete(name);
    return this.declare(name, body);
  }

  private declare(name: string, body: string): string {
    const had = this.bodies.get(name);
    if (had !== undefined && had !== '' && had !== body)
      throw new Error(`two different GraphQL types are named ${name}:\n${had}\n---\n${body}`);
    this.bodies.set(name, body);
    return name;
  }
}

function scalarOf(type: string, s: Js): string {
  if (type === 'boolean') return 'Boolean';
  if (type === 'string') return 'String';
  if (s.format === 'int64') return 'Float';
  if (type === 'integer') return 'Int';
  if (typeof s.const === 'number') return Number.isInteger(s.const) && Math.abs(s.const) <= INT32 ? 'Int' : 'Float';
  return 'Float';
}

/** A schema that says nothing of its value (`z.unknown()`). */
function isAny(s: Js): boolean {
  return (
    s.type === undefined &&
    s.$ref === undefined &&
    s.anyOf === undefined &&
    s.oneOf === undefined &&
    s.enum === undefined &&
    s.const === undefined
  );
}

/** A schema that may be null: what it is otherwise, and whether null is allowed. */
function unwrapNull(s: Js): { inner: Js; nullable: boolean } {
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.some((a) => a.type === 'null')) {
    const rest = alternatives.filter((a) => a.type !== 'null');
    const { anyOf: _a, oneOf: _o, ...own } = s;
    return { inner: rest.length === 1 ? { ...own, ...rest[0] } : { ...own, anyOf: rest }, nullable: true };
  }
  if (Array.isArray(s.type) && s.type.includes('null'))
    return { inner: { ...s, type: s.type.filter((t) => t !== 'null') }, nullable: true };
  return { inner: s, nullable: false };
}

function describe(text: string | undefined): string {
  return text === undefined ? '' : `${JSON.stringify(text)}\n`;
}

function pascal(name: string): string {
  return name.replace(/(^|[-_])([a-z])/g, (_, _sep: string, c: string) => c.toUpperCase()).replace(/^[a-z]/, (c) => c.toUpperCase());
}

/** The name of one item of a list field: `tables` → `table`, `properties` → `property`. */
function singular(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ss|us)$/.test(name)) return name;
  return name.replace(/s$/, '');
}
