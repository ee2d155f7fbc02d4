import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { DiagnosticRecord } from '../../schemas/diagnostics.ts';
import type { Store } from '../../store/repos/index.ts';
import type { SpaceRow } from '../spaces/service.ts';

type Record = Static<typeof DiagnosticRecord>;

/**
 * A space's current diagnostics: the records of the version `live` points at, plus those of every
 * newer version that failed to finalize (what went wrong since the site last changed). Finalize
 * stores a version's diagnostics with it; ids are stable (derived from version and position).
 */
export async function currentDiagnostics(store: Store, space: SpaceRow): Promise<Record[]> {
  const live = await store.repos.channels.pointer(space.id, 'live');
  const versions = await store.repos.versions.diagnosticsSince(space.id, live);
  const out: Record[] = [];
  for (const v of versions) {
    const entries = v.diagnostics ? (JSON.parse(v.diagnostics) as Array<Partial<Record>>) : [];
    entries.forEach((d, i) => {
      out.push({
        id: `dgn_${createHash('sha256').update(`${v.id}:${i}`).digest('hex').slice(0, 24)}`,
        versionId: v.id,
        createdAt: v.finalized_at ?? v.created_at,
        code: String(d.code ?? 'unknown'),
        severity: d.severity === 'error' || d.severity === 'warning' ? d.severity : 'info',
        message: String(d.message ?? ''),
        path: d.path ?? null,
        provider: d.provider ?? null,
        details: d.details ?? null,
        fix: d.fix ?? null,
        retryable: d.retryable ?? (d.severity === 'error' ? false : null),
      });
    });
  }
  return out;
}
