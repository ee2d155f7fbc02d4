/**
 * A space's Sharing tab: who can open the site (its visibility and every grant: audience, paths,
 * role, target, constraints, uses, expiry), grants made, edited and deleted here (the API's problem
 * shown at the field its `pointer` names), share links, passwords and machine credentials, a
 * "check access" form (`grants/check`) and "sign everyone out" (`sharing/logout-all`).
 * Lazy-loaded by the space page: none of it is in the first load.
 */
import { useState } from 'preact/hooks';
import { api, must, type Schemas, type Space } from '../api/client';
import { Confirm, Loading, ProblemView, useAction, useLoad, when } from '../ui';
import { GrantForm } from './grant-form';
import { CredentialsSections } from './sharing-credentials';

export type Grant = Schemas['GrantResponse']['data'];
type Check = Schemas['GrantCheckResponse']['data'];
type Access = 'private' | 'team' | 'public';

const VISIBILITY: Record<Access, string> = {
  public: 'Public: anyone with the address can open the site. Grants below add roles beyond viewing.',
  team: 'Team: members of the team can open the site after signing in, and whoever a grant lets in.',
  private: 'Private: only whoever a grant below lets in (people, share links, passwords, machines).',
};

export function audienceText(g: Grant): string {
  const a = g.audience;
  if (a.type === 'public') return 'Everyone';
  if (a.type === 'team') return 'Team members';
  if (a.type === 'person') return `Person ${a.email ?? a.userId ?? ''}`.trim();
  if (a.type === 'external') return `External ${a.issuer}${a.subject ? ` (${a.subject})` : ''}`;
  const kind = { link: 'Share link', password: 'Password', machine: 'Machine credential' }[a.type];
  return `${kind} ${a.credentialId}`;
}

export function constraintsText(c: Grant['constraints']): string {
  const parts: string[] = [];
  if (c.notBefore) parts.push(`from ${when(c.notBefore)}`);
  if (c.maxUses !== undefined) parts.push(`at most ${c.maxUses} uses`);
  if (c.verifiedEmail) parts.push('verified e-mail');
  if (c.emailDomains?.length) parts.push(`e-mail in ${c.emailDomains.join(', ')}`);
  if (c.ip?.length) parts.push(`from ${c.ip.join(', ')}`);
  if (c.countryAllow?.length) parts.push(`countries ${c.countryAllow.join(', ')}`);
  if (c.countryDeny?.length) parts.push(`not from ${c.countryDeny.join(', ')}`);
  if (c.uaDeny?.length) parts.push(`not for agents ${c.uaDeny.join(', ')}`);
  return parts.join('; ') || '—';
}

