/**
 * The sample graph `branchgraph demo` loads: real packages of Debian 12 "bookworm" main (the
 * sections database, vcs, editors and shells, with everything they depend on), shipped in
 * demo/debian-packages.json.gz (demo/README.md says where it comes from and under what terms).
 *
 * Three node tables (Package, Maintainer, Section) and three edge tables (DependsOn,
 * MaintainedBy, InSection), about 19,500 entities, with package descriptions to search. On top
 * of the load it makes what a newcomer needs to see branches at work: a tag at the load, two
 * branches that change the same package differently, one of them merged, and a merge request
 * for the other, which conflicts with main.
 *
 * It goes through the public API, so it loads an embedded store or a running server alike.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { BranchgraphError } from '../model/errors.js';
import type { BranchgraphApi } from './api.js';
import { packageRoot } from './package-root.js';

export const SAMPLE_SCHEMA = `# Debian 12 "bookworm" packages (demo/README.md)
node Package {
  name: string @key
  version: string
  summary: string @search(stem: english)
  description: string @search(stem: english)
  priority: enum(required, important, standard, optional, extra)
  installedKib: int?
  homepage: string?
}
node Maintainer { name: string @key }
node Section { name: string @key }
edge DependsOn: Package -> Package { kind: enum(depends, predepends) }
edge MaintainedBy: Package -> Maintainer
edge InSection: Package -> Section @cardinality(1, 1)
`;

export interface SamplePackage {
  name: string;
  version: string;
  section: string;
  priority: string;
  maintainer: string;
  summary: string;
  description: string;
  homepage: string | null;
  installedKib: number | null;
  preDepends: string[];
  depends: string[];
}

export interface SampleCounts {
  packages: number;
  maintainers: number;
  sections: number;
  dependencies: number;
  entities: number;
}

/** What the demo made, for the URLs it prints. */
export interface SampleGraph {
  counts: SampleCounts;
  request: string;
  /** Whether this call loaded it (false: the store already held it). */
  loaded: boolean;
}

export const SAMPLE_FILE = (): string => path.join(packageRoot(), 'demo', 'debian-packages.json.gz');

export async function samplePackages(file = SAMPLE_FILE()): Promise<SamplePackage[]> {
  return (JSON.parse(gunzipSync(await readFile(file)).toString('utf8')) as { packages: SamplePackage[] }).packages;
}

const PRIORITIES = new Set(['required', 'important', 'standard', 'optional', 'extra']);

/** The packages as load lines: nodes first, then the edges between them. Pure. */
export function sampleLines(packages: SamplePackage[]): { ndjson: string; counts: SampleCounts } {
  const lines: string[] = [];
  const put = (table: string, values: Record<string, unknown>) => lines.push(JSON.stringify({ table, values }));
  const maintainers = [...new Set(packages.map((p) => p.maintainer))].sort();
  const sections = [...new Set(packages.map((p) => p.section))].sort();
  for (const name of maintainers) put('Maintainer', { name });
  for (const name of sections) put('Section', { name });
  for (const p of packages)
    put('Package', {
      name: p.name,
      version: p.version,
      summary: p.summary,
      description: p.description,
      priority: PRIORITIES.has(p.priority) ? p.priority : 'optional',
      installedKib: p.installedKib,
      homepage: p.homepage,
    });
  let dependencies = 0;
  for (const p of packages) {
    put('MaintainedBy', { from: p.name, to: p.maintainer });
    put('InSection', { from: p.name, to: p.section });
    const kinds = new Map<string, string>();
    for (const d of p.depends) kinds.set(d, 'depends');
    for (const d of p.preDepends) kinds.set(d, 'predepends');
    kinds.delete(p.name);
    for (const [to, kind] of kinds) put('DependsOn', { from: p.name, to, kind });
    dependencies += kinds.size;
  }
  const counts = { packages: packages.length, maintainers: maintainers.length, sections: sections.length, dependencies, entities: 0 };
  counts.entities = counts.packages + counts.maintainers + counts.sections + dependencies + 2 * packages.length;
  return { ndjson: `${lines.join('\n')}\n`, counts };
}

const TITLE = 'Triage: describe git for newcomers';

/**
 * Loads the sample graph onto `main` of an empty graph, or finds it there already. A graph that
 * holds other tables is refused: the demo never writes over someone's data.
 */
export async function loadSampleGraph(api: BranchgraphApi, packages: SamplePackage[]): Promise<SampleGraph> {
  const { ndjson, counts } = sampleLines(packages);
  const present = (await api.listTables({ at: { branch: 'main' } })).tables.map((t) => t.name);
  if (present.length > 0) {
    if (!present.includes('Package') || !present.includes('DependsOn'))
      throw new BranchgraphError(
        'graph_exists',
        `the store already holds a graph (tables ${present.slice(0, 5).join(', ')}); load the demo into another with --store`,
      );
    const open = await api.listMergeRequests({ state: 'open', limit: 100 });
    const request = open.requests.find((q) => q.title === TITLE)?.id ?? '';
    return { counts, request, loaded: false };
  }
  await api.applySchema({ branch: 'main', schema: SAMPLE_SCHEMA });
  await api.load({ branch: 'main', ndjson });
  await api.createTag({ name: 'bookworm', from: { branch: 'main' }, message: 'the packages as loaded' });
  // Two people describe git differently: docs-fixes is merged, triage then conflicts with main.
  await api.createBranch({ name: 'docs-fixes', from: { branch: 'main' } });
  await api.write({
    branch: 'docs-fixes',
    message: 'Sharper summaries for git and vim',
    ops: [
      { op: 'update', table: 'Package', values: { name: 'git', summary: 'distributed version control: fast, scalable, offline-first' } },
      { op: 'update', table: 'Package', values: { name: 'vim', summary: 'Vi IMproved: the modal text editor' } },
    ],
  });
  await api.mergeBranch({ source: 'docs-fixes', into: 'main', message: 'Merge docs-fixes' });
  await api.createBranch({ name: 'triage', from: { tag: 'bookworm' } });
  await api.write({
    branch: 'triage',
    message: 'Describe git for newcomers; tig is a git tool',
    ops: [
      { op: 'update', table: 'Package', values: { name: 'git', summary: 'the version control system most projects use' } },
      { op: 'update', table: 'Package', values: { name: 'tig', priority: 'standard' } },
    ],
  });
  const q = await api.openMergeRequest({
    source: 'triage',
    target: 'main',
    title: TITLE,
    description: 'git got a new summary on main meanwhile (docs-fixes), so this conflicts: pick one in the review.',
  });
  return { counts, request: q.id, loaded: true };
}
