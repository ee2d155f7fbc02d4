/**
 * One space: live URL, channels, versions (diff against live, promote / roll back with a
 * confirmation), channel history, publish from the browser, sharing, people and functions
 * (lazy-loaded), variables, custom domains, diagnostics and settings.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, must, type Space, type Version } from '../api/client';
import { bytes, Confirm, Loading, ProblemView, Thumbnail, useAction, useLoad, when } from '../ui';
import { DiagnosticsPanel } from './diagnostics';
import { DomainsPanel } from './domains';
import { PublishPanel } from './publish';
import { SettingsPanel } from './settings';
import { spaceStatus } from './spaces';
import { VariablesPanel } from './variables';

const TABS = [
  ['overview', 'Overview'],
  ['history', 'Channel history'],
  ['publish', 'Publish'],
  ['sharing', 'Sharing'],
  ['people', 'People'],
  ['functions', 'Functions'],
  ['variables', 'Variables'],
  ['domains', 'Domains'],
  ['diagnostics', 'Diagnostics'],
  ['settings', 'Settings'],
] as const;

export function SpacePage({ spaceId, tab }: { spaceId: string; tab: string }) {
  const space = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}', { params: { path: { spaceId } } })).data,
    [spaceId],
  );
  if (space.loading && !space.data) return <Loading label="Loading the space…" />;
  if (!space.data) return <ProblemView problem={space.problem} />;
  const s = space.data.space;
  const access = space.data.access;
  const st = spaceStatus(s);
  return (
    <>
      <p class="crumbs">
        <a href="#/">Spaces</a> /
      </p>
      <div class="page-head">
        <h1 id="space-title">{s.title}</h1>
        <span class={`badge ${st.kind}`}>{st.label}</span>
      </div>
      <div class="space-cell">
        <Thumbnail thumbnail={s.thumbnail} title={s.title} size="large" />
        <p>
          <a id="live-url" href={s.liveUrl} rel="noopener" target="_blank">
            {s.liveUrl}
          </a>
        </p>
      </div>
      <nav class="tabs" aria-label="Space">
        {TABS.map(([id, label]) => (
          <a key={id} href={`#/spaces/${s.id}/${id}`} aria-current={tab === id ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {tab === 'history' ? (
        <HistoryPanel space={s} />
      ) : tab === 'publish' ? (
        <PublishPanel space={s} onPublished={space.reload} />
      ) : tab === 'sharing' ? (
        <Lazy
          key="sharing"
          label="Loading sharing…"
          load={() => import('./sharing').then((m) => m.SharingPanel)}
          props={{ space: s, access }}
        />
      ) : tab === 'people' ? (
        <Lazy
          key="people"
          label="Loading people…"
          load={() => import('./people').then((m) => m.PeoplePanel)}
          props={{ space: s }}
        />
      ) : tab === 'functions' ? (
        <Lazy
          key="functions"
          label="Loading functions…"
          load={() => import('./functions').then((m) => m.FunctionsPanel)}
          props={{ space: s }}
        />
      ) : tab === 'variables' ? (
        <VariablesPanel space={s} />
      ) : tab === 'domains' ? (
        <DomainsPanel space={s} />
      ) : tab === 'diagnostics' ? (
        <DiagnosticsPanel space={s} />
      ) : tab === 'settings' ? (
        <SettingsPanel space={s} access={access} onChanged={space.reload} />
      ) : (
        <Overview space={s} onChanged={space.reload} />
      )}
    </>
  );
}

/** A panel whose code is fetched when it is first shown (it stays out of the first load). */
function Lazy<P extends object>(props: { label: string; load: () => Promise<ComponentType<P>>; props: P }) {
  const [Panel, setPanel] = useState<ComponentType<P> | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    props.load().then(
      (c) => setPanel(() => c),
      () => setFailed(true),
    );
  }, []);
  if (failed)
    return (
      <p class="problem" role="alert">
        This page could not be loaded; reload to try again.
      </p>
    );
  if (!Panel) return <Loading label={props.label} />;
  return <Panel {...props.props} />;
}

