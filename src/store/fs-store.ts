/**
 * The embedded default: objects as files under one directory.
 *
 * Key mapping. Object stores allow both `a` and `a/b` as keys, which a file
 * system cannot hold as a file and a directory of the same name. Each key
 * segment is percent-encoded to `[A-Za-z0-9._%-]` (a leading dot encoded too,
 * so `.` and `..` never appear) and the final segment gets a `~` suffix, a
 * character encoding never produces. Directories therefore never collide with
 * files, and `.tmp/` at the root can never be a key.
 *
 * Create-only. The body is written to a private temp file and fsynced, then
 * hard-linked to its final name. `link(2)` fails with EEXIST if the name
 * exists, atomically across processes, so exactly one racer wins. A crash
 * leaves at most a temp file under `.tmp/`, never a half-written object.
 *
 * Existence is asked synchronously. A read checks a head by asking whether
 * the next version (or branch record) exists, which is almost always no: a
 * stat the kernel answers from its cache in about a microsecond, where a
 * trip through the thread pool costs 50-100 µs and a missing file raised
 * as an error costs more.
 *
 * Objects up to a mebibyte are read synchronously too. Reading a file
 * asynchronously takes four trips through the thread pool (open, stat, read,
 * close), about 0.15 ms for a 4 KB file, against 0.03 ms read at once; a
 * scan or merge reads tens of small runs and parts, one after another where
 * each names the next, and hundreds of run segments (1,024 rows, 70 KB and
 * up). From the page cache such a read takes tens of microseconds, a tenth
 * of the time decoding the same bytes holds the event loop; a merge of
 * 100,000 conflicting keys spent a sixth of its time in the asynchronous
 * reads of its segments. Larger reads and listings stay asynchronous.
 *
 * Writes of up to a mebibyte are made at once too, but for their fsyncs. A
 * put is a temp file made, written, synced and closed, linked or renamed to
 * its name, the directory synced, and the temp name removed: ten trips
 * through the thread pool, about 2 ms, where the two fsyncs that wait for
 * the disk take 0.3 ms on this kind of machine. Now only the fsyncs go
 * through the pool; the rest touches the page cache and the directory
 * entries, tens of microseconds on the event loop.
 *
 * A best-effort object (`durable: false`: hints, an event's marks) is not
 * synced, neither its file nor its directory: its readers take it as lost
 * or damaged after a crash, and its fsyncs only queued the next write's.
 *
 * A write's directory is made once. The store never removes a directory, so
 * one it made or found is not made again: a put costs its file's trips and
 * the link, not a mkdir of the key's directory and of `.tmp/` besides. A
 * directory removed from outside is made again when a write finds it gone.
 */
