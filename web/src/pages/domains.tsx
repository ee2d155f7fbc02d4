/**
 * A space's custom domains: each with its status, the DNS records to create (and what the last check
 * saw), its certificate; add one (the API's problem shown at the field it points at), verify now,
 * check what it still waits for, retry a failed certificate, remove with a confirmation (unbind, then
 * delete from the team's inventory). Also the team's domain settings (wildcards), on the team page.
 */
import { useState } from 'preact/hooks';
import { api, must, type Schemas, type Space } from '../api/client';
import { Confirm, Field, Loading, ProblemView, useAction, useLoad, when } from '../ui';

type Domain = Schemas['DomainResponse']['data'];
type Diagnostics = Schemas['DomainDiagnostics']['data'];

const STATUS: Record<Domain['status'], { label: string; kind: string }> = {
  pending: { label: 'Waiting for DNS', kind: 'warn' },
  verified: { label: 'Verified', kind: 'ok' },
  verification_failed: { label: 'Verification failed', kind: 'bad' },
  control_lost: { label: 'Control lost', kind: 'bad' },
};
const SERVING: Record<Diagnostics['serving'], string> = {
  ready: 'Ready',
  waiting_for_dns: 'Waiting for DNS',
  waiting_for_certificate: 'Waiting for a certificate',
  no_https: 'Ready over HTTP (this server does not terminate TLS)',
};
const RECORD_STATE: Record<string, string> = {
  ok: 'ok',
  missing: 'bad',
  mismatch: 'bad',
  unknown: 'warn',
  unchecked: 'muted',
};

export function DomainsPanel({ space }: { space: Space }) {
  const path = { spaceId: space.id };
  const list = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/domains', { params: { path } })).data,
    [space.id],
  );
  const [hostname, setHostname] = useState('');
  const [doomed, setDoomed] = useState<Domain | null>(null);
  const add = useAction();
  const remove = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    add.run(async () => {
      must(
        await api.POST('/v1/domains', {
          body: {
            hostname: hostname.trim(),
            spaceId: space.id,
            ...(space.teamId ? { team: space.teamId } : {}),
          },
        }),
      );
      setHostname('');
      list.reload();
    });
  };
  const bad = add.problem?.pointer === '/hostname';

  return (
    <section aria-labelledby="domains-h">
      <h2 id="domains-h">Custom domains</h2>
      <p class="muted">
        Put this space on a hostname of your own: add it, create the DNS records it lists, and verify. See{' '}
        <a href="/docs/domains">Custom domains</a>.
      </p>
      <form class="card inline-form" id="domain-form" onSubmit={submit}>
        <Field id="domain-host" label="Hostname" hint="For example www.example.com, or *.example.com">
          <input
            id="domain-host"
            required
            value={hostname}
            aria-invalid={bad ? 'true' : undefined}
            aria-describedby={bad ? 'domain-host-hint domain-error' : 'domain-host-hint'}
            onInput={(e) => setHostname(e.currentTarget.value)}
            placeholder="www.example.com"
          />
        </Field>
        <button type="submit" class="primary" disabled={add.busy}>
          Add domain
        </button>
        <ProblemView problem={add.problem} id="domain-error" />
      </form>
      {list.loading && !list.data ? <Loading label="Loading domains…" /> : null}
      <ProblemView problem={list.problem} />
      {list.data && list.data.length === 0 ? <p id="no-domains">No custom domain yet.</p> : null}
      <div id="domains">
        {list.data?.map((d) => (
          <DomainCard
            key={d.id}
            spaceId={space.id}
            domain={d}
            onChanged={list.reload}
            onRemove={() => setDoomed(d)}
          />
        ))}
      </div>
      <Confirm
        open={doomed !== null}
        title={`Remove ${doomed?.hostname ?? ''}?`}
        confirmLabel="Remove domain"
        danger
        busy={remove.busy}
        onCancel={() => setDoomed(null)}
        onConfirm={() =>
          remove.run(async () => {
            const params = { params: { path: { domainId: doomed!.id } } };
            try {
              // Unbound first: only an unbound domain leaves the team's inventory.
              must(await api.PATCH('/v1/domains/{domainId}', { ...params, body: { spaceId: null } }));
              must(await api.DELETE('/v1/domains/{domainId}', params));
              setDoomed(null);
            } finally {
              list.reload();
            }
          })
        }
      >
        <p>
          <strong>{space.title}</strong> stops answering at {doomed?.hostname}. The DNS records are yours to
          remove.
        </p>
        <ProblemView problem={remove.problem} />
      </Confirm>
    </section>
  );
}

