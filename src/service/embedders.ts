/**
 * The embedders a server may be configured with (`--embedder`):
 * - `local` (the default): the deterministic local embedder
 *   (model/local-embedder.ts), for tests, demos and offline use; not
 *   semantic;
 * - an `http(s)://…` URL: any OpenAI-compatible embeddings endpoint
 *   (`POST {url}` with `{ model, input: [texts], dimensions }`, answering
 *   `{ data: [{ index, embedding }] }`), with a bearer key and a model name
 *   from the configuration.
 * A remote embedder's failure (unreachable, an error status, a malformed
 * answer, a timeout) is `embedding_failed`: the write that needed it is
 * refused and changes nothing.
 */
import { BranchgraphError } from '../model/errors.js';
import { LOCAL_EMBEDDER } from '../graph/embed-ops.js';
import type { Embedder } from '../graph/ports.js';

/** How long one call to a remote embedder may take. */
export const EMBEDDER_TIMEOUT_MS = 30_000;

export interface EmbedderSettings {
  /** `local`, or the URL of an OpenAI-compatible embeddings endpoint. */
  embedder: string;
  embedderKey?: string | undefined;
  embedderModel?: string | undefined;
}

export const DEFAULT_EMBEDDER_MODEL = 'text-embedding-3-small';

/** The embedder the settings name. */
export function embedderOf(s: EmbedderSettings): Embedder {
  if (s.embedder === 'local') return LOCAL_EMBEDDER;
  return httpEmbedder({ url: s.embedder, key: s.embedderKey, model: s.embedderModel ?? DEFAULT_EMBEDDER_MODEL });
}

/** Whether `value` names an embedder: `local` or an http(s) URL. */
export function embedderProblem(value: string): string | undefined {
  if (value === 'local') return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : 'must be local or an http(s) URL';
  } catch {
    return 'must be local or an http(s) URL';
  }
}

const failed = (message: string): BranchgraphError =>
  new BranchgraphError('embedding_failed', `the embedder failed: ${message}`, { details: { embedder: 'http' } });

/** An OpenAI-compatible embeddings endpoint. */
export function httpEmbedder(c: { url: string; key?: string | undefined; model: string }): Embedder {
  return {
    name: 'http',
    async embed(texts, dims, signal) {
      const timeout = AbortSignal.timeout(EMBEDDER_TIMEOUT_MS);
      let res: Response;
      try {
        res = await fetch(c.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(c.key === undefined ? {} : { authorization: `Bearer ${c.key}` }) },
          body: JSON.stringify({ model: c.model, input: texts, dimensions: dims }),
          signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
        });
      } catch (e) {
        if (signal?.aborted === true) throw new BranchgraphError('aborted', 'the request was aborted while embedding');
        throw failed(`${c.url} cannot be reached: ${(e as Error).message}`);
      }
      const body = (await res.json().catch(() => undefined)) as { data?: { index?: number; embedding?: unknown }[] } | undefined;
      if (!res.ok) throw failed(`${c.url} answered ${res.status}`);
      const data = body?.data;
      if (!Array.isArray(data) || data.length !== texts.length) throw failed(`${c.url} did not answer one embedding per text`);
      const out = new Array<number[]>(texts.length);
      data.forEach((d, i) => {
        const at = typeof d.index === 'number' ? d.index : i;
        if (Array.isArray(d.embedding) && at >= 0 && at < texts.length) out[at] = d.embedding as number[];
      });
      if (out.some((v) => v === undefined)) throw failed(`${c.url} answered embeddings out of order`);
      return out;
    },
  };
}
