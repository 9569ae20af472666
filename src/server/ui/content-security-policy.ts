/**
 * The inspector's Content-Security-Policy: scripts and styles from the inspector's own files only
 * (no inline script, no eval, no inline style sheet), data from this origin only, no frames, no
 * forms, no plugins. Trajectories and patches are untrusted: the client writes them as text, and
 * this policy keeps anything that slipped through from running or calling out.
 */
export const INSPECTOR_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every inspector response carries. */
export const INSPECTOR_HEADERS = {
  'content-security-policy': INSPECTOR_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
} as const;
