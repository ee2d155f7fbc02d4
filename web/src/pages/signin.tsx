/** Sign in (e-mail and password; sets the session cookie) and, when the server allows it, sign up. */
import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { Field, ProblemView, useAction } from '../ui';

const signupOpen = () =>
  document.querySelector('meta[name="spaces-signup"]')?.getAttribute('content') === 'open';

export function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<'in' | 'up'>('in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const act = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      if (mode === 'up') must(await api.POST('/v1/account', { body: { email, name, password } }));
      must(await api.POST('/v1/account/browser-sessions', { body: { email, password } }));
      onSignedIn();
    });
  };

  return (
    <main id="main" class="narrow">
      <h1>{mode === 'in' ? 'Sign in to Spaces' : 'Create your Spaces account'}</h1>
      <form onSubmit={submit} class="card" id="signin-form">
        {mode === 'up' ? (
          <Field id="name" label="Name">
            <input
              id="name"
              autocomplete="name"
              required
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </Field>
        ) : null}
        <Field id="email" label="E-mail address">
          <input
            id="email"
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field id="password" label="Password" hint={mode === 'up' ? 'At least 10 characters.' : undefined}>
          <input
            id="password"
            type="password"
            autocomplete={mode === 'up' ? 'new-password' : 'current-password'}
            minLength={mode === 'up' ? 10 : undefined}
            aria-describedby={mode === 'up' ? 'password-hint' : undefined}
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <ProblemView problem={act.problem} id="signin-error" />
        <button class="primary" type="submit" disabled={act.busy}>
          {act.busy ? 'Signing in…' : mode === 'in' ? 'Sign in' : 'Sign up'}
        </button>
      </form>
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
