/** The bench's own server reads its config without a deprecation warning: it writes the documented keys. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Deprecation } from '../../src/config-keys.js';
import { BENCH_BATCHING } from '../../src/loadgen/run-bench.js';
import { selfServerConfig, startSelfServer } from '../../src/loadgen/self-server.js';

describe('the bench server config', () => {
  it('loads with batching, a remote backend and a key, and no deprecation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-selfcfg-'));
    const file = join(dir, 'config.json');
    const scorer = { backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:9'], retries: 0, batching: BENCH_BATCHING, api_key: 'k' };
    writeFileSync(file, JSON.stringify(selfServerConfig({ scorer, maxRunningJobs: 8 }, join(dir, 'data'), 1234)));
    const deprecations: Deprecation[] = [];
    const config = loadConfig({ file, env: {}, onDeprecation: (d) => deprecations.push(d) });
    expect(deprecations.map((d) => d.oldKey)).toEqual([]);
    expect(config.scorer.batching).toMatchObject({ maxBatchSize: 16, windowMs: 5 });
    expect(config.scorer.cacheEntries).toBe(0);
  });
});

describe('the bench server pinned to CPUs', () => {
  it('refuses a CPU list taskset would not take, naming the field, before anything starts', async () => {
    for (const cpus of ['', 'a', '0,', '0;rm -rf /', '1-'])
      await expect(startSelfServer({ scorer: {}, cpus })).rejects.toMatchObject({
        code: 'WNW_ERR_CFG_INVALID',
        details: { field: 'cpus' },
      });
  });
});
