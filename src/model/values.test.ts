import { describe, expect, it } from 'vitest';
import { normalizeDatetime } from './values.js';

describe('datetimes', () => {
  it('keep microseconds, normalize to UTC with six digits, and refuse precision they cannot keep', () => {
    expect(normalizeDatetime('2026-01-01T00:00:00Z')).toEqual({ value: '2026-01-01T00:00:00.000000Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.000001Z')).toEqual({ value: '2026-01-01T00:00:00.000001Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.123456000Z')).toEqual({ value: '2026-01-01T00:00:00.123456Z' });
    expect(normalizeDatetime('2026-01-01T23:59:59.999999-05:30')).toEqual({ value: '2026-01-02T05:29:59.999999Z' });
    expect(normalizeDatetime('2026-01-01T01:00+01:00')).toEqual({ value: '2026-01-01T00:00:00.000000Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.0000001Z')).toMatchObject({ malformed: true });
    for (const bad of ['2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01', 'yesterday', '2026-01-01T00:00:60Z'])
      expect(normalizeDatetime(bad)).toHaveProperty('error');
  });

  it('sort as the instants do', () => {
    const values = ['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000500Z'].map(
      (s) => (normalizeDatetime(s) as { value: string }).value,
    );
    expect([...values].sort()).toEqual(['2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000500Z', '2026-01-01T00:00:00.001000Z']);
  });
});
