/**
 * A space's diagnostics (the live version's records and those of newer failed versions, e.g. bad
 * `_redirects` lines with their line numbers) and its operations (delete, restore, …).
 */
import { api, must, type Schemas, type Space } from '../api/client';
import { Loading, ProblemView, useLoad, when } from '../ui';

type Diagnostic = Schemas['DiagnosticsResponse']['data'][number];

/** `_redirects:12` style: the file and line a record points at, when it names one. */
function where(d: Diagnostic): string {
  const line = d.details && typeof d.details.line === 'number' ? `:${d.details.line}` : '';
  return d.path ? `${d.path}${line}` : '';
}

export function DiagnosticsPanel({ space }: { space: Space }) {
  const path = { spaceId: space.id };
  const diags = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/diagnostics', { params: { path } })).data,
    [space.id],
  );
  const ops = useLoad(
    async () =>
      must(await api.GET('/v1/spaces/{spaceId}/operations', { params: { path, query: { limit: 20 } } })).data,
    [space.id],
  );
  return (
    <>
      <section aria-labelledby="diag-h">
        <h2 id="diag-h">Diagnostics</h2>
        {diags.loading && !diags.data ? <Loading label="Loading diagnostics…" /> : null}
        <ProblemView problem={diags.problem} />
        {diags.data?.length ? (
          <table class="list" id="diagnostics">
            <caption class="sr-only">Diagnostics</caption>
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Where</th>
                <th scope="col">Problem</th>
                <th scope="col">Code</th>
              </tr>
            </thead>
            <tbody>
              {diags.data.map((d) => (
                <tr key={d.id}>
                  <td>
                    <span
                      class={`badge ${d.severity === 'error' ? 'bad' : d.severity === 'warning' ? 'warn' : 'muted'}`}
                    >
                      {d.severity}
                    </span>
                  </td>
                  <td>
                    <code>{where(d)}</code>
                  </td>
                  <td>{d.message}</td>
                  <td>
                    <code>{d.code}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : diags.data ? (
          <p id="no-diagnostics">Nothing to report: the live version’s files and rules are fine.</p>
        ) : null}
      </section>
      <section aria-labelledby="ops-h">
        <h2 id="ops-h">Operations</h2>
        <ProblemView problem={ops.problem} />
        {ops.data?.length ? (
          <table class="list" id="operations">
            <caption class="sr-only">Operations</caption>
            <thead>
              <tr>
                <th scope="col">Operation</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
              </tr>
            </thead>
            <tbody>
              {ops.data.map((o) => (
                <tr key={o.id}>
                  <td>{o.kind}</td>
                  <td>{o.status}</td>
                  <td>{when(o.createdAt)}</td>
                  <td>{when(o.finishedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : ops.data ? (
          <p id="no-operations">No operations yet.</p>
        ) : null}
      </section>
    </>
  );
}
