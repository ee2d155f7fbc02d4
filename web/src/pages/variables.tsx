/**
 * A space's variables and secrets: list (secrets masked: the API never returns their value), set
 * (plain or secret, write-only), delete with a confirmation.
 */
import { useState } from 'preact/hooks';
import { api, must, type Space } from '../api/client';
import { Confirm, Field, Loading, ProblemView, useAction, useLoad, when } from '../ui';

export function VariablesPanel({ space }: { space: Space }) {
  const path = { spaceId: space.id };
  const list = useLoad(
    async () => must(await api.GET('/v1/spaces/{spaceId}/variables', { params: { path } })).data,
    [space.id],
  );
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [secret, setSecret] = useState(false);
  const [doomed, setDoomed] = useState<string | null>(null);
  const save = useAction();
  const remove = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    save.run(async () => {
      must(
        await api.PUT('/v1/spaces/{spaceId}/variables/{name}', {
          params: { path: { ...path, name: name.trim() } },
          body: { value, secret },
        }),
      );
      setName('');
      setValue('');
      setSecret(false);
      list.reload();
    });
  };

  return (
    <section aria-labelledby="vars-h">
      <h2 id="vars-h">Variables and secrets</h2>
      <p class="muted">
        Builds and templates read them. A secret is write-only: it is never shown again, here or in the API.
      </p>
      {list.loading && !list.data ? <Loading label="Loading variables…" /> : null}
      <ProblemView problem={list.problem} />
      {list.data?.length ? (
        <table class="list" id="variables">
          <caption class="sr-only">Variables</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((v) => (
              <tr key={v.name}>
                <td>
                  <code>{v.name}</code>
                </td>
                <td class="var-value">
                  {v.secret ? <span class="badge muted">secret ••••••••</span> : <code>{v.value}</code>}
                </td>
                <td>{when(v.updatedAt)}</td>
                <td>
                  <button type="button" class="danger" onClick={() => setDoomed(v.name)}>
                    Delete<span class="sr-only"> {v.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : list.data ? (
        <p id="no-variables">No variables yet.</p>
      ) : null}
      <form class="card" id="variable-form" onSubmit={submit}>
        <h3>Set a variable</h3>
        <Field id="var-name" label="Name" hint="Setting an existing name replaces its value.">
          <input
            id="var-name"
            required
            value={name}
            aria-describedby="var-name-hint"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field id="var-value" label="Value">
          <input
            id="var-value"
            {...({ type: secret ? 'password' : 'text' } as object)}
            autocomplete="off"
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        </Field>
        <div class="field checkbox">
          <input
            id="var-secret"
            type="checkbox"
            checked={secret}
            onChange={(e) => setSecret(e.currentTarget.checked)}
          />
          <label for="var-secret">Secret (write-only, never shown again)</label>
        </div>
        <ProblemView problem={save.problem} id="variable-error" />
        <button type="submit" class="primary" disabled={save.busy}>
          Save
        </button>
      </form>
      <ProblemView problem={remove.problem} />
      <Confirm
        open={doomed !== null}
        title={`Delete ${doomed ?? ''}?`}
        confirmLabel="Delete"
        danger
        busy={remove.busy}
        onCancel={() => setDoomed(null)}
        onConfirm={() =>
          remove.run(async () => {
            must(
              await api.DELETE('/v1/spaces/{spaceId}/variables/{name}', {
                params: { path: { ...path, name: doomed! } },
              }),
            );
            setDoomed(null);
            list.reload();
          })
        }
      >
        <p>Builds and templates stop seeing it at the next publish.</p>
      </Confirm>
    </section>
  );
}
