/**
 * Team administration beyond members: the defaults new spaces start with (access), and the team's
 * OAuth apps (list, create with the secret shown once, edit, rotate the secret, delete).
 */
import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { Confirm, Field, Loading, ProblemView, useAction, useLoad, when } from '../ui';
import { EditOAuthApp, type Scope, ScopeBoxes } from './oauth-app-edit';

type Access = 'private' | 'team' | 'public';

export function TeamDefaults({ teamId }: { teamId: string }) {
  const team = useLoad(
    async () => must(await api.GET('/v1/teams/{teamId}', { params: { path: { teamId } } })).data,
    [teamId],
  );
  const [access, setAccess] = useState<Access | null>(null);
  const [saved, setSaved] = useState(false);
  const act = useAction();
  if (team.loading && !team.data) return <Loading label="Loading the team…" />;
  if (!team.data) return <ProblemView problem={team.problem} />;
  const current = access ?? (team.data.defaultAccess as Access);
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    act.run(async () => {
      must(
        await api.PATCH('/v1/teams/{teamId}', {
          params: { path: { teamId } },
          body: { defaultAccess: current },
        }),
      );
      setSaved(true);
      team.reload();
    });
  };
  return (
    <form class="card" id="team-defaults" onSubmit={submit} aria-labelledby="defaults-h">
      <h2 id="defaults-h">Defaults for new spaces</h2>
      <Field
        id="default-access"
        label="Access a new space starts with"
        hint="Spaces that exist keep theirs; a space’s creator may still choose another."
      >
        <select
          id="default-access"
          aria-describedby="default-access-hint"
          value={current}
          onChange={(e) => setAccess(e.currentTarget.value as Access)}
        >
          <option value="private">Private: owners, admins and its creator</option>
          <option value="team">Team: every member</option>
          <option value="public">Public: anyone</option>
        </select>
      </Field>
      <ProblemView problem={act.problem} />
      <button type="submit" class="primary" disabled={act.busy}>
        Save defaults
      </button>
      {saved ? (
        <span role="status" id="defaults-saved">
          {' '}
          Saved.
        </span>
      ) : null}
    </form>
  );
}

