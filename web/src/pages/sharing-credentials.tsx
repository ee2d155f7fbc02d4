/**
 * The Sharing tab's credentials: share links (make one for viewers or commenters with paths and an
 * expiry, copy its URL, revoke), passwords (set, change — which signs their visitors out — remove)
 * and machine credentials (make one: its token shown this once with a copy button; list; revoke).
 */
import { useState } from 'preact/hooks';
import { api, must, type Schemas, type Space } from '../api/client';
import { Confirm, Loading, ProblemView, useAction, useLoad, when } from '../ui';
import {
  CopyButton,
  instantOf,
  PointedField,
  pathsOf,
  ROLES,
  type RoleName,
  SecretOnce,
} from './sharing-fields';

type Link = Schemas['ShareLinkResponse']['data'];
type Credential = Schemas['AccessCredentialResponse']['data'];
type Doomed = { kind: 'link' | 'password' | 'machine'; id: string; name: string };

const ROLE2 = ROLES.slice(0, 2);

/** Paths, role, expiry: the scope every credential's grant has. */
function useScope(defaultRole: RoleName) {
  const [paths, setPaths] = useState('');
  const [role, setRole] = useState<RoleName>(defaultRole);
  const [expires, setExpires] = useState('');
  const body = () => {
    const at = instantOf(expires);
    return { paths: pathsOf(paths), role, ...(at ? { constraints: { expiresAt: at } } : {}) };
  };
  const reset = () => {
    setPaths('');
    setExpires('');
  };
  return { paths, setPaths, role, setRole, expires, setExpires, body, reset };
}

function ScopeFields(props: {
  prefix: string;
  scope: ReturnType<typeof useScope>;
  roles: readonly (readonly [RoleName, string])[];
  problem: Schemas['Problem'] | null;
}) {
  const { scope, prefix, problem } = props;
  return (
    <>
      <PointedField id={`${prefix}-role`} label="Role" pointer="/role" problem={problem}>
        {(attrs) => (
          <select
            {...attrs}
            value={scope.role}
            onChange={(e) => scope.setRole(e.currentTarget.value as RoleName)}
          >
            {props.roles.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        )}
      </PointedField>
      <PointedField
        id={`${prefix}-paths`}
        label="Paths"
        hint="One glob per line; empty for the whole site"
        pointer="/paths"
        problem={problem}
      >
        {(attrs) => (
          <textarea
            {...attrs}
            rows={2}
            value={scope.paths}
            onInput={(e) => scope.setPaths(e.currentTarget.value)}
          />
        )}
      </PointedField>
      <PointedField
        id={`${prefix}-expires`}
        label="Expires"
        hint="Empty: never"
        pointer="/constraints"
        problem={problem}
      >
        {(attrs) => (
          <input
            {...attrs}
            type="datetime-local"
            value={scope.expires}
            onInput={(e) => scope.setExpires(e.currentTarget.value)}
          />
        )}
      </PointedField>
    </>
  );
}

/** The problem under the form when no field of it shows it. */
function Unplaced({ problem, fields }: { problem: Schemas['Problem'] | null; fields: string[] }) {
  if (!problem) return null;
  const p = problem.pointer;
  if (p && fields.some((f) => p === f || p.startsWith(`${f}/`))) return null;
  return <ProblemView problem={problem} />;
}

export function CredentialsSections({ space, onChanged }: { space: Space; onChanged: () => void }) {
  const path = { spaceId: space.id };
  const links = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/share-links', { params: { path } })).data,
    [space.id],
  );
  const passwords = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/password-credentials', { params: { path } })).data,
    [space.id],
  );
  const machines = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/machine-credentials', { params: { path } })).data,
    [space.id],
  );
  const [doomed, setDoomed] = useState<Doomed | null>(null);
  const revoke = useAction();
  const changed = () => {
    links.reload();
    passwords.reload();
    machines.reload();
    onChanged();
  };

  const doRevoke = () =>
    revoke.run(async () => {
      const d = doomed!;
      try {
        if (d.kind === 'link')
          must(
            await api.DELETE('/v1/spaces/{spaceId}/share-links/{linkId}', {
              params: { path: { spaceId: space.id, linkId: d.id } },
            }),
          );
        else {
          const params = { params: { path: { spaceId: space.id, credentialId: d.id } } };
          must(
            d.kind === 'password'
              ? await api.DELETE('/v1/spaces/{spaceId}/password-credentials/{credentialId}', params)
              : await api.DELETE('/v1/spaces/{spaceId}/machine-credentials/{credentialId}', params),
          );
        }
        setDoomed(null);
      } finally {
        changed();
      }
    });

  return (
    <>
      <ShareLinks space={space} links={links} onChanged={changed} onRevoke={setDoomed} />
      <Passwords space={space} list={passwords} onChanged={changed} onRevoke={setDoomed} />
      <Machines space={space} list={machines} onChanged={changed} onRevoke={setDoomed} />
      <Confirm
        open={doomed !== null}
        title={`Revoke ${doomed?.name ?? ''}?`}
        confirmLabel="Revoke"
        danger
        busy={revoke.busy}
        onCancel={() => setDoomed(null)}
        onConfirm={doRevoke}
      >
        <p>It stops working at once, with every visitor session it started.</p>
        <ProblemView problem={revoke.problem} />
      </Confirm>
    </>
  );
}

