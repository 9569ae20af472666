/**
 * Removes the credentials of a URL (`https://user:token@host/...`) before it is stored or shown.
 */

/**
 * `scheme://user:password@host/path` → `scheme://<marker>@host/path`; any other string unchanged.
 * The host follows the last '@' of the authority: a password may hold a raw '@' of its own.
 */
export function redactUrlCredentials(url: string, marker: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return url;
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  return at < 0 ? url : `${scheme}${marker}@${authority.slice(at + 1)}${rest}`;
}
