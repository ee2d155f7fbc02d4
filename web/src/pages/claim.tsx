/**
 * The claim page (`/claim#sfc_…`), in the dashboard's design. The space key travels in the URL
 * fragment, which browsers never send to servers; the page reads it, drops it from the address bar,
 * and uses it as the bearer of `POST /v1/claim/visit`. Claiming itself is the signed-in person's
 * (the browser session cookie): sign in or sign up here, pick a team, claim.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, must, ProblemError, type Schemas } from '../api/client';
import { Field, ProblemView, useAction } from '../ui';
import { type Credentials, CredentialsForm } from './credentials-form';

type Status = Schemas['ClaimStatusResponse']['data'];
type Team = { id: string; name: string; slug: string };

const fmt = (s: number) => {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
};

/** Read once, before the first render takes it out of the address bar. */
const KEY = decodeURIComponent(location.hash.slice(1));
if (location.pathname === '/claim' && location.hash) history.replaceState(null, '', location.pathname);

export function ClaimPage() {
  const [status, setStatus] = useState<Status | null>(null);
  const [teams, setTeams] = useState<Team[] | null>(null);
  const [team, setTeam] = useState('');
  const [continuation, setContinuation] = useState(false);
  const [done, setDone] = useState<{ team: string; url: string } | null>(null);
  const lookup = useAction();
  const signIn = useAction();
  const signUp = useAction();
  const claim = useAction();

  async function loadTeams(): Promise<boolean> {
    const res = await api.GET('/v1/account');
    if (!res.response.ok || !res.data?.data.user) return false;
    setTeams(res.data.data.teams);
    setTeam(res.data.data.teams[0]?.id ?? '');
    return true;
  }

  useEffect(() => {
    lookup.run(async () => {
      if (!/^sfc_/.test(KEY)) {
        throw new ProblemError({
          type: 'about:blank',
          title: 'No space key',
          status: 0,
          code: 'no_key',
          detail: 'This link has no space key. Open the claim link you were given.',
          requestId: '',
        });
      }
      const st = must(
        await api.POST('/v1/claim/visit', { headers: { authorization: `Bearer ${KEY}` } }),
      ).data;
      setStatus(st);
      await loadTeams();
    });
  }, []);

  const submitSignIn = ({ email, password }: Credentials) =>
    signIn.run(async () => {
      must(await api.POST('/v1/account/browser-sessions', { body: { email, password } }));
      await loadTeams();
    });
  const submitSignUp = ({ email, password, name }: Credentials) =>
    signUp.run(async () => {
      must(await api.POST('/v1/account', { body: { email, name, password } }));
      must(await api.POST('/v1/account/browser-sessions', { body: { email, password } }));
      await loadTeams();
    });
  const submitClaim = (e: Event) => {
    e.preventDefault();
    claim.run(async () => {
      const res = must(
        await api.POST('/v1/claim', { body: { key: KEY, team, allowContinuation: continuation } }),
      );
      const picked = teams?.find((t) => t.id === team);
      setDone({ team: picked ? `${picked.name} (${picked.slug})` : team, url: res.data.space.liveUrl });
    });
  };

  const timeLeft = done
    ? 'Claimed: it no longer expires.'
    : status?.expired
      ? `This space has expired and is offline. Claim it before ${new Date(status.purgeAfter ?? '').toLocaleString()} to bring it back.`
      : status
        ? `Time left to claim: ${fmt(status.secondsLeft)}.`
        : '';

  return (
    <>
      <header class="top">
        <a class="brand" href="/">
          Spaces
        </a>
      </header>
      <main id="main" class="narrow">
        <h1>Claim your space</h1>
        <div class="card" aria-live="polite">
          {lookup.busy ? (
            <p id="loading" class="loading" role="status">
              Looking up your space…
            </p>
          ) : null}
          {status ? (
            <div id="space">
              <h2 id="space-title">{status.title}</h2>
              <p>
                <a id="space-url" href={status.liveUrl} rel="noopener">
                  {status.liveUrl}
                </a>
              </p>
              <p id="time-left">{timeLeft}</p>
            </div>
          ) : null}
          {lookup.problem ? (
            <div id="space-error">
              {lookup.problem.code === 'no_key' ? (
                <p class="problem-detail problem" role="alert">
                  {lookup.problem.detail}
                </p>
              ) : (
                <ProblemView problem={lookup.problem} />
              )}
            </div>
          ) : null}
        </div>

        {status && !teams && !done ? (
          <div class="card" id="signin">
            <h2>Sign in to keep it</h2>
            <CredentialsForm
              mode="in"
              formId="signin-form"
              submitLabel="Sign in"
              busy={signIn.busy}
              problem={signIn.problem}
              problemId="signin-error"
              onSubmit={submitSignIn}
            />
            {status.signupOpen ? (
              <details id="signup">
                <summary>No account yet? Sign up</summary>
                <CredentialsForm
                  mode="up"
                  formId="signup-form"
                  idPrefix="su-"
                  submitLabel="Sign up and continue"
                  busy={signUp.busy}
                  problem={signUp.problem}
                  problemId="signup-error"
                  onSubmit={submitSignUp}
                />
              </details>
            ) : null}
          </div>
        ) : null}

        {status && teams && !done ? (
          <div class="card" id="choose">
            <h2>Choose a team</h2>
            <form id="claim-form" onSubmit={submitClaim}>
              <Field id="team" label="Team">
                <select id="team" value={team} onChange={(e) => setTeam(e.currentTarget.value)}>
                  {teams.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.name} ({t.slug})
                    </option>
                  ))}
                </select>
              </Field>
              <label class="check">
                <input
                  id="continuation"
                  type="checkbox"
                  checked={continuation}
                  onChange={(e) => setContinuation(e.currentTarget.checked)}
                />{' '}
                Let whoever published it keep publishing to it
              </label>
              <p class="muted">
                The space key then works once more: it can be traded for a publish key for this space only,
                which is yours and which you can revoke with your API keys.
              </p>
              <button type="submit" class="primary" disabled={claim.busy}>
                Claim space
              </button>
              <ProblemView problem={claim.problem} id="claim-error" />
            </form>
          </div>
        ) : null}

        {done ? (
          <div class="card" id="done" role="status">
            <h2 class="ok">Claimed</h2>
            <p>
              The space is now in team <strong id="done-team">{done.team}</strong> and stays online. Its old
              key no longer works.
            </p>
            <p>
              <a id="done-url" href={done.url}>
                Open the site
              </a>{' '}
              · <a href={`/#/spaces/${status?.spaceId}`}>Open it in the dashboard</a>
            </p>
          </div>
        ) : null}
      </main>
    </>
  );
}
