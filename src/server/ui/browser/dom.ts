/**
 * Builds DOM nodes from data. Every string becomes a text node or an attribute value set through
 * the DOM, never HTML: trajectories, patches and test logs are untrusted. The one place HTML is
 * inserted is diff2html's output (diff-view.ts), which escapes the patch itself.
 */
import { outcomeBadge } from './check-outcome.js';
import { showsNoneUsable } from './job-outcome.js';

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attributes = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/** Only links within the inspector: relative references (no scheme, no `//host`); anything else becomes inert. */
export function safeHref(href: string): string {
  const trimmed = href.trim();
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) || /^[\\/]{2}/.test(trimmed) || /[\u0000-\u001f]/.test(trimmed) ? '#' : trimmed;
}

export function h(tag: string, attributes: Attributes = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (name === 'href') element.setAttribute('href', safeHref(String(value)));
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces everything in `parent`, keeping open the `<details data-key>` that were open. */
export function replaceChildren(parent: HTMLElement, ...children: Child[]): void {
  const open = new Set(
    [...parent.querySelectorAll('details[data-key]')]
      .filter((node) => (node as HTMLDetailsElement).open)
      .map((node) => node.getAttribute('data-key')),
  );
  parent.replaceChildren();
  append(parent, children);
  for (const node of parent.querySelectorAll('details[data-key]'))
    if (open.has(node.getAttribute('data-key'))) (node as HTMLDetailsElement).open = true;
}

export const fixed = (value: unknown, digits = 3): string =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export const time = (iso: unknown): string =>
  typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toLocaleString() : '—';

/** A status word as a badge whose class is one of a closed set (never the raw word); `warn` draws any word amber. */
export function badge(status: unknown, id?: string, tone?: 'warn'): HTMLElement {
  const word = typeof status === 'string' ? status : status === true ? 'yes' : status === false ? 'no' : '—';
  const known = [
    'queued',
    'pending',
    'running',
    'succeeded',
    'finished',
    'resolved',
    'failed',
    'error',
    'cancelled',
    'interrupted',
    'skipped',
    'unresolved',
    'apply_failed',
    'timeout',
    'passed',
    'yes',
    'no',
  ];
  const kind = tone ?? (known.includes(word) ? word : 'other');
  return h('span', { class: `badge badge-${kind}`, ...(id ? { id } : {}) }, word);
}

/** A test outcome's badge: a run that could not run has its own (check-outcome.ts), never a failure's colour. */
export function outcomeBadgeOf(status: unknown): HTMLElement {
  const word = typeof status === 'string' ? status : '—';
  const drawn = outcomeBadge(word);
  if (drawn.kind !== 'could-not-run') return badge(word);
  return h('span', { class: 'badge badge-could-not-run', ...(drawn.title ? { title: drawn.title } : {}) }, drawn.word);
}

/**
 * A job's status badge; for a succeeded job that chose nothing usable (job-outcome.ts) the status
 * drawn amber, never green, with an amber `none usable` badge beside it.
 */
export function statusBadges(status: unknown, outcome: unknown, ids: { status?: string; outcome?: string } = {}): Child[] {
  if (!showsNoneUsable(status, outcome)) return [badge(status, ids.status)];
  return [
    badge(status, ids.status, 'warn'),
    ' ',
    h(
      'span',
      {
        class: 'badge badge-none-usable',
        title: 'The job ran to its end, but no candidate had a usable patch: nothing was chosen.',
        ...(ids.outcome ? { id: ids.outcome } : {}),
      },
      'none usable',
    ),
  ];
}
