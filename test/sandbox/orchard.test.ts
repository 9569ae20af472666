import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOrchardProvider, type OrchardProviderSettings } from '../../src/sandbox/providers/orchard/provider.js';
import type { OrchardSandbox } from '../../src/sandbox/providers/orchard/sandbox.js';
import type { Sandbox, SandboxProvider } from '../../src/sandbox/types.js';
import { createRepoImage, FakeOrchard } from '../fakes/fake-orchard.js';
import { makeContractRepo, runSandboxContract } from './contract.js';
import { expectCode } from '../support/expect-code.js';

const IMAGE = 'swebench/sweb.eval.x86_64.demo__demo-1';
const CONTRACT_IMAGE = 'contract-image';
const contractImage = mkdtempSync(join(tmpdir(), 'orchard-contract-image-'));
makeContractRepo(join(contractImage, 'testbed'));

let image: string;
let fake: FakeOrchard;
let provider: SandboxProvider;

beforeAll(async () => {
  image = await createRepoImage({
    'a.py': 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n',
    'b.txt': 'bee\n',
    'data.bin': Buffer.from([0, 1, 2, 3, 255, 254]),
  });
  fake = await FakeOrchard.start({ images: { [IMAGE]: image, [CONTRACT_IMAGE]: contractImage }, retryAfter: '0' });
});

afterAll(async () => {
  await fake.close();
  await rm(image, { recursive: true, force: true });
  await rm(contractImage, { recursive: true, force: true });
});

afterEach(async () => {
  await provider?.close();
});

function makeProvider(settings: OrchardProviderSettings = {}): SandboxProvider {
  provider = createOrchardProvider({
    baseUrl: fake.url,
    apiKey: 'test-key',
    requestTimeoutMs: 5_000,
    heartbeatIntervalMs: 0,
    retries: 2,
    ...settings,
  });
  return provider;
}

let contractProvider: SandboxProvider | undefined;
runSandboxContract({
  name: 'orchard (fake Orchard Env)',
  create: async (settings) => {
    if (settings)
      return {
        provider: createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0, ...settings }),
        spec: { image: CONTRACT_IMAGE },
      };
    contractProvider ??= createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 });
    return { provider: contractProvider, spec: { image: CONTRACT_IMAGE } };
  },
});

describe('orchard provider: create', () => {
  it('does no I/O until first use', async () => {
    const before = fake.requests.length;
    createOrchardProvider({ baseUrl: 'http://127.0.0.1:9' });
    makeProvider();
    expect(fake.requests.length).toBe(before);
  });

  it('creates with the documented body, waits until ready and records the base commit', async () => {
    const sandbox = (await makeProvider().create({ image: IMAGE, cpu: 2, memoryMb: 512 })) as OrchardSandbox;
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path === '/sandboxes').at(-1);
    expect(post?.headers['x-api-key']).toBe('test-key');
    expect(post?.body).toMatchObject({ image: IMAGE, block_network: true, cpu: '2', memory: '512Mi', timeout: 600 });
    expect((post?.body as { sandbox_id: string }).sandbox_id).toMatch(/^wnw-[0-9a-f]{12}$/);
    expect(fake.count('GET', new RegExp(`^/sandboxes/${sandbox.id}/wait$`))).toBeGreaterThanOrEqual(1);
    expect(sandbox.workdir).toBe('/testbed');
    expect(sandbox.baseCommit).toMatch(/^[0-9a-f]{40}$/);
    await sandbox.close();
  });

  it('asks for network and fractional cpu as millicores when the spec says so', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE, network: true, cpu: 0.5 });
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path === '/sandboxes').at(-1);
    expect(post?.body).toMatchObject({ block_network: false, cpu: '500m' });
    await sandbox.close();
  });

  it('needs an image', async () => {
    await expectCode(makeProvider().create({ repo: { path: '/tmp/x' } }), 'WNW_ERR_SBX_UNSUPPORTED');
  });

  it('reports what is in force', async () => {
    const description = await makeProvider().describe();
    expect(description).toMatchObject({ provider: 'orchard', workdir: '/testbed', health: 'healthy', apiKey: 'set' });
    expect(description.fork).toMatch(/^replay: Orchard Env has no snapshot API/);
  });
});

