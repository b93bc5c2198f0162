/**
 * A lean S3 GET: one request signed with AWS Signature Version 4 and sent
 * over a keep-alive agent, for an S3 server named by endpoint, path-style,
 * with static keys (the common shape of an S3-compatible server: Ceph RGW,
 * MinIO). The SDK spends about a millisecond of CPU on each request
 * (endpoint rules, serde, middleware), which bounds how fast a clone reads
 * thousands of objects on a busy machine; a GET needs none of it. Anything
 * else (AWS's own endpoints, credentials from a provider chain, writes,
 * lists) stays with the SDK (s3-store.ts).
 *
 * Failures look like the SDK's (`$metadata.httpStatusCode`, or none for a
 * network failure), so the store's retries and error mapping treat both
 * paths alike. Pure but for the one request it makes.
 */
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

export interface SignedGetConfig {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** Sockets kept open to the server: more than any transfer's width. */
const MAX_SOCKETS = 64;

export class SignedGet {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private signingKey: { date: string; key: Buffer } | undefined;

  constructor(private readonly config: SignedGetConfig) {
    this.base = new URL(config.endpoint);
    const options = { keepAlive: true, maxSockets: MAX_SOCKETS };
    this.agent = this.base.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  }

  /** The object's bytes (a range of them with `range`, as an HTTP Range header value). */
  get(key: string, opts: { range?: string | undefined; signal?: AbortSignal | undefined } = {}): Promise<Uint8Array> {
    const path = `${this.base.pathname.replace(/\/$/, '')}/${encodeSegment(this.config.bucket)}/${key.split('/').map(encodeSegment).join('/')}`;
    const headers = this.sign(path, new Date());
    if (opts.range !== undefined) headers.range = opts.range;
    const transport = this.base.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          path,
          method: 'GET',
          headers,
          agent: this.agent,
          ...(opts.signal ? { signal: opts.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => reject(e));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status === 200 || status === 206) resolve(Buffer.concat(chunks));
            else
              reject(
                Object.assign(new Error(`GET ${key}: HTTP ${status}`), { name: `Http${status}`, $metadata: { httpStatusCode: status } }),
              );
          });
        },
      );
      req.on('error', (e) => reject(e));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }

  /** The headers of a signed GET of `path` at `now` (SigV4, unsigned payload). */
  private sign(path: string, now: Date): Record<string, string> {
    const amzDate = now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const date = amzDate.slice(0, 8);
    const host = this.base.host;
    const payload = 'UNSIGNED-PAYLOAD';
    const signed = 'host;x-amz-content-sha256;x-amz-date';
    const canonical = [
      'GET',
      path,
      '',
      `host:${host}`,
      `x-amz-content-sha256:${payload}`,
      `x-amz-date:${amzDate}`,
      '',
      signed,
      payload,
    ].join('\n');
    const scope = `${date}/${this.config.region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
    const signature = createHmac('sha256', this.keyFor(date)).update(toSign).digest('hex');
    return {
      host,
      'x-amz-content-sha256': payload,
      'x-amz-date': amzDate,
      authorization: `AWS4-HMAC-SHA256 Credential=${this.config.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
    };
  }

  /** The day's signing key, derived once a day. */
  private keyFor(date: string): Buffer {
    if (this.signingKey?.date !== date) {
      const hmac = (k: Buffer | string, v: string): Buffer => createHmac('sha256', k).update(v).digest();
      const k = hmac(hmac(hmac(hmac(`AWS4${this.config.secretAccessKey}`, date), this.config.region), 's3'), 'aws4_request');
      this.signingKey = { date, key: k };
    }
    return this.signingKey.key;
  }
}

/** A path segment as SigV4 spells it: every byte but A-Z a-z 0-9 - _ . ~ percent-encoded. */
function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
