/**
 * Fields the pages do not know by name, shown anyway: the job's JSON grows as the pipeline does
 * (regressions, reproduction tests, a pass matrix, configurations), and the inspector keeps up
 * without being told. A value is drawn as a small tree; anything named like a matrix, as a grid.
 */
import { h, type Child } from './dom.js';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const MAX_ITEMS = 200;
const MAX_TEXT = 4000;

/** A value as text, numbers and nested lists; long strings folded. */
export function valueTree(value: unknown, depth = 0): Child {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, '—');
  if (typeof value === 'boolean') return h('span', { class: value ? 'yes' : 'no' }, value ? 'yes' : 'no');
  if (typeof value === 'number') return h('span', { class: 'num' }, Number.isInteger(value) ? String(value) : value.toFixed(4));
  if (typeof value === 'string') return longText(value);
  if (depth > 6) return h('code', {}, JSON.stringify(value).slice(0, 200));
  if (Array.isArray(value)) {
    if (value.length === 0) return h('span', { class: 'muted' }, '(none)');
    if (value.every((item) => typeof item !== 'object' || item === null))
      return h('span', {}, value.slice(0, MAX_ITEMS).map(String).join(', '), value.length > MAX_ITEMS ? ` … (${value.length})` : '');
    return h(
      'ol',
      { class: 'tree', start: 0 },
      value.slice(0, MAX_ITEMS).map((item) => h('li', {}, valueTree(item, depth + 1))),
      value.length > MAX_ITEMS ? h('li', { class: 'muted' }, `… ${value.length - MAX_ITEMS} more`) : null,
    );
  }
  if (isRecord(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return h('span', { class: 'muted' }, '(empty)');
    return h(
      'dl',
      { class: 'tree' },
      entries
        .slice(0, MAX_ITEMS)
        .map(([key, item]) => [
          h('dt', {}, key),
          h('dd', {}, matrixLike(key) ? (grid(item) ?? valueTree(item, depth + 1)) : valueTree(item, depth + 1)),
        ]),
    );
  }
  return String(value);
}

/** Text, folded when long or many-lined: the first lines show, the rest opens on a click. */
export function longText(text: string, key?: string, lines = 12): HTMLElement {
  const all = text.split('\n');
  if (all.length <= lines && text.length <= MAX_TEXT) return h(all.length > 1 ? 'pre' : 'span', { class: 'text' }, text);
  const head = all.slice(0, lines).join('\n').slice(0, MAX_TEXT);
  return h(
    'details',
    { class: 'fold', ...(key ? { 'data-key': key } : {}) },
    h(
      'summary',
      {},
      h('pre', { class: 'text' }, head),
      h('span', { class: 'muted' }, `… ${all.length} lines, ${text.length} characters: show all`),
    ),
    h('pre', { class: 'text' }, text),
  );
}

const matrixLike = (key: string) => /matrix|grid/i.test(key);

/** Every value under a matrix-like key, with its path, in `root` (a few levels deep). */
export function findMatrices(root: unknown, path = '', depth = 0): Array<{ path: string; value: unknown }> {
  if (!isRecord(root) || depth > 3) return [];
  return Object.entries(root).flatMap(([key, value]) =>
    matrixLike(key) && value !== null
      ? [{ path: path ? `${path}.${key}` : key, value }]
      : findMatrices(value, path ? `${path}.${key}` : key, depth + 1),
  );
}

const label = (value: unknown, fallback: string): string => {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (isRecord(value))
    for (const key of ['id', 'name', 'test', 'test_id', 'file', 'path', 'index', 'candidate', 'trajectory_id'])
      if (typeof value[key] === 'string' || typeof value[key] === 'number') return String(value[key]);
  return fallback;
};

const ROW_CELLS = ['cells', 'results', 'outcomes', 'passed', 'tests', 'values', 'row'];

