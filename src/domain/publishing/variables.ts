import type { Clock } from '../../clock.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, type EventLog, tenantOfSpace } from '../events/log.ts';
import type { SecretBox } from './secrets.ts';

/** Who changes a variable of which space: the change records its event with these. */
export interface VariableChangeBy {
  space: { id: string; team_id: string | null; slug: string };
  principal: Principal;
}

export const VARIABLE_NAME = /^[A-Z_][A-Z0-9_]*$/;
export const MAX_VARIABLE_NAME = 128;
export const MAX_VARIABLE_VALUE_BYTES = 64 * 1024;

export interface VariableView {
  name: string;
  /** null for secrets: write-only. */
  value: string | null;
  secret: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Space variables: plain values readable, secrets encrypted at rest and never returned. */
export class VariableService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly eventLog?: EventLog,
  ) {}

  static checkName(name: string): void {
    if (name.length > MAX_VARIABLE_NAME || !VARIABLE_NAME.test(name)) {
      fail(
        'validation_error',
        `Variable names match ${VARIABLE_NAME.source} and are at most ${MAX_VARIABLE_NAME} characters.`,
        { pointer: '/name', details: { in: 'path' } },
      );
    }
  }

  async list(spaceId: string): Promise<VariableView[]> {
    const rows = await this.store.repos.variables.listForSpace(spaceId);
    return rows.map((r) => ({
      name: r.name,
      value: r.secret ? null : r.value,
      secret: r.secret === 1,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  async put(
    spaceId: string,
    name: string,
    value: string,
    secret: boolean | undefined,
    by?: VariableChangeBy,
  ): Promise<{ view: VariableView; created: boolean }> {
    VariableService.checkName(name);
    if (Buffer.byteLength(value, 'utf8') > MAX_VARIABLE_VALUE_BYTES) {
      fail('validation_error', `A variable value is at most ${MAX_VARIABLE_VALUE_BYTES} bytes.`, {
        pointer: '/value',
      });
    }
    const now = this.clock.now().toISOString();
    const existing = await this.store.repos.variables.byName(spaceId, name);
    // An update keeps the variable's classification unless `secret` is given.
    const isSecret = secret ?? existing?.secret === 1;
    const stored = isSecret ? this.box.seal(value, `${spaceId}/${name}`) : value;
    await this.store.transaction(async (repos) => {
      await repos.variables.upsert({
        space_id: spaceId,
        name,
        secret: isSecret ? 1 : 0,
        value: stored,
        created_at: now,
        updated_at: now,
      });
      if (by && this.eventLog) {
        // Never the value: a secret's stays sealed, and a plain one may still be private.
        await this.eventLog.record(repos, {
          tenantId: tenantOfSpace(by.space),
          spaceId,
          actor: actorFromPrincipal(by.principal),
          code: 'variable.updated',
          message: `Variable ${name} of ${by.space.slug} was ${existing ? 'updated' : 'created'}.`,
          details: { name, secret: isSecret, created: !existing },
        });
      }
    });
    return {
      view: {
        name,
        value: isSecret ? null : value,
        secret: isSecret,
        createdAt: existing?.created_at ?? now,
        updatedAt: now,
      },
      created: !existing,
    };
  }

  async delete(spaceId: string, name: string, by?: VariableChangeBy): Promise<void> {
    VariableService.checkName(name);
    await this.store.transaction(async (repos) => {
      if (!(await repos.variables.delete(spaceId, name)))
        throw new ApiError('variable_not_found', `No variable ${name}.`);
      if (by && this.eventLog) {
        await this.eventLog.record(repos, {
          tenantId: tenantOfSpace(by.space),
          spaceId,
          actor: actorFromPrincipal(by.principal),
          code: 'variable.deleted',
          message: `Variable ${name} of ${by.space.slug} was deleted.`,
          details: { name },
        });
      }
    });
  }

  /** Every variable for rendering: plain values, secrets marked (their value never leaves here). */
  async forTemplates(spaceId: string): Promise<Map<string, { value: string | null; secret: boolean }>> {
    const rows = await this.store.repos.variables.listForSpace(spaceId);
    return new Map(
      rows.map((r) => [r.name, r.secret ? { value: null, secret: true } : { value: r.value, secret: false }]),
    );
  }

  /** Every variable with secrets decrypted: a functions worker's `env` (never for templates or responses). */
  async forRuntime(spaceId: string): Promise<Record<string, string>> {
    const rows = await this.store.repos.variables.listForSpace(spaceId);
    const env: Record<string, string> = {};
    for (const r of rows) env[r.name] = r.secret ? this.box.open(r.value, `${spaceId}/${r.name}`) : r.value;
    return env;
  }

  /** Decrypted value of a secret, for builds and runtimes (never for templates or responses). */
  async reveal(spaceId: string, name: string): Promise<string | null> {
    const r = await this.store.repos.variables.byName(spaceId, name);
    if (!r) return null;
    return r.secret ? this.box.open(r.value, `${spaceId}/${name}`) : r.value;
  }
}
