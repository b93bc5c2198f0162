/**
 * The preset dictionary of compressed stored objects (model/compress-stored.ts),
 * version 1.
 *
 * Most stored objects are small JSON documents (a one-row write's manifest,
 * event, commit record and run are 0.1-2 KB each), too small for deflate to
 * learn their field names from the object alone. A preset dictionary holds
 * the text those objects share (member names, enum values, the shapes of run
 * references, commits and schema documents), so each object pays only for
 * what is its own: identifiers, checksums, keys and values.
 *
 * Never edit this text: every object compressed with it names version 1 in
 * its header and inflates only with exactly these bytes. A better dictionary
 * is a new version beside this one, and readers keep both.
 */
const FRAGMENTS = [
  // Rarer shapes first: deflate reaches nearer text with shorter distances.
  '{"format":1,"seq":1,"name":"main","lineage":"","deleted":false,"from":null,"time":"2026-01-01T00:00:00.000Z","actor":"',
  '{"record":{"format":1,"seq":1,"name":"main","lineage":"","deleted":false,"from":null,"time":"","actor":""},"head":{"lineage":"","version":',
  '"resolved":{"strategy":"source-wins","total":1,"items":[{"table":"","key":"","property":null,"kind":"both_updated","take":"source","by":"choice"}]}',
  '"idempotency":{"keyHash":"","fingerprint":""},"request":"","bypass":true,"group":[{"author":"","message":""}]',
  '"indexes":{"of":"","covers":0,"sets":{"":{"runs":[',
  '"kind":"tag","tag":"","commitKind":"merge","kind":"merge","kind":"fast_forward","kind":"cherry_pick","kind":"revert","kind":"schema","kind":"init","kind":"catchup"',
  '{"format":1,"types":[{"key":["id"],"kind":"edge","name":"","from":"","to":"","props":[',
  '{"name":"","optional":false,"range":null,"type":{"kind":"enum","values":[""]},"unique":true},',
  '{"name":"","optional":true,"range":null,"type":{"kind":"datetime"},"unique":false},',
  '{"name":"","optional":false,"range":null,"type":{"kind":"float"},"unique":false},',
  '{"name":"","optional":false,"range":null,"type":{"kind":"bool"},"unique":false},',
  '{"name":"","optional":false,"range":null,"type":{"kind":"json"},"unique":false},',
  '{"name":"","optional":false,"range":null,"type":{"kind":"date"},"unique":false},',
  '{"format":1,"types":[{"key":["id"],"kind":"node","name":"","props":[',
  '{"name":"id","optional":false,"range":null,"type":{"kind":"string"},"unique":false},',
  '{"name":"","optional":false,"range":null,"type":{"kind":"int"},"unique":false},',
  '{"name":"","optional":true,"range":null,"type":{"kind":"string"},"unique":false}]}]}',
  '"schemaDoc":{"format":1,"types":[{"kind":"node","name":"","props":[',
  '{"name":"id","type":{"kind":"string"},"optional":false,"unique":false,"range":null},',
  '{"name":"","type":{"kind":"int"},"optional":false,"unique":false,"range":null},',
  '{"name":"","type":{"kind":"string"},"optional":true,"unique":false,"range":null}],"key":["id"]}]},',
  '{"format":1,"kind":"runs","runs":[',
  '{"format":3,"lineage":"","version":1,"schema":"","schemaDoc":',
  '"wal":{},"commit":{"id":"","parents":[{"lineage":"","version":1}],"parentIds":[""],"branch":"main","actor":"","message":"compact ","time":"2026-',
  '"kind":"write"},"generation":1,"tables":{"d":0,"e":{"":{"runs":[',
  '{"format":1,"seq":1,"time":"2026-',
  '","kind":"commit","actor":"","branch":"main","commit":"","commitKind":"write","source":{"key":"manifests/","commit":"","hash":"',
  '{"format":"branchgraph.rows/1","table":"","rows":[["",0,"",{"id":"","note":null}]]}',
  '],"replacedAt":":1"}}},',
  '","segmented":true,"compacted":true,"keysCut":true,"dropped":true,"keptUnique":[""],',
  '{"key":"runs/","rows":1,"tombstones":0,"bytes":1,"minKey":"","maxKey":"","checksum":"","compacted":true,"origin":":1"},',
  '{"key":"runs/.rows.json","rows":1,"tombstones":0,"bytes":149,"minKey":"","maxKey":"","checksum":"","origin":":1"},',
  '{"lineage":"","version":1,"$checksum":"',
];

export const STORED_DICTIONARY_V1: Uint8Array = new TextEncoder().encode(FRAGMENTS.join(''));
