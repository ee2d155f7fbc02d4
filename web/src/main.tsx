/**
 * The Spaces dashboard: a Preact app served at `/` on the API host. Routing is in the URL fragment
 * (`#/spaces/…`), so the server serves one page and deep links never collide with API paths.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, must, type Schemas } from './api/client';
import { ClaimPage } from './pages/claim';
import { KeysPage } from './pages/keys';
import { SignInPage } from './pages/signin';
import { SpacePage } from './pages/space';
import { SpacesPage } from './pages/spaces';
import { TeamPage } from './pages/team';
import { Loading, ProblemView, useAction } from './ui';
import './styles.css';

export type Account = Schemas['Account'];
type Team = Account['teams'][number];

function useHashRoute(): string[] {
  const parse = () =>
    (location.hash.replace(/^#\/?/, '') || '')
      .split('/')
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
  const [parts, setParts] = useState(parse);
  useEffect(() => {
    const on = () => setParts(parse());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return parts;
}

const TEAM_KEY = 'spaces.team';

function App() {
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const route = useHashRoute();
  const [teamId, setTeamId] = useState<string | null>(localStorage.getItem(TEAM_KEY));
  const signOut = useAction();

  async function refresh() {
    const res = await api.GET('/v1/account');
    setAccount(res.response.ok && res.data ? res.data.data : null);
  }
  useEffect(() => {
    refresh();
  }, []);

  // The page's heading is the document title too, so screen reader users hear where they are.
  useEffect(() => {
    const h1 = document.querySelector('h1');
    document.title = h1?.textContent ? `${h1.textContent} — Spaces` : 'Spaces';
  });

  if (account === undefined) return <Loading label="Loading Spaces…" />;
  if (account === null || !account.user) return <SignInPage onSignedIn={refresh} />;

  const teams = account.teams;
  const team: Team | undefined = teams.find((t) => t.id === teamId) ?? teams[0];
  const pickTeam = (id: string) => {
    localStorage.setItem(TEAM_KEY, id);
    setTeamId(id);
  };

  const doSignOut = () =>
    signOut.run(async () => {
      must(await api.DELETE('/v1/account/browser-sessions/current'));
      location.hash = '';
      setAccount(null);
    });

  let page = null;
  const [first, second] = route;
  if (first === 'spaces' && second) page = <SpacePage spaceId={second} tab={route[2] ?? 'overview'} />;
  else if (first === 'keys') page = <KeysPage teams={teams} />;
  else if (first === 'team' && team)
    page = <TeamPage team={team} account={account} onChanged={refresh} onPick={pickTeam} />;
  else if (team) page = <SpacesPage team={team} />;
  else page = <TeamPage team={null} account={account} onChanged={refresh} onPick={pickTeam} />;

  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          Spaces
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={!first ? 'page' : undefined}>
            Spaces
          </a>
          <a href="#/team" aria-current={first === 'team' ? 'page' : undefined}>
            Team
          </a>
          <a href="#/keys" aria-current={first === 'keys' ? 'page' : undefined}>
            API keys
          </a>
          <a href="/docs">Docs</a>
        </nav>
        <div class="who">
          {teams.length > 0 ? (
            <>
              <label for="team-switch" class="sr-only">
                Team
              </label>
              <select id="team-switch" value={team?.id} onChange={(e) => pickTeam(e.currentTarget.value)}>
                {teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </>
          ) : null}
          <span class="muted" id="who-email">
            {account.user.email}
          </span>
          <button type="button" id="sign-out" onClick={doSignOut} disabled={signOut.busy}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <ProblemView problem={signOut.problem} />
        {page}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.textContent = ''; // the "Loading Spaces…" placeholder of index.html
render(location.pathname === '/claim' ? <ClaimPage /> : <App />, root);