export function SharingPanel({ space, access }: { space: Space; access: Access }) {
  const path = { spaceId: space.id };
  const grants = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/grants', { params: { path } })).data,
    [space.id],
  );
  const [editing, setEditing] = useState<Grant | 'new' | null>(null);
  const [doomed, setDoomed] = useState<Grant | null>(null);
  const remove = useAction();

  return (
    <>
      <section aria-labelledby="visibility-h" class="card" id="visibility">
        <h2 id="visibility-h">Who can open the site</h2>
        <p>
          <span class="badge muted" id="visibility-level">
            {access}
          </span>{' '}
          {VISIBILITY[access]}
        </p>
        <p class="muted small">
          Change it in <a href={`#/spaces/${space.id}/settings`}>Settings</a>. Everyone you share with by
          e-mail is on the <a href={`#/spaces/${space.id}/people`}>People</a> tab. See{' '}
          <a href="/docs/sharing-and-access">Sharing and access</a>.
        </p>
      </section>

      <section aria-labelledby="grants-h">
        <div class="page-head">
          <h2 id="grants-h">Grants</h2>
          <button type="button" id="grant-new" onClick={() => setEditing('new')}>
            New grant
          </button>
        </div>
        {editing ? (
          <GrantForm
            spaceId={space.id}
            grant={editing === 'new' ? null : editing}
            onDone={() => {
              setEditing(null);
              grants.reload();
            }}
          />
        ) : null}
        {grants.loading && !grants.data ? <Loading label="Loading grants…" /> : null}
        <ProblemView problem={grants.problem ?? remove.problem} />
        {grants.data && grants.data.length === 0 ? <p id="no-grants">No grant yet.</p> : null}
        {grants.data?.length ? (
          <div class="table-scroll">
            <table class="list" id="grants">
              <caption class="sr-only">Grants of this space</caption>
              <thead>
                <tr>
                  <th scope="col">Audience</th>
                  <th scope="col">Paths</th>
                  <th scope="col">Role</th>
                  <th scope="col">Target</th>
                  <th scope="col">Constraints</th>
                  <th scope="col">Uses</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {grants.data.map((g) => (
                  <tr key={g.id} data-grant={g.id} data-source={g.source}>
                    <td class="audience">
                      {audienceText(g)}
                      {g.note ? <div class="muted small">{g.note}</div> : null}
                    </td>
                    <td>
                      <code>{g.paths.join(' ')}</code>
                    </td>
                    <td class="role">{g.role}</td>
                    <td>{g.target}</td>
                    <td class="small">{constraintsText(g.constraints)}</td>
                    <td class="uses">{g.uses}</td>
                    <td>{when(g.constraints.expiresAt)}</td>
                    <td class="row-actions">
                      {g.source === 'grant' ? (
                        <>
                          <button type="button" class="edit" onClick={() => setEditing(g)}>
                            Edit<span class="sr-only"> grant for {audienceText(g)}</span>
                          </button>
                          <button type="button" class="danger delete" onClick={() => setDoomed(g)}>
                            Delete<span class="sr-only"> grant for {audienceText(g)}</span>
                          </button>
                        </>
                      ) : (
                        <span class="muted small">
                          with its {g.source === 'link' ? 'link' : 'credential'}
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <Confirm
          open={doomed !== null}
          title="Delete this grant?"
          confirmLabel="Delete grant"
          danger
          busy={remove.busy}
          onCancel={() => setDoomed(null)}
          onConfirm={() =>
            remove.run(async () => {
              try {
                must(
                  await api.DELETE('/v1/spaces/{spaceId}/grants/{grantId}', {
                    params: { path: { spaceId: space.id, grantId: doomed!.id } },
                  }),
                );
                setDoomed(null);
              } finally {
                grants.reload();
              }
            })
          }
        >
          <p>{doomed ? audienceText(doomed) : ''} loses this access at the next request.</p>
        </Confirm>
      </section>

      <CredentialsSections space={space} onChanged={grants.reload} />
      <CheckAccess spaceId={space.id} />
      <SignEveryoneOut spaceId={space.id} />
    </>
  );
}

const VISITORS = [
  ['anonymous', 'Anyone (not signed in, no credential)'],
  ['team', 'A signed-in team member'],
  ['person', 'A person, by e-mail'],
  ['credential', 'A holder of a credential'],
] as const;

function CheckAccess({ spaceId }: { spaceId: string }) {
  const [url, setUrl] = useState('/');
  const [kind, setKind] = useState<(typeof VISITORS)[number][0]>('anonymous');
  const [email, setEmail] = useState('');
  const [credential, setCredential] = useState('');
  const [answer, setAnswer] = useState<Check | null>(null);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      setAnswer(null);
      const query: Record<string, string | boolean> = { url: url.trim() };
      if (kind === 'team') query.teamMember = true;
      if (kind === 'person') {
        query.email = email.trim();
        query.emailVerified = true;
      }
      if (kind === 'credential') query.credential = credential.trim();
      const r = must(
        await api.GET('/v1/spaces/{spaceId}/grants/check', {
          params: { path: { spaceId }, query: query as { url: string } },
        }),
      );
      setAnswer(r.data);
    });
  };
  return (
    <section aria-labelledby="check-h">
      <h2 id="check-h">Check access</h2>
      <form class="card inline-form" id="check-form" onSubmit={submit}>
        <div class="field">
          <label for="check-url">URL or path</label>
          <input id="check-url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="check-kind">Visitor</label>
          <select
            id="check-kind"
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as typeof kind)}
          >
            {VISITORS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        {kind === 'person' ? (
          <div class="field">
            <label for="check-email">E-mail (verified)</label>
            <input
              id="check-email"
              type="email"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </div>
        ) : null}
        {kind === 'credential' ? (
          <div class="field">
            <label for="check-credential">Credential</label>
            <input
              id="check-credential"
              required
              placeholder="link:<id>"
              aria-describedby="check-credential-hint"
              value={credential}
              onInput={(e) => setCredential(e.currentTarget.value)}
            />
            <p class="hint" id="check-credential-hint">
              <code>link:&lt;id&gt;</code>, <code>password:&lt;id&gt;</code> or{' '}
              <code>machine:&lt;id&gt;</code>
            </p>
          </div>
        ) : null}
        <button type="submit" class="primary" disabled={act.busy}>
          Check
        </button>
        <ProblemView problem={act.problem} />
      </form>
      {answer ? (
        <div class="card" id="check-answer" role="status" data-allowed={String(answer.allowed)}>
          <p>
            <strong class={`badge ${answer.allowed ? 'ok' : 'bad'}`}>
              {answer.allowed ? 'Allowed' : 'Refused'}
            </strong>{' '}
            {answer.capability} on <code>{answer.path}</code> ({answer.target})
            {answer.allowed ? (
              <span id="check-via">
                {' '}
                by{' '}
                {answer.via === 'grant'
                  ? `grant ${answer.grantId}`
                  : answer.via === 'space_access'
                    ? 'the space’s own access'
                    : 'the settings file’s access'}
              </span>
            ) : null}
          </p>
          {answer.misses.length ? (
            <ul class="small" id="check-misses">
              {answer.misses.map((m) => (
                <li key={m.grantId}>
                  <code>{m.grantId}</code>: {m.miss}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function SignEveryoneOut({ spaceId }: { spaceId: string }) {
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState(false);
  const act = useAction();
  return (
    <section aria-labelledby="logout-all-h" class="card danger-zone">
      <h2 id="logout-all-h">Sign everyone out</h2>
      <p>
        Ends every visitor session of this site: share-link, password and person visitors must open their link
        or enter the password again. Grants and credentials stay.
      </p>
      <button type="button" class="danger" id="logout-all" onClick={() => setOpen(true)}>
        Sign everyone out
      </button>
      {done ? (
        <p role="status" id="logout-all-done">
          Every visitor was signed out.
        </p>
      ) : null}
      <Confirm
        open={open}
        title="Sign every visitor out?"
        confirmLabel="Sign everyone out"
        danger
        busy={act.busy}
        onCancel={() => setOpen(false)}
        onConfirm={() =>
          act.run(async () => {
            must(
              await api.POST('/v1/spaces/{spaceId}/sharing/logout-all', { params: { path: { spaceId } } }),
            );
            setOpen(false);
            setDone(true);
          })
        }
      >
        <p>Visitors keep their links and passwords but must use them again.</p>
        <ProblemView problem={act.problem} />
      </Confirm>
    </section>
  );
}
