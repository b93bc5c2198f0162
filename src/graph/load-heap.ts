/**
 * A streaming load's heap, kept near what the load holds.
 *
 * V8 sets the old generation's next collection limit at what survived the
 * last full collection times a factor it picks from how fast it collects
 * against how fast the program allocates: up to 4 on a machine with memory
 * to spare. A streaming load holds little (a chunk, a merge's segments:
 * docs/import.md) but allocates fast, so that factor, not the load's data,
 * set its peak: about 300 MiB for 1,000,000 rows whose live heap after a
 * collection is 40-110 MiB.
 *
 * While at least one streaming load runs, the factor is fixed at
 * 1 + LOAD_HEAP_GROWING_PERCENT / 100 (`--heap-growing-percent`, which V8
 * reads each time it sets the limit, so it may change while the process
 * runs); when the last one ends, V8 picks again. The flag is the process's,
 * so other work running beside a load collects as often as the load does.
 * A process started with `--heap-growing-percent` keeps its own value.
 */
import v8 from 'node:v8';
import { hasNodeFlag } from '../model/node-flags.js';

export const LOAD_HEAP_GROWING_PERCENT = 80;

/** How the flag is set: V8's, in a process; recorded, in a test. */
export type SetV8Flag = (flag: string) => void;

export class LoadHeap {
  #running = 0;
  readonly #set: SetV8Flag | undefined;

  /** `chosen`: the process was started with the flag, which is then left alone. */
  constructor(set: SetV8Flag, chosen: boolean) {
    this.#set = chosen ? undefined : set;
  }

  /** `work` with the load's growing factor in force for as long as it runs. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running++ === 0) this.#set?.(`--heap-growing-percent=${LOAD_HEAP_GROWING_PERCENT}`);
    try {
      return await work();
    } finally {
      // 0 is V8's default: the factor is its own choice again.
      if (--this.#running === 0) this.#set?.('--heap-growing-percent=0');
    }
  }
}

/** This process's load heap. */
export const loadHeap = new LoadHeap((flag) => v8.setFlagsFromString(flag), hasNodeFlag('--heap-growing-percent'));
