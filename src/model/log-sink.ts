/**
 * Where the engine writes its few log lines (a background catch-up that
 * failed, a compaction that ran). A structured logger fits as it is (the
 * service passes its pino logger); the engine itself depends on no logging
 * library.
 */
export interface LogSink {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}
