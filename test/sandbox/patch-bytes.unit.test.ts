import { describe, expect, it } from 'vitest';
import { decodePatch, encodePatch, isUtf8Patch, patchForJson } from '../../src/sandbox/patch-bytes.js';

describe('patch bytes', () => {
  it('decodes valid UTF-8 as text, unchanged', () => {
    const text = '+héllo wörld — 日本 🙂\n';
    const patch = decodePatch(Buffer.from(text));
    expect(patch).toBe(text);
    expect(isUtf8Patch(patch)).toBe(true);
    expect(encodePatch(patch)).toEqual(Buffer.from(text));
  });

  it('round-trips bytes that are not UTF-8 (Latin-1, overlongs, surrogates, truncated sequences)', () => {
    const samples = [
      Buffer.from('+caf\xe9\n', 'latin1'),
      Buffer.from([0xc0, 0xaf, 0x41, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xe2, 0x82]),
      Buffer.concat([Buffer.from('ok 🙂 '), Buffer.from([0xff, 0xfe]), Buffer.from(' ünïcode')]),
      Buffer.from(Array.from({ length: 256 }, (_, index) => index)),
    ];
    for (const bytes of samples) {
      const patch = decodePatch(bytes);
      expect(isUtf8Patch(patch)).toBe(false);
      expect(patch).not.toContain('\ufffd');
      expect(encodePatch(patch)).toEqual(bytes);
    }
    // The valid parts stay readable text.
    expect(decodePatch(Buffer.from('+caf\xe9\n', 'latin1'))).toBe('+caf\udce9\n');
  });

  it('survives JSON (the store keeps trajectories as JSON text)', () => {
    const bytes = Buffer.from('+caf\xe9\n', 'latin1');
    const stored = JSON.stringify({ patch: decodePatch(bytes) });
    expect(encodePatch((JSON.parse(stored) as { patch: string }).patch)).toEqual(bytes);
  });

  it('hands a patch to JSON clients as text when it is UTF-8, as base64 with patch_encoding otherwise', () => {
    expect(patchForJson('+ok\n')).toEqual({ patch: '+ok\n' });
    const bytes = Buffer.from('+caf\xe9\n', 'latin1');
    expect(patchForJson(decodePatch(bytes))).toEqual({ patch: bytes.toString('base64'), patch_encoding: 'base64' });
  });
});
