/**
 * One local sandbox: a workspace (overlay over the base snapshot, or a copy), its cgroups, and
 * either a resident exec agent started once (local-agent.ts: each command is a request to it) or,
 * the fallback, a fresh hardened bwrap per exec. File operations, diff and patching all run inside
 * the sandbox, so host code never follows a symlink out of the workspace (docs/design/04-local-sandbox.md#5).
 */
import { posix } from 'node:path';
import { wnwError, WinnowerError } from '../../../errors.js';
import { BaseSandbox, shellQuote } from '../../base-sandbox.js';
import { decodePatch, encodePatch } from '../../patch-bytes.js';
import { finishPatch, parseBaseTree, patchBaseScript, patchDiffScript, patchOutputCap, type PatchPolicy } from '../../patch-policy.js';
import type {
  CallOptions,
  ExecOptions,
  ExecResult,
  FileEntry,
  SandboxSnapshot,
  SandboxSpec,
  Terminal,
  TerminalOptions,
  TerminalResult,
} from '../../types.js';
import { baseSandboxEnv, bwrapArgs, checkEnv } from './bwrap-args.js';
import { AGENT_ARGS, ExecAgent, type AgentRun } from './exec-agent.js';
import type { SandboxHome } from './home.js';
import { launchArgv, type LocalHost } from './host.js';
import type { SandboxNetwork } from './network.js';
import type { SandboxCgroup, SandboxLimits } from './limits.js';
import { removeTree, type DiskArea, type DiskUsage, type Workspace } from './overlay.js';
import { SandboxProcess, STATUS_FD, type SandboxProcessResult } from './process.js';
import { tail } from '../../host-command.js';

export interface LocalSandboxParts {
  id: string;
  host: LocalHost;
  spec: SandboxSpec;
  workdir: string;
  /** Host folder of this sandbox (mount points of the workspace and tmp). */
  dir: string;
  workspace: Workspace;
  /** A networked sandbox's helper (network.ts), which belongs to it: killed at close. */
  network?: SandboxNetwork;
  cgroup: SandboxCgroup | undefined;
  limits: SandboxLimits;
  /** The diff's base; undefined: HEAD (an image whose workdir has no commit). */
  baseCommit: string | undefined;
  /** Set for a sandbox over an image: the workspace is its whole root, with this environment and shell. */
  image?: { env: Record<string, string>; shell: string };
  /** HOME of its commands, and whether the workspace's home folder is bound there (home.ts). */
  home: SandboxHome;
  maxTransferBytes: number;
  /** The python3 inside the sandbox that runs the resident exec agent; undefined: a bwrap per exec. */
  agentPython?: string;
  /** An `env` inside the sandbox that starts the agent with an empty environment. */
  agentEnv?: string;
  /** What the patch leaves out, and its cap. */
  patch: PatchPolicy;
  /** Copies this sandbox's files into a snapshot the provider holds (provider.ts, forks.ts). */
  takeSnapshot(sandbox: LocalSandbox, options: CallOptions): Promise<SandboxSnapshot>;
  /** After the workspace is gone: a fork lets go of the snapshot it mounted (forks.ts). */
  afterClose?(): Promise<void>;
  onClosed(sandbox: LocalSandbox): void;
}

interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: Uint8Array | string;
  input?: NodeJS.ReadableStream;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Uint8Array) => void;
}

/** Commands longer than this go to the shell through a pipe instead of argv (128 KiB limit). */
const MAX_ARGV_COMMAND = 100_000;
const FILE_OP_TIMEOUT_MS = 120_000;

export class LocalSandbox extends BaseSandbox {
  protected override readonly streamsOutput = true;
  protected override readonly streamsInput = true;
  readonly provider = 'local';
  readonly id: string;
  readonly workdir: string;
  readonly #parts: LocalSandboxParts;
  readonly #running = new Set<SandboxProcess | AgentRun>();
  #agent: ExecAgent | undefined;
  /** Set while the agent starts; settles (never rejects) once it said hello or fell back. */
  #agentReady: Promise<void> | undefined;
  #lifetimeTimer: NodeJS.Timeout | undefined;

