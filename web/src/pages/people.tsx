/**
 * A space's People tab: invite someone by e-mail with a role and paths (the invitation mail carries
 * their sign-in link), resend it, change their role, remove them; and the access requests visitors
 * sent from the refused page: approve (they become a person with a grant) or deny.
 * Lazy-loaded by the space page.
 */
import { useState } from 'preact/hooks';
import { api, must, type Schemas, type Space } from '../api/client';
import { Confirm, Loading, ProblemView, useAction, useLoad, when } from '../ui';
import { PointedField, pathsOf, pointsAt, ROLES, type RoleName } from './sharing-fields';

type Person = Schemas['PersonResponse']['data'];
type AccessRequest = Schemas['AccessRequestResponse']['data'];

const INVITE_FIELDS = ['/email', '/name', '/role', '/paths', '/note'];

export function PeoplePanel({ space }: { space: Space }) {
  const path = { spaceId: space.id };
  const people = useLoad(
    async () =>
      must(await api.GET('/v1/spaces/{spaceId}/people', { params: { path, query: { limit: 100 } } })).data,
    [space.id],
  );
  const requests = useLoad(
    async () =>
      must(
        await api.GET('/v1/spaces/{spaceId}/requests', {
          params: { path, query: { status: 'pending', limit: 100 } },
        }),
      ).data,
    [space.id],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<RoleName>('viewer');
  const [paths, setPaths] = useState('');
  const [note, setNote] = useState('');
  const [invited, setInvited] = useState<string | null>(null);
  const invite = useAction();
  const [doomed, setDoomed] = useState<Person | null>(null);
  const remove = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    invite.run(async () => {
      const made = must(
        await api.POST('/v1/spaces/{spaceId}/people', {
          params: { path },
          body: {
            email: email.trim(),
            role,
            ...(pathsOf(paths) ? { paths: pathsOf(paths) } : {}),
            ...(note.trim() ? { note: note.trim() } : {}),
          },
        }),
      ).data;
      setInvited(made.email);
      setEmail('');
      setPaths('');
      setNote('');
      people.reload();
    });
  };
  const p = invite.problem;

  return (
    <>
      <section aria-labelledby="invite-h">
        <h2 id="invite-h">Invite someone</h2>
        <p class="muted">
          They get an e-mail with a link that signs them in to this site only; they need no account.
        </p>
        <form class="card inline-form" id="invite-form" onSubmit={submit}>
          <PointedField id="invite-email" label="E-mail" pointer="/email" problem={p}>
            {(attrs) => (
              <input
                {...attrs}
                type="text"
                inputMode="email"
                autoComplete="off"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            )}
          </PointedField>
          <PointedField id="invite-role" label="Role" pointer="/role" problem={p}>
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
            id="invite-paths"
            label="Paths"
            hint="One glob per line; empty for the whole site"
            pointer="/paths"
            problem={p}
          >
            {(attrs) => (
              <textarea {...attrs} rows={2} value={paths} onInput={(e) => setPaths(e.currentTarget.value)} />
            )}
          </PointedField>
          <PointedField id="invite-note" label="Message (optional)" pointer="/note" problem={p}>
            {(attrs) => <input {...attrs} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
          </PointedField>
          {p && !INVITE_FIELDS.some((f) => pointsAt(p, f)) ? <ProblemView problem={p} /> : null}
          <button type="submit" class="primary" disabled={invite.busy}>
            Send invitation
          </button>
          {invited ? (
            <p role="status" id="invited">
              Invitation sent to {invited}.
            </p>
          ) : null}
        </form>
      </section>

      <section aria-labelledby="people-h">
        <h2 id="people-h">People</h2>
        {people.loading && !people.data ? <Loading label="Loading people…" /> : null}
        <ProblemView problem={people.problem ?? remove.problem} />
        {people.data && people.data.length === 0 ? <p id="no-people">Nobody invited yet.</p> : null}
        {people.data?.length ? (
          <div class="table-scroll">
            <table class="list" id="people">
              <caption class="sr-only">People of this space</caption>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Status</th>
                  <th scope="col">Role</th>
                  <th scope="col">Paths</th>
                  <th scope="col">Invited</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {people.data.map((person) => (
                  <PersonRow
                    key={person.id}
                    spaceId={space.id}
                    person={person}
                    onChanged={people.reload}
                    onRemove={() => setDoomed(person)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <Confirm
          open={doomed !== null}
          title={`Remove ${doomed?.email ?? ''}?`}
          confirmLabel="Remove"
          danger
          busy={remove.busy}
          onCancel={() => setDoomed(null)}
          onConfirm={() =>
            remove.run(async () => {
              try {
                must(
                  await api.DELETE('/v1/spaces/{spaceId}/people/{personId}', {
                    params: { path: { spaceId: space.id, personId: doomed!.id } },
                  }),
                );
                setDoomed(null);
              } finally {
                people.reload();
              }
            })
          }
        >
          <p>Their grants go and their sessions end at the next request.</p>
        </Confirm>
      </section>

      <Requests
        spaceId={space.id}
        list={requests.data}
        loading={requests.loading}
        problem={requests.problem}
        onChanged={() => {
          requests.reload();
          people.reload();
        }}
      />
    </>
  );
}

function PersonRow(props: { spaceId: string; person: Person; onChanged: () => void; onRemove: () => void }) {
  const person = props.person;
  const first = person.grants[0];
  const act = useAction();
  const [sent, setSent] = useState(false);
  const params = { params: { path: { spaceId: props.spaceId, personId: person.id } } };
  const changeRole = (role: RoleName) =>
    act.run(async () => {
      // Every grant of theirs keeps its paths and target and takes the new role.
      const grants = person.grants.length
        ? person.grants.map((g) => ({ role, paths: g.paths, target: g.target }))
        : [{ role }];
      must(await api.PUT('/v1/spaces/{spaceId}/people/{personId}/grants', { ...params, body: { grants } }));
      props.onChanged();
    });
  const resend = () =>
    act.run(async () => {
      must(await api.POST('/v1/spaces/{spaceId}/people/{personId}/resend', params));
      setSent(true);
      props.onChanged();
    });
  const selectId = `person-role-${person.id}`;
  return (
    <tr data-person={person.email}>
      <td>
        {person.email}
        {person.name ? <div class="muted small">{person.name}</div> : null}
      </td>
      <td>
        <span class={`badge ${person.status === 'active' ? 'ok' : 'warn'} person-status`}>
          {person.status}
        </span>
      </td>
      <td>
        <label for={selectId} class="sr-only">
          Role of {person.email}
        </label>
        <select
          id={selectId}
          class="person-role"
          value={first?.role ?? ''}
          disabled={act.busy}
          onChange={(e) => changeRole(e.currentTarget.value as RoleName)}
        >
          {first ? null : <option value="">no access</option>}
          {ROLES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        <ProblemView problem={act.problem} />
      </td>
      <td>
        <code>{person.grants.flatMap((g) => g.paths).join(' ') || '—'}</code>
      </td>
      <td class="small">
        {when(person.invitedAt)}
        {person.lastSentAt ? <div class="muted">sent {when(person.lastSentAt)}</div> : null}
      </td>
      <td class="row-actions">
        {person.status === 'invited' ? (
          <button type="button" class="resend" disabled={act.busy} onClick={resend}>
            {sent ? 'Sent again' : 'Resend'}
            <span class="sr-only"> the invitation to {person.email}</span>
          </button>
        ) : null}
        <button type="button" class="danger remove" onClick={props.onRemove}>
          Remove<span class="sr-only"> {person.email}</span>
        </button>
      </td>
    </tr>
  );
}

function Requests(props: {
  spaceId: string;
  list: AccessRequest[] | null;
  loading: boolean;
  problem: Schemas['Problem'] | null;
  onChanged: () => void;
}) {
  const act = useAction();
  /** The role each request is approved with (viewer unless chosen). */
  const [roles, setRoles] = useState<Record<string, RoleName>>({});
  const decide = (r: AccessRequest, how: 'approve' | 'deny') =>
    act.run(async () => {
      const params = { params: { path: { spaceId: props.spaceId, requestId: r.id } } };
      must(
        how === 'approve'
          ? await api.POST('/v1/spaces/{spaceId}/requests/{requestId}/approve', {
              ...params,
              body: { role: roles[r.id] ?? 'viewer' },
            })
          : await api.POST('/v1/spaces/{spaceId}/requests/{requestId}/deny', params),
      );
      props.onChanged();
    });
  return (
    <section aria-labelledby="requests-h">
      <h2 id="requests-h">Access requests</h2>
      {props.loading && !props.list ? <Loading label="Loading requests…" /> : null}
      <ProblemView problem={props.problem ?? act.problem} />
      {props.list && props.list.length === 0 ? <p id="no-requests">No pending request.</p> : null}
      <ul class="cards" id="requests">
        {props.list?.map((r) => (
          <li key={r.id} class="card access-request" data-request={r.email}>
            <p>
              <strong>{r.name ? `${r.name} <${r.email}>` : r.email}</strong> asked for <code>{r.path}</code>{' '}
              on {when(r.createdAt)}
            </p>
            {r.message ? <blockquote>{r.message}</blockquote> : null}
            <div class="row-actions">
              <label for={`request-role-${r.id}`}>Approve as</label>
              <select
                id={`request-role-${r.id}`}
                class="request-role"
                value={roles[r.id] ?? 'viewer'}
                onChange={(e) => setRoles({ ...roles, [r.id]: e.currentTarget.value as RoleName })}
              >
                {ROLES.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
              <button
                type="button"
                class="primary approve"
                disabled={act.busy}
                onClick={() => decide(r, 'approve')}
              >
                Approve<span class="sr-only"> {r.email}</span>
              </button>
              <button type="button" class="deny" disabled={act.busy} onClick={() => decide(r, 'deny')}>
                Deny<span class="sr-only"> {r.email}</span>
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
