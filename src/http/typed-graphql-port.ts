/**
 * Give a service its typed GraphQL port (service/typed-graphql-port.ts):
 * stored queries run, and have their shape judged, on the branch's own
 * typed endpoint, the same Yoga, schema, limits, roles and scopes as
 * `/branches/{id}/graphql`. The endpoint's module is loaded on first use,
 * so attaching costs nothing until a stored query is touched.
 */
import { errorFromBody, type ErrorBody } from '../model/errors.js';
import type { BranchgraphService } from '../service/service.js';
import type { TypedAnswer, TypedGraphqlPort } from '../service/typed-graphql-port.js';

/** Give `service` a typed GraphQL port, unless it has one: what stored queries run on. */
export function attachTypedGraphql(service: BranchgraphService): void {
  service.typed ??= lazyPort(service);
}

function lazyPort(service: BranchgraphService): TypedGraphqlPort {
  let built: Promise<TypedGraphqlPort> | undefined;
  const port = (): Promise<TypedGraphqlPort> => {
    built ??= Promise.all([import('./typed-graphql-endpoint.js'), import('../graphql/stored-query-shape.js')]).then(([endpoint, shape]) => {
      const run = endpoint.embeddedTypedGraphql(service, { transport: 'embedded' });
      const schemas = new endpoint.TypedSchemaCache();
      return {
        run: async (a) => {
          const answer = (await run(a.branch, a.document, {
            variables: a.variables,
            role: a.ctx.role ?? 'admin',
            ctx: a.ctx,
          })) as TypedAnswer & {
            error?: ErrorBody;
          };
          // A refusal before any GraphQL ran (the branch, the role, the scope) comes as the REST envelope.
          if (answer.error !== undefined) throw errorFromBody(answer.error, answer.error.message);
          return answer;
        },
        shape: async (a) => {
          const { served } = await endpoint.servedFor({ schemas, service, branch: a.branch, ctx: a.ctx });
          return shape.storedQueryShape(served.typed.schema, a.document);
        },
      };
    });
    return built;
  };
  return {
    run: async (a) => (await port()).run(a),
    shape: async (a) => (await port()).shape(a),
  };
}
