#!/usr/bin/env node
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { openStore } from '../store/open-store.js';

const store = process.env.BRANCHGRAPH_STORE ?? 'file://./data';
const port = Number(process.env.PORT ?? 8080);
const objects = await openStore(store);
const app = new Hono();
app.get('/healthz', (c) => c.json({ ok: true, store: objects.kind }));
serve({ fetch: app.fetch, port, hostname: process.env.HOST ?? '127.0.0.1' }, (info) => {
  console.log(`branchgraph listening on http://${info.address}:${info.port} (store ${store})`);
});
