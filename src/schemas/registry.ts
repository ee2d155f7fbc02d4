import type { TSchema } from '@sinclair/typebox';

/**
 * Named schemas: each is validated against, served at `/schemas/<Name>.json` (the `$schema` of
 * bodies that use it) and listed in the OpenAPI document's components.
 */
const named = new Map<string, TSchema>();

export function defineSchema<T extends TSchema>(name: string, schema: T): T {
  if (named.has(name) && named.get(name) !== schema) throw new Error(`schema ${name} defined twice`);
  named.set(name, schema);
  nameOf.set(schema, name);
  return schema;
}

const nameOf = new WeakMap<TSchema, string>();

export function schemaName(schema: TSchema): string | undefined {
  return nameOf.get(schema);
}

export function getSchema(name: string): TSchema | undefined {
  return named.get(name);
}

export function allSchemas(): Map<string, TSchema> {
  return named;
}

export function schemaUrl(publicUrl: string, name: string): string {
  return `${publicUrl}/schemas/${name}.json`;
}

/** The JSON Schema 2020-12 document served for a named schema. */
export function schemaDocument(publicUrl: string, name: string): Record<string, unknown> | undefined {
  const s = named.get(name);
  if (!s) return undefined;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: schemaUrl(publicUrl, name),
    title: name,
    ...JSON.parse(JSON.stringify(s)),
  };
}
