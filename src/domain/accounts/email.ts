/**
 * The server's one e-mail rule: the HTML standard's "valid e-mail address", which is exactly what a
 * browser's `<input type="email">` accepts. The API schemas, the sign-in forms and the configuration
 * (`SPACES_OWNER_EMAIL`) all use it, so an address one of them takes is never refused by another.
 * Unlike a "dotted public domain" rule it accepts a single-label host such as `owner@localhost`, the
 * address the server gives its own owner by default.
 */
export const EMAIL_PATTERN =
  "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$";
export const EMAIL_MAX_LENGTH = 320;

const EMAIL = new RegExp(EMAIL_PATTERN, 'u');

export function isEmailAddress(s: string): boolean {
  return s.length >= 3 && s.length <= EMAIL_MAX_LENGTH && EMAIL.test(s);
}
