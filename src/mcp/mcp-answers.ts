/**
 * What a tool call answers: the operation's result as `structuredContent`
 * (checked by clients against the tool's output schema) with a short text
 * for the model, or a refusal (`isError`) that carries the stable error
 * code and a hint the model can act on. Expected outcomes stay values: a
 * merge's conflicts are a result, with a hint in its text. An answer stays
 * under MAX_ANSWER_BYTES; a bigger one is refused with a hint to page.
 * Pure: no I/O.
 */
import { BranchgraphError, type ErrorCode } from '../model/errors.js';

/** The largest answer a tool gives, in bytes of JSON: a model's context is the scarce resource. */
export const MAX_ANSWER_BYTES = 256 * 1024;
/** How much of the answer the text repeats. */
const TEXT_CHARS = 2000;

export interface ToolAnswer {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What a model can do about each refusal. */
const HINTS: Partial<Record<ErrorCode, string>> = {
  invalid_input: 'Fix the arguments named in the issues and call again.',
  not_found: 'Check the name: branch_list lists branches, tables lists tables.',
  branch_exists: 'Pick another branch name, or use the existing branch.',
  branch_protected: 'Write on a branch of your own (branch_create), then open a merge request with merge_request_open.',
  head_moved: 'The branch moved since you read it: read its head again (branch_list or log) and retry with the new one.',
  request_not_mergeable: 'The reasons say what is missing: approvals, a revision, or resolutions for conflicts.',
  resolution_stale: 'The branches changed since your preview: call merge_preview again and resolve what it shows.',
  payload_too_large: 'Ask for less: a smaller limit, a filter, or the next page through the cursor.',
  forbidden:
    'This token may not do that: its role or its branch scope does not allow it (details.need and details.scope say which). Work on a branch the token may write, such as one under its own prefix.',
  quota_exceeded:
    'This token owns as many live branches as it may: delete one with branch_delete (or give new ones a ttlSeconds), then try again.',
  unauthorized: 'The server needs a bearer token.',
  publish_contention: 'Another writer got in first: call again.',
  overloaded: 'The server is busy: call again shortly.',
  constraint_violation: 'The rows break a constraint of the schema (see the details): change them and call again.',
};

export function toolAnswer(result: unknown): ToolAnswer {
  const json = JSON.stringify(result);
  if (Buffer.byteLength(json) > MAX_ANSWER_BYTES)
    return toolRefusal(
      new BranchgraphError('payload_too_large', `the answer is over ${MAX_ANSWER_BYTES} bytes`, { details: { limit: MAX_ANSWER_BYTES } }),
    );
  const structured = result as Record<string, unknown>;
  return { content: [{ type: 'text', text: summaryOf(structured, json) }], structuredContent: structured };
}

export function toolRefusal(e: BranchgraphError): ToolAnswer {
  const issues = e.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  const hint = HINTS[e.code];
  const text = `${e.code}: ${e.message}${issues !== '' ? ` (${issues})` : ''}${hint !== undefined ? `\n${hint}` : ''}`;
  return { content: [{ type: 'text', text }], isError: true };
}

function summaryOf(r: Record<string, unknown>, json: string): string {
  if (r.status === 'conflicts') {
    const report = r.report as { total: number; counts: Record<string, number> };
    const kinds = Object.entries(report.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    return `conflicts: ${report.total} (${kinds}); nothing changed. Call merge with resolutions for them, or merge_preview to see them all.\n${clip(json)}`;
  }
  return clip(json);
}

function clip(json: string): string {
  return json.length <= TEXT_CHARS
    ? json
    : `${json.slice(0, TEXT_CHARS)} … (${json.length} characters; the whole answer is in structuredContent)`;
}
