/**
 * TEST DOUBLE. A Sandbox that is no sandbox: each instance is a throw-away `git clone` of a local
 * repository in a temp directory, and exec runs `bash -c` there with child_process, with no
 * isolation at all. It implements the Sandbox contract closely enough for verifyCandidate's tests
 * (timeouts kill the process group, abort signals, an output cap, `git apply` with
 * WNW_ERR_SBX_PATCH, closed-state checks) and records what was called. The real local provider is
 * src/sandbox/providers/local/provider.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { wnwError } from '../../src/errors.js';
import { splitGitlinks } from '../../src/sandbox/patch-gitlinks.js';
import type {
  CallOptions,
  ExecOptions,
  ExecResult,
  FileEntry,
  PatchApplied,
  Sandbox,
  SandboxProvider,
  SandboxSpec,
} from '../../src/sandbox/types.js';

let counter = 0;

export class FakeSandbox implements Sandbox {
  readonly id = `fake-${++counter}`;
  readonly provider = 'fake';
  readonly workdir: string;
  readonly calls: string[] = [];
  closed = false;
  readonly #root: string;

  /** Clones `repoPath` (at `baseCommit`, default HEAD) into a new temp directory. */
  constructor(repoPath: string, baseCommit = 'HEAD') {
    this.#root = mkdtempSync(join(tmpdir(), 'winnower-fake-sandbox-'));
    this.workdir = join(this.#root, 'repo');
    execFileSync('git', ['clone', '-q', repoPath, this.workdir]);
    execFileSync('git', ['checkout', '-q', baseCommit], { cwd: this.workdir });
  }

  #assertOpen(): void {
    if (this.closed) throw wnwError('WNW_ERR_SBX_CLOSED', `sandbox ${this.id} is closed`);
  }

  #path(path: string): string {
    return isAbsolute(path) ? path : join(this.workdir, path);
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.#assertOpen();
    this.calls.push(`exec:${command}`);
    const started = performance.now();
    const cap = options.maxOutputBytes ?? 1024 * 1024;
    return new Promise<ExecResult>((resolve, reject) => {
      const child = spawn('bash', ['-c', command], {
        cwd: options.cwd ? this.#path(options.cwd) : this.workdir,
        env: { ...process.env, ...options.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out = { stdout: '', stderr: '', truncated: false };
      const collect = (key: 'stdout' | 'stderr') => (chunk: Buffer) => {
        const room = cap - Buffer.byteLength(out[key]);
        if (room <= 0) {
          out.truncated = true;
          return;
        }
        if (chunk.length > room) out.truncated = true;
        out[key] += chunk.subarray(0, room).toString('utf8');
      };
      child.stdout.on('data', collect('stdout'));
      child.stderr.on('data', collect('stderr'));
      let timedOut = false;
      const killTree = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killTree();
      }, options.timeoutMs ?? 120_000);
      const onAbort = () => killTree();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(wnwError('WNW_ERR_SBX_EXEC', error.message, { cause: error }));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        resolve({
          exitCode: timedOut || options.signal?.aborted ? null : code,
          stdout: out.stdout,
          stderr: out.stderr,
          timedOut,
          truncated: out.truncated,
          durationMs: performance.now() - started,
        });
      });
      // A command that never reads its stdin (or is killed) closes the pipe: EPIPE is expected.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin ?? '');
    });
  }

  async writeFile(path: string, content: string | Uint8Array, _options?: CallOptions): Promise<void> {
    this.#assertOpen();
    this.calls.push(`writeFile:${path}`);
    await mkdir(dirname(this.#path(path)), { recursive: true });
    await writeFile(this.#path(path), content);
  }

  async readFile(path: string, _options?: CallOptions): Promise<Uint8Array> {
    this.#assertOpen();
    this.calls.push(`readFile:${path}`);
    try {
      return await readFile(this.#path(path));
    } catch (error) {
      throw wnwError('WNW_ERR_SBX_FILE', `${path} not found`, { cause: error });
    }
  }

  async listFiles(path: string, _options?: CallOptions): Promise<FileEntry[]> {
    this.#assertOpen();
    const entries = await readdir(this.#path(path), { withFileTypes: true });
    return Promise.all(
      entries.map(async (entry) => ({
        name: entry.name,
        type: entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other',
        size: (await stat(join(this.#path(path), entry.name))).size,
      })),
    );
  }

  async diff(_options?: CallOptions): Promise<string> {
    this.#assertOpen();
    const result = await this.exec('git add -A -N . && git diff --binary HEAD');
    return result.stdout;
  }

  async applyPatch(patch: string, options: CallOptions = {}): Promise<PatchApplied> {
    this.#assertOpen();
    this.calls.push('applyPatch');
    // As BaseSandbox does for every provider: submodule sections are left out and named.
    const split = splitGitlinks(patch);
    if (split.patch.trim() === '') return { dropped: split.dropped };
    const body = split.patch.endsWith('\n') ? split.patch : `${split.patch}\n`;
    const result = await this.exec('git apply --whitespace=nowarn -', {
      stdin: body,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.exitCode !== 0) throw wnwError('WNW_ERR_SBX_PATCH', result.stderr.trim() || 'patch does not apply');
    return { dropped: split.dropped };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.calls.push('close');
    await rm(this.#root, { recursive: true, force: true });
  }
}

/** TEST DOUBLE provider: one FakeSandbox per create(), from `spec.repo.path`; records everything. */
export class FakeProvider implements SandboxProvider {
  readonly name = 'fake';
  readonly created: FakeSandbox[] = [];
  /** Simultaneously open sandboxes, at most. */
  peakOpen = 0;

  constructor(private readonly hooks: { failCreate?: (spec: SandboxSpec) => boolean; wrap?: (sandbox: FakeSandbox) => Sandbox } = {}) {}

  async describe(): Promise<Record<string, unknown>> {
    return { provider: 'fake', isolation: 'none (test double)' };
  }

  async create(spec: SandboxSpec, options: CallOptions = {}): Promise<Sandbox> {
    if (options.signal?.aborted) throw wnwError('WNW_ERR_OP_ABORTED');
    if (this.hooks.failCreate?.(spec)) throw wnwError('WNW_ERR_SBX_CREATE', `cannot create ${spec.label ?? 'sandbox'}`);
    if (!spec.repo?.path) throw wnwError('WNW_ERR_SBX_REPO', 'the fake provider needs repo.path');
    const sandbox = new FakeSandbox(spec.repo.path, spec.repo.base_commit);
    this.created.push(sandbox);
    this.peakOpen = Math.max(this.peakOpen, this.openCount);
    return this.hooks.wrap ? this.hooks.wrap(sandbox) : sandbox;
  }

  get openCount(): number {
    return this.created.filter((sandbox) => !sandbox.closed).length;
  }

  async close(): Promise<void> {
    await Promise.all(this.created.map((sandbox) => sandbox.close()));
  }
}

/** Removes a directory tree made by a test (sync, for afterAll). */
export function removeDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
