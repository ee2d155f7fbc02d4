/**
 * The e-mail and password form (plus the name when signing up) that the sign-in page and the claim
 * page share. It keeps what is typed and hands it to `onSubmit`; the page decides what to call.
 */
import { useState } from 'preact/hooks';
import type { Problem } from '../api/client';
import { Field, ProblemView } from '../ui';

export interface Credentials {
  email: string;
  password: string;
  name: string;
}

export function CredentialsForm(props: {
  mode: 'in' | 'up';
  /** The form's id; the sign-up form of the claim page prefixes its fields' ids with `su-`. */
  formId: string;
  idPrefix?: string;
  submitLabel: string;
  busy: boolean;
  problem: Problem | null;
  problemId: string;
  class?: string;
  onSubmit: (c: Credentials) => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const id = (field: string) => `${props.idPrefix ?? ''}${field}`;
  const up = props.mode === 'up';
  const submit = (e: Event) => {
    e.preventDefault();
    props.onSubmit({ email, password, name });
  };
  return (
    <form onSubmit={submit} class={props.class} id={props.formId}>
      {up ? (
        <Field id={id('name')} label="Name">
          <input
            id={id('name')}
            autocomplete="name"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
      ) : null}
      <Field id={id('email')} label="E-mail address">
        <input
          id={id('email')}
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field id={id('password')} label="Password" hint={up ? 'At least 10 characters.' : undefined}>
        <input
          id={id('password')}
          type="password"
          autocomplete={up ? 'new-password' : 'current-password'}
          minLength={up ? 10 : undefined}
          aria-describedby={up ? `${id('password')}-hint` : undefined}
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
      <ProblemView problem={props.problem} id={props.problemId} />
      <button class="primary" type="submit" disabled={props.busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}
