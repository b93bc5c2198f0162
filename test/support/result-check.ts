/**
 * Installed before every test file (vitest `setupFiles`): every result an
 * operation gives, over any transport in this process, is validated as JSON
 * against the JSON Schema its result contract generates — the schema the
 * OpenAPI document publishes. A result outside it fails the call that made
 * it, naming the operation and the places.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { z } from 'zod';
import type { Operation } from '../../src/service/operation.js';
import { checkResultsWith } from '../../src/service/result-check.js';

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
// The formats the contracts name (src/service/results/scalars.ts): an opaque id is non-empty text; an int64 is an exact integer.
ajv.addFormat('id', /./);
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorOf(op: Operation): ReturnType<typeof ajv.compile> {
  let v = validators.get(op.name);
  if (v === undefined) {
    v = ajv.compile(z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }));
    validators.set(op.name, v);
  }
  return v;
}

checkResultsWith((op, out) => {
  // A streamed result is bytes on the wire; its schema is the body's, checked by the stream's own tests.
  if (op.http.stream !== undefined) return;
  const wire: unknown = JSON.parse(JSON.stringify(out));
  const validate = validatorOf(op);
  if (validate(wire)) return;
  const where = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  throw new Error(`${op.name} answered outside its result contract: ${where.join('; ')}`);
});
