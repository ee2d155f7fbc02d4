// Temporary stand-in; replaced by the space-config branch at merge.
import { ApiError } from '../../errors/problem.ts';

export function validateSpaceConfig(value: unknown, pointerPrefix = ''): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  throw new ApiError('validation_error', 'The configuration must be a JSON object.', {
    pointer: pointerPrefix || '/',
  });
}
