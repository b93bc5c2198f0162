/**
 * Debian's PostgreSQL as a benchmark peer: a server of its own in a
 * temporary directory (initdb, then pg_ctl, as the postgres user when the
 * bench runs as root), installed from Debian's packages when missing, on a
 * random port on loopback. Durable as PostgreSQL ships: fsync and
 * synchronous commits on.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import path from 'node:path';

/** Debian's PostgreSQL binaries, installed from the Debian packages when missing. */
function pgBin(): string {
  const find = () => {
    const root = '/usr/lib/postgresql';
    const v = existsSync(root) ? readdirSync(root).sort().pop() : undefined;
    return v !== undefined && existsSync(path.join(root, v, 'bin', 'initdb')) ? path.join(root, v, 'bin') : undefined;
  };
  const found = find();
  if (found !== undefined) return found;
  const r = spawnSync('apt-get', ['install', '-y', '-q', 'postgresql'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const bin = find();
  if (r.status !== 0 || bin === undefined) throw new Error('PostgreSQL is not installed and apt-get could not install it');
  return bin;
}

/** A PostgreSQL server in `dir` (initdb, then pg_ctl), as the postgres user when this runs as root. */
export async function startPostgres(dir: string): Promise<{ url: string; stop: () => void; psql: (sql: string) => void }> {
  const bin = pgBin();
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  await chmod(dir, 0o777);
  if (asRoot) await chown(dir, Number(spawnSync('id', ['-u', 'postgres']).stdout), Number(spawnSync('id', ['-g', 'postgres']).stdout));
  const as = (cmd: string, args: string[]) =>
    asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' });
  const ok = (r: ReturnType<typeof spawnSync>, what: string) => {
    if (r.status !== 0) throw new Error(`${what} failed: ${String(r.stderr)}`);
  };
  ok(as(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-N']), 'initdb');
  const port = String(20000 + Math.floor(Math.random() * 20000));
  ok(
    as(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-w',
      '-l',
      path.join(dir, 'pg.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      'start',
    ]),
    'pg_ctl start',
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const psql = (sql: string) =>
    ok(spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { encoding: 'utf8' }), `psql ${sql.slice(0, 60)}`);
  return { url, psql, stop: () => void as(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', 'stop']) };
}
