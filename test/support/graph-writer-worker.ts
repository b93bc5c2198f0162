// A separate process writing rows to one branch of a graph in a directory.
// argv: root, name, count. Prints the ids it was told landed, as JSON.
import { Graph } from '../../src/graph/graph.js';
import { FsStore } from '../../src/store/fs-store.js';

const [root, name, countArg] = process.argv.slice(2);
const g = await Graph.open(new FsStore(root ?? ''));
const acked: string[] = [];
for (let i = 0; i < Number(countArg); i++) {
  const id = `${name}-${i}`;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await g.write('main', [{ op: 'insert', table: 'Person', values: { id, name: id } }]);
      acked.push(id);
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== 'publish_contention') throw e;
    }
  }
}
process.stdout.write(JSON.stringify(acked));
