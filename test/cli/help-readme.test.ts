/**
 * What `--help`, the docs pages and the code say agree (docs/design/05-defects-found.md#D12; pages
 * docs/install.md, docs/value-models.md, docs/harnesses.md, docs/sandboxes.md): the default selection strategy, the default model, where
 * harness CLIs go, what an image needs, which Node versions work, that every flag a documented
 * command line uses exists, commands that start at once, the README's Quick start, the docs index,
 * and a line when the server listens.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBenchCommand } from '../../src/cli/bench.js';
import { registerDemoCommand } from '../../src/cli/demo.js';
import { registerHarnessCommand } from '../../src/cli/harness.js';
import { registerInspectCommand } from '../../src/cli/inspect.js';
import { registerJobsCommand } from '../../src/cli/jobs.js';
import { tinyModelDir } from '../../src/cli/option-values.js';
import { registerPolicyCommand } from '../../src/cli/policy.js';
import { registerRerankCommand } from '../../src/cli/rerank.js';
import { registerRunCommand } from '../../src/cli/run.js';
import { registerSandboxCommand } from '../../src/cli/sandbox-run.js';
import { registerSandboxServeCommand } from '../../src/cli/sandbox-serve.js';
import { registerServeCommand } from '../../src/cli/serve.js';
import { registerSolveCommand } from '../../src/cli/solve.js';
import { registerTrainCommand } from '../../src/cli/train.js';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { defaultHarnessDir } from '../../src/rollout/harness/harness-install.js';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { defaultStrategy } from '../../src/select/index.js';
import { runCli, startServeProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');
const README = read('README.md');
const DOC_PAGES = readdirSync(join(REPO_ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort();
const doc = (name: string) => read(`docs/${name}`);
/** Text with its line wrapping undone. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

async function help(...command: string[]): Promise<string> {
  const run = await runCli([...command, '--help']);
  expect(run.code, run.stderr).toBe(0);
  return flat(run.stdout);
}

/** The shell code blocks of a Markdown file, continuation lines joined. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].map((match) => match[1]!.replace(/\\\n/g, ' '));
}

/** The program `src/cli/main.ts` builds, without parsing argv: registering loads only the light option modules. */
function program(): Command {
  const root = new Command('winnower');
  registerSolveCommand(root);
  registerRerankCommand(root);
  registerRunCommand(root);
  registerInspectCommand(root);
  registerServeCommand(root);
  registerDemoCommand(root);
  registerSandboxCommand(root);
  registerSandboxServeCommand(root.commands.find((command) => command.name() === 'sandbox')!);
  registerHarnessCommand(root);
  registerTrainCommand(root, tinyModelDir());
  registerBenchCommand(root);
  registerJobsCommand(root);
  registerPolicyCommand(root);
  return root;
}

interface Invocation {
  file: string;
  line: string;
  words: string[];
}

/** Every `node bin/winnower.js ...` and `npm run demo -- ...` command line in the README's and the docs' shell blocks. */
function documentedInvocations(): Invocation[] {
  const files = ['README.md', ...DOC_PAGES.map((name) => `docs/${name}`)];
  return files.flatMap((file) =>
    shellBlocks(read(file)).flatMap((block) =>
      block.split('\n').flatMap((line) => {
        // Quoted arguments (a test command, a JSON body) are values, never flags of ours.
        const code = line.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, 'VALUE').replace(/\s#\s.*$/, '');
        return [...code.matchAll(/(?:node bin\/winnower\.js|npm run demo --(?= ))((?:\s+[^\s|;&)]+)*)/g)].map((match) => {
          const words = match[1]!.trim().split(/\s+/).filter(Boolean);
          return { file, line: line.trim(), words: match[0].startsWith('npm') ? ['demo', ...words] : words };
        });
      }),
    ),
  );
}

