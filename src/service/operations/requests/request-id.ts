import { IdZ } from '../../results/scalars.js';

/** A merge request's id, as the server made it. */
export const requestId = IdZ.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a merge request id (26 characters)');
