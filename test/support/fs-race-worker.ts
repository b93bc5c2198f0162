// A separate process racing create-only PUTs on a shared FsStore directory.
// argv: root, rounds, startAtEpochMs. Prints the keys this process won as JSON.
import { FsStore } from '../../src/store/fs-store.js';

const [root, roundsArg, startAt] = process.argv.slice(2);
const store = new FsStore(root ?? '');
const rounds = Number(roundsArg);
const wait = Number(startAt) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const won: string[] = [];
for (let round = 0; round < rounds; round++) {
  const key = `race/${round}`;
  await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      store.putIfAbsent(key, new TextEncoder().encode(`${process.pid}-${i}`)).then(
        () => won.push(key),
        (e: { code?: string }) => {
          if (e.code !== 'object_exists') throw e;
        },
      ),
    ),
  );
}
process.stdout.write(JSON.stringify(won));
