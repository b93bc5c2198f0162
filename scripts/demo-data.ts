/**
 * Makes demo/debian-packages.json.gz, the sample graph `branchgraph demo` loads: the packages of
 * Debian 12 "bookworm" main in the sections database, vcs, editors and shells, with everything
 * they depend on, as `apt-cache dumpavail` prints them on a Debian machine, and their long
 * descriptions from the English translation index (`apt-get -o Acquire::Languages=en update`
 * fetches it). Kept in the
 * repository so the demo is the same everywhere and needs no network; run again
 * (`npx tsx scripts/demo-data.ts`) to refresh it from the machine's package lists.
 *
 * Maintainers are kept by name only: their e-mail addresses are left out.
 */
import { execSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const LISTS = '/var/lib/apt/lists';
const SECTIONS = new Set(['database', 'vcs', 'editors', 'shells']);

type Stanza = Record<string, string>;

function stanzas(text: string): Map<string, Stanza> {
  const out = new Map<string, Stanza>();
  for (const block of text.split(/\n\n+/)) {
    const s: Stanza = {};
    let last = '';
    for (const line of block.split('\n')) {
      if (/^[ \t]/.test(line) && last !== '') s[last] += `\n${line}`;
      else {
        const i = line.indexOf(':');
        if (i < 0) continue;
        last = line.slice(0, i);
        s[last] = line.slice(i + 1).trim();
      }
    }
    const name = s.Package;
    if (name !== undefined && !out.has(name)) out.set(name, s);
  }
  return out;
}

/** The first alternative of each dependency, without version or architecture. */
const depsOf = (field: string | undefined): string[] =>
  (field ?? '')
    .split(',')
    .map((alt) => (alt.split('|')[0] ?? '').trim().split(/[\s:(]/)[0] ?? '')
    .filter((n) => n !== '');

/** A description's long part as prose: the leading space of each line dropped, ` .` lines as paragraph breaks. */
function longDescription(d: string): string {
  return d
    .split('\n')
    .slice(1)
    .map((l) => (l.trim() === '.' ? '' : l.replace(/^ /, '')))
    .join('\n')
    .trim();
}

const all = stanzas(execSync('apt-cache dumpavail', { maxBuffer: 1 << 30, encoding: 'utf8' }));
/** Long descriptions by their md5, as the Packages index names them. */
const translated = new Map<string, string>();
for (const file of readdirSync(LISTS).filter((f) => f.endsWith('_i18n_Translation-en.lz4')))
  for (const t of stanzas(execSync(`/usr/lib/apt/apt-helper cat-file ${path.join(LISTS, file)}`, { maxBuffer: 1 << 30, encoding: 'utf8' })).values())
    if (t['Description-md5'] !== undefined && t['Description-en'] !== undefined) translated.set(t['Description-md5'], t['Description-en']);
if (translated.size === 0) throw new Error('no English descriptions: run apt-get -o Acquire::Languages=en update first');
const chosen = new Set([...all.values()].filter((s) => SECTIONS.has((s.Section ?? '').split('/').pop() ?? '')).map((s) => s.Package as string));
for (const todo = [...chosen]; todo.length > 0; ) {
  const s = all.get(todo.pop() as string) as Stanza;
  for (const d of [...depsOf(s['Pre-Depends']), ...depsOf(s.Depends)])
    if (all.has(d) && !chosen.has(d)) {
      chosen.add(d);
      todo.push(d);
    }
}
const packages = [...chosen].sort().map((name) => {
  const s = all.get(name) as Stanza;
  const description = translated.get(s['Description-md5'] ?? '') ?? s.Description ?? '';
  return {
    name,
    version: s.Version ?? '',
    section: (s.Section ?? 'misc').split('/').pop(),
    priority: s.Priority ?? 'optional',
    maintainer: (s.Maintainer ?? 'unknown').replace(/\s*<[^>]*>/g, '').trim(),
    summary: description.split('\n')[0] ?? '',
    description: longDescription(description),
    homepage: s.Homepage ?? null,
    installedKib: s['Installed-Size'] !== undefined ? Number(s['Installed-Size']) : null,
    preDepends: depsOf(s['Pre-Depends']).filter((d) => chosen.has(d)),
    depends: depsOf(s.Depends).filter((d) => chosen.has(d)),
  };
});
const doc = {
  source: 'Debian 12 "bookworm" main: apt-cache dumpavail, sections database, vcs, editors and shells with their dependencies',
  made: new Date().toISOString().slice(0, 10),
  packages,
};
writeFileSync('demo/debian-packages.json.gz', gzipSync(JSON.stringify(doc), { level: 9 }));
console.log(`${packages.length} packages written to demo/debian-packages.json.gz`);
