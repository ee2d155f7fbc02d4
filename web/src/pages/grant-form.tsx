/**
 * Make or change a grant (`POST …/grants`, `PUT …/grants/{grantId}`): audience (everyone, team
 * members or one person by e-mail), paths, role, target, expiry, maximum uses and a note. The API's
 * validation problem is shown at the field its `pointer` names.
 */
import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { ProblemView, useAction } from '../ui';
import type { Grant } from './sharing';
import { instantOf, localOf, PointedField, pathsOf, pointsAt, ROLES, type RoleName } from './sharing-fields';

type AudienceKind = 'public' | 'team' | 'person';

/** The pointers a field of this form shows; any other problem is shown under the form. */
const KNOWN = [
  '/audience',
  '/paths',
  '/role',
  '/target',
  '/constraints/expiresAt',
  '/constraints/maxUses',
  '/note',
];

export function GrantForm(props: { spaceId: string; grant: Grant | null; onDone: () => void }) {
  const g = props.grant;
  const a = g?.audience;
  const [kind, setKind] = useState<AudienceKind>(
    a?.type === 'team' || a?.type === 'public' || a?.type === 'person' ? a.type : 'person',
  );
  const [email, setEmail] = useState(a?.type === 'person' ? (a.email ?? '') : '');
  const [paths, setPaths] = useState(g ? g.paths.join('\n') : '');
  const [role, setRole] = useState<RoleName>((g?.role as RoleName) ?? 'viewer');
  const [target, setTarget] = useState(g?.target ?? 'live');
  const [expires, setExpires] = useState(localOf(g?.constraints.expiresAt));
  const [maxUses, setMaxUses] = useState(
    g?.constraints.maxUses !== undefined ? String(g.constraints.maxUses) : '',
  );
  const [note, setNote] = useState(g?.note ?? '');
  const save = useAction();
  const p = save.problem;

  const submit = (e: Event) => {
    e.preventDefault();
    save.run(async () => {
      const audience =
        kind === 'person'
          ? a?.type === 'person' && a.userId && !email.trim()
            ? { type: 'person' as const, userId: a.userId }
            : { type: 'person' as const, email: email.trim() }
          : { type: kind };
      // Constraints this form does not show are kept as they were.
      const constraints = { ...(g?.constraints ?? {}) };
      delete constraints.expiresAt;
      delete constraints.maxUses;
      const at = instantOf(expires);
      if (at) constraints.expiresAt = at;
      if (maxUses.trim()) constraints.maxUses = Number(maxUses);
      const body = {
        audience,
        paths: pathsOf(paths),
        role,
        target: target.trim() || 'live',
        constraints,
        note: note.trim() || null,
      };
      if (g) {
        must(
          await api.PUT('/v1/spaces/{spaceId}/grants/{grantId}', {
            params: { path: { spaceId: props.spaceId, grantId: g.id } },
            body,
          }),
        );
      } else {
        must(
          await api.POST('/v1/spaces/{spaceId}/grants', {
            params: { path: { spaceId: props.spaceId } },
            body,
          }),
        );
      }
      props.onDone();
    });
  };

  return (
    <form class="card inline-form" id="grant-form" onSubmit={submit} aria-labelledby="grant-form-h">
      <h3 id="grant-form-h">{g ? 'Change the grant' : 'New grant'}</h3>
      <PointedField id="grant-audience" label="Who" pointer="/audience/type" problem={p}>
        {(attrs) => (
          <select {...attrs} value={kind} onChange={(e) => setKind(e.currentTarget.value as AudienceKind)}>
            <option value="person">One person, by e-mail</option>
            <option value="team">Team members</option>
            <option value="public">Everyone</option>
          </select>
        )}
      </PointedField>
      {kind === 'person' ? (
        <PointedField id="grant-email" label="E-mail" pointer="/audience" problem={p}>
          {(attrs) => (
            <input
              {...attrs}
              type="text"
              inputMode="email"
              autoComplete="off"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          )}
        </PointedField>
      ) : null}
      <PointedField
        id="grant-paths"
        label="Paths"
        hint="One glob per line (* within a segment, ** any depth, !glob excludes); empty for the whole site"
        pointer="/paths"
        problem={p}
      >
        {(attrs) => (
          <textarea {...attrs} rows={3} value={paths} onInput={(e) => setPaths(e.currentTarget.value)} />
        )}
      </PointedField>
      <PointedField id="grant-role" label="Role" pointer="/role" problem={p}>
        {(attrs) => (
          <select {...attrs} value={role} onChange={(e) => setRole(e.currentTarget.value as RoleName)}>
            {ROLES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        )}
      </PointedField>
      <PointedField
        id="grant-target"
        label="Target"
        hint="live, all-versions, version:<id> or branch:<name>"
        pointer="/target"
        problem={p}
      >
        {(attrs) => <input {...attrs} value={target} onInput={(e) => setTarget(e.currentTarget.value)} />}
      </PointedField>
      <PointedField
        id="grant-expires"
        label="Expires"
        hint="Empty: never"
        pointer="/constraints/expiresAt"
        problem={p}
      >
        {(attrs) => (
          <input
            {...attrs}
            type="datetime-local"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        )}
      </PointedField>
      <PointedField
        id="grant-max-uses"
        label="Maximum uses"
        hint="Empty: no limit"
        pointer="/constraints/maxUses"
        problem={p}
      >
        {(attrs) => (
          <input
            {...attrs}
            type="number"
            min={0}
            value={maxUses}
            onInput={(e) => setMaxUses(e.currentTarget.value)}
          />
        )}
      </PointedField>
      <PointedField id="grant-note" label="Note" pointer="/note" problem={p}>
        {(attrs) => <input {...attrs} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
      </PointedField>
      {p && !KNOWN.some((k) => pointsAt(p, k)) ? <ProblemView problem={p} /> : null}
      <div class="row-actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {g ? 'Save grant' : 'Add grant'}
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