describe('--help, the docs and the code agree', () => {
  it('on the default strategy without tests: robust with the bundled model (its default_strategy)', async () => {
    // The folder's selector.json decides; loading it does not need the ONNX model.
    expect(defaultStrategy(false, { selector: loadSelector(DEFAULT_MODEL_DIR()) })).toBe('robust');
    expect(flat(doc('value-models.md'))).toContain('and `/solve` without tests is `robust`');
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
    expect(flat(doc('harnesses.md'))).toContain(
      "`$WINNOWER_HARNESS_DIR`, else `/var/cache/winnower/harnesses` when running as root (the local sandbox drops root, and root's home is closed to other users), else `~/.cache/winnower/harnesses`",
    );
  });

  it('on what an image needs (the patch and diff scripts run mktemp in it)', () => {
    const local = read('src/sandbox/providers/local/sandbox.ts');
    expect(local).toContain('mktemp');
    expect(flat(doc('sandboxes.md'))).toContain('image with `sh` or `bash`, and `git` and `mktemp` for diffs and patches');
  });

  it('on Node versions: the engines field, and that nothing needs 22 (issue 27 item 26)', () => {
    const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
    const minimum = /^>=(\d+\.\d+)$/.exec(manifest.engines.node)?.[1];
    expect(minimum).toBeDefined();
    expect(README).toContain(`Node.js ≥ ${minimum}`);
    const install = flat(doc('install.md'));
    expect(install).toContain(`Node.js ≥ ${minimum}`);
    const cookie = JSON.parse(read('node_modules/cookie/package.json')) as { version: string; engines: { node: string } };
    expect(install).toContain(`\`cookie@${cookie.version}\``);
    const claude = parseYaml(read('config/harnesses/claude-code.yaml')) as { source: { version: string } };
    expect(install).toContain(
      `The \`claude-code\` harness (${claude.source.version}) declares Node ≥ 22 in its package, but it runs on Node 20`,
    );
    expect(install).not.toMatch(/run it with Node 22|Node 22 for/);
  });

  it('on flags: every flag a documented command line passes exists in that command', () => {
    const root = program();
    const invocations = documentedInvocations();
    // The README's examples and the pages' command blocks: far more than a handful.
    expect(invocations.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const { file, line, words } of invocations) {
      let command = root;
      let rest = words;
      for (;;) {
        const next = command.commands.find((sub) => sub.name() === rest[0]);
        if (next === undefined) break;
        command = next;
        rest = rest.slice(1);
      }
      if (command === root) {
        problems.push(`${file}: no such command in \`${line}\``);
        continue;
      }
      const end = rest.indexOf('--');
      for (const word of end === -1 ? rest : rest.slice(0, end)) {
        if (!/^-{1,2}[a-z]/i.test(word)) continue;
        const flag = word.replace(/=.*$/, '');
        const known = flag === '--help' || command.options.some((option) => option.long === flag || option.short === flag);
        if (!known) problems.push(`${file}: \`${command.name()}\` has no ${flag} (\`${line}\`)`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('on what rerank --cross-fit writes: --out, --scores and --report, as docs/training.md says', () => {
    const rerank = program().commands.find((command) => command.name() === 'rerank')!;
    const crossFit = flat(rerank.options.find((option) => option.long === '--cross-fit')!.description);
    expect(crossFit).not.toContain('writes nothing else');
    expect(crossFit).toMatch(/--out.*--scores.*--report/);
    expect(flat(doc('training.md'))).toMatch(/writes the out-of-fold pick per instance to `--out`/);
  });

  it("on commands that start at once: no `npx winnower` (it re-runs the build) in the README's or the docs' commands", () => {
    for (const file of ['README.md', ...DOC_PAGES.map((name) => `docs/${name}`)]) {
      expect(shellBlocks(read(file)).join('\n'), file).not.toMatch(/^\s*npx winnower /m);
    }
  });
});

describe('the README and the docs index', () => {
  it('holds the two Quick start commands near the top, in a shell block of its Quick start', () => {
    const start = README.indexOf('\n## Quick start\n');
    expect(start).toBeGreaterThan(-1);
    expect(README.slice(0, start).split('\n').length).toBeLessThan(30);
    const end = README.indexOf('\n## ', start + 1);
    const quickStart = shellBlocks(README.slice(start, end === -1 ? undefined : end)).join('\n');
    expect(quickStart).toMatch(/^npm ci && npm run demo\b/m);
    expect(quickStart).toMatch(/^npm ci && npm test\b/m);
  });

  it('stays at most 200 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(201);
  });

  it('links every page in docs/ from the README, and docs/README.md names each one, one line each', () => {
    const index = doc('README.md');
    for (const page of DOC_PAGES.filter((name) => name !== 'README.md')) {
      expect(index, `docs/README.md lists ${page}`).toMatch(
        new RegExp(`^- \\[${page.replace('.', '\\.')}\\]\\(${page.replace('.', '\\.')}\\)`, 'm'),
      );
      expect(README, `README.md links docs/${page}`).toContain(`(docs/${page})`);
    }
    expect(README).toContain('(docs/README.md)');
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