describe('orchard provider: exec', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 }).create({
      image: IMAGE,
      env: { FROM_SPEC: 'spec' },
    });
  });
  afterAll(async () => sandbox.close());

  it('sends one quoted command string with wait, cwd and env, and returns the result', async () => {
    const result = await sandbox.exec(`printf '%s|%s|%s' "$FROM_SPEC" "$FROM_CALL" "it's"; echo err >&2; exit 3`, {
      env: { FROM_CALL: 'call' },
    });
    expect(result).toMatchObject({ exitCode: 3, stdout: "spec|call|it's", stderr: 'err\n', timedOut: false, truncated: false });
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/exec')).at(-1);
    // The agent's timeout is a backstop past our own `timeout` wrapper (120 s + 5 s kill grace + 10 s).
    expect(post?.body).toMatchObject({ wait: true, cwd: '/testbed', env: { FROM_SPEC: 'spec', FROM_CALL: 'call' }, timeout_seconds: 135 });
    expect(post?.body).not.toHaveProperty('login_shell');
    const sent = (post?.body as { command: unknown }).command;
    expect(typeof sent).toBe('string');
    expect(sent).toContain(`timeout -k 5 120 bash -c '`);
  });

  it('runs in the workdir, or a cwd relative to it', async () => {
    expect((await sandbox.exec('ls a.py')).stdout).toBe('a.py\n');
    await sandbox.writeFile('sub/x.txt', 'x');
    expect((await sandbox.exec('cat x.txt', { cwd: 'sub' })).stdout).toBe('x');
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/exec')).at(-1);
    expect(post?.body).toMatchObject({ cwd: '/testbed/sub' });
  });

  it('feeds stdin from an uploaded file that the command never sees', async () => {
    const result = await sandbox.exec('cat; ls -a | grep -c winnower || true', { stdin: 'hello\nworld\n' });
    expect(result.stdout).toBe('hello\nworld\n0\n');
  });

  it('reports a command killed at its timeout as timedOut with no exit code, output kept and the pod alive', async () => {
    const result = await sandbox.exec('echo before; sleep 10', { timeoutMs: 1_000 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true, stdout: 'before\n', stderr: '' });
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/exec')).at(-1);
    expect(post?.body).toMatchObject({ timeout_seconds: 16 });
    expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
  });

  it('keeps a command that exits 124 by itself apart from a timeout', async () => {
    expect(await sandbox.exec('exit 124')).toMatchObject({ exitCode: 124, timedOut: false });
  });

  it('caps each stream on our side and says so', async () => {
    const result = await sandbox.exec("head -c 5000 /dev/zero | tr '\\0' a; head -c 10 /dev/zero | tr '\\0' b >&2", {
      maxOutputBytes: 1000,
    });
    expect(result.stdout).toBe('a'.repeat(1000));
    expect(result.stderr).toBe('b'.repeat(10));
    expect(result.truncated).toBe(true);
  });

  it('throws WNW_ERR_OP_ABORTED when the signal fires', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await expectCode(sandbox.exec('sleep 3', { signal: controller.signal }), 'WNW_ERR_OP_ABORTED');
  });
});

