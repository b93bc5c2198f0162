/** Head hints of one branch land in the order they were started, however long each write takes. */
import { describe, expect, it } from 'vitest';
import { BranchHints } from './branch-hints.js';
import { nextTurn } from '../model/turns.js';
import type { Manifest } from './manifest.js';
import type { BranchRecord } from './branch-record.js';
import type { Repository } from './repository.js';

const rec = (name: string): BranchRecord => ({ name, seq: 1, lineage: `L-${name}` }) as BranchRecord;
const head = (name: string, version: number): Manifest =>
  ({ lineage: `L-${name}`, version, schema: 'h', schemaDoc: {} }) as unknown as Manifest;

/** A repository whose hint writes take the given milliseconds in turn, recording the order they land in. */
function slowRepo(delays: number[]): { repo: Repository; landed: string[] } {
  const landed: string[] = [];
  let n = 0;
  const repo = {
    records: {
      writeHint: async (r: BranchRecord, at: { version: number }) => {
        await new Promise((done) => setTimeout(done, delays[n++] ?? 0));
        landed.push(`${r.name}@${at.version}`);
      },
    },
  } as unknown as Repository;
  return { repo, landed };
}

describe('BranchHints', () => {
  it('lands the newest hint of a branch last, skipping those overtaken while one was in flight', async () => {
    // Unordered, the first (slowest) write would land last and leave the branch hinting at version 1.
    const { repo, landed } = slowRepo([30, 1, 1]);
    const hints = new BranchHints();
    hints.write(repo, rec('d'), head('d', 1));
    // A hint starts from the next turn of the loop: once it has, it is in flight.
    await nextTurn();
    hints.write(repo, rec('d'), head('d', 2));
    hints.write(repo, rec('d'), head('d', 3));
    await hints.settle();
    expect(landed).toEqual(['d@1', 'd@3']);
  });

  it('skips hints overtaken before they started, within the turn that gave them', async () => {
    const { repo, landed } = slowRepo([1, 1, 1]);
    const hints = new BranchHints();
    for (const v of [1, 2, 3]) hints.write(repo, rec('d'), head('d', v));
    await hints.settle();
    expect(landed).toEqual(['d@3']);
  });

  it('writes the hints of different branches at once', async () => {
    const { repo, landed } = slowRepo([30, 1]);
    const hints = new BranchHints();
    hints.write(repo, rec('a'), head('a', 1));
    hints.write(repo, rec('b'), head('b', 1));
    await hints.settle();
    expect(landed).toEqual(['b@1', 'a@1']);
  });

  it('writes a later hint of a branch once the earlier ones have landed', async () => {
    const { repo, landed } = slowRepo([1, 1]);
    const hints = new BranchHints();
    hints.write(repo, rec('d'), head('d', 1));
    await hints.settle();
    hints.write(repo, rec('d'), head('d', 2));
    await hints.settle();
    expect(landed).toEqual(['d@1', 'd@2']);
  });
});
