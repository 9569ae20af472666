import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonWithJinja2 } from '../support/python-jinja2.js';
import { PythonFloat, pythonFloatRepr, pythonJsonDumps } from '../../src/serialize/python-json.js';

const FLOATS = [
  0.5,
  1e-5,
  0.0001,
  123.456,
  1e16,
  1.5e16,
  9999999999999998,
  1e21,
  -2.5e-7,
  3.141592653589793,
  1e-4,
  12345678901234.5,
  0.1 + 0.2,
];

describe("Python's json.dumps, byte for byte", () => {
  it('writes floats as Python repr does', () => {
    expect(FLOATS.map((value) => pythonFloatRepr(value))).toEqual([
      '0.5',
      '1e-05',
      '0.0001',
      '123.456',
      '1e+16',
      '1.5e+16',
      '9999999999999998.0',
      '1e+21',
      '-2.5e-07',
      '3.141592653589793',
      '0.0001',
      '12345678901234.5',
      '0.30000000000000004',
    ]);
    expect(pythonJsonDumps([new PythonFloat(1), 1, 2.5])).toBe('[1.0, 1, 2.5]');
  });

  it('keeps key order and characters as they are with the SDK settings (ensure_ascii=False, sort_keys=False)', () => {
    const value = { b: 1, B: 2, a: { é: 'it\'s <x> && "q" \u007f\n' } };
    expect(pythonJsonDumps(value, { ensureAscii: false, sortKeys: false })).toBe(
      '{"b": 1, "B": 2, "a": {"é": "it\'s <x> && \\"q\\" \u007f\\n"}}',
    );
    expect(pythonJsonDumps(value, { sortKeys: true })).toBe('{"B": 2, "a": {"\\u00e9": "it\'s <x> && \\"q\\" \\u007f\\n"}, "b": 1}');
    expect(pythonJsonDumps({ a: [], b: {} }, { indent: 2 })).toBe('{\n  "a": [],\n  "b": {}\n}');
    expect(pythonJsonDumps({ a: [1, 2] }, { separators: [',', ':'] })).toBe('{"a":[1,2]}');
  });

  it.skipIf(pythonWithJinja2 === undefined)('agrees with Python on a mixed value, with and without ensure_ascii and sort_keys', () => {
    const value = { z: [1, 2.5, null, true, 'x\ty'], ü: { deep: 1e-5 }, "'q'": '</tools> && 𝄞 \u2028 \u0001', a: 'b' };
    const script = [
      'import json, sys',
      'v = json.loads(sys.argv[1])',
      'out = [json.dumps(v, ensure_ascii=a, sort_keys=s) for a in (False, True) for s in (False, True)]',
      'out.append(json.dumps(v, ensure_ascii=False, indent=2))',
      'sys.stdout.buffer.write("|".join(out).encode("utf-8", "surrogatepass"))',
    ].join('\n');
    const run = spawnSync(pythonWithJinja2!, ['-c', script, JSON.stringify(value)], { encoding: 'utf8' });
    const ours = [false, true].flatMap((ensureAscii) => [false, true].map((sortKeys) => pythonJsonDumps(value, { ensureAscii, sortKeys })));
    ours.push(pythonJsonDumps(value, { ensureAscii: false, indent: 2 }));
    expect(run.stdout).toBe(ours.join('|'));
  });
});
