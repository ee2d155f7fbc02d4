import type { TSchema } from '@sinclair/typebox';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { EMAIL_PATTERN } from '../domain/accounts/email.ts';
import { ApiError } from '../errors/problem.ts';

function makeAjv(coerce: boolean) {
  // removeAdditional stays off: closed schemas must reject unknown properties, never drop them.
  const ajv = new Ajv2020.default({
    allErrors: false,
    strict: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: false,
  });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);
const cache = new WeakMap<object, ValidateFunction>();
const queryCache = new WeakMap<object, ValidateFunction>();

export type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

/**
 * The validator of `schema` for a part of a request. Compiled on its first call, not here: the
 * server registers ~200 routes at start and most are never called by a given instance soon after
 * (compiling them all up front was most of a cold start). `errors` is the last call's, as Ajv's.
 */
export function compileValidator(schema: TSchema, part: HttpPart): ValidateFunction {
  const coerce = part !== 'body';
  const c = coerce ? queryCache : cache;
  let fn = c.get(schema);
  if (!fn) {
    let compiled: ValidateFunction | null = null;
    const lazy = ((data: unknown) => {
      compiled ??= (coerce ? queryAjv : bodyAjv).compile(schema);
      const ok = compiled(data);
      lazy.errors = compiled.errors;
      return ok;
    }) as ValidateFunction;
    lazy.schema = schema;
    lazy.errors = null;
    fn = lazy;
    c.set(schema, fn);
  }
  return fn;
}

/** RFC 6901 pointer for an Ajv error: unknown and missing properties point at the property itself. */
export function pointerOf(err: ErrorObject): string {
  let p = err.instancePath;
  if (err.keyword === 'additionalProperties') p += `/${escapePointer(String(err.params.additionalProperty))}`;
  else if (err.keyword === 'required') p += `/${escapePointer(String(err.params.missingProperty))}`;
  else if (err.keyword === 'propertyNames') p += `/${escapePointer(String(err.params.propertyName ?? ''))}`;
  return p;
}

export function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(err: ErrorObject, pointer: string): string {
  const field = pointer || 'the body';
  switch (err.keyword) {
    case 'additionalProperties':
      return `Unknown property ${pointer}: this object accepts no other properties.`;
    case 'required':
      return `${field} is required.`;
    case 'minLength':
      return `${field} must be at least ${err.params.limit} characters long.`;
    case 'maxLength':
      return `${field} must be at most ${err.params.limit} characters long.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${field} ${err.message}.`;
    case 'maxItems':
      return `${field} must have at most ${err.params.limit} items.`;
    case 'minItems':
      return `${field} must have at least ${err.params.limit} items.`;
    case 'maxProperties':
      return `${field} must have at most ${err.params.limit} entries.`;
    case 'minProperties':
      return `${field} must have at least ${err.params.limit} entries.`;
    case 'enum':
      return `${field} must be one of: ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    case 'const':
      return `${field} must be ${JSON.stringify(err.params.allowedValue)}.`;
    case 'type':
      return `${field} must be of type ${err.params.type}.`;
    case 'pattern':
      if (err.params.pattern === EMAIL_PATTERN) return `${field} must be an e-mail address (name@host).`;
      return `${field} does not have the expected form.`;
    case 'format':
      return `${field} must be a valid ${err.params.format}.`;
    case 'anyOf':
    case 'oneOf':
      return `${field} matches none of the accepted forms.`;
    default:
      return `${field} ${err.message ?? 'is invalid'}.`;
  }
}

/**
 * Turns Ajv errors into one `validation_error` problem. For unions Ajv reports each branch; we keep the
 * deepest error so the pointer names the field that actually failed.
 */
export function toValidationError(errors: ErrorObject[], part: HttpPart): ApiError {
  let best = errors[0]!;
  for (const e of errors) {
    if (pointerOf(e).split('/').length > pointerOf(best).split('/').length) best = e;
  }
  const pointer = pointerOf(best);
  const where = part === 'body' ? '' : ` (in the ${part === 'querystring' ? 'query string' : part})`;
  return new ApiError('validation_error', describe(best, pointer) + where, {
    pointer,
    details: { in: part === 'querystring' ? 'query' : part, keyword: best.keyword, params: best.params },
  });
}

/** Validates a value against a schema outside Fastify's pipeline (forms, config files); `prefix` nests the pointer. */
export function validate<T>(schema: TSchema, value: unknown, part: HttpPart = 'body', prefix = ''): T {
  const fn = compileValidator(schema, part);
  if (fn(value)) return value as T;
  const err = toValidationError(fn.errors ?? [], part);
  if (!prefix) throw err;
  const inner = err.extras.pointer ?? '';
  const detail = inner
    ? err.detail.split(inner).join(prefix + inner)
    : err.detail.replace('the body', prefix);
  throw new ApiError(err.code, detail, { ...err.extras, pointer: prefix + inner });
}
