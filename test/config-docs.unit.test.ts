import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC, renderConfigDocs } from '../scripts/gen-config-docs.js';
import { CONFIG_ENV } from '../src/config.js';
import { ScorerConfig } from '../src/scoring/registry.js';

describe('docs/configuration.md', () => {
  const page = renderConfigDocs();

  it('is what the schemas render today', () => {
    expect(readFileSync(CONFIG_DOC, 'utf8'), 'docs/configuration.md is out of date: run npm run docs:config').toBe(page);
  });

  it('names every scorer key and every WINNOWER_* variable as users write them', () => {
    for (const key of ['timeout_ms', 'max_input_tokens', 'cache_entries', 'intra_op_threads', 'max_batch_size', 'window_ms']) {
      expect(page).toContain(`| \`${key}\` |`);
    }
    expect(Object.keys(ScorerConfig.shape).length).toBeGreaterThan(20);
    for (const { name, key } of CONFIG_ENV) expect(page).toContain(`| \`${name}\` | \`${key}\` |`);
    // The table shows the snake_case keys only; camelCase appears in the deprecation table alone.
    const keysPart = page.slice(page.indexOf('## Keys'), page.indexOf('## Environment variables'));
    expect(keysPart).not.toMatch(/\| `[a-z]+[A-Z]\w*` \|/);
  });

  it('lists each old spelling with its code and its new name', () => {
    expect(page).toContain('| `scorer.timeoutMs` | `scorer.timeout_ms` | `WNW_DEP001` |');
    expect(page).toContain('| `scorer.batching.windowMs` | `scorer.batching.window_ms` | `WNW_DEP001` |');
    expect(page).toContain('| `sandbox.settings.baseUrl` | `sandbox.settings.base_url` | `WNW_DEP002` | orchard |');
    expect(page).toContain('| `sandbox.settings.patch.maxBytes` | `sandbox.settings.patch.max_bytes` | `WNW_DEP002` |');
  });
});
