/**
 * JSON exactly as Python Jinja2's `tojson` filter writes it: `json.dumps(value, sort_keys=True)`
 * (ASCII only, `", "` and `": "` separators, keys in code-point order, Python's float repr), then
 * `<`, `>`, `&` and `'` escaped as `\u003c`-style sequences. A model whose training input was
 * rendered by plain Jinja2 (the OpenHands SDK renders the critic's tool definitions this way) must
 * get these bytes, not JavaScript's `JSON.stringify` nor transformers' `tojson`.
 */

export type PythonJsonValue = null | boolean | number | string | PythonJsonValue[] | { [key: string]: PythonJsonValue } | PythonFloat;

/** A number Python holds as a float even when it is whole (`1.0`), where JavaScript cannot tell. */
export class PythonFloat {
  constructor(readonly value: number) {}
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** `json.dumps` of a str with `ensure_ascii=True`: every code unit outside printable ASCII as `\uXXXX`. */
export function pythonJsonString(text: string): string {
  let out = '"';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    const code = text.charCodeAt(index);
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) out += short;
    else if (code >= 0x20 && code <= 0x7e) out += char;
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

function dumps(value: PythonJsonValue, indent: number | undefined, depth: number): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (typeof value === 'string') return pythonJsonString(value);
  const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (depth + 1))}`;
  const close = indent === undefined ? '' : `\n${' '.repeat(indent * depth)}`;
  // With an indent, Python drops the space after the comma (separators (',', ': ')).
  const comma = indent === undefined ? ', ' : ',';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${pad}${value.map((item) => dumps(item, indent, depth + 1)).join(comma + pad)}${close}]`;
  }
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return '{}';
  return `{${pad}${keys.map((key) => `${pythonJsonString(key)}: ${dumps(value[key]!, indent, depth + 1)}`).join(comma + pad)}${close}}`;
}

/** Jinja2's `tojson` (its default policy `sort_keys=True`, HTML-safe), optionally indented. */
export function jinja2ToJson(value: PythonJsonValue, indent?: number): string {
  return dumps(value, indent, 0).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/'/g, '\\u0027');
}