import { randomBytes } from 'node:crypto';
import fs, { closeSync, linkSync, openSync, promises as fsp, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { BranchgraphError, throwIfAborted } from '../model/errors.js';
import {
  compareKeys,
  resolveRange,
  type CallOptions,
  type GetOptions,
  type PutOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
} from './object-store.js';

const TMP_DIR = '.tmp';
/** The most directories an FsStore remembers having made. */
const MAX_MADE_DIRS = 65_536;
/** Objects up to this size are read, and written but for their fsyncs, in synchronous calls (see the header). */
const SYNC_BYTES = 1024 * 1024;
const FILE_SUFFIX = '~';
const EMPTY_SEGMENT = '~e';

/**
 * Temp file names: the pid (which sweepTemps reads), a tag drawn once per process (two machines
 * sharing a directory can run processes of one pid), and a counter. Drawing random bytes for each
 * put cost about 0.1 ms a write; the names are as unique, and `wx` refuses a clash regardless.
 */
const TEMP_TAG = randomBytes(6).toString('hex');
let tempCount = 0;

/** Remove a temp file if it is there: one unlink (`rmSync` stats the path first). */
function removeTemp(tmp: string): void {
  try {
    unlinkSync(tmp);
  } catch {
    // Gone already, or left for sweepTemps: a temp file is never read.
  }
}

/**
 * A read file's bytes, without copying them unless they share memory. Node serves buffers under
 * 4 KB from a shared 8 KB slab: a view of one that a cache kept would keep the slab alive, so
 * those are copied (cheaply). Larger ones own their memory and are returned as they are: copying
 * every 70 KB run segment a merge reads cost it time and garbage.
 */
function unshared(buf: Buffer): Uint8Array {
  if (buf.byteLength < 4096) return new Uint8Array(buf);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** A segment that encodes to itself: every character plain, and no leading dot. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

function encodeSegment(seg: string): string {
  if (seg === '') return EMPTY_SEGMENT;
  // Every key the engine makes is plain, and a head read asks for two of them: the byte loop
  // below, with the path's normalising, took 2% of a small read's time.
  if (PLAIN_SEGMENT.test(seg)) return seg;
  let out = '';
  for (const byte of Buffer.from(seg, 'utf8')) {
    const ch = String.fromCharCode(byte);
    const plain = /[A-Za-z0-9_-]/.test(ch) || (ch === '.' && out !== '');
    out += plain ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function decodeSegment(name: string): string {
  if (name === EMPTY_SEGMENT) return '';
  return decodeURIComponent(name);
}

function notFound(key: string): BranchgraphError {
  return BranchgraphError.expected('object_not_found', `no object at ${key}`, { details: { key } });
}

function errno(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errno(e) === 'EPERM';
  }
}

function storeError(op: string, key: string, e: unknown): BranchgraphError {
  if (e instanceof BranchgraphError) return e;
  const code = errno(e);
  if (code === 'ABORT_ERR') return new BranchgraphError('aborted', 'the operation was aborted', { cause: e });
  // A full disk is the operator's to fix, and writes work again once space is freed: retryable, and said plainly.
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new BranchgraphError('store_unavailable', `fs ${op} ${key}: no space left on the device (free space, then retry)`, {
      cause: e,
      details: { key, errno: code },
    });
  }
  const transient = code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN' || code === 'EBUSY';
  return new BranchgraphError(transient ? 'store_unavailable' : 'store_error', `fs ${op} ${key}: ${(e as Error).message}`, {
    cause: e,
    details: { key, errno: code },
  });
}

/** A local directory as an object store: create-only writes by hard link, fsynced, atomic across processes. */
export class FsStore implements ObjectStore {
  readonly kind = 'fs';
  readonly root: string;
  /** The root with its separator: where every object's path starts. */
  private readonly base: string;

  /** Directories this store made or found; see the header. */
  private readonly madeDirs = new Set<string>();

  constructor(root: string) {
    this.root = path.resolve(root);
    this.base = this.root.endsWith(path.sep) ? this.root : this.root + path.sep;
  }

  /** Make `dir` unless this store made or found it before; `again` makes it whatever was known. */
  private async madeDir(dir: string, again = false): Promise<void> {
    if (!again && this.madeDirs.has(dir)) return;
    await fsp.mkdir(dir, { recursive: true });
    // Bounded: a store of very many lineages forgets and makes them again now and then.
    if (this.madeDirs.size >= MAX_MADE_DIRS) this.madeDirs.clear();
    this.madeDirs.add(dir);
  }

  /** Run `write`, and once more after making `dir` again if it failed because the directory was gone. */
  private async inDir<T>(dir: string, write: () => Promise<T>): Promise<T> {
    await this.madeDir(dir);
    try {
      return await write();
    } catch (e) {
      if (errno(e) !== 'ENOENT') throw e;
      await this.madeDir(dir, true);
      return await write();
    }
  }

  private filePath(key: string): string {
    const segs = key.split('/');
    const last = segs.pop() ?? '';
    return `${this.dirPath(segs)}${encodeSegment(last)}${FILE_SUFFIX}`;
  }

  /**
   * The directory of a key's leading segments, with its separator. Encoded segments hold no
   * separator, `.` or `..`, so they are joined as they are: path.join's normalising found nothing to do.
   */
  private dirPath(segs: readonly string[]): string {
    return `${this.base}${segs.map((s) => encodeSegment(s) + path.sep).join('')}`;
  }

  private async writeTemp(body: Uint8Array, opts: PutOptions): Promise<string> {
    const { signal } = opts;
    const dir = path.join(this.root, TMP_DIR);
    const tmp = path.join(dir, `${process.pid}-${TEMP_TAG}-${(tempCount++).toString(36)}`);
    throwIfAborted(signal);
    // A small body is written at once (the page cache takes it in microseconds); only its fsync,
    // which waits for the disk, goes through the thread pool. See the header.
    const fd = await this.inDir(dir, async () => openSync(tmp, 'wx'));
    try {
      // Through the module object, where a test can stand in a disk that fills up.
      if (body.length <= SYNC_BYTES) for (let at = 0; at < body.length; ) at += fs.writeSync(fd, body, at);
      else await writeAll(fd, body, signal);
      if (opts.durable !== false) await fsyncAsync(fd);
    } catch (e) {
      // A failed write (a full disk above all) must not leave its partial file holding the space.
      closeSync(fd);
      removeTemp(tmp);
      throw e;
    }
    closeSync(fd);
    return tmp;
  }

  /**
   * Remove temp files a killed process left under `.tmp/`: those of
   * processes no longer running, and any older than `olderThanMs`. Run when
   * the store is opened and by GC.
   */
  async sweepTemps(olderThanMs = 60 * 60 * 1000, now = Date.now()): Promise<number> {
    const dir = path.join(this.root, TMP_DIR);
    let names: string[];
    try {
      names = await fsp.readdir(dir);
    } catch (e) {
      if (errno(e) === 'ENOENT') return 0;
      throw storeError('sweepTemps', TMP_DIR, e);
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(dir, name);
      const pid = Number(/^(\d+)-/.exec(name)?.[1] ?? NaN);
      const st = await fsp.stat(file).catch(() => undefined);
      if (st === undefined) continue;
      if (pid === process.pid && now - st.mtimeMs < olderThanMs) continue;
      if (pid !== process.pid && processAlive(pid) && now - st.mtimeMs < olderThanMs) continue;
      await fsp.rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  async get(key: string, opts: GetOptions = {}): Promise<Uint8Array> {
    throwIfAborted(opts.signal);
    const file = this.filePath(key);
    const size = this.sizeOf(file);
    if (size === undefined) throw notFound(key);
    try {
      if (opts.range === undefined) {
        if (size <= SYNC_BYTES) return unshared(readFileSync(file));
        return unshared(await fsp.readFile(file, { signal: opts.signal }));
      }
      const handle = await fsp.open(file, 'r');
      try {
        const { size } = await handle.stat();
        const [start, end] = resolveRange(opts.range, size);
        const buf = Buffer.alloc(end - start);
        let done = 0;
        while (done < buf.length) {
          const { bytesRead } = await handle.read(buf, done, buf.length - done, start + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return new Uint8Array(buf.buffer, buf.byteOffset, done);
      } finally {
        await handle.close();
      }
    } catch (e) {
      if (errno(e) === 'ENOENT') throw notFound(key);
      throw storeError('get', key, e);
    }
  }

  async head(key: string, opts: CallOptions = {}): Promise<ObjectInfo | undefined> {
    throwIfAborted(opts.signal);
    try {
      const st = statSync(this.filePath(key), { throwIfNoEntry: false });
      return st === undefined ? undefined : { key, size: st.size, lastModified: st.mtimeMs };
    } catch (e) {
      if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return undefined;
      throw storeError('head', key, e);
    }
  }

  /**
   * A file's size; undefined when there is none (a directory where its parent should be counts as
   * none); infinite when the stat failed otherwise, so the asynchronous read reports it.
   */
  private sizeOf(file: string): number | undefined {
    try {
      return statSync(file, { throwIfNoEntry: false })?.size;
    } catch (e) {
      if (errno(e) === 'ENOTDIR') return undefined;
      return Number.POSITIVE_INFINITY;
    }
  }

  async putIfAbsent(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    // link(2) refuses an existing name atomically; the temp file is removed afterwards.
    await this.place({
      op: 'putIfAbsent',
      key,
      body,
      opts,
      install: async (tmp, file) => {
        throwIfAborted(opts.signal);
        linkSync(tmp, file);
        if (opts.durable !== false) await syncDir(path.dirname(file));
        return false;
      },
    });
  }

  async putOverwrite(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    await this.place({
      op: 'putOverwrite',
      key,
      body,
      opts,
      install: async (tmp, file) => {
        renameSync(tmp, file);
        return true;
      },
    });
  }

  /** Write `body` to a temp file (synced unless not `durable`), then `install` it at the key's path (true when it consumed the temp file). */
  private async place(a: {
    op: string;
    key: string;
    body: Uint8Array;
    opts: PutOptions;
    install: (tmp: string, file: string) => Promise<boolean>;
  }): Promise<void> {
    const { op, key, body, opts, install } = a;
    const { signal } = opts;
    throwIfAborted(signal);
    const file = this.filePath(key);
    let tmp: string | undefined;
    try {
      tmp = await this.writeTemp(body, opts);
      const written = tmp;
      if (await this.inDir(path.dirname(file), () => install(written, file))) tmp = undefined;
    } catch (e) {
      if (errno(e) === 'EEXIST') throw new BranchgraphError('object_exists', `an object already exists at ${key}`, { details: { key } });
      throw storeError(op, key, e);
    } finally {
      if (tmp !== undefined) removeTemp(tmp);
    }
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    throwIfAborted(opts.signal);
    // Walk only the deepest directory the prefix fully names, in key order and lazily: a listing
    // that stops after a page reads the directories (and stats the files) that page needs, and one
    // that starts after a key skips every directory wholly before it without opening it.
    const segs = prefix.split('/');
    segs.pop();
    const keyBase = segs.length === 0 ? '' : `${segs.join('/')}/`;
    const dir = this.dirPath(segs);
    try {
      yield* this.walk({ dir, keyBase, atRoot: segs.length === 0, prefix, startAfter: opts.startAfter, signal: opts.signal });
    } catch (e) {
      if (e instanceof BranchgraphError) throw e;
      throw storeError('list', prefix, e);
    }
  }

  private async *walk(a: {
    dir: string;
    keyBase: string;
    atRoot: boolean;
    prefix: string;
    startAfter?: string | undefined;
    signal?: AbortSignal | undefined;
  }): AsyncGenerator<ObjectInfo> {
    const { dir, keyBase, atRoot, prefix, startAfter, signal } = a;
    throwIfAborted(signal);
    let entries;
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return;
      throw e;
    }
    // Each entry by where its keys sort: a file at its key, a directory at its key plus '/', below
    // which all of its keys lie (no other entry's key can fall among them: names hold no '/').
    const items: { at: string; dir: boolean; name: string }[] = [];
    for (const entry of entries) {
      if (atRoot && entry.name === TMP_DIR) continue;
      if (entry.isDirectory()) items.push({ at: `${keyBase + decodeSegment(entry.name)}/`, dir: true, name: entry.name });
      else if (entry.isFile() && entry.name.endsWith(FILE_SUFFIX))
        items.push({ at: keyBase + decodeSegment(entry.name.slice(0, -FILE_SUFFIX.length)), dir: false, name: entry.name });
    }
    items.sort((x, y) => compareKeys(x.at, y.at));
    for (const item of items) {
      if (item.dir) {
        // Descend only where keys under it can still match the prefix and come after startAfter.
        if (!(item.at.startsWith(prefix) || prefix.startsWith(item.at))) continue;
        if (startAfter !== undefined && !startAfter.startsWith(item.at) && compareKeys(item.at, startAfter) < 0) continue;
        yield* this.walk({ dir: path.join(dir, item.name), keyBase: item.at, atRoot: false, prefix, startAfter, signal });
      } else {
        if (!item.at.startsWith(prefix)) continue;
        if (startAfter !== undefined && compareKeys(item.at, startAfter) <= 0) continue;
        const st = await fsp.stat(path.join(dir, item.name)).catch(() => undefined);
        if (st !== undefined) yield { key: item.at, size: st.size, lastModified: st.mtimeMs };
      }
    }
  }

  async deleteMany(keys: readonly string[], opts: CallOptions = {}): Promise<void> {
    throwIfAborted(opts.signal);
    for (const key of keys) {
      try {
        await fsp.rm(this.filePath(key), { force: true });
      } catch (e) {
        throw storeError('deleteMany', key, e);
      }
    }
  }
}

/**
 * Directory syncs in flight and the one queued behind each: a caller's entry is durable once a sync
 * that started after it was made has ended. Writers racing into one directory (a transfer's runs, a
 * group of commits) share the next sync instead of each paying its own.
 */
const dirSyncs = new Map<string, { running: Promise<void>; next?: Promise<void> }>();

function syncDir(dir: string): Promise<void> {
  const at = dirSyncs.get(dir);
  if (at === undefined) {
    const running = syncDirNow(dir).finally(() => settle(dir));
    dirSyncs.set(dir, { running });
    return running;
  }
  // A sync is running and may have started before this entry was made: wait for the one after it.
  at.next ??= at.running.then(() => syncDirNow(dir));
  return at.next;
}

/** The running sync ended: the queued one (if any) becomes the running one. */
function settle(dir: string): void {
  const at = dirSyncs.get(dir);
  if (at?.next === undefined) {
    dirSyncs.delete(dir);
    return;
  }
  // Its waiters hold its outcome; the chain kept here only orders the syncs after it.
  const running = at.next.finally(() => settle(dir)).catch(() => undefined);
  dirSyncs.set(dir, { running });
}

async function syncDirNow(dir: string): Promise<void> {
  // Make the new directory entry durable; some platforms cannot open directories.
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    await fsyncAsync(fd).catch(() => undefined);
  } finally {
    closeSync(fd);
  }
}

/** Through the module object, where a test can count what waits for the disk. */
const fsyncAsync = (fd: number): Promise<void> => new Promise((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));

/** Write all of a large body through the thread pool, a piece at a time, honouring `signal`. */
async function writeAll(fd: number, body: Uint8Array, signal: AbortSignal | undefined): Promise<void> {
  for (let at = 0; at < body.length; ) {
    throwIfAborted(signal);
    const piece = Math.min(body.length - at, SYNC_BYTES);
    at += await new Promise<number>((resolve, reject) =>
      fs.write(fd, body, at, piece, null, (e, written) => (e === null ? resolve(written) : reject(e))),
    );
  }
}
