/**
 * What an operation is: defined once, in its own file under operations/,
 * and carried by every edge from that one definition. An operation has a
 * name (the API method), the role a caller needs, what a call touches (its access, held to a
 * scoped token), one input contract (zod:
 * path, query, header and body fields together), one result contract (zod),
 * the function that runs it on the service, and how HTTP, GraphQL and MCP reach it. The REST routes, the
 * REST client, the embedded API and the GraphQL resolvers are derived from
 * these definitions (see operation-table.ts), and so is `openapi.yaml`
 * (contract/openapi-document.ts) and the GraphQL SDL
 * (graphql/graphql-document.ts).
 */
import type { z } from 'zod';
import type { Role } from './auth.js';
import type { Access } from './access.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** How an HTTP request carries an operation's input, and how its answer goes back. */
export interface HttpBinding<O> {
  method: HttpMethod;
  /** The route as `openapi.yaml` writes it; `{x}` is a path parameter. */
  path: string;
  /** Path parameters whose input field has another name (`{ id: 'source' }`). */
  params?: Record<string, string>;
  /** Request headers read into input fields (`{ 'idempotency-key': 'idempotencyKey' }`). */
  headers?: Record<string, string>;
  /**
   * How the body is read: JSON fields (the default for POST and PUT), or as it is, into the input
   * field its media type names in `media`: `whole` (read in full under the body limit; text media
   * types decoded as UTF-8, others as bytes) or `stream` (bytes as they arrive). Other fields of
   * such a route come from the query string.
   */
  body?: 'json' | 'whole' | 'stream';
  /** A raw body's media types and the input field each fills; the first is what a body of any other type is read as. */
  media?: Record<string, string>;
  /** The success status, or one per result (a merge's conflicts answer 409 with a result, not an error). */
  status?: number | ((out: O) => number);
  /** Input fields the route does not take (ingest's list of operations, which REST carries as NDJSON). */
  omit?: string[];
  /** Statuses besides 2xx whose body is a result (the REST client returns it rather than throwing). */
  resultStatuses?: number[];
  /** Response headers from the result. */
  replyHeaders?: (out: O) => Record<string, string>;
  /** A result sent as bytes rather than JSON (a table export), and how a client reads it back. */
  stream?: {
    send: (out: O, input: Record<string, unknown>) => { body: AsyncIterable<Uint8Array>; headers: Record<string, string> };
    receive: (res: Response) => O;
  };
}

/** A raw body's media types, each with the input field it fills; the first is the default. */
export function bodyMedia(http: { media?: Record<string, string> }): [media: string, field: string][] {
  return Object.entries(http.media ?? {});
}

/** The input fields a raw body may fill: the route takes its other fields from the query string. */
export function bodyFieldsOf(http: { media?: Record<string, string> }): Set<string> {
  return new Set(Object.values(http.media ?? {}));
}

/** Whether a body of this media type is text (decoded as UTF-8) rather than bytes. */
export const isTextMedia = (media: string): boolean => media.startsWith('text/') || /^application\/(x-ndjson|json)$/.test(media);

/** One GraphQL field that reaches an operation: its arguments become the input, its value is shaped from the result. */
export interface GraphqlBinding<O> {
  type: 'Query' | 'Mutation';
  field: string;
  /** The field's value is this field of the result (`tags` of `{ tags }`). */
  pick?: keyof O & string;
  /** The field's value from the result, when it is neither the result nor one of its fields (then `output` says its shape). */
  result?: (out: O) => unknown;
  /** Input fields this field does not take (ingest's NDJSON body, which GraphQL carries as a list of operations). */
  omit?: string[];
  /** How a GraphQL client reads a reshaped value back as the operation's result (http/graphql-client.ts). */
  receive?: (value: unknown, input: Record<string, unknown>) => O;
  /** The field's value as a schema, when `result` reshapes the operation's result (the result contract by default). */
  output?: z.ZodType;
  /** An input object that carries every input field but the route's path parameters, by this name (`MergeInput`). */
  input?: string;
  /** The field's description in the SDL (the operation's summary by default). */
  description?: string;
}

/**
 * One MCP tool that reaches an operation (mcp/mcp-tools.ts): its name, a description written for a
 * model (what it does, when to use it, what comes back), and how it behaves. The tool's input schema
 * is the operation's input contract less the fields `fixed` sets; its output schema is the result
 * contract.
 */
export interface McpBinding {
  tool: string;
  description: string;
  /** Input fields the tool sets itself (a preview is a merge with `dryRun: true`); the model does not see them. */
  fixed?: Record<string, unknown>;
  /** Defaults the tool applies where the model leaves a field out (a diff is three-dot unless it says). */
  defaults?: Record<string, unknown>;
  /** It may delete or overwrite data (MCP's `destructiveHint`). */
  destructive?: boolean;
  /** Calling it again with the same arguments changes nothing more (MCP's `idempotentHint`; reads always are). */
  idempotent?: boolean;
}

export interface Operation<I = unknown, O = unknown> {
  name: string;
  /** One line for the docs and the CLI's help. */
  summary: string;
  role: Role;
  /** What a call touches, for a scoped token (access.ts): held to the token's scope before it runs. */
  access: (input: I) => Access;
  input: z.ZodType<I, unknown>;
  /** The result contract: what every transport answers with, and what the OpenAPI document and the tests hold results to. */
  output: z.ZodType;
  http: HttpBinding<O>;
  graphql?: GraphqlBinding<O>[];
  mcp?: McpBinding[];
  run(service: BranchgraphService, input: I, ctx: RequestContext): Promise<O>;
}

/** What an operation's callers pass: the input as the contract accepts it (refs as text or objects, optional fields absent). */
export type InputOf<T> = T extends Operation<infer _I, infer _O> ? (T['input'] extends z.ZodType<unknown, infer In> ? In : never) : never;
export type OutputOf<T> = T extends Operation<infer _I, infer O> ? O : never;

/**
 * Define an operation, keeping its input and result types for the edges derived from it. What
 * `run` returns must fit the result contract (`output`): the compiler holds it there.
 */
export function defineOperation<S extends z.ZodType, R extends z.ZodType, O extends z.input<R>>(op: {
  name: string;
  summary: string;
  role: Role;
  input: S;
  access: (input: z.output<S>) => Access;
  output: R;
  run(service: BranchgraphService, input: z.output<S>, ctx: RequestContext): Promise<O>;
  http: HttpBinding<NoInfer<O>>;
  graphql?: GraphqlBinding<NoInfer<O>>[];
  mcp?: McpBinding[];
}): Operation<z.output<S>, O> & { input: S } {
  return op as Operation<z.output<S>, O> & { input: S };
}
