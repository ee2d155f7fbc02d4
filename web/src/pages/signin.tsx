/** Sign in (e-mail and password; sets the session cookie) and, when the server allows it, sign up. */
import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { useAction } from '../ui';
import { type Credentials, CredentialsForm } from './credentials-form';

const signupOpen = () =>
  document.querySelector('meta[name="spaces-signup"]')?.getAttribute('content') === 'open';

export function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<'in' | 'up'>('in');
  const act = useAction();

  const submit = ({ email, password, name }: Credentials) =>
    act.run(async () => {
      if (mode === 'up') must(await api.POST('/v1/account', { body: { email, name, password } }));
      must(await api.POST('/v1/account/browser-sessions', { body: { email, password } }));
      onSignedIn();
    });

  return (
    <main id="main" class="narrow">
      <h1>{mode === 'in' ? 'Sign in to Spaces' : 'Create your Spaces account'}</h1>
      <CredentialsForm
        key={mode}
        mode={mode}
        class="card"
        formId="signin-form"
        submitLabel={act.busy ? 'Signing in…' : mode === 'in' ? 'Sign in' : 'Sign up'}
        busy={act.busy}
        problem={act.problem}
        problemId="signin-error"
        onSubmit={submit}
      />
      {signupOpen() ? (
        <p>
          {mode === 'in' ? 'No account yet? ' : 'Have an account? '}
          <button
            type="button"
            class="link"
            id="toggle-signup"
            onClick={() => setMode(mode === 'in' ? 'up' : 'in')}
          >
            {mode === 'in' ? 'Sign up' : 'Sign in'}
          </button>
        </p>
      ) : null}
      <p class="muted">
        New here? Read the <a href="/docs/quickstart">quickstart</a>.
      </p>
    </main>
  );
}
