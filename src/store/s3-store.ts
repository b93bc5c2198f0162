/**
 * The S3 adapter, and the only file that imports the AWS SDK.
 *
 * Retries. The SDK's own retries are off (`maxAttempts: 1`) because a blind
 * retry of a create-only PUT is unsafe: if the first attempt landed and its
 * response was lost, the retry gets 412 and we would report a loss for a win.
 * Instead, after a PUT whose outcome is unknown we read the key back: our own
 * bytes mean we won, other bytes mean we lost, absence means we may try again.
 * Reads, lists and deletes are idempotent and retried with jittered backoff on
 * throttling, 5xx and network errors.
 *
 * GETs to an S3-compatible server with static keys are signed and sent
 * without the SDK (s3-signed-get.ts): the SDK's per-request CPU bounds how
 * fast thousands of small objects can be read.
 *
 * Conditional writes use `If-None-Match: *` only; `If-Match` and multipart
 * conditions are not portable across S3-compatible servers.
 */
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SignedGet } from './s3-signed-get.js';
import { BranchgraphError, throwIfAborted } from '../model/errors.js';
import { abortableSleep } from './abortable-sleep.js';
import type { CallOptions, GetOptions, ListOptions, ObjectInfo, ObjectStore, PutOptions } from './object-store.js';

export interface S3StoreConfig {
  bucket: string;
  /** Key prefix inside the bucket, without a leading slash; `''` for the whole bucket. */
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Attempts for idempotent calls and for PUTs whose outcome is known not to have landed. */
  maxAttempts?: number;
  /** Base backoff in milliseconds; doubled per attempt with full jitter. */
  backoffMs?: number;
}

interface SdkErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
  code?: string;
}

