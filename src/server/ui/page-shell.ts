/**
 * The one HTML page every inspector view starts from: no data of its own, the bundle and style
 * sheet, and what the client needs to know (live API or saved data, whether a key is asked for).
 * Saved data (`winnower inspect`) rides in a `<script type="application/json">` block, which runs
 * nothing; `<` is written as `\u003c` so no string in it can close the block.
 */
export interface PageShell {
  /** Where inspector.js and inspector.css are, ending in `/` (`/ui/assets/` live, `../assets/` saved). */
  assetBase: string;
  /** `live`: data from this server's API; `saved`: from `data`. */
  mode: 'live' | 'saved';
  /** Live only: the server has API keys, so the page asks for one before it loads anything. */
  keyRequired?: boolean;
  /** Saved only: what the page shows (src/server/ui/saved-site.ts). */
  data?: unknown;
  title?: string;
  /** Also as a `<meta>` policy: a saved page opened from disk has no response headers. */
  csp?: string;
}

const escapeAttribute = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** JSON safe inside a script element: no `<` (so no `</script>` or `<!--`), and no U+2028/2029. */
export const scriptSafeJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

export function renderPageShell(shell: PageShell): string {
  const base = escapeAttribute(shell.assetBase);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    ...(shell.csp ? [`<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(shell.csp)}">`] : []),
    `<title>${escapeAttribute(shell.title ?? 'winnower inspector')}</title>`,
    // No icon request (the server has none).
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="${base}inspector.css">`,
    `<script src="${base}inspector.js" defer></script>`,
    '</head>',
    `<body data-mode="${shell.mode}" data-key-required="${shell.keyRequired ? 'true' : 'false'}">`,
    '<noscript>The winnower inspector needs JavaScript.</noscript>',
    '<main id="app"></main>',
    ...(shell.data === undefined ? [] : [`<script type="application/json" id="winnower-data">${scriptSafeJson(shell.data)}</script>`]),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