function DomainCard(props: { spaceId: string; domain: Domain; onChanged: () => void; onRemove: () => void }) {
  const d = props.domain;
  const act = useAction();
  const [diag, setDiag] = useState<Diagnostics | null>(null);
  const st = STATUS[d.status];
  const params = { params: { path: { domainId: d.id } } };
  const sparams = { params: { path: { spaceId: props.spaceId, domainId: d.id } } };
  const verify = () =>
    act.run(async () => {
      must(await api.POST('/v1/domains/{domainId}/verify', params));
      setDiag(null);
      props.onChanged();
    });
  const diagnose = () =>
    act.run(async () => {
      setDiag(must(await api.GET('/v1/spaces/{spaceId}/domains/{domainId}/diagnostics', sparams)).data);
    });
  const retry = () =>
    act.run(async () => {
      must(await api.POST('/v1/spaces/{spaceId}/domains/{domainId}/ssl/retry', sparams));
      props.onChanged();
    });
  const cert = d.certificate;
  const headingId = `dom-${d.id}-h`;
  return (
    <article class="card domain" aria-labelledby={headingId} data-domain={d.hostname}>
      <div class="page-head">
        <h3 id={headingId}>
          {d.hostname}
          {d.hostname !== d.asciiHostname ? <span class="muted small"> ({d.asciiHostname})</span> : null}
        </h3>
        <span class={`badge ${st.kind} domain-status`}>{st.label}</span>
      </div>
      <p class="muted small">
        {d.role === 'redirect' && d.redirect
          ? `Redirects to ${d.redirect.target} (${d.redirect.status ?? 308}). `
          : ''}
        {d.verifiedAt ? `Verified ${when(d.verifiedAt)}. ` : ''}
        {d.checkedAt ? `Last checked ${when(d.checkedAt)}` : 'Not checked yet'}
        {d.nextCheckAt && !d.verified ? `; next check ${when(d.nextCheckAt)}.` : '.'}
      </p>
      <table class="list records">
        <caption>DNS records to create</caption>
        <thead>
          <tr>
            <th scope="col">Purpose</th>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Seen</th>
          </tr>
        </thead>
        <tbody>
          {d.records.map((r) => (
            <tr key={`${r.purpose}-${r.type}-${r.name}`} data-purpose={r.purpose}>
              <td>{r.purpose}</td>
              <td>{r.type}</td>
              <td>
                <code>{r.name}</code>
              </td>
              <td>
                {r.value ? <code class="record-value">{r.value}</code> : <span class="muted">—</span>}
                {r.note ? <div class="muted small">{r.note}</div> : null}
              </td>
              <td>
                <span class={`badge ${RECORD_STATE[r.state] ?? 'muted'} record-state`}>{r.state}</span>
                {r.state === 'mismatch' && r.seen.length ? (
                  <div class="muted small">{r.seen.join(', ')}</div>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="certificate">
        Certificate:{' '}
        {cert ? (
          <>
            <span
              class={`badge ${cert.status === 'issued' ? 'ok' : cert.status === 'failed' ? 'bad' : 'warn'}`}
            >
              {cert.status}
            </span>
            {cert.notAfter ? ` valid until ${when(cert.notAfter)}` : ''}
            {cert.lastError ? <span class="muted small"> — {cert.lastError}</span> : null}
            {cert.nextAttemptAt && cert.status !== 'issued' ? (
              <span class="muted small"> (next try {when(cert.nextAttemptAt)})</span>
            ) : null}
          </>
        ) : (
          <span class="muted">
            none yet{d.verified ? '' : ' (it is asked for once the domain is verified)'}
          </span>
        )}
      </p>
      {diag ? (
        <div class="diagnosis" role="status">
          <p>
            Serving: <strong class="serving">{SERVING[diag.serving] ?? diag.serving}</strong>
          </p>
          {diag.problems.length ? (
            <ol class="domain-problems">
              {diag.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ol>
          ) : null}
        </div>
      ) : null}
      <ProblemView problem={act.problem} />
      <div class="row-actions">
        <button type="button" class="verify" disabled={act.busy} onClick={verify}>
          Verify now<span class="sr-only"> {d.hostname}</span>
        </button>
        <button type="button" class="diagnose" disabled={act.busy} onClick={diagnose}>
          What is missing?<span class="sr-only"> for {d.hostname}</span>
        </button>
        {cert?.status === 'failed' && d.verified ? (
          <button type="button" disabled={act.busy} onClick={retry}>
            Retry certificate<span class="sr-only"> of {d.hostname}</span>
          </button>
        ) : null}
        <button type="button" class="danger remove" onClick={props.onRemove}>
          Remove<span class="sr-only"> {d.hostname}</span>
        </button>
      </div>
    </article>
  );
}

/** The team's domain settings: whether it may add wildcard domains (owners and admins change it). */
export function TeamDomainSettings({ teamId }: { teamId: string }) {
  const settings = useLoad(
    async () =>
      must(await api.GET('/v1/teams/{teamId}/domain-settings', { params: { path: { teamId } } })).data,
    [teamId],
  );
  const act = useAction();
  /** The state asked for while the change is on its way (the box follows the click at once). */
  const [asked, setAsked] = useState<boolean | null>(null);
  if (settings.loading && !settings.data) return <Loading label="Loading domain settings…" />;
  if (!settings.data) return <ProblemView problem={settings.problem} />;
  const s = settings.data;
  const toggle = (on: boolean) => {
    setAsked(on);
    act.run(async () => {
      try {
        must(
          await api.PATCH('/v1/teams/{teamId}/domain-settings', {
            params: { path: { teamId } },
            body: { wildcardEnabled: on },
          }),
        );
      } catch (err) {
        setAsked(null);
        throw err;
      }
    });
  };
  return (
    <section class="card" aria-labelledby="team-domains-h" id="team-domain-settings">
      <h2 id="team-domains-h">Domains</h2>
      <label class="checkbox">
        <input
          type="checkbox"
          id="wildcard-enabled"
          checked={asked ?? s.wildcardEnabled}
          disabled={act.busy}
          aria-describedby="wildcard-hint"
          onChange={(e) => toggle(e.currentTarget.checked)}
        />{' '}
        Allow wildcard domains (<code>*.example.com</code>)
      </label>
      <p class="hint" id="wildcard-hint">
        {s.wildcardsSupported
          ? 'Turning them off refuses new wildcards; existing ones stay.'
          : 'This server can’t serve wildcards yet: it terminates TLS without a DNS-01 provider.'}
      </p>
      <ProblemView problem={act.problem} />
    </section>
  );
}
