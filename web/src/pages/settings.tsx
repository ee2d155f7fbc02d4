/**
 * A space's settings: access, the config overlay (JSON, with the API's pointer-named errors shown at
 * the editor), rename, delete. Every write sends `baseSettingsDigest`, so two editors can't overwrite
 * each other silently.
 */
import { useState } from 'preact/hooks';
import { api, must, type Problem, type Space } from '../api/client';
import { Confirm, Field, ProblemView, useAction } from '../ui';

type Config = NonNullable<Space['config']>;

type Access = 'private' | 'team' | 'public';

export function SettingsPanel(props: { space: Space; access: Access; onChanged: () => void }) {
  const { space, onChanged } = props;
  return (
    <>
      <AccessForm space={space} current={props.access} onChanged={onChanged} />
      <ConfigEditor space={space} onChanged={onChanged} />
      <RenameForm space={space} onChanged={onChanged} />
      <DeleteSpace space={space} />
    </>
  );
}

function AccessForm({ space, current, onChanged }: { space: Space; current: Access; onChanged: () => void }) {
  const [access, setAccess] = useState<Access>(current);
  const [done, setDone] = useState(false);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(false);
    act.run(async () => {
      must(
        await api.PATCH('/v1/spaces/{spaceId}', {
          params: { path: { spaceId: space.id } },
          body: { access },
        }),
      );
      setDone(true);
      onChanged();
    });
  };
  return (
    <form class="card" onSubmit={submit} id="access-form">
      <h2>Access</h2>
      <fieldset>
        <legend>Who can open the site</legend>
        {(
          [
            ['private', 'Private: only people given access'],
            ['team', 'Team: members of the team, after signing in'],
            ['public', 'Public: anyone with the address'],
          ] as const
        ).map(([value, label]) => (
          <label class="check" key={value}>
            <input
              type="radio"
              name="access"
              value={value}
              checked={access === value}
              onChange={() => setAccess(value)}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      <ProblemView problem={act.problem} />
      {done ? (
        <p class="ok" role="status">
          Access set to {access}.
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={act.busy || access === current}>
        Set access
      </button>
    </form>
  );
}

/** The line (1-based) of the JSON text where `pointer` leads, for showing the error next to it. */
function lineOfPointer(text: string, pointer: string): number | null {
  const parts = pointer
    .replace(/^\/config/, '')
    .split('/')
    .filter(Boolean);
  const last = parts.at(-1);
  if (!last) return null;
  const key = JSON.stringify(last.replace(/~1/g, '/').replace(/~0/g, '~'));
  const i = text.indexOf(`${key}:`) >= 0 ? text.indexOf(`${key}:`) : text.indexOf(key);
  return i < 0 ? null : text.slice(0, i).split('\n').length;
}

function ConfigEditor({ space, onChanged }: { space: Space; onChanged: () => void }) {
  const [text, setText] = useState(() => JSON.stringify(space.config ?? {}, null, 2));
  const [local, setLocal] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const problem = local ?? act.problem;
  const line = problem?.pointer ? lineOfPointer(text, problem.pointer) : null;

  const submit = (e: Event) => {
    e.preventDefault();
    setLocal(null);
    setSaved(false);
    let config: Config | null;
    try {
      const parsed = text.trim() ? JSON.parse(text) : null;
      config = parsed && Object.keys(parsed).length ? parsed : null;
    } catch (err) {
      setLocal({
        type: 'about:blank',
        title: 'Not JSON',
        status: 0,
        code: 'invalid_json',
        detail: (err as Error).message,
        requestId: '',
      });
      return;
    }
    act.run(async () => {
      must(
        await api.PATCH('/v1/spaces/{spaceId}', {
          params: { path: { spaceId: space.id } },
          body: { config, baseSettingsDigest: space.settingsDigest },
        }),
      );
      setSaved(true);
      onChanged();
    });
  };

  return (
    <form class="card" onSubmit={submit} id="config-form">
      <h2>Configuration overlay</h2>
      <p class="muted">
        Applied over the live version’s <code>spaces.json</code>; see{' '}
        <a href="/docs/settings">the configuration reference</a>. Empty means no overlay.
      </p>
      <Field id="config" label="Overlay (JSON)">
        <textarea
          id="config"
          rows={14}
          spellcheck={false}
          value={text}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'config-error' : undefined}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </Field>
      {problem ? (
        <div id="config-error">
          {line ? <p class="problem-line">Line {line}</p> : null}
          <ProblemView problem={problem} />
        </div>
      ) : null}
      {saved ? (
        <p class="ok" role="status">
          Saved.
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={act.busy}>
        Save overlay
      </button>
    </form>
  );
}

function RenameForm({ space, onChanged }: { space: Space; onChanged: () => void }) {
  const [slug, setSlug] = useState(space.slug);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      must(
        await api.POST('/v1/spaces/{spaceId}/rename', {
          params: { path: { spaceId: space.id } },
          body: { slug },
        }),
      );
      onChanged();
    });
  };
  return (
    <form class="card" onSubmit={submit} id="rename-form">
      <h2>Rename</h2>
      <Field
        id="slug"
        label="Slug"
        hint="The site’s address follows the slug; the old address redirects for a while."
      >
        <input
          id="slug"
          value={slug}
          aria-describedby="slug-hint"
          onInput={(e) => setSlug(e.currentTarget.value)}
        />
      </Field>
      <ProblemView problem={act.problem} />
      <button type="submit" disabled={act.busy || slug === space.slug}>
        Rename
      </button>
    </form>
  );
}

function DeleteSpace({ space }: { space: Space }) {
  const [open, setOpen] = useState(false);
  const act = useAction();
  const doDelete = () =>
    act.run(async () => {
      must(await api.DELETE('/v1/spaces/{spaceId}', { params: { path: { spaceId: space.id } } }));
      setOpen(false);
      location.hash = '#/';
    });
  return (
    <section class="card danger-zone" aria-labelledby="delete-h">
      <h2 id="delete-h">Delete this space</h2>
      <p>The site stops answering. A deleted space can be restored until it is purged.</p>
      <button type="button" class="danger" id="delete-space" onClick={() => setOpen(true)}>
        Delete space
      </button>
      <Confirm
        open={open}
        title={`Delete ${space.title}?`}
        confirmLabel="Delete"
        danger
        busy={act.busy}
        onConfirm={doDelete}
        onCancel={() => setOpen(false)}
      >
        <p>{space.liveUrl} stops answering.</p>
        <ProblemView problem={act.problem} />
      </Confirm>
    </section>
  );
}
