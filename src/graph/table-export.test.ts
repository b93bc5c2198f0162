import { describe, expect, it } from 'vitest';
import { checkExportSize, WHOLE_EXPORT_MAX_ROWS } from './table-export.js';

describe('export size', () => {
  it('refuses whole-file exports past the row limit, and never the streamed ones', () => {
    expect(() => checkExportSize('parquet', WHOLE_EXPORT_MAX_ROWS)).not.toThrow();
    expect(() => checkExportSize('arrow', WHOLE_EXPORT_MAX_ROWS + 1)).toThrow(
      expect.objectContaining({ code: 'payload_too_large', details: { limit: WHOLE_EXPORT_MAX_ROWS } }),
    );
    expect(() => checkExportSize('parquet', WHOLE_EXPORT_MAX_ROWS + 1)).toThrow(/use arrow-stream or ndjson/);
    expect(() => checkExportSize('arrow-stream', 10 * WHOLE_EXPORT_MAX_ROWS)).not.toThrow();
    expect(() => checkExportSize('ndjson', 10 * WHOLE_EXPORT_MAX_ROWS)).not.toThrow();
  });
});
