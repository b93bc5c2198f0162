/**
 * The port through which operations reach a branch's typed GraphQL API
 * (http/typed-graphql-endpoint.ts implements it; `attachTypedGraphql`
 * gives it to a service): to run a stored query, and to learn a stored
 * query's shape (valid or not, query or mutation, its variables as a JSON
 * Schema) against the branch's typed schema. The service itself speaks no
 * GraphQL.
 */
import type { RequestContext } from './request-context.js';

/** What a stored query's document is against a branch's typed schema, or what is wrong with it. */
export type StoredQueryShape =
  | {
      operation: 'query' | 'mutation';
      variables: { name: string; type: string; required: boolean }[];
      inputSchema: Record<string, unknown> & { type: 'object' };
    }
  | { problems: string[] };

/** A GraphQL answer: data and errors. */
export interface TypedAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export interface TypedGraphqlPort {
  /** Run a document on a branch's typed API, under the caller's request (role and scope). */
  run(a: { branch: string; document: string; variables?: Record<string, unknown> | undefined; ctx: RequestContext }): Promise<TypedAnswer>;
  /** A document's shape against the branch's typed schema, read under the caller's request. */
  shape(a: { branch: string; document: string; ctx: RequestContext }): Promise<StoredQueryShape>;
}