  constructor(parts: LocalSandboxParts) {
    super();
    this.#parts = parts;
    this.id = parts.id;
    this.workdir = parts.workdir;
    this.track();
    if (parts.spec.lifetimeS) {
      this.#lifetimeTimer = setTimeout(() => void this.close().catch(() => undefined), parts.spec.lifetimeS * 1000);
      this.#lifetimeTimer.unref();
    }
  }

  /**
   * Starts the resident exec agent (create calls this once, when the sandbox has a python3): one
   * bwrap like every exec's, its options the same, with the agent as the sandbox's pid 1 and no
   * environment of its own (each request brings the command's).
   */
  startAgent(onFailed: (error: Error) => void): void {
    const python = this.#parts.agentPython;
    if (!python || this.#agent) return;
    const launch = launchArgv(this.#parts.host, {
      procsFiles: this.#parts.cgroup?.procsFiles ?? [],
      limits: this.#parts.limits,
      holderPid: this.#parts.workspace.holderPid,
      holderNetwork: this.#parts.workspace.ownNetwork,
      // The root outside the binds is bwrap's tmpfs: read-only, as it lasts as long as the sandbox
      // (with a bwrap per exec, a write there vanished at the exec's end). An image's root is its own.
      bwrap: [...this.#bwrap(this.workdir, {}), ...(this.#parts.image ? [] : ['--remount-ro', '/']), '--as-pid-1'],
      program: [...(this.#parts.agentEnv ? [this.#parts.agentEnv, '-i'] : []), python, ...AGENT_ARGS],
    });
    // Not awaited: python starts while the caller does other work (a rollout asks its policy
    // first); the first call waits for it, and `ready()` tells when it is up. If it cannot start,
    // this sandbox falls back to a bwrap per exec.
    const { agent, ready } = ExecAgent.spawn(this.id, launch.argv, launch.bwrapArgs);
    this.#agent = agent;
    this.#agentReady = ready.then(
      () => {
        this.#agentReady = undefined;
      },
      (error: Error) => {
        this.#agentReady = undefined;
        if (this.#agent !== agent || this.closed) return;
        this.#agent = undefined;
        onFailed(error);
      },
    );
  }

  /**
   * Settles once the sandbox is warm, its first exec costing what the next does: the resident exec
   * agent said hello, or could not start and this sandbox fell back to a bwrap per exec. Never rejects.
   */
  ready(): Promise<void> {
    return this.#agentReady ?? Promise.resolve();
  }

  /**
   * A command on a pseudo-terminal that the resident exec agent makes inside the sandbox, signals
   * and window sizes being frames to the agent rather than processes. Undefined when this sandbox
   * has no agent (a bwrap per exec): the caller makes its terminal with a command of its own.
   */
  async openTerminal(options: TerminalOptions): Promise<Terminal | undefined> {
    this.assertOpen();
    if (options.env) checkEnv(options.env, 'pty.env');
    if (this.#agentReady) await this.#agentReady;
    const agent = this.#agent;
    if (!agent) return undefined;
    if (agent.lost) throw agent.lost;
    if (!this.#parts.workspace.alive())
      throw wnwError('WNW_ERR_SBX_LOST', `sandbox ${this.id} is lost: its workspace's overlay holder exited (create a new sandbox)`, {
        details: { sandbox: this.id, lost: true },
      });
    const run = agent.run({
      argv: options.argv,
      env: this.#commandEnv(options.env),
      cwd: this.#resolve(options.cwd ?? '.'),
      stdin: options.input,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      signal: options.signal,
      pty: { rows: options.rows, cols: options.cols },
      onStart: options.onStart,
      onOutput: (_stream, chunk) => options.onOutput(chunk),
    });
    this.#running.add(run);
    const result = run.result
      .then((ended): TerminalResult => {
        if (ended.killed === 'abort') throw wnwError('WNW_ERR_OP_ABORTED', `terminal in sandbox ${this.id} cancelled`);
        if (ended.killed === 'close')
          throw wnwError('WNW_ERR_SBX_CLOSED', `sandbox ${this.id} was closed while a terminal ran`, { details: { sandbox: this.id } });
        if (!ended.started)
          throw wnwError(
            'WNW_ERR_SBX_EXEC',
            `the terminal's command could not be run in sandbox ${this.id}: ${tail(ended.stderr.toString())}`,
            {
              details: { sandbox: this.id },
            },
          );
        return {
          exitCode: ended.exitCode,
          ...(ended.signal ? { signal: ended.signal } : {}),
          timedOut: ended.killed === 'timeout',
          truncated: ended.stdout.truncated,
        };
      })
      .finally(() => this.#running.delete(run));
    return { result, signal: (number) => run.signal(number), resize: (rows, cols) => run.resize(rows, cols) };
  }

  /** How commands run: 'agent' (the resident exec agent) or 'launch' (a fresh bwrap per exec). */
  get execMode(): 'agent' | 'launch' {
    return this.#agent ? 'agent' : 'launch';
  }

  /** How the workspace is made ('overlay' or 'copy'). */
  get workspaceMode(): string {
    return this.#parts.workspace.mode;
  }

  protected async doExec(
    command: string,
    options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions,
  ): Promise<ExecResult> {
    if (options.env) checkEnv(options.env, 'exec.env');
    const [usage, oomBefore] = await Promise.all([this.#usage(), this.#oomKills()]);
    const fullBefore = new Set(usage.filter((area) => area.full).map((area) => area.area));
    const result = await this.#run(command, options);
    if (result.killed === 'abort')
      throw wnwError('WNW_ERR_OP_ABORTED', `exec in sandbox ${this.id} cancelled`, { cause: options.signal?.reason });
    const note = await this.#endNote(result, fullBefore, oomBefore);
    return {
      exitCode: result.exitCode,
      ...(result.signal ? { signal: result.signal } : {}),
      stdout: result.stdout.toString(),
      stderr: result.stderr.toString(),
      timedOut: result.killed === 'timeout',
      truncated: result.stdout.truncated || result.stderr.truncated,
      durationMs: result.durationMs,
      ...(note ? { note } : {}),
    };
  }

  /**
   * What the agent should know about how a command ended that its output may not say: the kernel
   * killed a process for lack of memory (the sandbox cgroup's OOM count went up), or a SIGKILL
   * otherwise, or a disk cap was reached (writes failed with ENOSPC). Not errors: a full disk or an
   * OOM kill is the agent's to handle (remove files, use less memory), so the rollout goes on.
   */
  async #endNote(result: SandboxProcessResult, fullBefore: Set<DiskArea>, oomBefore: number | undefined): Promise<string | undefined> {
    const notes: string[] = [];
    // Both reads at once: they are on every exec's path.
    const [oomAfter, usage] = await Promise.all([this.#oomKills(), this.#usage()]);
    const cap = this.#parts.limits.memoryMb ? ` (memory cap ${this.#parts.limits.memoryMb} MiB)` : '';
    if (oomBefore !== undefined && oomAfter !== undefined && oomAfter > oomBefore) {
      notes.push(result.exitCode === 137 ? `killed: out of memory${cap}` : `a process of this command was killed: out of memory${cap}`);
    } else if (result.exitCode === 137) {
      notes.push(
        oomAfter === undefined
          ? `exit 137: killed by SIGKILL (out of memory${cap}, or killed by another process)`
          : 'exit 137: killed by SIGKILL, not for lack of memory',
      );
    }
    // An area already full is noted again only when the command failed (it may have hit it).
    const full = usage.find((area) => area.full && (!fullBefore.has(area.area) || result.exitCode !== 0));
    if (full) {
      const [what, setting, capBytes] =
        full.area === 'workspace'
          ? [`the workspace (${this.workdir})`, 'diskMb', this.#parts.workspace.caps.workspaceBytes]
          : ['/tmp and /var/tmp', 'tmpMb', this.#parts.workspace.caps.tmpBytes];
      notes.push(
        `disk full: the ${formatMib(capBytes)} cap of ${what} is reached (sandbox.settings.${setting}); writes fail with "No space left on device" until files are removed`,
      );
    }
    return notes.length > 0 ? notes.join('; ') : undefined;
  }

  #oomKills(): Promise<number | undefined> {
    return this.#parts.cgroup?.oomKills().catch(() => undefined) ?? Promise.resolve(undefined);
  }

  protected async doWriteFile(path: string, content: Uint8Array, options: CallOptions): Promise<void> {
    const target = shellQuote(this.#resolve(path));
    const script = `d=$(dirname -- ${target}) && mkdir -p -- "$d" && cat > ${target}`;
    const result = await this.#internal(script, { stdin: content, signal: options.signal });
    if (result.exitCode !== 0) throw (await this.#diskFull(result)) ?? fileError('write', path, result);
  }

  protected async doReadFile(path: string, options: CallOptions): Promise<Uint8Array> {
    const target = shellQuote(this.#resolve(path));
    const limit = this.#parts.maxTransferBytes;
    // head stops one byte past the cap, so an endless file (/dev/zero) ends the read instead of running to the timeout.
    const script = `if [ -d ${target} ]; then echo "is a directory" >&2; exit 21; fi; [ -e ${target} ] || { echo "no such file" >&2; exit 2; }; exec head -c ${limit + 1} -- ${target}`;
    const result = await this.#internal(script, { signal: options.signal, maxOutputBytes: limit });
    if (result.stdout.truncated)
      throw wnwError('WNW_ERR_SBX_FILE', `${path} is larger than ${limit} bytes`, {
        details: { path, sandbox: this.id, limit_bytes: limit },
      });
    if (result.exitCode !== 0) throw fileError('read', path, result);
    return new Uint8Array(result.stdout.toBuffer());
  }

  protected async doListFiles(path: string, options: CallOptions): Promise<FileEntry[]> {
    const target = shellQuote(this.#resolve(path));
    const script = `[ -d ${target} ] || { echo "no such directory" >&2; exit 2; }; exec find -H ${target} -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%f\\0'`;
    const result = await this.#internal(script, { signal: options.signal, maxOutputBytes: this.#parts.maxTransferBytes });
    if (result.exitCode !== 0) throw fileError('list', path, result);
    const types: Record<string, FileEntry['type']> = { f: 'file', d: 'directory', l: 'symlink' };
    return result.stdout
      .toString()
      .split('\0')
      .filter(Boolean)
      .map((record) => {
        const [type = '', size = '0', ...name] = record.split('\t');
        return { name: name.join('\t'), type: types[type] ?? 'other', size: Number(size) };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  protected async doDiff(options: CallOptions): Promise<string> {
    const { patch } = this.#parts;
    const result = await this.#internal(patchDiffScript(this.#parts.baseCommit, patch), {
      signal: options.signal,
      maxOutputBytes: patchOutputCap(patch),
    });
    const bytes = result.stdout.toBuffer();
    // Past the cap, git was cut off and may have exited non-zero: finishPatch reports the size.
    if (result.exitCode !== 0 && bytes.length <= patch.maxBytes) {
      const full = await this.#diskFull(result);
      if (full) throw full;
      throw wnwError('WNW_ERR_SBX_EXEC', `git diff failed in sandbox ${this.id}: ${tail(result.stderr.toString())}`, {
        details: { sandbox: this.id },
      });
    }
    return finishPatch(decodePatch(bytes), patch, this.id, bytes.length);
  }

  protected async doApplyPatch(patch: string, options: CallOptions): Promise<void> {
    if (patch.trim() === '') return;
    const body = patch.endsWith('\n') ? patch : `${patch}\n`;
    const script =
      'p=$(mktemp /tmp/.winnower-patch.XXXXXX) && cat > "$p" && git apply --whitespace=nowarn -- "$p"; status=$?; rm -f "$p"; exit $status';
    const result = await this.#internal(script, { stdin: encodePatch(body), signal: options.signal });
    if (result.exitCode !== 0) throw (await this.#diskFull(result)) ?? patchError(result.stderr.toString(), this.id);
  }

  /** What diff() compares against: the base commit, or the tree markBase() recorded. */
  get diffBase(): string | undefined {
    return this.#parts.baseCommit;
  }

  /** Records the workspace as it stands as the base of later diffs (types.ts `markBase`). */
  async markBase(options: CallOptions = {}): Promise<string> {
    this.assertOpen();
    const result = await this.#internal(patchBaseScript(this.#parts.patch), { signal: options.signal });
    const tree = result.exitCode === 0 ? parseBaseTree(result.stdout.toString()) : undefined;
    if (!tree) {
      throw (
        (await this.#diskFull(result)) ??
        wnwError('WNW_ERR_SBX_EXEC', `recording the base of sandbox ${this.id} failed: ${tail(result.stderr.toString())}`, {
          details: { sandbox: this.id },
        })
      );
    }
    this.#parts.baseCommit = tree;
    return tree;
  }

  /**
   * Copies the workspace's writes and /tmp, /var/tmp and home into a snapshot (forks.ts). The files
   * as they stand: a command still running may be caught mid-write, so take it between commands.
   */
  snapshot(options: CallOptions = {}): Promise<SandboxSnapshot> {
    this.assertOpen();
    return this.#parts.takeSnapshot(this, options);
  }

  /** Kills every running command and the workspace holder at once (process exit; no cleanup). */
  killNow(): void {
    for (const child of this.#running) child.kill('close');
    this.#agent?.killNow();
    this.#parts.workspace.killNow();
    this.#parts.network?.killNow();
  }

  protected async doClose(): Promise<void> {
    clearTimeout(this.#lifetimeTimer);
    const problems: unknown[] = [];
    const running = [...this.#running];
    for (const child of running) child.kill('close');
    await this.#agent?.close().catch((error: unknown) => problems.push(error));
    await Promise.allSettled(running.map((child) => child.result));
    await this.#parts.workspace.close().catch((error: unknown) => problems.push(error));
    await this.#parts.network?.close().catch((error: unknown) => problems.push(error));
    await this.#parts.cgroup?.remove().catch((error: unknown) => problems.push(error));
    await removeTree(this.#parts.dir).catch((error: unknown) => problems.push(error));
    await this.#parts.afterClose?.().catch((error: unknown) => problems.push(error));
    this.#parts.onClosed(this);
    if (problems.length > 0) {
      throw wnwError(
        'WNW_ERR_OP_INTERNAL',
        `sandbox ${this.id} was not fully cleaned up: ${problems.map((problem) => (problem as Error).message).join('; ')}`,
        {
          cause: problems[0],
        },
      );
    }
  }

  /** Internal operations: cwd = workdir, generous output cap, fixed timeout. */
  #internal(
    script: string,
    options: { stdin?: Uint8Array | string; signal?: AbortSignal; maxOutputBytes?: number },
  ): Promise<SandboxProcessResult> {
    return this.#run(script, { timeoutMs: FILE_OP_TIMEOUT_MS, maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024, ...options }).then(
      (result) => {
        if (result.killed === 'abort') throw wnwError('WNW_ERR_OP_ABORTED', `operation in sandbox ${this.id} cancelled`);
        if (result.killed === 'timeout') throw wnwError('WNW_ERR_SBX_EXEC', `operation in sandbox ${this.id} timed out`);
        return result;
      },
    );
  }

  async #run(command: string, options: RunOptions): Promise<SandboxProcessResult> {
    if (options.signal?.aborted)
      throw wnwError('WNW_ERR_OP_ABORTED', `operation in sandbox ${this.id} cancelled`, { cause: options.signal.reason });
    const { host, workspace } = this.#parts;
    if (!workspace.alive())
      throw wnwError('WNW_ERR_SBX_LOST', `sandbox ${this.id} is lost: its workspace's overlay holder exited (create a new sandbox)`, {
        details: { sandbox: this.id, lost: true },
      });
    const long = Buffer.byteLength(command) > MAX_ARGV_COMMAND;
    const cwd = this.#resolve(options.cwd ?? '.');
    const env = this.#commandEnv(options.env);
    const shell = this.#parts.image?.shell ?? host.shell;
    const program = long ? [shell, '-c', 'c=$(cat <&4; printf x); exec 4<&-; eval "${c%x}"'] : [shell, '-c', command];
    const common = {
      stdin: options.input ?? options.stdin,
      fd4: long ? command : undefined,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      signal: options.signal,
      onOutput: options.onOutput,
    };
    if (this.#agentReady) await this.#agentReady;
    let child: SandboxProcess | AgentRun;
    if (this.#agent) {
      if (this.#agent.lost) throw this.#agent.lost;
      child = this.#agent.run({ argv: program, env, cwd, ...common });
    } else {
      const launch = launchArgv(host, {
        procsFiles: this.#parts.cgroup?.procsFiles ?? [],
        limits: this.#parts.limits,
        holderPid: workspace.holderPid,
        holderNetwork: workspace.ownNetwork,
        bwrap: this.#bwrap(cwd, env),
        program,
      });
      child = new SandboxProcess({ argv: launch.argv, bwrapArgs: launch.bwrapArgs, ...common });
    }
    this.#running.add(child);
    let result: SandboxProcessResult;
    try {
      result = await child.result;
    } catch (error) {
      if (WinnowerError.isInstance(error)) throw error;
      // Node's message quotes the whole argv (the internal script included): keep only its first sentence.
      const why = (error as Error).message.split(/\. Received\b/)[0];
      throw wnwError('WNW_ERR_SBX_EXEC', `could not start the sandbox process: ${why}`, { cause: error, details: { sandbox: this.id } });
    } finally {
      this.#running.delete(child);
    }
    if (result.killed === 'close')
      throw wnwError('WNW_ERR_SBX_CLOSED', `sandbox ${this.id} was closed while a command ran`, { details: { sandbox: this.id } });
    if (!result.killed && result.exitCode === null) {
      const why = tail(result.stderr.toString()) || `launcher exit ${result.hostExit.code ?? result.hostExit.signal}`;
      const lost = workspace.alive() ? '' : ' (the overlay holder exited)';
      throw wnwError('WNW_ERR_SBX_EXEC', `command could not be run in sandbox ${this.id}${lost}: ${why}`, {
        details: { sandbox: this.id, started: result.started },
      });
    }
    return result;
  }

  /** A command's environment: the image's (or the base one), HOME, the spec's, the call's. */
  #commandEnv(extra: Record<string, string> | undefined): Record<string, string> {
    return { ...(this.#parts.image?.env ?? baseSandboxEnv()), HOME: this.#parts.home.path, ...this.#parts.spec.env, ...extra };
  }

  /** bwrap's options for a process of this sandbox (an exec, or the agent). */
  #bwrap(cwd: string, env: Record<string, string>): string[] {
    const { host, workspace } = this.#parts;
    return bwrapArgs({
      workspace: workspace.hostPath,
      workdir: this.workdir,
      tmpDir: workspace.tmpDir,
      varTmpDir: workspace.varTmpDir,
      ...(this.#parts.home.bind ? { home: { source: workspace.homeDir, target: this.#parts.home.path } } : {}),
      cwd,
      network: this.#parts.spec.network === true,
      env,
      innerUid: this.#parts.spec.asRoot ? 0 : host.innerUid,
      innerGid: this.#parts.spec.asRoot ? 0 : host.innerGid,
      rootLayout: host.rootLayout,
      statusFd: STATUS_FD,
      mounts: this.#parts.spec.mounts,
      ...(this.#parts.image ? { imageRoot: { readOnly: false } } : {}),
    });
  }

  /**
   * WNW_ERR_SBX_DISK when the workspace or /tmp (both capped tmpfs, local-overlay.ts) has no byte
   * left after a failed file write, patch or diff (not an exec: that gets a note, #endNote).
   */
  async #diskFull(result: SandboxProcessResult, fullBefore = new Set<DiskArea>()): Promise<WinnowerError | undefined> {
    const { workspace } = this.#parts;
    const full = (await this.#usage()).find((area) => area.full && !fullBefore.has(area.area));
    if (!full) return undefined;
    const [what, setting, capBytes] =
      full.area === 'workspace'
        ? [`its workspace (${this.workdir})`, 'diskMb', workspace.caps.workspaceBytes]
        : ['/tmp and /var/tmp', 'tmpMb', workspace.caps.tmpBytes];
    return wnwError(
      'WNW_ERR_SBX_DISK',
      `sandbox ${this.id} filled ${what}: its ${formatMib(capBytes)} cap (sandbox.settings.${setting}, within the memory limit) is reached, so writes past it fail with "No space left on device"`,
      {
        details: {
          sandbox: this.id,
          area: full.area,
          capBytes,
          usedBytes: full.usedBytes,
          exitCode: result.exitCode,
          stderr: tail(result.stderr.toString()),
        },
      },
    );
  }

  #usage(): Promise<DiskUsage[]> {
    return this.#parts.workspace.usage().catch(() => []);
  }

  /** A path relative to the workdir, or absolute inside the sandbox. */
  #resolve(path: string): string {
    if (path.includes('\0'))
      throw wnwError('WNW_ERR_INPUT_INVALID', 'a sandbox path must not contain a NUL byte', { details: { sandbox: this.id } });
    return posix.resolve(this.workdir, path);
  }
}

function formatMib(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

function fileError(operation: string, path: string, result: SandboxProcessResult): WinnowerError {
  const why = tail(result.stderr.toString()) || `exit ${result.exitCode}`;
  return wnwError('WNW_ERR_SBX_FILE', `cannot ${operation} ${path}: ${why}`, { details: { path, operation } });
}

/** WNW_ERR_SBX_PATCH naming the file (and line) git rejected. */
export function patchError(stderr: string, sandbox: string): WinnowerError {
  const failed = /error: patch failed: (.+):(\d+)/.exec(stderr);
  const other =
    /error: (.+?): (already exists in working directory|does not exist in index|No such file or directory|patch does not apply|already exists in index|does not match index)/.exec(
      stderr,
    );
  const corrupt = /(corrupt patch at line \d+|No valid patches in input[^\n]*)/.exec(stderr);
  const file = failed?.[1] ?? other?.[1];
  const line = failed ? Number(failed[2]) : undefined;
  const summary = failed
    ? `hunk at ${failed[1]}:${failed[2]} rejected`
    : other
      ? `${other[1]}: ${other[2]}`
      : corrupt
        ? corrupt[1]
        : tail(stderr, 500);
  return wnwError('WNW_ERR_SBX_PATCH', `patch does not apply: ${summary}\n${tail(stderr)}`, {
    details: { sandbox, file, line, stderr: tail(stderr) },
  });
}
