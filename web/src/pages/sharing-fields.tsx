/**
 * Pieces the sharing and people pages share: a field that shows the API's problem when its `pointer`
 * names it, the scope inputs (paths one per line, expiry), the copy-once box for a secret and a copy
 * button, and the conversions between the form's text and the API's values.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Problem } from '../api/client';

/** Whether the problem points at `pointer` or inside it (`/paths` covers `/paths/0`). */
export function pointsAt(problem: Problem | null, pointer: string): boolean {
  const p = problem?.pointer;
  return !!p && (p === pointer || p.startsWith(`${pointer}/`));
}

/**
 * A labelled input whose problem (when the API's `pointer` names it) is shown under it, tied to it
 * by `aria-describedby`, with `aria-invalid` set. `children` gets the attributes to spread.
 */
export function PointedField(props: {
  id: string;
  label: string;
  hint?: string;
  pointer: string;
  problem: Problem | null;
  children: (attrs: Record<string, string | undefined>) => ComponentChildren;
}) {
  const bad = pointsAt(props.problem, props.pointer);
  const hintId = props.hint ? `${props.id}-hint` : '';
  const errId = `${props.id}-error`;
  const describedBy = [hintId, bad ? errId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children({
        id: props.id,
        'aria-invalid': bad ? 'true' : undefined,
        'aria-describedby': describedBy,
      })}
      {props.hint ? (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      ) : null}
      {bad ? (
        <p class="field-error" id={errId} data-pointer={props.problem!.pointer}>
          {props.problem!.detail}
        </p>
      ) : null}
    </div>
  );
}

/** Paths typed one per line (or comma separated) → the API's list; empty → undefined (the default). */
export function pathsOf(text: string): string[] | undefined {
  const list = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : undefined;
}

/** A `datetime-local` value → ISO instant (undefined when empty). */
export function instantOf(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? local : d.toISOString();
}

/** An ISO instant → the `datetime-local` value in the browser's zone. */
export function localOf(iso: string | undefined | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="copy"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setCopied(true);
      }}
    >
      {copied ? 'Copied' : 'Copy'}
      <span class="sr-only"> {label}</span>
    </button>
  );
}

/** A secret shown this once: a read-only box with a copy button, and a button that forgets it. */
export function SecretOnce(props: { id: string; title: string; secret: string; onDone: () => void }) {
  return (
    <div class="card created-key" id={props.id} role="status">
      <h3>{props.title}</h3>
      <p>Copy it now: it is shown only this once.</p>
      <label for={`${props.id}-value`}>Token</label>
      <div class="copy-row">
        <input
          id={`${props.id}-value`}
          readOnly
          value={props.secret}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={props.secret} label="the token" />
      </div>
      <button type="button" class="link" onClick={props.onDone}>
        I have copied it
      </button>
    </div>
  );
}

export const ROLES = [
  ['viewer', 'Viewer (sees pages)'],
  ['commenter', 'Commenter (also comments)'],
  ['editor', 'Editor (also publishes)'],
  ['manager', 'Manager (also manages access)'],
] as const;
export type RoleName = (typeof ROLES)[number][0];