type Loaded<T> = ReturnType<typeof useLoad<T[]>>;

function ShareLinks(props: {
  space: Space;
  links: Loaded<Link>;
  onChanged: () => void;
  onRevoke: (d: Doomed) => void;
}) {
  const [name, setName] = useState('');
  const [landing, setLanding] = useState('/');
  const scope = useScope('viewer');
  const create = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    create.run(async () => {
      must(
        await api.POST('/v1/spaces/{spaceId}/share-links', {
          params: { path: { spaceId: props.space.id } },
          body: {
            ...scope.body(),
            role: scope.role as 'viewer' | 'commenter',
            landing: landing.trim() || '/',
            ...(name.trim() ? { name: name.trim() } : {}),
          },
        }),
      );
      setName('');
      scope.reset();
      props.onChanged();
    });
  };
  const list = props.links;
  return (
    <section aria-labelledby="links-h">
      <h2 id="links-h">Share links</h2>
      <form class="card inline-form" id="link-form" onSubmit={submit}>
        <PointedField id="link-name" label="Name (optional)" pointer="/name" problem={create.problem}>
          {(attrs) => <input {...attrs} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </PointedField>
        <PointedField id="link-landing" label="Opens at" pointer="/landing" problem={create.problem}>
          {(attrs) => <input {...attrs} value={landing} onInput={(e) => setLanding(e.currentTarget.value)} />}
        </PointedField>
        <ScopeFields prefix="link" scope={scope} roles={ROLE2} problem={create.problem} />
        <Unplaced
          problem={create.problem}
          fields={['/name', '/landing', '/role', '/paths', '/constraints']}
        />
        <button type="submit" class="primary" disabled={create.busy}>
          Make share link
        </button>
      </form>
      {list.loading && !list.data ? <Loading label="Loading share links…" /> : null}
      <ProblemView problem={list.problem} />
      {list.data && list.data.length === 0 ? <p id="no-links">No share link.</p> : null}
      <ul class="cards" id="links">
        {list.data?.map((l) => (
          <li key={l.id} class="card share-link" data-link={l.id}>
            <p>
              <strong>{l.name ?? 'Share link'}</strong> — {l.role}, <code>{l.paths.join(' ')}</code>, used{' '}
              {l.uses} times{l.constraints.expiresAt ? `, expires ${when(l.constraints.expiresAt)}` : ''}
            </p>
            <label for={`link-url-${l.id}`} class="sr-only">
              URL of {l.name ?? 'the share link'}
            </label>
            <div class="copy-row">
              <input
                id={`link-url-${l.id}`}
                class="link-url"
                readOnly
                value={l.url}
                onFocus={(e) => e.currentTarget.select()}
              />
              <CopyButton text={l.url} label={`the URL of ${l.name ?? 'the share link'}`} />
              <button
                type="button"
                class="danger revoke"
                onClick={() => props.onRevoke({ kind: 'link', id: l.id, name: l.name ?? 'the share link' })}
              >
                Revoke<span class="sr-only"> {l.name ?? 'share link'}</span>
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Passwords(props: {
  space: Space;
  list: Loaded<Credential>;
  onChanged: () => void;
  onRevoke: (d: Doomed) => void;
}) {
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const scope = useScope('viewer');
  const create = useAction();
  const [rotating, setRotating] = useState<Credential | null>(null);
  const [newPassword, setNewPassword] = useState('');
  const rotate = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    create.run(async () => {
      must(
        await api.POST('/v1/spaces/{spaceId}/password-credentials', {
          params: { path: { spaceId: props.space.id } },
          body: {
            ...scope.body(),
            role: scope.role as 'viewer' | 'commenter',
            password,
            ...(name.trim() ? { name: name.trim() } : {}),
          },
        }),
      );
      setPassword('');
      setName('');
      scope.reset();
      props.onChanged();
    });
  };
  const list = props.list;
  return (
    <section aria-labelledby="passwords-h">
      <h2 id="passwords-h">Passwords</h2>
      <form class="card inline-form" id="password-form" onSubmit={submit}>
        <PointedField id="password-name" label="Name (optional)" pointer="/name" problem={create.problem}>
          {(attrs) => <input {...attrs} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </PointedField>
        <PointedField
          id="password-value"
          label="Password"
          hint="At least 8 characters; visitors the paths cover get a password page"
          pointer="/password"
          problem={create.problem}
        >
          {(attrs) => (
            <input
              {...attrs}
              type="password"
              autoComplete="new-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </PointedField>
        <ScopeFields prefix="password" scope={scope} roles={ROLE2} problem={create.problem} />
        <Unplaced
          problem={create.problem}
          fields={['/name', '/password', '/role', '/paths', '/constraints']}
        />
        <button type="submit" class="primary" disabled={create.busy}>
          Set password
        </button>
      </form>
      {list.loading && !list.data ? <Loading label="Loading passwords…" /> : null}
      <ProblemView problem={list.problem} />
      {list.data && list.data.length === 0 ? <p id="no-passwords">No password.</p> : null}
      <CredentialTable
        id="passwords"
        caption="Passwords"
        list={list.data ?? []}
        actions={(c) => (
          <>
            <button type="button" class="rotate" onClick={() => setRotating(c)}>
              Change<span class="sr-only"> {c.name ?? 'password'}</span>
            </button>
            <button
              type="button"
              class="danger revoke"
              onClick={() => props.onRevoke({ kind: 'password', id: c.id, name: c.name ?? 'the password' })}
            >
              Remove<span class="sr-only"> {c.name ?? 'password'}</span>
            </button>
          </>
        )}
      />
      <Confirm
        open={rotating !== null}
        title="Change the password?"
        confirmLabel="Change password"
        danger
        busy={rotate.busy}
        onCancel={() => setRotating(null)}
        onConfirm={() =>
          rotate.run(async () => {
            must(
              await api.POST('/v1/spaces/{spaceId}/password-credentials/{credentialId}/rotate', {
                params: { path: { spaceId: props.space.id, credentialId: rotating!.id } },
                body: { password: newPassword },
              }),
            );
            setRotating(null);
            setNewPassword('');
            props.onChanged();
          })
        }
      >
        <p id="rotate-warning">
          <strong>Every visitor signed in with the old password is signed out</strong> at their next request
          and must enter the new one.
        </p>
        <PointedField id="rotate-password" label="New password" pointer="/password" problem={rotate.problem}>
          {(attrs) => (
            <input
              {...attrs}
              type="password"
              autoComplete="new-password"
              value={newPassword}
              onInput={(e) => setNewPassword(e.currentTarget.value)}
            />
          )}
        </PointedField>
        <Unplaced problem={rotate.problem} fields={['/password']} />
      </Confirm>
    </section>
  );
}

function Machines(props: {
  space: Space;
  list: Loaded<Credential>;
  onChanged: () => void;
  onRevoke: (d: Doomed) => void;
}) {
  const [name, setName] = useState('');
  const scope = useScope('viewer');
  const create = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    create.run(async () => {
      const made = must(
        await api.POST('/v1/spaces/{spaceId}/machine-credentials', {
          params: { path: { spaceId: props.space.id } },
          body: { ...scope.body(), ...(name.trim() ? { name: name.trim() } : {}) },
        }),
      ).data;
      setSecret(made.token);
      setName('');
      scope.reset();
      props.onChanged();
    });
  };
  const list = props.list;
  return (
    <section aria-labelledby="machines-h">
      <h2 id="machines-h">Machine credentials</h2>
      <p class="muted">
        For scripts and services: they send the token as <code>X-Spaces-Access-Token</code>.
      </p>
      <form class="card inline-form" id="machine-form" onSubmit={submit}>
        <PointedField id="machine-name" label="Name (optional)" pointer="/name" problem={create.problem}>
          {(attrs) => <input {...attrs} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </PointedField>
        <ScopeFields prefix="machine" scope={scope} roles={ROLES} problem={create.problem} />
        <Unplaced problem={create.problem} fields={['/name', '/role', '/paths', '/constraints']} />
        <button type="submit" class="primary" disabled={create.busy}>
          Make machine credential
        </button>
      </form>
      {secret ? (
        <SecretOnce
          id="machine-secret"
          title="Machine credential made"
          secret={secret}
          onDone={() => setSecret(null)}
        />
      ) : null}
      {list.loading && !list.data ? <Loading label="Loading machine credentials…" /> : null}
      <ProblemView problem={list.problem} />
      {list.data && list.data.length === 0 ? <p id="no-machines">No machine credential.</p> : null}
      <CredentialTable
        id="machines"
        caption="Machine credentials"
        list={list.data ?? []}
        actions={(c) => (
          <button
            type="button"
            class="danger revoke"
            onClick={() => props.onRevoke({ kind: 'machine', id: c.id, name: c.name ?? 'the credential' })}
          >
            Revoke<span class="sr-only"> {c.name ?? 'machine credential'}</span>
          </button>
        )}
      />
    </section>
  );
}

function CredentialTable(props: {
  id: string;
  caption: string;
  list: Credential[];
  actions: (c: Credential) => preact.ComponentChildren;
}) {
  if (!props.list.length) return null;
  return (
    <div class="table-scroll">
      <table class="list" id={props.id}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Paths</th>
            <th scope="col">Uses</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.list.map((c) => (
            <tr key={c.id} data-credential={c.id}>
              <td>{c.name ?? <span class="muted">{c.id}</span>}</td>
              <td>{c.role}</td>
              <td>
                <code>{c.paths.join(' ')}</code>
              </td>
              <td>{c.uses}</td>
              <td>{when(c.lastUsedAt)}</td>
              <td>{when(c.constraints.expiresAt)}</td>
              <td class="row-actions">{props.actions(c)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
