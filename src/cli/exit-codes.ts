import { isBranchgraphError, type ErrorCode } from '../model/errors.js';

/**
 * The command line's exit codes. Scripts branch on these, so they are part
 * of the interface: README.md lists them and `branchgraph --help` prints them.
 */
export const EXIT = {
  ok: 0,
  /** The operation failed: refused (a constraint, a moved head, a protected branch) or broken (the store, the server). */
  failed: 1,
  /** The command line was wrong: unknown command or option, a missing argument, a bad value, an unreadable input file. */
  usage: 2,
  /** A merge found conflicts and published nothing. */
  conflicts: 3,
  /** What was named does not exist: branch, table, key, commit, graph. */
  notFound: 4,
  /** No server answered at --server, or the store (or a remote) could not be reached; retrying may help. */
  unreachable: 5,
} as const;

export const EXIT_CODES_HELP = `exit codes:
  0  success
  1  the operation failed (refused or broken; the message says which)
  2  usage: unknown command or option, missing argument, bad value, unreadable file
  3  merge conflicts: nothing was published
  4  not found: branch, table, key, commit or graph
  5  unreachable: no server at --server, the store or a remote is unavailable (retry)`;

const BY_CODE: Partial<Record<ErrorCode, number>> = {
  invalid_input: EXIT.usage,
  schema_invalid: EXIT.usage,
  not_found: EXIT.notFound,
  server_unreachable: EXIT.unreachable,
  store_unavailable: EXIT.unreachable,
  remote_unreachable: EXIT.unreachable,
  publisher_unreachable: EXIT.unreachable,
  embedding_failed: EXIT.unreachable,
};

/** The exit code for an error that ended a command. */
export function exitCodeOf(e: unknown): number {
  return isBranchgraphError(e) ? (BY_CODE[e.code] ?? EXIT.failed) : EXIT.failed;
}
