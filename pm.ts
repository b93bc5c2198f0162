import { Graph } from './src/graph/graph.js';
import { FsStore } from './src/store/fs-store.js';
import { mergeBranches } from './src/merge/merge.js';
const dir = process.argv[2] as string;
const cold = await Graph.open(new FsStore(dir), { actor: 'bench' });
const t0 = performance.now();
const r = await mergeBranches(cold, { source: 'f', into: 'main', conflictLimit: 100, dryRun: process.env.DRY === '1' });
console.log(performance.now() - t0, JSON.stringify(r.metrics.phasesMs), r.status, Math.round(process.resourceUsage().maxRSS/1024));
