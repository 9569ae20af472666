/**
 * Where jobs are kept, as `server.store` names it: a `postgres://` (or `postgresql://`) URL for
 * the shared store, else SQLite in `server.data_dir`. The URL's password never leaves this
 * process: every log line, error and /readyz answer shows the redacted form.
 */
import { redactUrlCredentials } from '../util/redact-url.js';

export function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store);
}

/** `postgres://user:secret@host/db?password=x` → `postgres://user:***@host/db?password=***`. */
export function redactStoreUrl(url: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/is.exec(url)?.[1] ?? '';
  const at = authority.lastIndexOf('@');
  // The user name helps an operator; the password is what is hidden.
  const user = at < 0 ? '' : authority.slice(0, at).split(':')[0]!;
  const withoutPassword = at < 0 ? url : redactUrlCredentials(url, user ? `${user}:***` : '***');
  return withoutPassword.replace(/([?&](?:password|sslpassword)=)[^&#]*/gi, '$1***');
}
