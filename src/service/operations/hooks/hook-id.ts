import { IdZ } from '../../results/scalars.js';

/** A hook's id: the ULID it was given when registered. */
export const hookId = IdZ.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a 26-character hook id');
