/**
 * The MCP resources: what a model reads before it calls tools. The docs it
 * needs (the schema language, what a merge does), shipped with the package,
 * and each branch's SDL: the typed GraphQL API its schema generates, which
 * the `query` tool runs documents on. Branch SDLs are a resource template
 * (`branchgraph://branches/{branch}/schema.graphql`); the listing names the
 * first page of branches the caller may read.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BranchgraphError } from '../model/errors.js';
import { packageRoot } from '../service/package-root.js';
import type { ToolPorts } from './mcp-tools.js';

interface Doc {
  uri: string;
  name: string;
  title: string;
  description: string;
  file: string;
}

const DOCS: readonly Doc[] = [
  {
    uri: 'branchgraph://docs/schema-language',
    name: 'schema-language',
    title: 'The schema language',
    description: 'Node and edge types, keys, property types and constraints: how to read a schema and write rows that fit it.',
    file: 'docs/schema-language.md',
  },
  {
    uri: 'branchgraph://docs/merge-semantics',
    name: 'merge-semantics',
    title: 'What a merge does',
    description: 'Three-way merges per entity and property, the conflict kinds, resolutions, retries and protected branches.',
    file: 'docs/merge-semantics.md',
  },
];

export const SDL_TEMPLATE = 'branchgraph://branches/{branch}/schema.graphql';
const SDL_RE = /^branchgraph:\/\/branches\/([^/]+)\/schema\.graphql$/;
const sdlUri = (branch: string): string => `branchgraph://branches/${encodeURIComponent(branch)}/schema.graphql`;
/** Branches whose SDL the listing names; the template reaches any. */
const LISTED_BRANCHES = 50;

export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}

/** The docs, and the SDL of the first branches the caller may read (where the transport can serve SDL). */
export async function listResources(ports: ToolPorts, signal?: AbortSignal): Promise<ResourceEntry[]> {
  const docs = DOCS.map(({ file: _, ...d }) => ({ ...d, mimeType: 'text/markdown' }));
  if (ports.branchSdl === undefined) return docs;
  const page = await ports.api.listBranches({ limit: LISTED_BRANCHES }, signal === undefined ? {} : { signal });
  const sdls = page.branches.map((b) => ({
    uri: sdlUri(b.name),
    name: `${b.name} SDL`,
    description: `The typed GraphQL API of branch ${b.name}: the types and fields the query tool takes.`,
    mimeType: 'text/plain',
  }));
  return [...docs, ...sdls];
}

/** One resource's text, or `not_found`. */
export async function readResource(
  uri: string,
  ports: ToolPorts,
  signal?: AbortSignal,
): Promise<{ uri: string; mimeType: string; text: string }> {
  const doc = DOCS.find((d) => d.uri === uri);
  if (doc !== undefined) return { uri, mimeType: 'text/markdown', text: await readFile(path.join(packageRoot(), doc.file), 'utf8') };
  const m = SDL_RE.exec(uri);
  if (m !== null && ports.branchSdl !== undefined) {
    const branch = decodeURIComponent(m[1] as string);
    return { uri, mimeType: 'text/plain', text: await ports.branchSdl(branch, signal) };
  }
  throw new BranchgraphError('not_found', `no resource ${uri}: resources/list and resources/templates/list name them`);
}
