/**
 * A real local HTTP receiver for webhook and check tests: it records every
 * request (headers and raw body) and answers as it is told: at once, with
 * a status, after a delay, or never (until the test releases it).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer =
  | { status: number; body?: string; delayMs?: number }
  /** Never answer, until `release()`. */
  | 'hang';

export interface HookReceiver {
  url: string;
  received: Received[];
  /** How the next requests are answered. */
  answer: Answer;
  /** Resolve once `n` requests have arrived. */
  waitFor(n: number): Promise<Received[]>;
  /** Answer the hanging requests (204) so the receiver can close. */
  release(): void;
  close(): Promise<void>;
}

export async function hookReceiver(answer: Answer = { status: 204 }): Promise<HookReceiver> {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters: { n: number; resolve: (r: Received[]) => void }[] = [];
  const r: HookReceiver = {
    url: '',
    received,
    answer,
    waitFor: (n) => (received.length >= n ? Promise.resolve(received.slice(0, n)) : new Promise((resolve) => waiters.push({ n, resolve }))),
    release: () => {
      for (const res of hanging) if (!res.writableEnded) res.writeHead(204).end();
      hanging.clear();
    },
    close: () =>
      new Promise((resolve) => {
        r.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.splice(0)) {
        if (received.length >= w.n) w.resolve(received.slice(0, w.n));
        else waiters.push(w);
      }
      const a = r.answer;
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      const send = () => {
        if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body ?? '');
      };
      if (a.delayMs === undefined) send();
      else setTimeout(send, a.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
