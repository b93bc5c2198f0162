/**
 * The schema language, parsed into the schema IR.
 *
 *   # a comment
 *   node Person {
 *     id: string @key
 *     email: string? @unique
 *     age: int? @range(0, 150)
 *     role: enum(admin, member)
 *   }
 *   edge Knows: Person -> Person @cardinality(0, 5) {
 *     since: date?
 *   }
 *
 * A recursive-descent parser over a small tokenizer. Every error carries
 * `line:column` and says what was expected; all errors of a text are
 * collected where the parser can recover (at the next declaration), so a user
 * fixes them in one pass. Semantic checks (duplicate names, endpoints that are
 * not node types, keys on optional properties...) run on the parsed IR.
 */
import { ILL_FORMED_MESSAGE, isReservedName, isWellFormed } from './text.js';
import { runSteps, type Steps } from './steps.js';
import { runStepsInSlices } from './turns.js';
import { BranchgraphError, type ErrorIssue } from './errors.js';
import {
  EDGE_FROM,
  EDGE_TO,
  MAX_VECTOR_DIMS,
  SCALAR_KINDS,
  VECTOR_METRICS,
  type VectorMetric,
  TableTypeIR,
  type EdgeType,
  type NodeType,
  type PropDef,
  type PropType,
  type Schema,
  type TableType,
} from './schema.js';

type TokKind = 'ident' | 'number' | 'punct' | 'eof';
interface Token {
  kind: TokKind;
  text: string;
  line: number;
  col: number;
}

const PUNCT = ['->', '{', '}', '(', ')', ':', ',', '?', '@', ';', '*'];
const IDENT_RE = /^[A-Za-z][A-Za-z0-9_]*$/;
export const MAX_SCHEMA_BYTES = 1 << 20;

class ParseError extends Error {
  constructor(
    readonly line: number,
    readonly col: number,
    message: string,
  ) {
    super(message);
  }
}

/** Tokens read between two steps of a tokenization. */
const TOKENS_PER_STEP = 4096;