function Overview({ space, onChanged }: { space: Space; onChanged: () => void }) {
  const spaceId = space.id;
  const [versions, setVersions] = useState<Version[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const first = useLoad(async () => {
    const r = must(
      await api.GET('/v1/spaces/{spaceId}/versions', { params: { path: { spaceId }, query: { limit: 20 } } }),
    );
    setVersions(r.data);
    setCursor(r.pagination.nextCursor);
    return r;
  }, [spaceId, space.settingsDigest, space.channels.live?.versionId]);
  const more = useAction();
  const promote = useAction();
  const [confirm, setConfirm] = useState<Version | null>(null);
  const [diffOf, setDiffOf] = useState<Version | null>(null);
  const live = space.channels.live?.versionId ?? null;
  const liveVersion = versions.find((v) => v.id === live);

  const loadMore = () =>
    more.run(async () => {
      if (!cursor) return;
      const r = must(
        await api.GET('/v1/spaces/{spaceId}/versions', {
          params: { path: { spaceId }, query: { limit: 20, cursor } },
        }),
      );
      setVersions((v) => [...v, ...r.data]);
      setCursor(r.pagination.nextCursor);
    });

  const doPromote = () =>
    promote.run(async () => {
      const v = confirm!;
      must(
        await api.POST('/v1/spaces/{spaceId}/versions/{versionId}/promote', {
          params: { path: { spaceId, versionId: v.id } },
          body: { channel: 'live', expectedVersionId: live },
        }),
      );
      setConfirm(null);
      onChanged();
    });

  const rollback = liveVersion && confirm ? confirm.number < liveVersion.number : false;

  return (
    <>
      <section aria-labelledby="channels-h">
        <h2 id="channels-h">Channels</h2>
        {Object.keys(space.channels).length === 0 ? (
          <p class="empty">No channel points at a version yet: publish one.</p>
        ) : (
          <ul class="channels" id="channels">
            {Object.entries(space.channels).map(([name, c]) => (
              <li key={name}>
                <strong>{name}</strong> →{' '}
                <code>
                  {versions.find((v) => v.id === c.versionId)?.number
                    ? `v${versions.find((v) => v.id === c.versionId)!.number}`
                    : c.versionId}
                </code>{' '}
                <span class="muted">since {when(c.updatedAt)}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Versions</h2>
        {first.loading ? <Loading label="Loading versions…" /> : null}
        <ProblemView problem={first.problem ?? promote.problem} />
        {versions.length === 0 && !first.loading ? <p class="empty">No versions yet.</p> : null}
        {versions.length > 0 ? (
          <table class="list" id="versions">
            <caption class="sr-only">Versions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Status</th>
                <th scope="col">Files</th>
                <th scope="col">Size</th>
                <th scope="col">Published</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.id} data-version={v.number} class={v.id === live ? 'is-live' : undefined}>
                  <td>
                    <a href={v.immutableUrl} rel="noopener" target="_blank">
                      v{v.number}
                    </a>
                    {v.channels.map((c) => (
                      <span key={c} class="badge ok small">
                        {c}
                      </span>
                    ))}
                    {v.message ? <div class="muted small">{v.message}</div> : null}
                  </td>
                  <td>{v.status}</td>
                  <td>{v.fileCount}</td>
                  <td>{bytes(v.totalBytes)}</td>
                  <td>{when(v.finalizedAt ?? v.createdAt)}</td>
                  <td>
                    <div class="row-actions">
                      {live && v.id !== live && v.status === 'ready' ? (
                        <button
                          type="button"
                          class="diff"
                          onClick={() => setDiffOf(diffOf?.id === v.id ? null : v)}
                          aria-expanded={diffOf?.id === v.id}
                        >
                          Diff v{v.number}
                        </button>
                      ) : null}
                      {v.id !== live && v.status === 'ready' ? (
                        <button type="button" class="promote" onClick={() => setConfirm(v)}>
                          {liveVersion && v.number < liveVersion.number ? 'Roll back' : 'Promote'} to v
                          {v.number}
                        </button>
                      ) : null}
                      <a class="button" href={`/v1/spaces/${spaceId}/versions/${v.id}/archive`} download>
                        Archive<span class="sr-only"> of v{v.number}</span>
                      </a>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {cursor ? (
          <button type="button" onClick={loadMore} disabled={more.busy}>
            Load more versions
          </button>
        ) : null}
        <ProblemView problem={more.problem} />
      </section>
      {diffOf && live ? <DiffPanel spaceId={spaceId} version={diffOf} live={live} /> : null}
      <Confirm
        open={confirm !== null}
        title={rollback ? `Roll back to v${confirm?.number}?` : `Promote v${confirm?.number}?`}
        confirmLabel={rollback ? 'Roll back' : 'Promote'}
        busy={promote.busy}
        onConfirm={doPromote}
        onCancel={() => setConfirm(null)}
      >
        <p>
          The live channel of <strong>{space.title}</strong> will point at v{confirm?.number}
          {liveVersion ? ` instead of v${liveVersion.number}` : ''}; {space.liveUrl} serves it at once.
        </p>
        <ProblemView problem={promote.problem} />
      </Confirm>
    </>
  );
}

function DiffPanel({ spaceId, version, live }: { spaceId: string; version: Version; live: string }) {
  const diff = useLoad(
    async () =>
      must(
        await api.GET('/v1/spaces/{spaceId}/versions/{versionId}/diff', {
          params: { path: { spaceId, versionId: version.id }, query: { against: live } },
        }),
      ).data,
    [spaceId, version.id, live],
  );
  return (
    <section aria-labelledby="diff-h" class="card" id="diff">
      <h2 id="diff-h">v{version.number} against live</h2>
      {diff.loading ? <Loading label="Comparing…" /> : null}
      <ProblemView problem={diff.problem} />
      {diff.data ? (
        <div class="diff-cols">
          {(
            [
              ['added', 'Added', diff.data.added],
              ['changed', 'Changed', diff.data.changed],
              ['removed', 'Removed', diff.data.removed],
            ] as const
          ).map(([key, label, paths]) => (
            <div key={key} class={`diff-${key}`}>
              <h3>
                {label} ({paths.length})
              </h3>
              {paths.length ? (
                <ul id={`diff-${key}`}>
                  {paths.map((p) => (
                    <li key={p}>
                      <code>{p}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="muted">None.</p>
              )}
            </div>
          ))}
        </div>
      ) : null}
    </section>
  );
}

function HistoryPanel({ space }: { space: Space }) {
  const names = Object.keys(space.channels);
  const [channel, setChannel] = useState(names.includes('live') ? 'live' : (names[0] ?? 'live'));
  const h = useLoad(
    async () =>
      must(
        await api.GET('/v1/spaces/{spaceId}/channels/{name}/history', {
          params: { path: { spaceId: space.id, name: channel }, query: { limit: 50 } },
        }),
      ).data,
    [space.id, channel],
  );
  return (
    <section aria-labelledby="history-h">
      <h2 id="history-h">Channel history</h2>
      {names.length > 1 ? (
        <p>
          <label for="history-channel">Channel </label>
          <select id="history-channel" value={channel} onChange={(e) => setChannel(e.currentTarget.value)}>
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </p>
      ) : null}
      {h.loading ? <Loading /> : null}
      <ProblemView problem={h.problem} />
      {h.data && h.data.length === 0 ? <p class="empty">This channel has not moved yet.</p> : null}
      {h.data?.length ? (
        <ol class="history" id="history">
          {h.data.map((m) => (
            <li key={m.id}>
              <strong>{m.reason}</strong>: <code>{m.previousVersionId ?? '(none)'}</code> →{' '}
              <code>{m.versionId}</code>{' '}
              <span class="muted">
                {when(m.createdAt)}
                {m.actor ? ` by ${m.actor}` : ''}
              </span>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
