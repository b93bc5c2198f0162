import { describe, expect, it } from 'vitest';
import { hasServerFlags } from './server-process.js';

describe("the server's process", () => {
  it("is this one when it was started with the server's flags, or with its own choice of each", () => {
    expect(hasServerFlags([])).toBe(false);
    expect(hasServerFlags(['--import', 'tsx'])).toBe(false);
    expect(hasServerFlags(['--max-semi-space-size=64'])).toBe(true);
    expect(hasServerFlags(['--max_semi_space_size=16'])).toBe(true);
    expect(hasServerFlags(['--max-semi-space-size-x=1'])).toBe(false);
  });
});