/** Rows × columns of a matrix in any of the usual shapes, or undefined when it is not one. */
export function matrixCells(
  value: unknown,
): { rows: string[]; columns: string[]; cell: (row: number, column: number) => unknown } | undefined {
  // [[...], [...]]
  if (Array.isArray(value) && value.length && value.every(Array.isArray)) {
    const width = Math.max(...value.map((row) => (row as unknown[]).length));
    return {
      rows: value.map((_, i) => String(i)),
      columns: Array.from({ length: width }, (_, j) => String(j)),
      cell: (r, c) => (value[r] as unknown[])[c],
    };
  }
  if (isRecord(value)) {
    // {tests|columns: [...], rows|candidates: [{..., cells|results: [...] | {...}}]}
    const columnsRaw = [value.tests, value.columns, value.test_ids].find(Array.isArray) as unknown[] | undefined;
    const rowsRaw = [value.rows, value.candidates].find(Array.isArray) as unknown[] | undefined;
    if (rowsRaw) {
      const columns = columnsRaw?.map((column, i) => label(column, String(i)));
      const cellsOf = (row: unknown): unknown =>
        Array.isArray(row)
          ? row
          : isRecord(row)
            ? ROW_CELLS.map((key) => row[key]).find((cells) => Array.isArray(cells) || isRecord(cells))
            : undefined;
      const keys = columns ?? [
        ...new Set(
          rowsRaw.flatMap((row) => {
            const cells = cellsOf(row);
            return isRecord(cells) ? Object.keys(cells) : Array.isArray(cells) ? cells.map((_, i) => String(i)) : [];
          }),
        ),
      ];
      if (keys.length === 0) return undefined;
      return {
        rows: rowsRaw.map((row, i) => label(row, String(i))),
        columns: keys,
        cell: (r, c) => {
          const cells = cellsOf(rowsRaw[r]);
          return Array.isArray(cells) ? cells[c] : isRecord(cells) ? cells[keys[c]!] : undefined;
        },
      };
    }
    // {row: {column: outcome}}
    const entries = Object.entries(value);
    if (entries.length && entries.every(([, row]) => isRecord(row))) {
      const columns = [...new Set(entries.flatMap(([, row]) => Object.keys(row as Json)))];
      return { rows: entries.map(([key]) => key), columns, cell: (r, c) => (entries[r]![1] as Json)[columns[c]!] };
    }
  }
  if (Array.isArray(value) && value.length && value.every(isRecord)) {
    // One record per cell: [{index, writer|test, outcome}, ...]
    const rowKey = ['index', 'candidate', 'row'].find((key) =>
      value.every((cell) => typeof cell[key] === 'number' || typeof cell[key] === 'string'),
    );
    const columnKey = ['writer', 'test', 'test_id', 'column'].find((key) =>
      value.every((cell) => typeof cell[key] === 'number' || typeof cell[key] === 'string'),
    );
    if (rowKey && columnKey) {
      const rows = [...new Set(value.map((cell) => String(cell[rowKey])))];
      const columns = [...new Set(value.map((cell) => String(cell[columnKey])))];
      const at = new Map(value.map((cell) => [`${String(cell[rowKey])}\u0000${String(cell[columnKey])}`, cell]));
      return { rows, columns, cell: (r, c) => at.get(`${rows[r]}\u0000${columns[c]}`) };
    }
    // [{id, cells: {...}}]
    return matrixCells({ rows: value });
  }
  return undefined;
}

function cellView(value: unknown): HTMLElement {
  const raw = isRecord(value) ? (value.status ?? value.outcome ?? value.passed ?? value.result) : value;
  const word = typeof raw === 'string' ? raw.toLowerCase() : raw;
  const pass = word === true || word === 'passed' || word === 'pass' || word === 'ok' || word === 1;
  const fail = word === false || word === 'failed' || word === 'fail' || word === 'error' || word === 0;
  const text = pass ? '✓' : fail ? '✗' : raw === null || raw === undefined ? '—' : String(raw).slice(0, 12);
  return h(
    'td',
    { class: `cell ${pass ? 'pass' : fail ? 'fail' : 'other'}`, title: typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? '') },
    text,
  );
}

/** A matrix as a grid (rows × columns, ✓ passed, ✗ failed), or undefined when `value` is not one. */
export function grid(value: unknown, rowLabel = 'row'): HTMLElement | undefined {
  const cells = matrixCells(value);
  if (!cells) return undefined;
  return h(
    'table',
    { class: 'grid' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, rowLabel),
        cells.columns.map((column) => h('th', { class: 'col', title: column }, column.length > 24 ? `…${column.slice(-22)}` : column)),
      ),
    ),
    h(
      'tbody',
      {},
      cells.rows.map((row, r) =>
        h(
          'tr',
          {},
          h('th', {}, row),
          cells.columns.map((_, c) => cellView(cells.cell(r, c))),
        ),
      ),
    ),
  );
}
