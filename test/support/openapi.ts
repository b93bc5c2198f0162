/**
 * openapi.yaml as the tests read it: the document, loaded once, typed as far
 * as the tests look into it, and its `$ref`s resolved.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

export type OpenApiSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  items?: OpenApiSchema;
  oneOf?: OpenApiSchema[];
  anyOf?: OpenApiSchema[];
  minimum?: number;
  maximum?: number;
};
export type OpenApiParam = { $ref?: string; name: string; in: string; required?: boolean; schema: OpenApiSchema };
export type OpenApiOperation = {
  operationId?: string;
  parameters?: OpenApiParam[];
  requestBody?: { content: Record<string, { schema: OpenApiSchema }> };
};
export type OpenApiDoc = {
  paths: Record<string, Record<string, OpenApiOperation> & { parameters?: OpenApiParam[] }>;
  components: { parameters: Record<string, OpenApiParam>; schemas: Record<string, OpenApiSchema> };
};

export const OPENAPI = parseYaml(readFileSync('openapi.yaml', 'utf8')) as OpenApiDoc;

/** `x`, or what its `$ref` names (followed as far as it goes). */
export function resolveRef<T extends { $ref?: string }>(x: T): T {
  if (x.$ref === undefined) return x;
  const [, , section, name] = x.$ref.split('/') as [string, string, 'parameters' | 'schemas', string];
  return resolveRef(OPENAPI.components[section][name] as unknown as T);
}