describe('orchard provider: files, diff and patches', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 }).create({ image: IMAGE });
  });
  afterAll(async () => sandbox.close());

  it('writes and reads files in base64, relative to the workdir', async () => {
    const bytes = new Uint8Array([0, 10, 13, 200, 255]);
    await sandbox.writeFile('new/dir/blob.bin', bytes);
    expect(await sandbox.readFile('/testbed/new/dir/blob.bin')).toEqual(bytes);
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/files')).at(-1);
    expect(post?.body).toEqual({ path: '/testbed/new/dir/blob.bin', content: Buffer.from(bytes).toString('base64') });
    expect(await readFile(join(fake.rootOf(sandbox.id), 'testbed/new/dir/blob.bin'))).toEqual(Buffer.from(bytes));
  });

  it('lists a directory', async () => {
    const entries = await sandbox.listFiles('.');
    expect(entries).toEqual(
      expect.arrayContaining([
        { name: 'a.py', type: 'file', size: 49 },
        { name: '.git', type: 'directory', size: expect.any(Number) },
      ]),
    );
  });

  it('a missing file is WNW_ERR_SBX_FILE with the request id', async () => {
    const error = await expectCode(sandbox.readFile('nope.txt'), 'WNW_ERR_SBX_FILE');
    expect(error.message).toMatch(/\/testbed\/nope\.txt.*\(request id req-\d+\)/);
    expect(error.details).toMatchObject({ status: 404, requestId: expect.stringMatching(/^req-/) });
    await expectCode(sandbox.listFiles('nope'), 'WNW_ERR_SBX_FILE');
    await expectCode(sandbox.readFile('.'), 'WNW_ERR_SBX_FILE');
  });

  it('diffs against the base commit with untracked files, binary changes left out, leaving the index alone', async () => {
    await sandbox.exec(
      "sed -i 's/^two$/TWO/' a.py && printf 'fresh\\n' > untracked.txt && printf '\\x00\\x01\\x09' > data.bin && rm b.txt",
    );
    await sandbox.exec('git -c user.name=a -c user.email=a@b commit -qam "agent commit"');
    const diff = await sandbox.diff();
    expect(diff).toContain('diff --git a/a.py b/a.py');
    expect(diff).toContain('+TWO');
    expect(diff).toContain('diff --git a/untracked.txt b/untracked.txt');
    expect(diff).toContain('deleted file mode');
    expect(diff).not.toContain('data.bin');
    expect((await sandbox.exec('git status --porcelain -- untracked.txt')).stdout).toBe('?? untracked.txt\n');
  });

  it('applies a diff in another sandbox so that both diffs match', async () => {
    const diff = await sandbox.diff();
    const other = await createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 }).create({ image: IMAGE });
    try {
      await other.applyPatch(diff);
      expect(await other.diff()).toBe(diff);
      expect(new TextDecoder().decode(await other.readFile('untracked.txt'))).toBe('fresh\n');
      expect((await other.exec('ls -a | grep -c winnower-patch || true')).stdout).toBe('0\n');
      expect(fake.count('POST', /\/apply_patch$/)).toBe(0);
      await other.applyPatch('');
    } finally {
      await other.close();
    }
  });

  it('names the rejected hunk when a patch does not apply', async () => {
    const patch = [
      'diff --git a/a.py b/a.py',
      '--- a/a.py',
      '+++ b/a.py',
      '@@ -1,3 +1,3 @@',
      ' one',
      '-TWO',
      '+2',
      ' three',
      '@@ -8,3 +8,3 @@',
      ' eight',
      '-NINE',
      '+9',
      ' ten',
      '',
    ].join('\n');
    const error = await expectCode(sandbox.applyPatch(patch), 'WNW_ERR_SBX_PATCH');
    expect(error.message).toBe('patch does not apply: hunk 2 of a.py (line 8) rejected');
    expect(error.details).toMatchObject({ file: 'a.py', line: 8, hunk: 2 });
    expect((await sandbox.exec('grep -c TWO a.py')).stdout).toBe('1\n');
    expect((await sandbox.exec('ls -a | grep -c winnower-patch || true')).stdout).toBe('0\n');
  });

  it('uses the spec base commit when given', async () => {
    const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: join(image, 'testbed'), encoding: 'utf8' }).trim();
    const other = (await createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 }).create({
      image: IMAGE,
      repo: { name: 'demo/demo', base_commit: base },
    })) as OrchardSandbox;
    try {
      expect(other.baseCommit).toBe(base);
      expect(fake.count('POST', new RegExp(`^/sandboxes/${other.id}/exec$`))).toBe(0);
      expect(await other.diff()).toBe('');
    } finally {
      await other.close();
    }
  });
});

describe('orchard provider: login shell and activation', () => {
  const BASHRC = 'case $- in *i*) ;; *) return;; esac\nexport FROM_BASHRC=conda-testbed\n';

  it('loginShell runs an interactive login bash itself, never the agent login_shell, and keeps stderr whole', async () => {
    const sandbox = await makeProvider({ loginShell: true }).create({ image: IMAGE });
    await writeFile(join(fake.rootOf(sandbox.id), 'root/.bashrc'), BASHRC);
    const result = await sandbox.exec(`echo "$FROM_BASHRC"; python3 -c 'raise ValueError("boom")'`);
    expect(result.stdout).toBe('conda-testbed\n');
    expect(result.stderr).toMatch(/^Traceback \(most recent call last\):\n[^]*\nValueError: boom\n$/);
    expect(lastExecBody(sandbox.id)).not.toHaveProperty('login_shell');
    await sandbox.diff();
    expect(lastExecBody(sandbox.id).command).not.toContain('--login');
    await sandbox.close();
  });

  it('activate runs before every user command in the same shell', async () => {
    const sandbox = await makeProvider({ activate: 'export ACTIVATED=testbed; cd /tmp' }).create({ image: IMAGE });
    expect((await sandbox.exec('echo "$ACTIVATED $PWD"')).stdout).toBe('testbed /tmp\n');
    expect((await sandbox.exec('echo one >&2; echo; echo two >&2')).stderr).toBe('one\ntwo\n');
    await sandbox.close();
  });
});