function* tokenize(text: string): Steps<Token[]> {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let col = 1;
  const advance = (n: number): void => {
    for (let k = 0; k < n; k++) {
      if (text[i] === '\n') {
        line++;
        col = 1;
      } else col++;
      i++;
    }
  };
  let stepAt = TOKENS_PER_STEP;
  while (i < text.length) {
    if (out.length >= stepAt) {
      stepAt += TOKENS_PER_STEP;
      yield;
    }
    const ch = text[i] as string;
    if (ch === '\n' || ch === ' ' || ch === '\t' || ch === '\r') {
      advance(1);
      continue;
    }
    if (ch === '#' || text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') advance(1);
      continue;
    }
    const rest = text.slice(i, i + 64);
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (ident !== null) {
      out.push({ kind: 'ident', text: ident[0], line, col });
      advance(ident[0].length);
      continue;
    }
    // A quoted name (`@embed(from: "body")`) reads as the name itself.
    const quoted = /^"([A-Za-z_][A-Za-z0-9_]*)"/.exec(rest);
    if (quoted !== null) {
      out.push({ kind: 'ident', text: quoted[1] as string, line, col });
      advance(quoted[0].length);
      continue;
    }
    const num = /^-?(\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(rest);
    if (num !== null) {
      out.push({ kind: 'number', text: num[0], line, col });
      advance(num[0].length);
      continue;
    }
    const p = PUNCT.find((q) => text.startsWith(q, i));
    if (p !== undefined) {
      out.push({ kind: 'punct', text: p, line, col });
      advance(p.length);
      continue;
    }
    throw new ParseError(line, col, `unexpected character ${JSON.stringify(ch)}`);
  }
  out.push({ kind: 'eof', text: 'end of input', line, col });
  return out;
}

class Parser {
  private pos = 0;
  readonly issues: ErrorIssue[] = [];

  constructor(private readonly toks: Token[]) {}

  private peek(): Token {
    return this.toks[this.pos] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.pos++;
    return t;
  }

  private fail(t: Token, expected: string): never {
    const found = t.kind === 'eof' ? 'end of input' : JSON.stringify(t.text);
    throw new ParseError(t.line, t.col, `expected ${expected}, found ${found}`);
  }

  private punct(p: string): Token {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== p) this.fail(t, `"${p}"`);
    return t;
  }

  private isPunct(p: string): boolean {
    const t = this.peek();
    return t.kind === 'punct' && t.text === p;
  }

  private ident(what: string): Token {
    const t = this.next();
    if (t.kind !== 'ident') this.fail(t, what);
    return t;
  }

  private number(what: string): number {
    const t = this.next();
    if (t.kind !== 'number') this.fail(t, what);
    return Number(t.text);
  }

  /** The declarations, a step each. */
  *parse(): Steps<{ types: TableType[]; positions: Map<string, Token> }> {
    const types: TableType[] = [];
    const positions = new Map<string, Token>();
    while (this.peek().kind !== 'eof') {
      if (types.length > 0) yield;
      const start = this.pos;
      try {
        const t = this.peek();
        if (t.kind === 'ident' && t.text === 'node') {
          this.next();
          const decl = this.nodeDecl();
          types.push(decl.type);
          positions.set(decl.type.name, decl.at);
        } else if (t.kind === 'ident' && t.text === 'edge') {
          this.next();
          const decl = this.edgeDecl();
          types.push(decl.type);
          positions.set(decl.type.name, decl.at);
        } else {
          this.fail(t, '"node" or "edge"');
        }
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        this.issues.push({ path: `${e.line}:${e.col}`, message: e.message });
        // Recover at the next declaration keyword.
        if (this.pos === start) this.next();
        while (
          this.peek().kind !== 'eof' &&
          !(this.peek().kind === 'ident' && ['node', 'edge'].includes(this.peek().text) && this.toks[this.pos - 1]?.text === '}')
        ) {
          this.next();
        }
      }
    }
    return { types, positions };
  }

  private nodeDecl(): { type: NodeType; at: Token } {
    const at = this.ident('a node type name');
    this.punct('{');
    const props = this.propList();
    return {
      at,
      type: { kind: 'node', name: at.text, props: props.map((p) => p.def), key: props.filter((p) => p.key).map((p) => p.def.name) },
    };
  }

  private edgeDecl(): { type: EdgeType; at: Token } {
    const at = this.ident('an edge type name');
    this.punct(':');
    const from = this.ident('the source node type');
    this.punct('->');
    const to = this.ident('the target node type');
    let cardinality: EdgeType['cardinality'] = null;
    while (this.isPunct('@')) {
      this.next();
      const attr = this.ident('an edge attribute (@cardinality)');
      if (attr.text !== 'cardinality') this.fail(attr, '"cardinality"');
      this.punct('(');
      const min = this.number('a minimum out-degree');
      this.punct(',');
      let max: number | null = null;
      if (this.isPunct('*')) this.next();
      else max = this.number('a maximum out-degree or *');
      this.punct(')');
      if (!Number.isInteger(min) || min < 0 || (max !== null && (!Number.isInteger(max) || max < min))) {
        throw new ParseError(attr.line, attr.col, 'cardinality needs whole numbers with 0 <= min <= max');
      }
      cardinality = { min, max };
    }
    let props: { def: PropDef; key: boolean }[] = [];
    if (this.isPunct('{')) {
      this.next();
      props = this.propList();
    }
    return {
      at,
      type: {
        kind: 'edge',
        name: at.text,
        from: from.text,
        to: to.text,
        props: props.map((p) => p.def),
        key: props.filter((p) => p.key).map((p) => p.def.name),
        cardinality,
      },
    };
  }

  private propList(): { def: PropDef; key: boolean }[] {
    const out: { def: PropDef; key: boolean }[] = [];
    while (!this.isPunct('}')) {
      if (this.isPunct(';') || this.isPunct(',')) {
        this.next();
        continue;
      }
      out.push(this.prop());
    }
    this.punct('}');
    return out;
  }

  private prop(): { def: PropDef; key: boolean } {
    const name = this.ident('a property name or "}"');
    this.punct(':');
    const type = this.propType();
    let optional = false;
    if (this.isPunct('?')) {
      this.next();
      optional = true;
    }
    let key = false;
    const def: PropDef = { name: name.text, type, optional, unique: false, range: null };
    while (this.isPunct('@')) {
      this.next();
      const attr = this.ident('an attribute (@key, @unique, @range, @search, @index, @embed)');
      if (attr.text === 'key') key = true;
      else if (attr.text === 'unique') def.unique = true;
      else if (attr.text === 'range') def.range = this.range(attr);
      else if (attr.text === 'search') def.search = { stem: this.option('stem', ['english', 'none']) === 'english' };
      else if (attr.text === 'index') {
        const metric = this.option('metric', VECTOR_METRICS) ?? 'cosine';
        def.index = { metric: metric as VectorMetric };
      } else if (attr.text === 'embed') {
        this.punct('(');
        this.named('from');
        def.embed = { from: this.ident('a string property to embed').text };
        this.punct(')');
      } else this.fail(attr, '"key", "unique", "range", "search", "index" or "embed"');
    }
    return { def, key };
  }

  private range(attr: Token): PropDef['range'] {
    this.punct('(');
    const min = this.peek().kind === 'number' ? this.number('a minimum') : null;
    this.punct(',');
    const max = this.peek().kind === 'number' ? this.number('a maximum') : null;
    this.punct(')');
    if (min !== null && max !== null && min > max)
      throw new ParseError(attr.line, attr.col, `range minimum ${min} is above maximum ${max}`);
    return { min, max };
  }

  /** `name: value`. */
  private named(option: string): void {
    const t = this.ident(`"${option}"`);
    if (t.text !== option) this.fail(t, `"${option}"`);
    this.punct(':');
  }

  /** An optional `(name: value)` after an attribute, the value one of `values`; undefined when absent. */
  private option(option: string, values: readonly string[]): string | undefined {
    if (!this.isPunct('(')) return undefined;
    this.next();
    this.named(option);
    const v = this.ident(values.map((x) => `"${x}"`).join(' or '));
    if (!values.includes(v.text)) this.fail(v, values.map((x) => `"${x}"`).join(' or '));
    this.punct(')');
    return v.text;
  }

  private propType(): PropType {
    const t = this.ident(`a type (${[...SCALAR_KINDS, 'enum(...)', 'vector(N)'].join(', ')})`);
    if (t.text === 'vector') {
      this.punct('(');
      const dims = this.number('a vector length');
      this.punct(')');
      if (!Number.isInteger(dims) || dims < 1 || dims > MAX_VECTOR_DIMS)
        throw new ParseError(t.line, t.col, `a vector holds 1 to ${MAX_VECTOR_DIMS} values, got ${dims}`);
      return { kind: 'vector', dims };
    }
    if (t.text === 'enum') {
      this.punct('(');
      const values = [this.ident('an enum value').text];
      while (this.isPunct(',')) {
        this.next();
        values.push(this.ident('an enum value').text);
      }
      this.punct(')');
      return { kind: 'enum', values };
    }
    if (!(SCALAR_KINDS as readonly string[]).includes(t.text))
      this.fail(t, `a type (${[...SCALAR_KINDS, 'enum(...)', 'vector(N)'].join(', ')})`);
    return { kind: t.text as (typeof SCALAR_KINDS)[number] };
  }
}

