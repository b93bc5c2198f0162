/**
 * An answer's bytes as the chunks they were made in. A large answer (an
 * introspection, a read of large rows) is made a piece at a time; joining
 * the pieces into one buffer is a copy of all of it in one step, which a
 * first touch of fresh memory makes slow on these machines (2.6 ms a
 * megabyte). A server's response streams the chunks as they are
 * (http/sized-response.ts).
 *
 * A fetch `Response` takes it as a body as it takes any async iterable of
 * bytes; anything that treats it as text (a library splicing answers into
 * a batch) gets its UTF-8 text from `toString`, whole.
 */
export class ByteChunks {
  constructor(readonly chunks: readonly Uint8Array[]) {}

  get byteLength(): number {
    let n = 0;
    for (const c of this.chunks) n += c.byteLength;
    return n;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    yield* this.chunks;
  }

  toString(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
