/**
 * JSON exactly as Python's `json.dumps` writes it (Python's float repr, `", "` and `": "` separators
 * or the ones given, `ensure_ascii`, `sort_keys`, `indent`), for chat templates whose `tojson` is
 * Python's: the OpenHands SDK renders the critic's tool definitions with
 * `json.dumps(x, ensure_ascii=False, sort_keys=False)` (docs/design/07-openhands-critic.md#3), so a model
 * trained on that input must get these bytes, not JavaScript's `JSON.stringify`.
 */

export type PythonJsonValue = null | boolean | number | string | PythonJsonValue[] | { [key: string]: PythonJsonValue } | PythonFloat;

/** A number Python holds as a float even when it is whole (`1.0`), where JavaScript cannot tell. */
export class PythonFloat {
  constructor(readonly value: number) {}
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/**
 * `json.dumps` of a str: quote, backslash and control characters escaped; with `ensureAscii` (Python's
 * default) also every code unit outside printable ASCII as `\uXXXX`, without it written as it is.
 */
export function pythonJsonString(text: string, ensureAscii = true): string {
  let out = '"';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    const code = text.charCodeAt(index);
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) out += short;
    else if (code >= 0x20 && (code <= 0x7e || !ensureAscii)) out += char;
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

/** Python's `repr(float)`: shortest round-trip digits, fixed notation for 1e-4 ≤ |x| < 1e16, else `1e-05` style. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let body: string;
  // Python's repr writes fixed notation for 1e-4 ≤ |x| < 1e16, exponent form otherwise.
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= digits.length - 1) body = `${digits}${'0'.repeat(exponent - digits.length + 1)}.0`;
    else if (exponent >= 0) body = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
    else body = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  } else body = scientific(digits, exponent);
  return negative ? `-${body}` : body;
}

function scientific(digits: string, exponent: number): string {
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const sign = exponent < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** The arguments of Python's `json.dumps` that change its output. */
export interface JsonDumpsOptions {
  /** Default true, as in Python. */
  ensureAscii?: boolean;
  /** Default false, as in Python. */
  sortKeys?: boolean;
  indent?: number;
  /** `[item, key]` separators; Python's default is `[', ', ': ']`, or `[',', ': ']` with an indent. */
  separators?: readonly [string, string];
}

interface DumpSettings {
  ensureAscii: boolean;
  sortKeys: boolean;
  indent: number | undefined;
  item: string;
  key: string;
}

function dumps(value: PythonJsonValue, settings: DumpSettings, depth: number): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (typeof value === 'string') return pythonJsonString(value, settings.ensureAscii);
  const { indent } = settings;
  const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (depth + 1))}`;
  const close = indent === undefined ? '' : `\n${' '.repeat(indent * depth)}`;
  const comma = settings.item;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${pad}${value.map((item) => dumps(item, settings, depth + 1)).join(comma + pad)}${close}]`;
  }
  const keys = Object.keys(value);
  if (settings.sortKeys) keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return '{}';
  return `{${pad}${keys.map((key) => `${pythonJsonString(key, settings.ensureAscii)}${settings.key}${dumps(value[key]!, settings, depth + 1)}`).join(comma + pad)}${close}}`;
}

/**
 * Python's `json.dumps(value, ensure_ascii=…, sort_keys=…, indent=…, separators=…)`. Keys keep the
 * object's own order unless sorted (a JavaScript object lists integer-like keys first, whatever
 * order the JSON text had them in).
 */
export function pythonJsonDumps(value: PythonJsonValue, options: JsonDumpsOptions = {}): string {
  const indent = options.indent;
  // With an indent, Python drops the space after the comma (separators (',', ': ')).
  const [item, key] = options.separators ?? [indent === undefined ? ', ' : ',', ': '];
  return dumps(value, { ensureAscii: options.ensureAscii ?? true, sortKeys: options.sortKeys ?? false, indent, item, key }, 0);
}
