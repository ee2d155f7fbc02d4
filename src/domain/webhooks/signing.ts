import { createHmac } from 'node:crypto';

/**
 * `Service-Signature: t=<unix seconds>, v1=<hex>[, v1=<hex>]`: each `v1` is the hex HMAC-SHA256 of
 * `${t}.${rawBody}` keyed with one signing secret (the whole `whsec_…` string, as UTF-8). During a
 * rotation's overlap the new secret signs first and the previous one second; a receiver accepts the
 * request when any `v1` matches a secret it holds.
 */
export function signatureHeader(secrets: readonly string[], unixSeconds: number, rawBody: string): string {
  const signed = `${unixSeconds}.${rawBody}`;
  const parts = secrets.map((s) => `v1=${createHmac('sha256', s).update(signed).digest('hex')}`);
  return [`t=${unixSeconds}`, ...parts].join(', ');
}