function statusOf(e: unknown): number | undefined {
  return (e as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

function isAbort(e: unknown, signal: AbortSignal | undefined): boolean {
  const name = (e as SdkErrorShape | undefined)?.name;
  return signal?.aborted === true || name === 'AbortError';
}

function isTransient(e: unknown): boolean {
  const status = statusOf(e);
  if (status === undefined) return true; // network-level failure: no response at all
  return status >= 500 || status === 429 || status === 408;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

export class S3Store implements ObjectStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  /** The signed GET for S3-compatible servers with static keys; undefined where the SDK does every call. */
  private readonly lean: SignedGet | undefined;

  constructor(config: S3StoreConfig) {
    this.bucket = config.bucket;
    this.prefix = config.prefix === undefined || config.prefix === '' ? '' : config.prefix.replace(/\/*$/, '/');
    this.maxAttempts = config.maxAttempts ?? 6;
    this.backoffMs = config.backoffMs ?? 40;
    const credentials =
      config.accessKeyId !== undefined && config.secretAccessKey !== undefined
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined;
    // GETs go the lean way where the server is named and the keys are static (s3-signed-get.ts).
    if (config.endpoint !== undefined && (config.forcePathStyle ?? true) && credentials !== undefined)
      this.lean = new SignedGet({ endpoint: config.endpoint, region: config.region ?? 'us-east-1', bucket: config.bucket, ...credentials });
    this.client = new S3Client({
      ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
      region: config.region ?? 'us-east-1',
      forcePathStyle: config.forcePathStyle ?? true,
      ...(credentials !== undefined ? { credentials } : {}),
      maxAttempts: 1,
      // Streaming bodies fail with 411 on some servers when checksums are computed by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * Wire-level fault injection for tests of the retry logic: the next `times`
   * PutObject requests reach the server and take effect, but their responses
   * are replaced by a network error, as when a connection drops mid-reply.
   */
  loseNextPutResponses(times: number): void {
    let remaining = times;
    this.client.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'PutObjectCommand' && remaining > 0) {
          remaining--;
          throw Object.assign(new Error('connection reset while reading the response (injected)'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'initialize', name: `lose-put-responses-${Math.random()}` },
    );
  }

  /**
   * The next PutObject request fails with a network error before it is
   * sent (so it does not land); `meanwhile` runs in that gap, as another
   * writer would.
   */
  dropNextPutRequest(meanwhile: () => Promise<unknown>): void {
    let armed = true;
    this.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand' && armed) {
          armed = false;
          await meanwhile();
          throw Object.assign(new Error('connection reset before the request was sent (injected)'), { name: 'TimeoutError' });
        }
        return next(args);
      },
      { step: 'initialize', name: `drop-put-request-${Math.random()}` },
    );
  }

  private fullKey(key: string): string {
    return this.prefix + key;
  }

  private fail(a: { op: string; key: string; e: unknown; signal?: AbortSignal | undefined }): BranchgraphError {
    const { op, key, e, signal } = a;
    if (e instanceof BranchgraphError) return e;
    if (isAbort(e, signal)) return new BranchgraphError('aborted', 'the operation was aborted', { cause: e });
    const status = statusOf(e);
    const name = (e as SdkErrorShape | undefined)?.name ?? 'Error';
    return new BranchgraphError(
      isTransient(e) ? 'store_unavailable' : 'store_error',
      `s3 ${op} ${key}: ${name} (HTTP ${status ?? 'none'})`,
      {
        cause: e,
        details: { key, status, name },
      },
    );
  }

  /** Run an idempotent call with bounded, jittered retries on transient failures. */
  private async retrying<T>(a: { op: string; key: string; signal?: AbortSignal | undefined; call: () => Promise<T> }): Promise<T> {
    const { op, key, signal, call } = a;
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(signal);
      try {
        return await call();
      } catch (e) {
        if (e instanceof BranchgraphError) throw e;
        if (isAbort(e, signal) || !isTransient(e) || attempt >= this.maxAttempts) throw this.fail({ op, key, e, signal });
        await abortableSleep(Math.random() * this.backoffMs * 2 ** (attempt - 1), signal);
      }
    }
  }

  /** Create the bucket when it does not exist yet. */
  async ensureBucket(signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: signal });
    } catch (e) {
      if (statusOf(e) !== 404) throw this.fail({ op: 'headBucket', key: this.bucket, e, signal });
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }), { abortSignal: signal });
      } catch (e2) {
        const name = (e2 as SdkErrorShape).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists')
          throw this.fail({ op: 'createBucket', key: this.bucket, e: e2, signal });
      }
    }
  }

  async get(key: string, opts: GetOptions = {}): Promise<Uint8Array> {
    const { range, signal } = opts;
    if (range !== undefined && 'length' in range && range.length === 0) {
      if ((await this.head(key, { signal })) === undefined)
        throw BranchgraphError.expected('object_not_found', `no object at ${key}`, { details: { key } });
      return new Uint8Array(0);
    }
    let header: string | undefined;
    if (range !== undefined) {
      if ('suffix' in range) {
        if (range.suffix === 0) return this.get(key, { range: { offset: 0, length: 0 }, signal });
        header = `bytes=-${range.suffix}`;
      } else {
        header = range.length === undefined ? `bytes=${range.offset}-` : `bytes=${range.offset}-${range.offset + range.length - 1}`;
      }
    }
    return this.retrying({
      op: 'get',
      key,
      signal,
      call: async () => {
        try {
          if (this.lean !== undefined) return await this.lean.get(this.fullKey(key), { range: header, signal });
          const res = await this.client.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), ...(header !== undefined ? { Range: header } : {}) }),
            { abortSignal: signal },
          );
          if (res.Body === undefined) return new Uint8Array(0);
          return await res.Body.transformToByteArray();
        } catch (e) {
          const status = statusOf(e);
          if (status === 404) throw BranchgraphError.expected('object_not_found', `no object at ${key}`, { details: { key } });
          // A range that starts past the end is empty, as on every other adapter.
          if (status === 416) return new Uint8Array(0);
          throw e;
        }
      },
    });
  }

  async head(key: string, opts: CallOptions = {}): Promise<ObjectInfo | undefined> {
    return this.retrying({
      op: 'head',
      key,
      signal: opts.signal,
      call: async () => {
        try {
          const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }), {
            abortSignal: opts.signal,
          });
          return {
            key,
            size: res.ContentLength ?? 0,
            ...(res.LastModified !== undefined ? { lastModified: res.LastModified.getTime() } : {}),
          };
        } catch (e) {
          if (statusOf(e) === 404) return undefined;
          throw e;
        }
      },
    });
  }

  async putIfAbsent(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    const { signal } = opts;
    let outcomeUnknown = false;
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(signal);
      try {
        await this.client.send(
          new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: body, IfNoneMatch: '*', ContentLength: body.length }),
          { abortSignal: signal },
        );
        return;
      } catch (e) {
        const status = statusOf(e);
        if (status === 412 || status === 409) {
          // After an attempt with a lost response, the object we now find may be our own.
          if (outcomeUnknown && (await this.isOurs(key, body, signal))) return;
          throw new BranchgraphError('object_exists', `an object already exists at ${key}`, { details: { key } });
        }
        if (isAbort(e, signal) || !isTransient(e)) throw this.fail({ op: 'putIfAbsent', key, e, signal });
        outcomeUnknown = true;
        if (attempt >= this.maxAttempts) throw this.fail({ op: 'putIfAbsent', key, e, signal });
        await abortableSleep(Math.random() * this.backoffMs * 2 ** (attempt - 1), signal);
        // Re-read instead of retrying blindly: the failed attempt may have landed.
        const existing = await this.getOrUndefined(key, signal);
        if (existing !== undefined) {
          if (sameBytes(existing, body)) return;
          throw new BranchgraphError('object_exists', `an object already exists at ${key}`, { details: { key } });
        }
      }
    }
  }

  private async getOrUndefined(key: string, signal: AbortSignal | undefined): Promise<Uint8Array | undefined> {
    try {
      return await this.get(key, { signal });
    } catch (e) {
      if (e instanceof BranchgraphError && e.code === 'object_not_found') return undefined;
      throw e;
    }
  }

  private async isOurs(key: string, body: Uint8Array, signal: AbortSignal | undefined): Promise<boolean> {
    const existing = await this.getOrUndefined(key, signal);
    return existing !== undefined && sameBytes(existing, body);
  }

  async putOverwrite(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    await this.retrying({
      op: 'putOverwrite',
      key,
      signal: opts.signal,
      call: () =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: body, ContentLength: body.length }), {
          abortSignal: opts.signal,
        }),
    });
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    let token: string | undefined;
    const startAfter = opts.startAfter === undefined ? undefined : this.fullKey(opts.startAfter);
    do {
      const res = await this.retrying({
        op: 'list',
        key: prefix,
        signal: opts.signal,
        call: () =>
          this.client.send(
            new ListObjectsV2Command({
              Bucket: this.bucket,
              Prefix: this.fullKey(prefix),
              MaxKeys: Math.min(opts.pageSize ?? 1000, 1000),
              ...(token !== undefined ? { ContinuationToken: token } : startAfter !== undefined ? { StartAfter: startAfter } : {}),
            }),
            { abortSignal: opts.signal },
          ),
      });
      for (const obj of res.Contents ?? []) {
        if (obj.Key === undefined) continue;
        yield {
          key: obj.Key.slice(this.prefix.length),
          size: obj.Size ?? 0,
          ...(obj.LastModified !== undefined ? { lastModified: obj.LastModified.getTime() } : {}),
        };
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async deleteMany(keys: readonly string[], opts: CallOptions = {}): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const res = await this.retrying({
        op: 'deleteMany',
        key: chunk[0] ?? '',
        signal: opts.signal,
        call: () =>
          this.client.send(
            new DeleteObjectsCommand({
              Bucket: this.bucket,
              Delete: { Objects: chunk.map((k) => ({ Key: this.fullKey(k) })), Quiet: true },
            }),
            { abortSignal: opts.signal },
          ),
      });
      const failed = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new BranchgraphError('store_error', `s3 deleteMany: ${failed.length} keys failed (${failed[0]?.Code ?? 'unknown'})`, {
          details: { keys: failed.map((e) => e.Key) },
        });
      }
    }
  }

  async close(): Promise<void> {
    this.lean?.close();
    this.client.destroy();
  }
}