function lastExecBody(id: string): Record<string, unknown> {
  return fake.requests.filter((request) => request.method === 'POST' && request.path === `/sandboxes/${id}/exec`).at(-1)?.body as Record<
    string,
    unknown
  >;
}

describe('orchard provider: lifecycle', () => {
  it('sends heartbeats while open and stops on close', async () => {
    const sandbox = (await makeProvider({ heartbeatIntervalMs: 40 }).create({ image: IMAGE })) as OrchardSandbox;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(fake.heartbeats.get(sandbox.id)).toBeGreaterThanOrEqual(2);
    expect(sandbox.heartbeat.sent).toBeGreaterThanOrEqual(2);
    await sandbox.close();
    const count = fake.heartbeats.get(sandbox.id);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(fake.heartbeats.get(sandbox.id)).toBe(count);
  });

  it('deletes on close, once, and refuses calls afterwards', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    await Promise.all([sandbox.close(), sandbox.close()]);
    await sandbox.close();
    expect(fake.count('DELETE', new RegExp(`^/sandboxes/${sandbox.id}$`))).toBe(1);
    expect(fake.sandboxes.has(sandbox.id)).toBe(false);
    await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_CLOSED');
  });

  it('provider.close() deletes what is still open', async () => {
    const p = makeProvider();
    const [one, two] = await Promise.all([p.create({ image: IMAGE }), p.create({ image: IMAGE })]);
    await p.close();
    expect(fake.deleted).toEqual(expect.arrayContaining([one?.id, two?.id]));
    await expectCode(p.create({ image: IMAGE }), 'WNW_ERR_SBX_CLOSED');
  });

  it('reads SANDBOX_BASE_URL and SANDBOX_API_KEY', async () => {
    const saved = { url: process.env.SANDBOX_BASE_URL, key: process.env.SANDBOX_API_KEY };
    process.env.SANDBOX_BASE_URL = fake.url;
    process.env.SANDBOX_API_KEY = 'test-key';
    try {
      provider = createOrchardProvider({ heartbeatIntervalMs: 0 });
      const sandbox = await provider.create({ image: IMAGE });
      await sandbox.close();
    } finally {
      for (const [name, value] of [
        ['SANDBOX_BASE_URL', saved.url],
        ['SANDBOX_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('orchard provider: answer size', () => {
  it('drops an answer larger than its limit unread (a command printing too much, a huge file) and names the request id', async () => {
    const sandbox = await makeProvider({ maxResponseBytes: 256 * 1024 }).create({ image: IMAGE });
    try {
      const error = await expectCode(
        sandbox.exec("head -c 3000000 /dev/zero | tr '\\0' a", { maxOutputBytes: 1024 }),
        'WNW_ERR_SBX_UPSTREAM',
      );
      expect(error.message).toMatch(/larger than 262144 bytes.*request id/);
      expect(error.details).toMatchObject({ tooLarge: true });
      // Within the limit, the exec's own cap still truncates.
      const small = await sandbox.exec("head -c 20000 /dev/zero | tr '\\0' a", { maxOutputBytes: 1024 });
      expect(small).toMatchObject({ exitCode: 0, truncated: true });
      expect(small.stdout).toHaveLength(1024);
      // An exec whose own cap is larger gets room for it.
      expect((await sandbox.exec("head -c 300000 /dev/zero | tr '\\0' a", { maxOutputBytes: 300_000 })).stdout).toHaveLength(300_000);
      await sandbox.writeFile('big.bin', new Uint8Array(300_000));
      await expectCode(sandbox.readFile('big.bin'), 'WNW_ERR_SBX_UPSTREAM');
    } finally {
      await sandbox.close();
    }
  });
});

describe('orchard provider: close during create', () => {
  it('deletes a sandbox whose creation finishes after the provider closed, instead of handing it out', async () => {
    const closing = makeProvider();
    const creating = closing.create({ image: IMAGE });
    await closing.close();
    const error = await expectCode(creating, 'WNW_ERR_SBX_CLOSED');
    expect(error.message).toContain('closed while');
    const id = (
      fake.requests.filter((request) => request.method === 'POST' && request.path === '/sandboxes').at(-1)?.body as { sandbox_id: string }
    ).sandbox_id;
    expect(fake.deleted).toContain(id);
  });
});
