/** `loadTokenizer`: counts and ids are the text's own, whatever the tokenizer.json asks for. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTokenizer } from '../../src/serialize/tokenizer.js';

const MODEL_DIR = new URL('../../models/tiny-value/', import.meta.url).pathname;
const TEXTS = ['the patch fixes the bug in the parser and adds a test for it, with a few more words after that', 'short', ''];

describe('loadTokenizer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-tokenizer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ignores truncation and padding saved in tokenizer.json (winnower cuts and pads itself)', async () => {
    const json = JSON.parse(readFileSync(join(MODEL_DIR, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
    json.truncation = { direction: 'Right', max_length: 8, strategy: 'LongestFirst', stride: 0 };
    json.padding = {
      strategy: 'BatchLongest',
      direction: 'Right',
      pad_to_multiple_of: null,
      pad_id: 0,
      pad_type_id: 0,
      pad_token: '[PAD]',
    };
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
    const reference = await loadTokenizer(MODEL_DIR);
    const configured = await loadTokenizer(dir);
    const expected = await reference.encode(TEXTS);
    expect(expected[0]!.length).toBeGreaterThan(8);
    expect(await configured.encode(TEXTS)).toEqual(expected);
    expect(await configured.countTokens(TEXTS)).toEqual(expected.map((ids) => ids.length));
  });

  it('counts tokens exactly as encode does', async () => {
    const tokenizer = await loadTokenizer(MODEL_DIR);
    const encoded = await tokenizer.encode(TEXTS);
    expect(await tokenizer.countTokens(TEXTS)).toEqual(encoded.map((ids) => ids.length));
    expect(await tokenizer.countTokens([])).toEqual([]);
  });
});
