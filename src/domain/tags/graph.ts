import { ApiError } from '../../errors/problem.ts';
import { escapePointer } from '../../schemas/validation.ts';

export const TAG_GRAPH_FORMAT = 'service.tag_graph.v1';

/** The server limits of the spec's Limits table, enforced on every graph replace. */
export const TAG_GRAPH_LIMITS = {
  graphBytes: 262_144,
  tags: 256,
  triggers: 256,
  variables: 256,
  systemModules: 64,
  arrayItems: 256,
  objectKeys: 64,
  stringBytes: 65_536,
  depth: 16,
} as const;

export const CONSENT_CATEGORIES = ['necessary', 'functional', 'analytics', 'marketing'] as const;
export type ConsentCategory = (typeof CONSENT_CATEGORIES)[number];
export const TAG_TYPES = ['script', 'image'] as const;
export const TRIGGER_TYPES = ['pageview', 'click', 'custom'] as const;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** A stored graph: every top-level member present (defaults applied). */
export interface TagGraph {
  format: string;
  tags: JsonObject[];
  triggers: JsonObject[];
  variables: JsonObject[];
  systemModules: Record<string, JsonObject>;
  consentPolicy?: JsonObject;
}

export function emptyGraph(): TagGraph {
  return { format: TAG_GRAPH_FORMAT, tags: [], triggers: [], variables: [], systemModules: {} };
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(pointer: string, detail: string): ApiError {
  return new ApiError('tag_graph_invalid', detail, { pointer });
}

/**
 * Walks the graph in document order and throws at the first value that breaks a generic limit:
 * string bytes (values and property names), items per array, keys per object, nesting depth. The
 * graph object is level 1; every object or array inside it adds one level.
 */
function walk(value: unknown, pointer: string, level: number): void {
  const L = TAG_GRAPH_LIMITS;
  if (typeof value === 'string') {
    if (bytes(value) > L.stringBytes) {
      throw new ApiError(
        'tag_graph_string_too_long',
        `The string at ${pointer} is ${bytes(value)} bytes; at most ${L.stringBytes} are allowed.`,
        { pointer, details: { limit: L.stringBytes, actual: bytes(value) } },
      );
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (level > L.depth) {
    throw new ApiError(
      'tag_graph_too_deep',
      `The value at ${pointer} is nested ${level} levels deep; at most ${L.depth} are allowed.`,
      { pointer, details: { limit: L.depth, actual: level } },
    );
  }
  if (Array.isArray(value)) {
    if (value.length > L.arrayItems) {
      throw new ApiError(
        'tag_graph_array_too_long',
        `The array at ${pointer} has ${value.length} items; at most ${L.arrayItems} are allowed.`,
        { pointer, details: { limit: L.arrayItems, actual: value.length } },
      );
    }
    for (let i = 0; i < value.length; i++) walk(value[i], `${pointer}/${i}`, level + 1);
    return;
  }
  const keys = Object.keys(value);
  if (keys.length > L.objectKeys) {
    throw new ApiError(
      'tag_graph_too_many_keys',
      `The object at ${pointer} has ${keys.length} keys; at most ${L.objectKeys} are allowed.`,
      { pointer, details: { limit: L.objectKeys, actual: keys.length } },
    );
  }
  for (const k of keys) {
    const p = `${pointer}/${escapePointer(k)}`;
    if (bytes(k) > L.stringBytes) {
      throw new ApiError(
        'tag_graph_string_too_long',
        `A property name at ${pointer} is ${bytes(k)} bytes; at most ${L.stringBytes} are allowed.`,
        { pointer: p, details: { limit: L.stringBytes, actual: bytes(k) } },
      );
    }
    walk((value as Record<string, unknown>)[k], p, level + 1);
  }
}

function checkId(item: JsonObject, pointer: string, seen: Set<string>, what: string): string {
  const id = item.id;
  if (typeof id !== 'string' || id.length < 1 || id.length > 128) {
    throw invalid(`${pointer}/id`, `Each ${what} needs an \`id\`: a string of 1 to 128 characters.`);
  }
  if (seen.has(id)) throw invalid(`${pointer}/id`, `The ${what} id ${JSON.stringify(id)} is used twice.`);
  seen.add(id);
  return id;
}

function optionalString(item: JsonObject, key: string, pointer: string, max: number): void {
  const v = item[key];
  if (v === undefined) return;
  if (typeof v !== 'string' || v.length > max) {
    throw invalid(`${pointer}/${key}`, `\`${key}\` must be a string of at most ${max} characters.`);
  }
}

/** An absolute https URL without credentials; tag code may only load from such addresses. */
export function isSafeTagUrl(s: string): boolean {
  if (s.length > 2048 || /[\s"'<>\\`]/.test(s)) return false;
  try {
    const u = new URL(s);
    return u.protocol === 'https:' && !u.username && !u.password && u.hostname !== '';
  } catch {
    return false;
  }
}

function checkTag(tag: JsonObject, pointer: string, triggerIds: Set<string>): void {
  optionalString(tag, 'name', pointer, 160);
  if (typeof tag.type !== 'string' || !(TAG_TYPES as readonly string[]).includes(tag.type)) {
    throw invalid(`${pointer}/type`, `\`type\` must be one of ${TAG_TYPES.join(', ')}.`);
  }
  if (tag.enabled !== undefined && typeof tag.enabled !== 'boolean') {
    throw invalid(`${pointer}/enabled`, '`enabled` must be a boolean.');
  }
  const cc = tag.consentCategory;
  if (typeof cc !== 'string' || !(CONSENT_CATEGORIES as readonly string[]).includes(cc)) {
    throw invalid(
      `${pointer}/consentCategory`,
      `\`consentCategory\` is required: one of ${CONSENT_CATEGORIES.join(', ')}.`,
    );
  }
  if (tag.triggers !== undefined) {
    if (!Array.isArray(tag.triggers))
      throw invalid(`${pointer}/triggers`, '`triggers` must be an array of trigger ids.');
    for (const [j, t] of tag.triggers.entries()) {
      if (typeof t !== 'string' || !triggerIds.has(t)) {
        throw invalid(
          `${pointer}/triggers/${j}`,
          `Trigger ${JSON.stringify(t)} is not one of the graph’s triggers.`,
        );
      }
    }
  }
  const config = tag.config;
  if (!isObject(config)) throw invalid(`${pointer}/config`, '`config` is required and must be an object.');
  if (tag.type === 'script') {
    const hasCode = config.code !== undefined;
    const hasSrc = config.src !== undefined;
    if (hasCode === hasSrc) {
      throw invalid(`${pointer}/config`, 'A script tag has exactly one of `config.code` or `config.src`.');
    }
    if (hasCode && typeof config.code !== 'string') {
      throw invalid(`${pointer}/config/code`, '`config.code` must be a string of JavaScript.');
    }
  }
  if (tag.type === 'image' && config.src === undefined) {
    throw invalid(`${pointer}/config/src`, 'An image tag needs `config.src`, the pixel’s https URL.');
  }
  if (config.src !== undefined && (typeof config.src !== 'string' || !isSafeTagUrl(config.src))) {
    throw invalid(
      `${pointer}/config/src`,
      '`config.src` must be an absolute https URL (at most 2048 characters).',
    );
  }
}

function checkTrigger(trigger: JsonObject, pointer: string): void {
  if (typeof trigger.type !== 'string' || !(TRIGGER_TYPES as readonly string[]).includes(trigger.type)) {
    throw invalid(`${pointer}/type`, `\`type\` must be one of ${TRIGGER_TYPES.join(', ')}.`);
  }
  optionalString(trigger, 'selector', pointer, 1024);
  if (trigger.type === 'custom') {
    const e = trigger.eventName;
    if (typeof e !== 'string' || e.length < 1 || e.length > 128) {
      throw invalid(`${pointer}/eventName`, 'A custom trigger needs `eventName`, 1 to 128 characters.');
    }
  }
}

/**
 * Checks a graph as received (before defaults) against every server limit, then the item shapes,
 * and returns it normalised with defaults. Order: top-level counts, then the generic walk (strings,
 * arrays, keys, depth; first offence in document order), then the encoded size, which is measured
 * on the compact UTF-8 JSON encoding of the graph.
 */
export function checkTagGraph(input: Record<string, unknown>): TagGraph {
  const L = TAG_GRAPH_LIMITS;
  const counted = [
    ['tags', 'tag_graph_too_many_tags', L.tags],
    ['triggers', 'tag_graph_too_many_triggers', L.triggers],
    ['variables', 'tag_graph_too_many_variables', L.variables],
  ] as const;
  for (const [key, code, limit] of counted) {
    const v = input[key];
    if (Array.isArray(v) && v.length > limit) {
      throw new ApiError(code, `The graph has ${v.length} ${key}; at most ${limit} are allowed.`, {
        pointer: `/graph/${key}`,
        details: { limit, actual: v.length },
      });
    }
  }
  const modules = input.systemModules;
  if (isObject(modules) && Object.keys(modules).length > L.systemModules) {
    const n = Object.keys(modules).length;
    throw new ApiError(
      'tag_graph_too_many_system_modules',
      `The graph has ${n} system modules; at most ${L.systemModules} are allowed.`,
      { pointer: '/graph/systemModules', details: { limit: L.systemModules, actual: n } },
    );
  }
  // Depth first: the walk stops at level 17, so a hostile 100,000-level value can't overflow the
  // stack of the recursive JSON.stringify below.
  walk(input, '/graph', 1);
  const size = bytes(JSON.stringify(input));
  if (size > L.graphBytes) {
    throw new ApiError(
      'tag_graph_too_large',
      `The graph is ${size} bytes as compact JSON; at most ${L.graphBytes} are allowed.`,
      { pointer: '/graph', details: { limit: L.graphBytes, actual: size } },
    );
  }

  const graph: TagGraph = {
    ...(input as Partial<TagGraph>),
    format: (input.format as string | undefined) ?? TAG_GRAPH_FORMAT,
    tags: (input.tags as JsonObject[] | undefined) ?? [],
    triggers: (input.triggers as JsonObject[] | undefined) ?? [],
    variables: (input.variables as JsonObject[] | undefined) ?? [],
    systemModules: (input.systemModules as Record<string, JsonObject> | undefined) ?? {},
  };
  const triggerIds = new Set<string>();
  graph.triggers.forEach((t, i) => {
    checkId(t, `/graph/triggers/${i}`, triggerIds, 'trigger');
    checkTrigger(t, `/graph/triggers/${i}`);
  });
  const variableIds = new Set<string>();
  graph.variables.forEach((v, i) => {
    checkId(v, `/graph/variables/${i}`, variableIds, 'variable');
  });
  const tagIds = new Set<string>();
  graph.tags.forEach((t, i) => {
    checkId(t, `/graph/tags/${i}`, tagIds, 'tag');
    checkTag(t, `/graph/tags/${i}`, triggerIds);
  });
  for (const [name, mod] of Object.entries(graph.systemModules)) {
    if (!isObject(mod)) {
      throw invalid(`/graph/systemModules/${escapePointer(name)}`, 'Each system module is an object.');
    }
  }
  return graph;
}
