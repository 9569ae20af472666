/**
 * What `--help` and the README say agrees with each other and with the code (defects-found.md D12):
 * the default selection strategy, the default model, where harness CLIs go, what an image needs,
 * which Node versions work, commands that start at once, and a line when the server listens.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { defaultHarnessDir } from '../../src/rollout/harness/harness-install.js';
import { createScorer } from '../../src/scoring/registry.js';
import { defaultStrategy } from '../../src/select/index.js';
import { runCli, startServeProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
/** Help text with its line wrapping undone. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

async function help(...command: string[]): Promise<string> {
  const run = await runCli([...command, '--help']);
  expect(run.code, run.stderr).toBe(0);
  return flat(run.stdout);
}

describe('README, --help and the code agree', () => {
  it('on the default strategy without tests: robust with the bundled model (its default_strategy)', async () => {
    const scorer = await createScorer({ backend: 'onnx', model: DEFAULT_MODEL_DIR() });
    try {
      expect(defaultStrategy(false, scorer)).toBe('robust');
    } finally {
      await scorer.close();
    }
    expect(flat(README)).toContain('and `/solve` without tests is `robust`');
    const solve = await help('solve');
    expect(solve).toMatch(
      /--strategy <name> value \| consensus \| hybrid \| learned \| robust \(default: hybrid with tests; without, .*\(robust for the bundled models\/winnower-value\)/,
    );
  });

  it('on the default model of rerank: models/winnower-value, not the tiny model', async () => {
    expect(DEFAULT_MODEL_DIR()).toMatch(/models\/winnower-value$/);
    const rerank = await help('rerank');
    expect(rerank).toContain('models/winnower-value');
    expect(rerank).not.toMatch(/tiny/i);
  });

  it('on where harness CLIs are installed', async () => {
    expect(defaultHarnessDir({})).toBe(
      process.getuid?.() === 0 ? '/var/cache/winnower/harnesses' : expect.stringMatching(/\.cache\/winnower\/harnesses$/),
    );
    expect(await help('harness', 'install')).toContain('/var/cache/winnower/harnesses as root, else ~/.cache/winnower/harnesses');
    expect(README).toContain(
      'harness install pi claude-code   # pinned, into /var/cache/winnower/harnesses as root, else ~/.cache/winnower/harnesses',
    );
  });

  it('on what an image needs (the patch and diff scripts run mktemp in it)', () => {
    const local = readFileSync(join(REPO_ROOT, 'src/sandbox/providers/local/sandbox.ts'), 'utf8');
    expect(local).toContain('mktemp');
    expect(flat(README)).toContain('image with `sh` or `bash`, and `git` and `mktemp` for diffs and patches');
  });

  it('on Node versions: the engines field, and what needs 22', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const minimum = /^>=(\d+\.\d+)$/.exec(manifest.engines.node)?.[1];
    expect(README).toContain(`Node.js ≥ ${minimum}`);
    const cookie = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/cookie/package.json'), 'utf8')) as {
      version: string;
      engines: { node: string };
    };
    expect(flat(README)).toContain(`\`cookie@${cookie.version}\``);
    expect(flat(README)).toMatch(/The `claude-code` harness \(\d[\d.]*\) declares Node ≥ 22/);
  });

  it("on commands that start at once: no `npx winnower` (it re-runs the build) in the README's commands", () => {
    const blocks = [...README.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks.join('\n')).not.toMatch(/^\s*npx winnower /m);
  });
});

describe('winnower serve', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-listen-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints one plain line when it listens, whatever the log level', async () => {
    const server = startServeProcess(dataDir, { WINNOWER_LOG_LEVEL: 'warn' });
    try {
      // startServeProcess waits for fastify's own info line, which log level warn hides: wait for ours.
      let address: string | undefined;
      for (let attempt = 0; attempt < 600 && address === undefined; attempt += 1) {
        address = /winnower: listening on (http:\/\/\S+)/.exec(server.output())?.[1];
        if (address === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(address, server.output()).toBeDefined();
      const health = await request(`${address}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 90_000);
});