/** Semantic checks on a parsed schema, a step per type; returns issues anchored at declarations. */
function* checkSemantics(types: TableType[], positions: Map<string, Token>): Steps<ErrorIssue[]> {
  const issues: ErrorIssue[] = [];
  const at = (name: string): string => {
    const t = positions.get(name);
    return t === undefined ? name : `${t.line}:${t.col}`;
  };
  const seen = new Set<string>();
  const nodes = new Set(types.filter((t) => t.kind === 'node').map((t) => t.name));
  for (const t of types) {
    yield;
    const where = at(t.name);
    if (!IDENT_RE.test(t.name)) issues.push({ path: where, message: `type name ${t.name} must start with a letter` });
    else if (isReservedName(t.name)) issues.push({ path: where, message: `type name ${t.name} is reserved` });
    if (seen.has(t.name)) issues.push({ path: where, message: `type ${t.name} is declared twice` });
    seen.add(t.name);
    const propNames = new Set<string>();
    for (const p of t.props) {
      if (!IDENT_RE.test(p.name)) issues.push({ path: where, message: `${t.name}.${p.name}: property names start with a letter` });
      else if (isReservedName(p.name))
        issues.push({ path: where, message: `${t.name}.${p.name}: the property name ${p.name} is reserved` });
      if (propNames.has(p.name)) issues.push({ path: where, message: `${t.name}.${p.name} is declared twice` });
      propNames.add(p.name);
      if (p.range !== null && p.type.kind !== 'int' && p.type.kind !== 'float') {
        issues.push({ path: where, message: `${t.name}.${p.name}: @range applies to int and float only` });
      }
      if (p.unique && (p.type.kind === 'json' || p.type.kind === 'vector'))
        issues.push({ path: where, message: `${t.name}.${p.name}: @unique does not apply to ${p.type.kind}` });
      issues.push(...searchIssues(t, p).map((message) => ({ path: where, message: `${t.name}.${p.name}: ${message}` })));
      if (p.type.kind === 'enum' && new Set(p.type.values).size !== p.type.values.length) {
        issues.push({ path: where, message: `${t.name}.${p.name}: enum values must be distinct` });
      }
    }
    for (const k of t.key) {
      const p = t.props.find((q) => q.name === k);
      if (p?.optional) issues.push({ path: where, message: `${t.name}.${k}: a key property cannot be optional` });
      if (p?.type.kind === 'json' || p?.type.kind === 'float' || p?.type.kind === 'vector')
        issues.push({ path: where, message: `${t.name}.${k}: a key property cannot be ${p.type.kind}` });
    }
    if (t.kind === 'node' && t.key.length === 0) issues.push({ path: where, message: `node ${t.name} needs at least one @key property` });
    if (t.kind === 'edge') {
      for (const reserved of [EDGE_FROM, EDGE_TO]) {
        if (propNames.has(reserved)) issues.push({ path: where, message: `${t.name}.${reserved} is reserved for the edge's endpoint` });
      }
      if (!nodes.has(t.from)) issues.push({ path: where, message: `edge ${t.name}: source ${t.from} is not a node type` });
      if (!nodes.has(t.to)) issues.push({ path: where, message: `edge ${t.name}: target ${t.to} is not a node type` });
    }
  }
  return issues;
}

