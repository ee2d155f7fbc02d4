/**
 * The team's spaces: server-side search (`q`) and order (`sort`), thumbnails, status, live URL, last
 * publish; keyset "load more"; a new space.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, must, type Space } from '../api/client';
import { Field, Loading, ProblemView, Thumbnail, useAction, useLoad, when } from '../ui';

const PAGE = 50;

/** The server's orders (`GET /v1/spaces?sort=`): the list and "load more" follow them. */
type Sort = '-created' | 'created' | 'name' | '-name' | '-updated' | 'updated';
const SORTS: Array<[Sort, string]> = [
  ['-created', 'Newest first'],
  ['created', 'Oldest first'],
  ['name', 'Name A–Z'],
  ['-name', 'Name Z–A'],
  ['-updated', 'Recently updated or published'],
  ['updated', 'Least recently updated'],
];

/** The CLI's login command for this server (plain `spaces login` only at the CLI's default address). */
function loginCommand(): string {
  return location.origin === 'http://localhost:8080'
    ? 'spaces login'
    : `spaces login --api-url ${location.origin}`;
}

export function spaceStatus(s: Space): { label: string; kind: string } {
  if (s.status === 'deleting') return { label: 'Deleted', kind: 'bad' };
  if (s.disabled) return { label: `Disabled (${s.disabled.reasonCode.replace(/_/g, ' ')})`, kind: 'bad' };
  if (s.anonymous) return { label: 'Anonymous', kind: 'warn' };
  if (s.channels.live) return { label: 'Live', kind: 'ok' };
  return { label: 'No live version', kind: 'muted' };
}

export function lastPublish(s: Space): string | null {
  const times = Object.values(s.channels).map((c) => c.updatedAt);
  return times.sort().at(-1) ?? null;
}

