/**
 * Editing an OAuth app: name, redirect URIs (one a line) and allowed scopes (`PATCH`; narrowing
 * scopes narrows existing tokens at their next refresh). The scope checkboxes are shared with the
 * new-app form.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api/client';
import { Field, ProblemView, useAction } from '../ui';

type App = Schemas['OAuthApp'];
export type Scope = App['scopes'][number];
export const SCOPES: Scope[] = [
  'teams:read',
  'spaces:read',
  'spaces:write',
  'spaces:publish',
  'publish:write',
  'domains:read',
  'builds:trigger',
  'offline_access',
];

export function ScopeBoxes(props: { scopes: Scope[]; onChange: (s: Scope[]) => void; legend?: string }) {
  const all = [...SCOPES, ...props.scopes.filter((s) => !SCOPES.includes(s))];
  return (
    <fieldset class="scopes">
      <legend>{props.legend ?? 'Scopes'}</legend>
      {all.map((s) => (
        <label key={s} class="checkbox">
          <input
            type="checkbox"
            checked={props.scopes.includes(s)}
            onChange={(e) =>
              props.onChange(
                e.currentTarget.checked ? [...props.scopes, s] : props.scopes.filter((x) => x !== s),
              )
            }
          />{' '}
          {s}
        </label>
      ))}
    </fieldset>
  );
}

export function EditOAuthApp(props: { teamId: string; app: App; onSaved: () => void; onCancel: () => void }) {
  const { app } = props;
  const [name, setName] = useState(app.name);
  const [uris, setUris] = useState(app.redirectUris.join('\n'));
  const [scopes, setScopes] = useState<Scope[]>(app.scopes);
  const save = useAction();
  // Opened from the app's row: keyboard users land in the form.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    save.run(async () => {
      const redirectUris = uris
        .split('\n')
        .map((u) => u.trim())
        .filter(Boolean);
      must(
        await api.PATCH('/v1/teams/{teamId}/oauth-apps/{appId}', {
          params: { path: { teamId: props.teamId, appId: app.id } },
          body: {
            name: name.trim(),
            scopes,
            // Sent when there are some, or to clear the app's: the API's problem (1 to 10) then
            // shows at the field.
            ...(redirectUris.length || app.redirectUris.length ? { redirectUris } : {}),
          },
        }),
      );
      props.onSaved();
    });
  };
  return (
    <form class="card" id="app-edit-form" onSubmit={submit} aria-labelledby="app-edit-h">
      <h3 id="app-edit-h">Edit {app.name}</h3>
      <Field id="app-edit-name" label="Name">
        <input
          id="app-edit-name"
          ref={first}
          required
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </Field>
      <Field id="app-edit-uris" label="Redirect URIs, one a line">
        <textarea id="app-edit-uris" rows={3} value={uris} onInput={(e) => setUris(e.currentTarget.value)} />
      </Field>
      <ScopeBoxes scopes={scopes} onChange={setScopes} legend="Allowed scopes" />
      <ProblemView problem={save.problem} id="app-edit-error" />
      <button type="submit" class="primary" disabled={save.busy}>
        Save app
      </button>{' '}
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}
