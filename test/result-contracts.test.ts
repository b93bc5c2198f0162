/**
 * Results are held to their contracts: at compile time by `defineOperation`
 * (a function's result must fit its schema's type) and in every test by the
 * check test/support/result-check.ts installs. These cases show the check
 * refusing what the compiler cannot see.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invoke } from '../src/service/api.js';
import { defineOperation } from '../src/service/operation.js';
import { OPERATION_LIST } from '../src/service/operation-table.js';
import type { BranchgraphService } from '../src/service/service.js';
import type { RequestContext } from '../src/service/request-context.js';

const ctx = { transport: 'embedded' } as RequestContext;
const service = {} as BranchgraphService;

function opAnswering(out: unknown) {
  return defineOperation({
    name: 'answer',
    summary: 'answers what it is given',
    role: 'read',
    access: () => ({}),
    input: z.object({}).strict(),
    output: z.object({ id: z.string(), n: z.number().int() }),
    run: async () => out as { id: string; n: number },
    http: { method: 'GET', path: '/answer' },
  });
}

describe('result contracts', () => {
  it('pass a result inside the contract', async () => {
    await expect(invoke(opAnswering({ id: 'a', n: 1 }), service, { input: {}, ctx })).resolves.toEqual({ id: 'a', n: 1 });
  });

  it('refuse a field the contract does not name, a wrong type and a missing field', async () => {
    for (const out of [{ id: 'a', n: 1, secret: 'x' }, { id: 'a', n: 1.5 }, { id: 'a' }])
      await expect(invoke(opAnswering(out), service, { input: {}, ctx }), JSON.stringify(out)).rejects.toThrow(
        /answer answered outside its result contract/,
      );
  });

  it('every operation has a result schema that JSON Schema can express (streams excepted)', () => {
    for (const op of OPERATION_LIST) {
      const schema = z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }) as {
        type?: unknown;
        anyOf?: unknown;
        $ref?: unknown;
      };
      if (op.http.stream !== undefined) continue;
      expect(schema.type ?? schema.anyOf ?? schema.$ref, op.name).toBeDefined();
    }
  });
});
