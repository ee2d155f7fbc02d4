/**
 * The team: create a team, members and their roles, invitations (send, cancel), and the
 * invitations waiting for the signed-in person (accept, decline); for owners and admins the
 * defaults of new spaces, the domain settings (domains.tsx) and the OAuth apps (team-admin.tsx).
 */
import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { Account } from '../main';
import { Field, Loading, ProblemView, useAction, useLoad, when } from '../ui';
import { TeamDomainSettings } from './domains';
import { OAuthApps, TeamDefaults } from './team-admin';

type Role = 'owner' | 'admin' | 'member';

export function TeamPage(props: {
  team: Account['teams'][number] | null;
  account: Account;
  onChanged: () => void;
  onPick: (id: string) => void;
}) {
  const { team, account } = props;
  return (
    <>
      <h1>{team ? `Team ${team.name}` : 'Teams'}</h1>
      <MyInvitations account={account} onChanged={props.onChanged} />
      {team ? <Members teamId={team.id} manage={team.role !== 'member'} /> : null}
      {team && team.role !== 'member' ? <Invitations teamId={team.id} /> : null}
      {team && team.role !== 'member' ? <TeamDefaults teamId={team.id} /> : null}
      {team && team.role !== 'member' ? <TeamDomainSettings key={team.id} teamId={team.id} /> : null}
      {team && team.role !== 'member' ? <OAuthApps teamId={team.id} /> : null}
      <NewTeam
        onCreated={(id) => {
          props.onPick(id);
          props.onChanged();
        }}
      />
    </>
  );
}

function MyInvitations({ account, onChanged }: { account: Account; onChanged: () => void }) {
  const act = useAction();
  const pending = account.invitations.filter((i) => i.status === 'pending');
  if (!pending.length) return null;
  const answer = (id: string, yes: boolean) =>
    act.run(async () => {
      const params = { params: { path: { invitationId: id } } };
      must(
        yes
          ? await api.POST('/v1/account/invitations/{invitationId}/accept', params)
          : await api.POST('/v1/account/invitations/{invitationId}/decline', params),
      );
      onChanged();
    });
  return (
    <section class="card" aria-labelledby="my-inv-h" id="my-invitations">
      <h2 id="my-inv-h">Invitations for you</h2>
      <ProblemView problem={act.problem} />
      <ul>
        {pending.map((i) => (
          <li key={i.id}>
            <strong>{i.teamName ?? i.teamSlug ?? i.teamId}</strong> invites you as {i.role}.{' '}
            <button type="button" class="primary" disabled={act.busy} onClick={() => answer(i.id, true)}>
              Accept<span class="sr-only"> the invitation to {i.teamName}</span>
            </button>{' '}
            <button type="button" disabled={act.busy} onClick={() => answer(i.id, false)}>
              Decline<span class="sr-only"> the invitation to {i.teamName}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Members({ teamId, manage }: { teamId: string; manage: boolean }) {
  const members = useLoad(
    async () =>
      must(
        await api.GET('/v1/teams/{teamId}/members', { params: { path: { teamId }, query: { limit: 100 } } }),
      ).data,
    [teamId],
  );
  const act = useAction();
  const setRole = (userId: string, role: Role) =>
    act.run(async () => {
      must(
        await api.PATCH('/v1/teams/{teamId}/members/{userId}', {
          params: { path: { teamId, userId } },
          body: { role },
        }),
      );
      members.reload();
    });
  return (
    <section aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      {members.loading ? <Loading /> : null}
      <ProblemView problem={members.problem ?? act.problem} />
      {members.data ? (
        <table class="list" id="members">
          <caption class="sr-only">Members</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {members.data.map((m) => (
              <tr key={m.userId}>
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>
                  {manage ? (
                    <>
                      <label class="sr-only" for={`role-${m.userId}`}>
                        Role of {m.name}
                      </label>
                      <select
                        id={`role-${m.userId}`}
                        value={m.role}
                        disabled={act.busy}
                        onChange={(e) => setRole(m.userId, e.currentTarget.value as Role)}
                      >
                        <option value="owner">owner</option>
                        <option value="admin">admin</option>
                        <option value="member">member</option>
                      </select>
                    </>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{when(m.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function Invitations({ teamId }: { teamId: string }) {
  const list = useLoad(
    async () =>
      must(
        await api.GET('/v1/teams/{teamId}/invitations', {
          params: { path: { teamId }, query: { limit: 100 } },
        }),
      ).data,
    [teamId],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const send = useAction();
  const cancel = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    send.run(async () => {
      must(
        await api.POST('/v1/teams/{teamId}/invitations', {
          params: { path: { teamId } },
          body: { email, role },
        }),
      );
      setEmail('');
      list.reload();
    });
  };
  const pending = (list.data ?? []).filter((i) => i.status === 'pending');
  return (
    <section aria-labelledby="inv-h">
      <h2 id="inv-h">Invitations</h2>
      <form class="card inline-form" id="invite-form" onSubmit={submit}>
        <Field id="invite-email" label="E-mail address">
          <input
            id="invite-email"
            type="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field id="invite-role" label="Role">
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <option value="member">member</option>
            <option value="admin">admin</option>
            <option value="owner">owner</option>
          </select>
        </Field>
        <ProblemView problem={send.problem} />
        <button type="submit" class="primary" disabled={send.busy}>
          Invite
        </button>
      </form>
      {list.loading ? <Loading /> : null}
      <ProblemView problem={list.problem ?? cancel.problem} />
      {list.data && pending.length === 0 ? <p class="empty">No pending invitations.</p> : null}
      {pending.length ? (
        <ul id="invitations">
          {pending.map((i) => (
            <li key={i.id}>
              {i.email} as {i.role}, until {when(i.expiresAt)}{' '}
              <button
                type="button"
                disabled={cancel.busy}
                onClick={() =>
                  cancel.run(async () => {
                    must(
                      await api.DELETE('/v1/teams/{teamId}/invitations/{invitationId}', {
                        params: { path: { teamId, invitationId: i.id } },
                      }),
                    );
                    list.reload();
                  })
                }
              >
                Cancel<span class="sr-only"> the invitation of {i.email}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function NewTeam({ onCreated }: { onCreated: (id: string) => void }) {
  const [name, setName] = useState('');
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      const t = must(await api.POST('/v1/teams', { body: { name } })).data;
      setName('');
      onCreated(t.id);
      location.hash = '#/';
    });
  };
  return (
    <form class="card inline-form" id="team-form" onSubmit={submit}>
      <h2>Create a team</h2>
      <Field id="team-name" label="Team name">
        <input id="team-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <ProblemView problem={act.problem} />
      <button type="submit" class="primary" disabled={act.busy}>
        Create team
      </button>
    </form>
  );
}