export function OAuthApps({ teamId }: { teamId: string }) {
  const path = { teamId };
  const apps = useLoad(
    async () => must(await api.GET('/v1/teams/{teamId}/oauth-apps', { params: { path } })).data,
    [teamId],
  );
  const [name, setName] = useState('');
  const [type, setType] = useState<'confidential' | 'public'>('confidential');
  const [redirect, setRedirect] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['spaces:read']);
  const [secret, setSecret] = useState<{ name: string; clientId: string; secret: string | null } | null>(
    null,
  );
  const [doomed, setDoomed] = useState<{ id: string; name: string } | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [rotating, setRotating] = useState<{ id: string; name: string } | null>(null);
  const create = useAction();
  const remove = useAction();
  const rotate = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    create.run(async () => {
      const app = must(
        await api.POST('/v1/teams/{teamId}/oauth-apps', {
          params: { path },
          body: {
            name: name.trim(),
            type,
            scopes,
            ...(redirect.trim() ? { redirectUris: [redirect.trim()] } : {}),
          },
        }),
      ).data;
      setSecret({ name: app.name, clientId: app.clientId, secret: app.clientSecret });
      setName('');
      setRedirect('');
      apps.reload();
    });
  };

  return (
    <section class="card" aria-labelledby="apps-h" id="oauth-apps">
      <h2 id="apps-h">OAuth apps</h2>
      <ProblemView problem={apps.problem} />
      {apps.data?.length ? (
        <table class="list" id="apps">
          <caption class="sr-only">OAuth apps</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client id</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {apps.data.map((a) => (
              <tr key={a.id}>
                <td>
                  {a.name} <span class="muted small">({a.type})</span>
                </td>
                <td>
                  <code>{a.clientId}</code>
                  {a.secretHint ? <div class="muted small">secret …{a.secretHint}</div> : null}
                </td>
                <td>{a.scopes.join(', ')}</td>
                <td>{when(a.createdAt)}</td>
                <td>
                  <div class="row-actions">
                    <button
                      type="button"
                      class="edit"
                      aria-expanded={editing === a.id}
                      onClick={() => setEditing(editing === a.id ? null : a.id)}
                    >
                      Edit<span class="sr-only"> {a.name}</span>
                    </button>
                    {a.type === 'confidential' ? (
                      <button
                        type="button"
                        class="rotate"
                        onClick={() => setRotating({ id: a.id, name: a.name })}
                      >
                        Rotate secret<span class="sr-only"> of {a.name}</span>
                      </button>
                    ) : null}
                    <button
                      type="button"
                      class="danger"
                      onClick={() => setDoomed({ id: a.id, name: a.name })}
                    >
                      Delete<span class="sr-only"> {a.name}</span>
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : apps.data ? (
        <p id="no-apps">No OAuth apps yet.</p>
      ) : null}
      {editing && apps.data?.find((a) => a.id === editing) ? (
        <EditOAuthApp
          key={editing}
          teamId={teamId}
          app={apps.data.find((a) => a.id === editing)!}
          onCancel={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            apps.reload();
          }}
        />
      ) : null}
      {secret ? (
        <div class="card receipt" role="status" id="app-secret">
          <p>
            <strong>{secret.name}</strong>: client id <code>{secret.clientId}</code>
          </p>
          {secret.secret ? (
            <p>
              Client secret, shown this once: <code id="app-secret-value">{secret.secret}</code>{' '}
              <button type="button" onClick={() => navigator.clipboard?.writeText(secret.secret!)}>
                Copy
              </button>
            </p>
          ) : (
            <p>A public client has no secret (it uses PKCE).</p>
          )}
          <button type="button" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      ) : null}
      <form id="app-form" onSubmit={submit}>
        <h3>New OAuth app</h3>
        <Field id="app-name" label="Name">
          <input id="app-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="app-type" label="Client type">
          <select
            id="app-type"
            value={type}
            onChange={(e) => setType(e.currentTarget.value as 'confidential' | 'public')}
          >
            <option value="confidential">Confidential (a server keeps a secret)</option>
            <option value="public">Public (browser or CLI, PKCE)</option>
          </select>
        </Field>
        <Field id="app-redirect" label="Redirect URI (optional)">
          <input
            id="app-redirect"
            type="url"
            value={redirect}
            placeholder="https://app.example/callback"
            onInput={(e) => setRedirect(e.currentTarget.value)}
          />
        </Field>
        <ScopeBoxes scopes={scopes} onChange={setScopes} />
        <ProblemView problem={create.problem} id="app-error" />
        <button type="submit" class="primary" disabled={create.busy}>
          Create app
        </button>
      </form>
      <ProblemView problem={remove.problem} />
      <Confirm
        open={rotating !== null}
        title={`Rotate the secret of ${rotating?.name ?? ''}?`}
        confirmLabel="Rotate secret"
        danger
        busy={rotate.busy}
        onCancel={() => setRotating(null)}
        onConfirm={() =>
          rotate.run(async () => {
            const app = must(
              await api.POST('/v1/teams/{teamId}/oauth-apps/{appId}/rotate-secret', {
                params: { path: { ...path, appId: rotating!.id } },
              }),
            ).data;
            setRotating(null);
            setSecret({ name: app.name, clientId: app.clientId, secret: app.clientSecret });
            apps.reload();
          })
        }
      >
        <p>A new secret is shown once; the old one stops working at once.</p>
        <ProblemView problem={rotate.problem} />
      </Confirm>
      <Confirm
        open={doomed !== null}
        title={`Delete ${doomed?.name ?? ''}?`}
        confirmLabel="Delete app"
        danger
        busy={remove.busy}
        onCancel={() => setDoomed(null)}
        onConfirm={() =>
          remove.run(async () => {
            must(
              await api.DELETE('/v1/teams/{teamId}/oauth-apps/{appId}', {
                params: { path: { ...path, appId: doomed!.id } },
              }),
            );
            setDoomed(null);
            apps.reload();
          })
        }
      >
        <p>Its tokens stop working at once.</p>
      </Confirm>
    </section>
  );
}
