/** Shared pieces of every page: the problem view, loading and time formatting, the confirm dialog. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { type Problem, problemOf } from './api/client';

/** A problem document as the API sent it: title, detail, suggestions (and the request id). */
export function ProblemView({ problem, id }: { problem: Problem | null; id?: string }) {
  if (!problem) return null;
  return (
    <div class="problem" role="alert" id={id}>
      <strong class="problem-title">{problem.title}</strong>
      <p class="problem-detail">{problem.detail}</p>
      {problem.pointer ? (
        <p class="problem-pointer">
          At <code>{problem.pointer}</code>
        </p>
      ) : null}
      {problem.suggestions?.length ? (
        <ul class="problem-suggestions">
          {problem.suggestions.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      ) : null}
      {problem.requestId ? <p class="muted small">Request {problem.requestId}</p> : null}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      {label}
    </p>
  );
}

/** Runs `load` on mount and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | null; problem: Problem | null; loading: boolean }>({
    data: null,
    problem: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, problem: null }));
    load().then(
      (data) => live && setState({ data, problem: null, loading: false }),
      (err) => live && setState({ data: null, problem: problemOf(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** Runs an action, keeping its busy flag and its problem for the form that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setProblem(null);
    try {
      return await fn();
    } catch (err) {
      setProblem(problemOf(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, problem, run, setProblem };
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

/**
 * A modal confirmation (the native `<dialog>`: focus moves into it, Escape cancels, focus returns to
 * the button that opened it). The open one's confirm button is `#confirm-ok`.
 */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = `confirm-title-${useId()}`;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} class="confirm">
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button
          type="button"
          class={props.danger ? 'danger' : 'primary'}
          disabled={props.busy}
          onClick={props.onConfirm}
          // Several dialogs may sit on one page: only the open one's button answers to the id.
          id={props.open ? 'confirm-ok' : undefined}
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function Field(props: { id: string; label: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

/** A space's front page as the thumbnails job took it, or a placeholder while there is none. */
export function Thumbnail({
  thumbnail,
  title,
  size = 'small',
}: {
  thumbnail: { url: string } | null;
  title: string;
  size?: 'small' | 'large';
}) {
  const [w, h] = size === 'small' ? [96, 60] : [320, 200];
  if (!thumbnail)
    return (
      <span class={`thumb thumb-${size} thumb-none`} aria-hidden="true">
        no picture yet
      </span>
    );
  return (
    <img
      class={`thumb thumb-${size}`}
      src={thumbnail.url}
      alt={`Front page of ${title}`}
      width={w}
      height={h}
      loading="lazy"
      decoding="async"
    />
  );
}