export function SpacesPage({ team }: { team: { id: string; name: string; slug: string } }) {
  const [pages, setPages] = useState<Space[][]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [query, setQuery] = useState('');
  /** The search the server runs (`q`): the box's text once typing paused. */
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>('-created');
  /** The deleted spaces that can still be restored, instead of the live ones. */
  const [deleted, setDeleted] = useState(false);
  const more = useAction();
  const restore = useAction();

  useEffect(() => {
    const timer = setTimeout(() => setSearch(query.trim()), 250);
    return () => clearTimeout(timer);
  }, [query]);
  const q = {
    ...(search ? { q: search } : {}),
    ...(deleted ? { state: 'deleted' as const } : {}),
    ...(sort !== '-created' ? { sort } : {}),
  };

  /** The listing (team, search, order) the shown pages belong to: an answer for an older one is dropped. */
  const listing = useRef(0);
  const first = useLoad(async () => {
    const mine = ++listing.current;
    const started = performance.now();
    const res = must(
      await api.GET('/v1/spaces', { params: { query: { team: team.id, limit: PAGE, ...q } } }),
    );
    if (mine !== listing.current) return 0;
    setPages([res.data]);
    setCursor(res.pagination.nextCursor);
    return performance.now() - started;
  }, [team.id, search, deleted, sort]);

  const loadMore = () =>
    more.run(async () => {
      if (!cursor) return;
      const mine = listing.current;
      const res = must(
        await api.GET('/v1/spaces', { params: { query: { team: team.id, limit: PAGE, cursor, ...q } } }),
      );
      if (mine !== listing.current) return;
      setPages((p) => [...p, res.data]);
      setCursor(res.pagination.nextCursor);
    });

  const all = useMemo(() => pages.flat(), [pages]);

  return (
    <>
      <div class="page-head">
        <h1>
          {deleted ? 'Deleted spaces' : 'Spaces'} of {team.name}
        </h1>
        <NewSpace teamId={team.id} />
      </div>
      <div class="toolbar">
        <label for="search">Search by name or slug</label>
        <input
          id="search"
          type="search"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
          placeholder="my-site"
        />
        <label for="sort">Sort</label>
        <select id="sort" value={sort} onChange={(e) => setSort(e.currentTarget.value as Sort)}>
          {SORTS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <button
          type="button"
          id="toggle-deleted"
          aria-pressed={deleted}
          onClick={() => setDeleted((d) => !d)}
        >
          {deleted ? 'Back to spaces' : 'Deleted spaces'}
        </button>
        <span class="muted" aria-live="polite" id="space-count">
          {first.loading
            ? ''
            : `${all.length}${cursor ? '+' : ''} spaces${search ? ` matching “${search}”` : ''}`}
        </span>
      </div>
      {first.loading ? <Loading label="Loading spaces…" /> : null}
      <ProblemView problem={first.problem} />
      {!first.loading && !first.problem && all.length === 0 && search ? (
        <p id="no-match">No space’s name or slug contains “{search}”.</p>
      ) : null}
      {!first.loading && !first.problem && all.length === 0 && deleted && !search ? (
        <p id="no-deleted">No deleted space can be restored (they can for 7 days).</p>
      ) : null}
      <ProblemView problem={restore.problem} id="restore-error" />
      {!first.loading && !first.problem && all.length === 0 && !search && !deleted ? (
        <div class="card" id="getting-started">
          <h2>No spaces yet</h2>
          <p>
            Create one with <strong>New space</strong> and publish a folder from its Publish tab, or from a
            terminal with the CLI (in the clone of this server):
          </p>
          <ol>
            <li>
              <code>npm link</code> once, then <code>{loginCommand()}</code> and approve it here
            </li>
            <li>
              <code>spaces publish ./site</code>: it prints the site’s address
            </li>
          </ol>
          <p>
            Read on: the <a href="/docs/quickstart">quickstart</a>, the <a href="/docs">documentation</a>.
          </p>
        </div>
      ) : null}
      {all.length > 0 ? (
        <table class="list" id="spaces">
          <caption class="sr-only">Spaces</caption>
          <thead>
            <tr>
              <th scope="col">Space</th>
              <th scope="col">Status</th>
              <th scope="col">Live URL</th>
              <th scope="col">Last publish</th>
            </tr>
          </thead>
          <tbody>
            {all.map((s) => {
              const st = spaceStatus(s);
              return (
                <tr key={s.id}>
                  <td>
                    <div class="space-cell">
                      <Thumbnail thumbnail={s.thumbnail} title={s.title} />
                      <div>
                        <a href={`#/spaces/${s.id}`} class="space-link">
                          {s.title}
                        </a>
                        <div class="muted small">{s.slug}</div>
                      </div>
                    </div>
                  </td>
                  <td>
                    <span class={`badge ${st.kind}`}>{st.label}</span>
                  </td>
                  <td>
                    {deleted ? (
                      <button
                        type="button"
                        class="restore"
                        disabled={restore.busy}
                        onClick={() =>
                          restore.run(async () => {
                            must(
                              await api.POST('/v1/spaces/{spaceId}/restore', {
                                params: { path: { spaceId: s.id } },
                              }),
                            );
                            location.hash = `#/spaces/${s.id}`;
                          })
                        }
                      >
                        Restore<span class="sr-only"> {s.title}</span>
                      </button>
                    ) : (
                      <a href={s.liveUrl} rel="noopener" target="_blank">
                        {s.liveUrl.replace(/^https?:\/\//, '')}
                      </a>
                    )}
                  </td>
                  <td>{when(lastPublish(s))}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      <ProblemView problem={more.problem} />
      {cursor ? (
        <button type="button" id="load-more" onClick={loadMore} disabled={more.busy}>
          {more.busy ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </>
  );
}

function NewSpace({ teamId }: { teamId: string }) {
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState('');
  const [slug, setSlug] = useState('');
  const act = useAction();
  if (!open)
    return (
      <button type="button" class="primary" id="new-space" onClick={() => setOpen(true)}>
        New space
      </button>
    );
  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      const body: { teamId: string; title?: string; slug?: string } = { teamId };
      if (title.trim()) body.title = title.trim();
      if (slug.trim()) body.slug = slug.trim();
      const res = must(await api.POST('/v1/spaces', { body }));
      location.hash = `#/spaces/${res.data.space.id}`;
    });
  };
  return (
    <form class="card inline-form" id="new-space-form" onSubmit={submit}>
      <Field id="new-title" label="Title">
        <input id="new-title" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </Field>
      <Field id="new-slug" label="Slug (optional)">
        <input id="new-slug" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
      </Field>
      <ProblemView problem={act.problem} />
      <button type="submit" class="primary" disabled={act.busy}>
        Create
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
