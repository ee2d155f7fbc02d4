/** API keys: create (with a preset; the token is shown once, with a copy button) and revoke. */
import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api/client';
import { Confirm, Field, Loading, ProblemView, useAction, useLoad, when } from '../ui';

type Key = Schemas['ApiKey'];
const PRESETS = [
  ['space_publisher', 'Space publisher: read and publish spaces'],
  ['ci_deploy', 'CI deploy: publish from a pipeline'],
  ['space_admin', 'Space admin: spaces and their settings'],
  ['domain_manager', 'Domain manager: custom domains'],
  ['team_admin', 'Team admin: everything in the team'],
] as const;
type Preset = (typeof PRESETS)[number][0];

export function KeysPage({ teams }: { teams: { id: string; name: string }[] }) {
  const keys = useLoad(
    async () => must(await api.GET('/v1/account/api-keys', { params: { query: { limit: 100 } } })).data,
    [],
  );
  const [name, setName] = useState('');
  const [team, setTeam] = useState(teams[0]?.id ?? '');
  const [preset, setPreset] = useState<Preset>('space_publisher');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const create = useAction();
  const revoke = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    create.run(async () => {
      const r = must(await api.POST('/v1/account/api-keys', { body: { name, team, preset } })).data;
      setCreated({ name: r.name, token: r.token });
      setCopied(false);
      setName('');
      keys.reload();
    });
  };
  const doRevoke = () =>
    revoke.run(async () => {
      must(await api.DELETE('/v1/account/api-keys/{keyId}', { params: { path: { keyId: revoking!.id } } }));
      setRevoking(null);
      keys.reload();
    });

  const active = (keys.data ?? []).filter((k) => !k.revokedAt);
  return (
    <>
      <h1>API keys</h1>
      <form class="card" id="key-form" onSubmit={submit}>
        <h2>Create a key</h2>
        <Field id="key-name" label="Name">
          <input
            id="key-name"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            placeholder="CI on main"
          />
        </Field>
        <Field id="key-team" label="Team">
          <select id="key-team" value={team} onChange={(e) => setTeam(e.currentTarget.value)}>
            {teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="key-preset" label="What it may do">
          <select id="key-preset" value={preset} onChange={(e) => setPreset(e.currentTarget.value as Preset)}>
            {PRESETS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </Field>
        <ProblemView problem={create.problem} />
        <button type="submit" class="primary" disabled={create.busy}>
          Create key
        </button>
      </form>
      {created ? (
        <div class="card created-key" id="created-key" role="status">
          <h2>Key “{created.name}” created</h2>
          <p>Copy it now: it is shown only this once.</p>
          <label for="new-token">Token</label>
          <div class="copy-row">
            <input id="new-token" readOnly value={created.token} onFocus={(e) => e.currentTarget.select()} />
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard?.writeText(created.token).catch(() => {});
                setCopied(true);
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
          <button type="button" class="link" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      ) : null}
      <h2>Your keys</h2>
      {keys.loading ? <Loading /> : null}
      <ProblemView problem={keys.problem ?? revoke.problem} />
      {keys.data && active.length === 0 ? <p class="empty">No active keys.</p> : null}
      {active.length ? (
        <table class="list" id="keys">
          <caption class="sr-only">Active API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Preset</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {active.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>{k.preset}</td>
                <td>
                  <code>{k.hint}</code>
                </td>
                <td>{when(k.createdAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td>
                  <button type="button" class="danger" onClick={() => setRevoking(k)}>
                    Revoke<span class="sr-only"> {k.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Confirm
        open={revoking !== null}
        title={`Revoke “${revoking?.name}”?`}
        confirmLabel="Revoke"
        danger
        busy={revoke.busy}
        onConfirm={doRevoke}
        onCancel={() => setRevoking(null)}
      >
        <p>Programs using this key stop working at once.</p>
        <ProblemView problem={revoke.problem} />
      </Confirm>
    </>
  );
}
