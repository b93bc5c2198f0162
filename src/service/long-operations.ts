/**
 * Long operations running in this process (merges, loads, fetches and pushes), with their
 * progress, for `GET /operations`, the `operations` GraphQL query, the
 * metrics and the CLI's progress bar. A finished operation stays listed for
 * a while with its outcome, so a client that polled it can read how it
 * ended; at most KEEP_FINISHED are kept.
 */
import { BranchgraphError } from '../model/errors.js';
import { Progress } from '../model/progress.js';
import { newId } from '../model/new-id.js';

export type LongOperationKind = 'merge' | 'load' | 'fetch' | 'push';

export interface OperationDto {
  id: string;
  kind: LongOperationKind;
  /** The branch changed (a merge's target). */
  branch: string;
  /** A merge's source branch or commit. */
  source: string | null;
  startedAt: string;
  /** Still running, or how it ended. */
  state: 'running' | 'succeeded' | 'failed';
  rowsPlanned: number;
  rowsDone: number;
  /** What the rows are going through now, for a load: parse, validate or write; null for a merge. */
  phase: string | null;
}

const KEEP_FINISHED = 100;
const KEEP_FINISHED_MS = 10 * 60_000;
/** What a client may name its operation by: a ULID, or any short token of these characters. */
const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

interface Entry {
  dto: Omit<OperationDto, 'rowsPlanned' | 'rowsDone' | 'phase'>;
  progress: Progress;
  finishedAt?: number;
}

export class LongOperations {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Check a client-chosen operation id (the `Operation-Id` header). */
  static checkId(id: string): string {
    if (!ID_RE.test(id))
      throw new BranchgraphError('invalid_input', 'Operation-Id must be 1-64 letters, digits, _ or -', {
        issues: [{ path: 'Operation-Id', message: 'letters, digits, _ or -' }],
      });
    return id;
  }

  /** Register a running operation; `onReport` hears its progress at most every `everyMs`. */
  start(
    what: { kind: LongOperationKind; branch: string; source: string | null },
    opts: { id?: string; onReport?: ConstructorParameters<typeof Progress>[0]; everyMs?: number } = {},
  ): { id: string; progress: Progress } {
    const { kind, branch, source } = what;
    const id = opts.id ?? newId(this.clock());
    if (this.entries.get(id)?.dto.state === 'running')
      throw new BranchgraphError('invalid_input', `operation ${id} is already running`, {
        issues: [{ path: 'Operation-Id', message: 'in use' }],
      });
    const progress = new Progress(opts.onReport, opts.everyMs);
    this.entries.set(id, {
      dto: { id, kind, branch, source, startedAt: new Date(this.clock()).toISOString(), state: 'running' },
      progress,
    });
    this.prune();
    return { id, progress };
  }

  finish(id: string, ok: boolean): void {
    const e = this.entries.get(id);
    if (e === undefined) return;
    if (ok) e.progress.complete();
    e.dto.state = ok ? 'succeeded' : 'failed';
    e.finishedAt = this.clock();
  }

  get(id: string): OperationDto {
    this.prune();
    const e = this.entries.get(id);
    if (e === undefined) throw new BranchgraphError('not_found', `operation ${id} is not running here and did not finish recently`);
    return dtoOf(e);
  }

  /** Running operations first, then recently finished ones, each group newest first. */
  list(): OperationDto[] {
    this.prune();
    const all = [...this.entries.values()];
    const order = (e: Entry): number => (e.dto.state === 'running' ? 0 : 1);
    return all.sort((a, b) => order(a) - order(b) || (a.dto.startedAt < b.dto.startedAt ? 1 : -1)).map(dtoOf);
  }

  /** Rows planned and done over the running operations of a kind, for the metrics. */
  totals(kind: LongOperationKind): { running: number; planned: number; done: number } {
    let running = 0;
    let planned = 0;
    let done = 0;
    for (const e of this.entries.values()) {
      if (e.dto.kind !== kind || e.dto.state !== 'running') continue;
      running++;
      planned += e.progress.planned;
      done += e.progress.done;
    }
    return { running, planned, done };
  }

  private prune(): void {
    const now = this.clock();
    const finished = [...this.entries.values()]
      .filter((e) => e.finishedAt !== undefined)
      .sort((a, b) => (a.finishedAt as number) - (b.finishedAt as number));
    for (const [i, e] of finished.entries()) {
      if (finished.length - i > KEEP_FINISHED || now - (e.finishedAt as number) > KEEP_FINISHED_MS) this.entries.delete(e.dto.id);
    }
  }
}

function dtoOf(e: Entry): OperationDto {
  return { ...e.dto, rowsPlanned: e.progress.planned, rowsDone: e.progress.done, phase: e.progress.phase };
}