/** What is wrong with a property's search attributes (@search, @index, @embed). */
function searchIssues(t: TableType, p: PropDef): string[] {
  const out: string[] = [];
  if (p.search !== undefined && p.type.kind !== 'string') out.push('@search applies to string properties only');
  if (p.index !== undefined && p.type.kind !== 'vector') out.push('@index applies to vector properties only');
  if (p.embed !== undefined) {
    const source = t.props.find((q) => q.name === p.embed?.from);
    if (p.type.kind !== 'vector') out.push('@embed applies to vector properties only');
    else if (source === undefined || source.type.kind !== 'string')
      out.push(`@embed(from: ${p.embed.from}) must name a string property of ${t.name}`);
    else if (source.optional && !p.optional) out.push(`@embed from the optional ${source.name} needs an optional vector`);
  }
  return out;
}

/** Parse schema text; throws `schema_invalid` with every issue found. */
export function parseSchema(text: string): Schema {
  return runSteps(parseSteps(text));
}

/**
 * The same, in slices between turns of the event loop: a schema near MAX_SCHEMA_BYTES declares
 * tens of thousands of tables, and a server parses it while it serves other requests.
 */
export function parseSchemaInSlices(text: string): Promise<Schema> {
  return runStepsInSlices(parseSteps(text));
}

/** The parse as steps: tokens a few thousand at a time, then a step per declaration, per check, per type validated. */
function* parseSteps(text: string): Steps<Schema> {
  if (!isWellFormed(text))
    throw new BranchgraphError('invalid_input', `schema text ${ILL_FORMED_MESSAGE}`, {
      issues: [{ path: 'schema', message: ILL_FORMED_MESSAGE }],
    });
  if (Buffer.byteLength(text, 'utf8') > MAX_SCHEMA_BYTES) {
    throw new BranchgraphError('schema_invalid', `schema text is larger than ${MAX_SCHEMA_BYTES} bytes`);
  }
  let issues: ErrorIssue[];
  let types: TableType[] = [];
  try {
    const parser = new Parser(yield* tokenize(text));
    const parsed = yield* parser.parse();
    types = parsed.types;
    issues = [...parser.issues, ...(parser.issues.length === 0 ? yield* checkSemantics(types, parsed.positions) : [])];
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    issues = [{ path: `${e.line}:${e.col}`, message: e.message }];
  }
  if (issues.length > 0) {
    const first = issues[0] as ErrorIssue;
    throw new BranchgraphError('schema_invalid', `schema error at ${first.path}: ${first.message}`, { issues });
  }
  // Validated a type at a time: the schema IR is its format and its types, sorted by name (SchemaIR).
  const valid: TableType[] = [];
  for (const t of [...types].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    valid.push(TableTypeIR.parse(t));
    yield;
  }
  return { format: 1, types: valid };
}

/** Render a schema back to text; `parseSchema(formatSchema(s))` equals `s`. */
export function formatSchema(schema: Schema): string {
  const prop = (p: PropDef, key: boolean): string => {
    const type =
      p.type.kind === 'enum' ? `enum(${p.type.values.join(', ')})` : p.type.kind === 'vector' ? `vector(${p.type.dims})` : p.type.kind;
    const attrs = [
      key ? '@key' : '',
      p.unique ? '@unique' : '',
      p.range !== null ? `@range(${p.range.min ?? ''}, ${p.range.max ?? ''})` : '',
      p.search === undefined ? '' : p.search.stem ? '@search(stem: english)' : '@search',
      p.index === undefined ? '' : `@index(metric: ${p.index.metric})`,
      p.embed === undefined ? '' : `@embed(from: ${p.embed.from})`,
    ].filter((a) => a !== '');
    return `  ${p.name}: ${type}${p.optional ? '?' : ''}${attrs.length > 0 ? ` ${attrs.join(' ')}` : ''}`;
  };
  return schema.types
    .map((t) => {
      const body = t.props.map((p) => prop(p, t.key.includes(p.name))).join('\n');
      if (t.kind === 'node') return `node ${t.name} {\n${body}\n}\n`;
      const card = t.cardinality === null ? '' : ` @cardinality(${t.cardinality.min}, ${t.cardinality.max ?? '*'})`;
      return `edge ${t.name}: ${t.from} -> ${t.to}${card}${t.props.length > 0 ? ` {\n${body}\n}` : ''}\n`;
    })
    .join('\n');
}
