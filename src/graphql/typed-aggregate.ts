/**
 * The typed aggregate field of a table: `aggregateT(where, groupBy, at)`,
 * answering `count`, and per numeric property `min`, `max`, `sum` and `avg`
 * (as `TNumbers`, one Float field per int or float property), with the same
 * per group of values in `groups`. It runs the `aggregate` operation, and
 * asks for the numbers only when the document selects them, so a whole
 * table's count may come from run statistics without reading a row.
 */
import {
  GraphQLFloat,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputObjectType,
} from 'graphql';
import { rowProps, type TableType } from '../model/schema.js';
import { invoke } from '../service/api.js';
import { OPERATIONS } from '../service/operation-table.js';
import { guarded, type ResolverCall, type TypedContext, type TypedSchema } from './typed-context.js';
import { engineWhere, JSONType } from './typed-inputs.js';
import type { TableNames } from './typed-names.js';
import { documentOf, selectsField } from './typed-plan.js';

const NUMBER_FIELDS = ['min', 'max', 'sum', 'avg'] as const;

type Stats = Record<string, { min: number | null; max: number | null; sum: number | null; avg: number | null }>;

/** `{ min: { age: … }, … }` from per-property numbers. */
function byStatistic(numbers: Stats): Record<string, Record<string, number | null>> {
  return Object.fromEntries(NUMBER_FIELDS.map((f) => [f, Object.fromEntries(Object.entries(numbers).map(([p, s]) => [p, s[f]]))]));
}

/** The aggregate field of a table. */
export function aggregateField(c: { t: TableType; n: TableNames; ts: TypedSchema; where: GraphQLInputObjectType }): {
  name: string;
  field: GraphQLFieldConfig<unknown, TypedContext>;
} {
  const { t, n, ts } = c;
  const numeric = rowProps(t).filter((p) => p.type.kind === 'int' || p.type.kind === 'float');
  const numbers =
    numeric.length === 0
      ? undefined
      : new GraphQLObjectType({
          name: n.numbers,
          fields: Object.fromEntries(
            numeric.map((p) => [
              n.fields.props[p.name] ?? p.name,
              { type: GraphQLFloat, resolve: (v: Record<string, unknown>) => v[p.name] ?? null },
            ]),
          ),
        });
  const numberFields: GraphQLFieldConfigMap<unknown, unknown> =
    numbers === undefined ? {} : Object.fromEntries(NUMBER_FIELDS.map((f) => [f, { type: numbers }]));
  const group = new GraphQLObjectType({
    name: n.aggregateGroup,
    fields: {
      key: { type: new GraphQLNonNull(JSONType), description: 'The group’s values, by property.' },
      count: { type: new GraphQLNonNull(GraphQLInt) },
      ...numberFields,
    },
  });
  const type = new GraphQLObjectType({
    name: n.aggregateResult,
    fields: {
      count: { type: new GraphQLNonNull(GraphQLInt) },
      ...numberFields,
      groups: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(group))) },
      source: {
        type: new GraphQLNonNull(GraphQLString),
        description: 'statistics: counted from run statistics, no row read; scan: the live rows were read.',
      },
    },
  });
  const field: GraphQLFieldConfig<unknown, TypedContext> = {
    type: new GraphQLNonNull(type),
    description: `Counts of ${t.name} under a filter, with min, max, sum and avg per numeric property, optionally per group of values.`,
    args: {
      where: { type: c.where },
      groupBy: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'Properties whose values form groups (up to 4).' },
      at: { type: GraphQLString, description: 'The ref to read: a branch, commit:<id> or tag:<name> (default: this branch).' },
    },
    resolve: guarded(
      'read',
      async ({ args, ctx, info }: ResolverCall<unknown, { where?: unknown; groupBy?: string[] | null; at?: string | null }>) => {
        const doc = documentOf(info);
        const wanted = NUMBER_FIELDS.some((f) => selectsField(info.fieldNodes, doc, f)) || selectsField(info.fieldNodes, doc, 'groups');
        const where = args.where === undefined || args.where === null ? undefined : engineWhere(args.where, t.name, ts.fieldMaps);
        const input = {
          table: t.name,
          at: args.at ?? ctx.branch,
          numbers: wanted,
          ...(where !== undefined ? { where } : {}),
          ...(args.groupBy ? { groupBy: args.groupBy } : {}),
        };
        const r = await invoke(OPERATIONS.aggregate, ctx.service, { input, ctx: ctx.requestCtx });
        return {
          count: r.count,
          ...byStatistic(r.numbers as Stats),
          groups: r.groups.map((g) => ({ key: g.key, count: g.count, ...byStatistic(g.numbers as Stats) })),
          source: r.source,
        };
      },
    ),
  };
  return { name: n.aggregate, field };
}
