import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonWithJinja2 } from '../../support/python-jinja2.js';
import { jinja2ToJson, PythonFloat, pythonFloatRepr } from '../../../src/rerank/serialize/python-json.js';

const FLOATS = [0.5, 1e-5, 0.0001, 123.456, 1e16, 1.5e16, 9999999999999998, 1e21, -2.5e-7, 3.141592653589793, 1e-4, 12345678901234.5, 0.1 + 0.2];


describe("Jinja2's tojson, byte for byte", () => {
  it('writes floats as Python repr does', () => {
    expect(FLOATS.map((value) => pythonFloatRepr(value))).toEqual(['0.5', '1e-05', '0.0001', '123.456', '1e+16', '1.5e+16', '9999999999999998.0', '1e+21', '-2.5e-07', '3.141592653589793', '0.0001', '12345678901234.5', '0.30000000000000004']);
    expect(jinja2ToJson([new PythonFloat(1), 1, 2.5])).toBe('[1.0, 1, 2.5]');
  });

  it('sorts keys by code point, escapes to ASCII and makes <, >, & and \' HTML-safe', () => {
    expect(jinja2ToJson({ b: 1, B: 2, a: { 'é': "it's <x> & \u007f\n" } })).toBe('{"B": 2, "a": {"\\u00e9": "it\\u0027s \\u003cx\\u003e \\u0026 \\u007f\\n"}, "b": 1}');
    expect(jinja2ToJson({ a: [], b: {} }, 2)).toBe('{\n  "a": [],\n  "b": {}\n}');
  });

  it.skipIf(pythonWithJinja2 === undefined)('agrees with Python Jinja2 on a mixed value', () => {
    const value = { z: [1, 2.5, null, true, 'x\ty'], 'ü': { deep: 1e-5 }, "'q'": '</tools> 𝄞 \u2028' };
    const script = `import jinja2, json, sys; v = json.loads(sys.argv[1]); sys.stdout.write(str(jinja2.Environment().from_string("{{ v | tojson }}|{{ v | tojson(indent=2) }}").render(v=v)))`;
    const run = spawnSync(pythonWithJinja2!, ['-c', script, JSON.stringify(value)], { encoding: 'utf8' });
    expect(run.stdout).toBe(`${jinja2ToJson(value)}|${jinja2ToJson(value, 2)}`);
  });
});
