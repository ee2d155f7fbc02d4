/**
 * A space's Functions tab: the code the live version runs (entry, routes, capabilities), its crons
 * (run one now), its database (tables, migrations, a single-use console), its stored objects and the
 * latest runtime log lines. Lazy-loaded by the space page.
 */
import { api, must, ProblemError, type Space } from '../api/client';
import { bytes, Loading, ProblemView, useAction, useLoad, when } from '../ui';

/** Loads a section, keeping "this space has none" (`absent`) apart from real problems. */
async function orAbsent<T>(load: () => Promise<T>, absent: string): Promise<T | null> {
  try {
    return await load();
  } catch (err) {
    if (err instanceof ProblemError && err.problem.code === absent) return null;
    throw err;
  }
}

export function FunctionsPanel({ space }: { space: Space }) {
  const path = { spaceId: space.id };
  const runtime = useLoad(
    () =>
      orAbsent(
        async () => must(await api.GET('/v1/spaces/{spaceId}/runtime', { params: { path } })).data,
        'runtime_not_provisioned',
      ),
    [space.id],
  );
  const crons = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/crons', { params: { path } })).data,
    [space.id],
  );
  const db = useLoad(
    () =>
      orAbsent(
        async () => must(await api.GET('/v1/spaces/{spaceId}/db', { params: { path } })).data,
        'db_not_available',
      ),
    [space.id],
  );
  const storage = useLoad(
    async () =>
      must(await api.GET('/v1/spaces/{spaceId}/storage', { params: { path, query: { limit: 20 } } })).data,
    [space.id],
  );
  const logs = useLoad(
    async () =>
      must(await api.GET('/v1/spaces/{spaceId}/logs/runtime', { params: { path, query: { limit: 20 } } }))
        .data,
    [space.id],
  );
  const run = useAction();
  const consoleAction = useAction();

  const runNow = (key: string) =>
    run.run(async () => {
      must(await api.POST('/v1/spaces/{spaceId}/crons/{key}/run', { params: { path: { ...path, key } } }));
      crons.reload();
    });
  const openConsole = () =>
    consoleAction.run(async () => {
      const { url } = must(await api.GET('/v1/spaces/{spaceId}/db/console', { params: { path } })).data;
      window.open(url, '_blank', 'noopener');
    });

  if (runtime.loading && !runtime.data && !runtime.problem) return <Loading label="Loading functions…" />;
  return (
    <>
      <section aria-labelledby="runtime-h">
        <h2 id="runtime-h">Code</h2>
        <ProblemView problem={runtime.problem} />
        {runtime.data === null && !runtime.problem ? (
          <p id="no-runtime">
            The live version runs no code. Add <code>handler.ts</code> or modules under{' '}
            <code>functions/</code> and <code>"runtime": {'{"kind": "functions"}'}</code> to{' '}
            <code>spaces.json</code>, then publish — <a href="/docs/functions">Functions</a>.
          </p>
        ) : null}
        {runtime.data ? (
          <dl class="facts" id="runtime">
            <dt>Entry</dt>
            <dd>
              <code>{runtime.data.entry}</code> ({runtime.data.entryKind})
            </dd>
            <dt>Routes</dt>
            <dd>
              {runtime.data.routes.map((r) => (
                <code key={r}>{r} </code>
              ))}
            </dd>
            <dt>Capabilities</dt>
            <dd>
              {runtime.data.capabilities.length
                ? runtime.data.capabilities.join(', ')
                : 'none (no outbound fetch)'}
            </dd>
            <dt>Bundle</dt>
            <dd>
              {bytes(runtime.data.size)}, compatibility date {runtime.data.compatibilityDate}
            </dd>
          </dl>
        ) : null}
      </section>

      <section aria-labelledby="crons-h">
        <h2 id="crons-h">Crons</h2>
        <ProblemView problem={crons.problem ?? run.problem} />
        {crons.data && crons.data.length === 0 ? (
          <p class="muted">The live version declares no crons.</p>
        ) : null}
        {crons.data?.length ? (
          <div class="table-scroll">
            <table class="list" id="crons">
              <caption class="sr-only">Crons of the live version</caption>
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Schedule (UTC)</th>
                  <th scope="col">Next run</th>
                  <th scope="col">Last run</th>
                  <th scope="col">Last failure</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {crons.data.map((c) => (
                  <tr key={c.key}>
                    <td>
                      <code>{c.path}</code>
                    </td>
                    <td>
                      <code>{c.schedule}</code>
                    </td>
                    <td>{when(c.nextRunAt)}</td>
                    <td>{c.lastRun ? `${when(c.lastRun.at)} · ${c.lastRun.status ?? 'no answer'}` : '—'}</td>
                    <td>{c.lastFailure ? `${when(c.lastFailure.at)} · ${c.lastFailure.message}` : '—'}</td>
                    <td>
                      <button type="button" disabled={run.busy} onClick={() => runNow(c.key)}>
                        Run now
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>

      <section aria-labelledby="db-h">
        <h2 id="db-h">Database</h2>
        <ProblemView problem={db.problem ?? consoleAction.problem} />
        {db.data === null && !db.problem ? (
          <p class="muted">A database comes with code: none of this space’s versions runs any.</p>
        ) : null}
        {db.data ? (
          <>
            <p id="db-summary">
              {db.data.tables.length} table(s), {bytes(db.data.sizeBytes)}; {db.data.migrations.length}{' '}
              migration(s) applied.{' '}
              <button type="button" id="open-console" disabled={consoleAction.busy} onClick={openConsole}>
                Open the SQL console
              </button>
            </p>
            {db.data.tables.length ? (
              <table class="list" id="db-tables">
                <caption class="sr-only">Tables</caption>
                <thead>
                  <tr>
                    <th scope="col">Table</th>
                    <th scope="col">Rows</th>
                    <th scope="col">Columns</th>
                  </tr>
                </thead>
                <tbody>
                  {db.data.tables.map((t) => (
                    <tr key={t.name}>
                      <td>
                        <code>{t.name}</code>
                      </td>
                      <td>{t.rowCount}</td>
                      <td>{t.columns.map((c) => c.name).join(', ')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </>
        ) : null}
      </section>

      <section aria-labelledby="storage-h">
        <h2 id="storage-h">Stored objects</h2>
        <ProblemView problem={storage.problem} />
        {storage.data && storage.data.length === 0 ? (
          <p class="muted">Nothing stored with env.STORAGE yet.</p>
        ) : null}
        {storage.data?.length ? (
          <ul class="plain" id="storage">
            {storage.data.map((o) => (
              <li key={o.id}>
                <a href={o.url} rel="noopener" target="_blank">
                  <code>{o.id}</code>
                </a>{' '}
                {o.contentType}, {bytes(o.size)}, {when(o.createdAt)}
              </li>
            ))}
          </ul>
        ) : null}
      </section>

      <section aria-labelledby="logs-h">
        <h2 id="logs-h">Latest runtime logs</h2>
        <ProblemView problem={logs.problem} />
        {logs.data && logs.data.length === 0 ? (
          <p class="muted">No console output yet (`spaces logs --runtime --follow` streams it).</p>
        ) : null}
        {logs.data?.length ? (
          <ul class="plain" id="runtime-logs">
            {logs.data.map((l) => (
              <li key={l.id}>
                <span class="muted">{when(l.at)}</span> <strong>{l.level}</strong> {l.path ?? ''} —{' '}
                {l.message}
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    </>
  );
}
