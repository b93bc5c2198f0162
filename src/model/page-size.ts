/**
 * How many rows a page holds when the caller names no size: one number for
 * the engine's row queries and for the typed GraphQL connections that
 * reach them, so the schema's documentation cannot disagree with what runs.
 */
export const DEFAULT_ROWS_PAGE = 100;
